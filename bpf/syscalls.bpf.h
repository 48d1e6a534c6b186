/*
 * Syscall hooks as raw tracepoints (sys_enter / sys_exit): one program each
 * instead of one per syscall, attached and detached in a blink, and never
 * skipped because another BPF program was running. x86-64 numbers and ABI.
 */
#ifndef NODESCOPE_SYSCALLS_BPF_H
#define NODESCOPE_SYSCALLS_BPF_H

#include "common.bpf.h"

#define NS_NR_read 0
#define NS_NR_write 1
#define NS_NR_close 3
#define NS_NR_mmap 9
#define NS_NR_readv 19
#define NS_NR_writev 20
#define NS_NR_sendfile 40
#define NS_NR_connect 42
#define NS_NR_accept 43
#define NS_NR_sendto 44
#define NS_NR_recvfrom 45
#define NS_NR_sendmsg 46
#define NS_NR_recvmsg 47
#define NS_NR_listen 50
#define NS_NR_accept4 288
#define NS_NR_sendmmsg 307

/* Syscall argument n (1-based) from the user registers. */
#define NS_SYSCALL_ARG1(regs) BPF_CORE_READ(regs, di)
#define NS_SYSCALL_ARG2(regs) BPF_CORE_READ(regs, si)
#define NS_SYSCALL_ARG3(regs) BPF_CORE_READ(regs, dx)
#define NS_SYSCALL_ARG5(regs) BPF_CORE_READ(regs, r8)
#define NS_SYSCALL_SP(regs) BPF_CORE_READ(regs, sp)
#define NS_SYSCALL_NR(regs) BPF_CORE_READ(regs, orig_ax)

/*
 * A 32-bit (ia32) process makes syscalls from another table with other
 * registers: its read (3) is our close, its pipe (42) our connect. x86
 * marks such a syscall in thread_info.status (TS_COMPAT, set at entry from
 * int 0x80/sysenter/compat syscall); they are skipped, not misread. Checked
 * only once a number matched, so other syscalls pay nothing.
 */
#define NS_TS_COMPAT 0x0002
static __always_inline bool ns_syscall_compat(void)
{
	return ns_current_thread_status() & NS_TS_COMPAT;
}

#endif
