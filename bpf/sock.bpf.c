// SPDX-License-Identifier: GPL-2.0
/*
 * The l7 stream's data where the kernel has the socket tracepoints
 * (sock:sock_send_length and sock:sock_recv_length, 6.4; NS_FEAT_SOCK_LENGTH).
 * They fire in sock_sendmsg and sock_recvmsg alone: a read or write on a pipe
 * or a file runs nothing of the l7 stream, where the syscall exit had to ask
 * the l7 filter about each one (bench/syscall). The call, its fd and its
 * buffer come from the task's saved user registers, as the syscall exit
 * reads them, and go to the same handler (ns_l7_syscall_exit), marked
 * NS_L7_AT_SOCK. The calls that stay at the syscall exit, and why:
 * l7_taken_at_exit (bpf/l7.bpf.h).
 */
#include "syscalls.bpf.h"
#include "sockets.bpf.h"
#include "l7.bpf.h"
#include "dns.bpf.h"

char LICENSE[] SEC("license") = "GPL";

extern int ns_l7_syscall_exit(struct bpf_raw_tracepoint_args *ctx, __u64 id_fd, __u64 arg2, __u64 arg,
			      __u64 tgid_ret);

#define NS_PF_KTHREAD 0x00200000

static __always_inline int ns_sock_data(void *ctx, int ret)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 op, kind;

	/* A kernel thread's socket (NFS, iSCSI) was moved by no syscall of its own. */
	if (task->flags & NS_PF_KTHREAD)
		return 0;
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	long id = regs->NS_REG_NR;
	/* Another call (splice, io_uring_enter) or one the syscall exit reads. */
	if (!ns_l7_call_shape(id, &op, &kind) || kind == L7_BUF_NONE || kind == L7_BUF_MMSG)
		return 0;
	__s32 fd = (__s32)regs->NS_REG_ARG1;
	__u32 tgid = task->tgid;
	__u64 id_fd = (__u64)id << 32 | (__u32)fd | NS_L7_AT_SOCK;
	__u64 arg = (id == NS_NR_sendto || id == NS_NR_recvfrom) ? regs->NS_REG_ARG5 : 0;

	/* As at the syscall exit: an untracked socket's send that names its peer may ask DNS. */
	if (!l7_maybe_tracked(tgid, fd) && (op != NS_L7_WRITE || !dns_send_names_peer(kind, arg)))
		return 0;
	if (ns_syscall_compat(regs))
		return 0;
	if (arg)
		id_fd |= NS_L7_ARG_IS_ADDR;
	else
		arg = regs->NS_REG_SP;
	return ns_l7_syscall_exit((struct bpf_raw_tracepoint_args *)ctx, id_fd, regs->NS_REG_ARG2, arg,
				  (__u64)tgid << 32 | (__u32)ret);
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(ns_sock_send, struct sock *sk, int ret, int flags)
{
	return ns_sock_data(ctx, ret);
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(ns_sock_recv, struct sock *sk, int ret, int flags)
{
	return ns_sock_data(ctx, ret);
}
