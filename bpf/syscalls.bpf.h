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
	return ns_arch_syscall_compat(regs);
}

#endif
