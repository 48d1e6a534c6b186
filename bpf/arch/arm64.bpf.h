/*
 * arm64: the syscall numbers the dispatcher needs (the generic table of
 * asm-generic/unistd.h: no open, no select, and numbers unlike x86's), where
 * a syscall's arguments are, how an aarch32 syscall is told apart, and Go's
 * registers. Included by bpf/arch.bpf.h only.
 */
#ifndef NODESCOPE_ARCH_ARM64_BPF_H
#define NODESCOPE_ARCH_ARM64_BPF_H

#define NS_NR_close 57
#define NS_NR_read 63
#define NS_NR_write 64
#define NS_NR_readv 65
#define NS_NR_writev 66
#define NS_NR_sendfile 71
#define NS_NR_bind 200
#define NS_NR_listen 201
#define NS_NR_accept 202
#define NS_NR_connect 203
#define NS_NR_sendto 206
#define NS_NR_recvfrom 207
#define NS_NR_sendmsg 211
#define NS_NR_recvmsg 212
#define NS_NR_mmap 222
#define NS_NR_accept4 242
#define NS_NR_sendmmsg 269
#define NS_NR_recvmmsg 243

/*
 * Syscall argument n (1-based) from the user registers (kernel struct
 * pt_regs). At sys_exit x0 already holds the result, so the first argument
 * is read from orig_x0, which the kernel saves at entry; x1.. are untouched.
 */
#define NS_REG_ARG1 orig_x0
#define NS_REG_ARG2 regs[1]
#define NS_REG_ARG3 regs[2]
#define NS_REG_ARG4 regs[3]
#define NS_REG_ARG5 regs[4]
#define NS_REG_SP sp
#define NS_REG_NR syscallno

/*
 * An aarch32 (compat) process makes syscalls from the arm EABI table, where
 * the numbers name other calls (its read is 3, its write 4, its connect
 * 283): they are skipped, not misread. The saved PSTATE tells which state
 * the task trapped from: M[4] (PSR_MODE32_BIT, 0x10) is set for AArch32.
 * The bit is the architecture's, so no kernel flag number is relied on.
 */
#define NS_PSR_MODE32_BIT 0x10
static __always_inline bool ns_arch_syscall_compat(struct pt_regs *regs, struct task_struct *task)
{
	return BPF_CORE_READ(regs, pstate) & NS_PSR_MODE32_BIT;
}

/*
 * Go on arm64: arguments and results in x0, x1, ... with the register ABI
 * (1.18 on); the goroutine is in x28 under both ABIs (Go has always kept g
 * there on arm64). A uprobe's context is the user registers.
 */
#define NS_GO_UREGS(ctx) ((const struct user_pt_regs *)(ctx))
#define NS_GO_REG_ARG0(ctx) (NS_GO_UREGS(ctx)->regs[0])
#define NS_GO_REG_ARG1(ctx) (NS_GO_UREGS(ctx)->regs[1])
#define NS_GO_REG_ARG2(ctx) (NS_GO_UREGS(ctx)->regs[2])
#define NS_GO_REG_G(ctx) (NS_GO_UREGS(ctx)->regs[28])
static __always_inline __u64 ns_go_stack_abi_g(struct pt_regs *ctx)
{
	return NS_GO_REG_G(ctx);
}

#endif
