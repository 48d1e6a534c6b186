/*
 * x86-64: the syscall numbers the dispatcher needs, where a syscall's
 * arguments are in the registers sys_enter/sys_exit see, how a 32-bit
 * syscall is told apart, and Go's registers. Included by bpf/arch.bpf.h only.
 */
#ifndef NODESCOPE_ARCH_X86_BPF_H
#define NODESCOPE_ARCH_X86_BPF_H

#define NS_NR_read 0
#define NS_NR_write 1
#define NS_NR_close 3
#define NS_NR_mmap 9
#define NS_NR_readv 19
#define NS_NR_writev 20
#define NS_NR_sendfile 40
#define NS_NR_connect 42
#define NS_NR_bind 49
#define NS_NR_accept 43
#define NS_NR_sendto 44
#define NS_NR_recvfrom 45
#define NS_NR_sendmsg 46
#define NS_NR_recvmsg 47
#define NS_NR_listen 50
#define NS_NR_accept4 288
#define NS_NR_sendmmsg 307
#define NS_NR_recvmmsg 299

/* Where syscall argument n (1-based) is in the user registers (kernel struct pt_regs). */
#define NS_REG_ARG1 di
#define NS_REG_ARG2 si
#define NS_REG_ARG3 dx
#define NS_REG_ARG4 r10
#define NS_REG_ARG5 r8
#define NS_REG_SP sp
#define NS_REG_NR orig_ax

/*
 * A 32-bit (ia32) process makes syscalls from another table with other
 * registers: its read (3) is our close, its pipe (42) our connect. x86
 * marks such a syscall in thread_info.status (TS_COMPAT, set at entry from
 * int 0x80/sysenter/compat syscall); they are skipped, not misread.
 * (core_fixes.bpf.h reads it on kernels with and without a BTF task pointer.)
 * task: the current task, if the caller has it (ns_current_task_btf), or NULL.
 */
#define NS_TS_COMPAT 0x0002
static __always_inline bool ns_arch_syscall_compat(struct pt_regs *regs, struct task_struct *task)
{
	return ns_current_thread_status_of(task) & NS_TS_COMPAT;
}

/*
 * Go's register ABI (1.17 on): receiver and arguments in rax, rbx, rcx, ...,
 * results from rax; the goroutine in r14. Before it (the stack ABI) the
 * goroutine is in the thread-local slot at fs-8.
 */
#define NS_GO_REG_ARG0(ctx) ((ctx)->ax)
#define NS_GO_REG_ARG1(ctx) ((ctx)->bx)
#define NS_GO_REG_ARG2(ctx) ((ctx)->cx)
#define NS_GO_REG_G(ctx) ((ctx)->r14)
static __always_inline __u64 ns_go_stack_abi_g(struct pt_regs *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u64 g = 0;

	bpf_probe_read_user(&g, sizeof(g), (void *)(t->thread.fsbase - 8));
	return g;
}

#endif
