/*
 * Syscall hooks as raw tracepoints (sys_enter / sys_exit): one program each
 * instead of one per syscall, attached and detached in a blink, and never
 * skipped because another BPF program was running. The numbers and the
 * registers are the architecture's (bpf/arch/).
 */
#ifndef NODESCOPE_SYSCALLS_BPF_H
#define NODESCOPE_SYSCALLS_BPF_H

#include "common.bpf.h"
#include "arch.bpf.h"

/*
 * A syscall from the 32-bit table (ia32 on x86, aarch32 on arm64) is
 * skipped, not misread. Checked only once a number matched, so other
 * syscalls pay nothing.
 */
static __always_inline bool ns_syscall_compat(struct pt_regs *regs)
{
	return ns_arch_syscall_compat(regs, ns_current_task_btf());
}

/* The same, for a caller that has the current task (ns_current_task_btf) already. */
static __always_inline bool ns_syscall_compat_of(struct pt_regs *regs, struct task_struct *task)
{
	return ns_arch_syscall_compat(regs, task);
}

/*
 * A field of the syscall's registers (NS_REG_*, bpf/arch/). In a tp_btf
 * program the hook's pt_regs is a typed pointer and this is a plain load; in
 * a raw_tp program it is a bpf_probe_read_kernel call, which a syscall
 * nobody watches paid at every exit for its number (bench/syscall: 1.24x
 * the floor's cost with the handlers stubbed, against 1.03x as tp_btf).
 * btf is a constant in each program, so the other branch is compiled out.
 */
#define NS_SYSCALL_REG(btf, regs, field) ((btf) ? (regs)->field : BPF_CORE_READ(regs, field))

/* ns_l7_syscall_exit's id_fd: its arg is sendto's or recvfrom's address, not the stack pointer. */
#define NS_L7_ARG_IS_ADDR (1ull << 63)

#endif
