// SPDX-License-Identifier: GPL-2.0
/*
 * The one pair of syscall hooks: sys_enter / sys_exit, dispatching on the
 * syscall number to the tcp, l7 and files handlers. Every syscall on the node
 * passes here, so a call nobody cares about costs one switch (and, on exit,
 * one register load); a read, write or close on an fd that is no tracked
 * socket, the thread's remembered answer for the fd (bpf/l7_untracked.bpf.h)
 * or, once, a helper call and a load from the l7 filter (bpf/l7_filter.h).
 */
#include "syscalls.bpf.h"
#include "sockets.bpf.h"
#include "dns.bpf.h"
#include "l7_untracked.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* The writes the l7 stream captures: stamped at entry. */
#define NS_L7_WRITE_SYSCALLS                                                 \
	case NS_NR_write:                                                    \
	case NS_NR_sendto:                                                   \
	case NS_NR_writev:                                                   \
	case NS_NR_sendmsg:                                                  \
	case NS_NR_sendmmsg:                                                 \
	case NS_NR_sendfile:
/* The reads and writes whose data the l7 stream captures, at exit. */
#define NS_L7_DATA_SYSCALLS                                                  \
	NS_L7_WRITE_SYSCALLS                                                 \
	case NS_NR_read:                                                     \
	case NS_NR_recvfrom:                                                 \
	case NS_NR_readv:                                                    \
	case NS_NR_recvmsg:                                                  \
	case NS_NR_recvmmsg:

extern int ns_tcp_syscall_enter(long id, __u64 arg1, __u64 arg2);
/*
 * The handlers are global functions, verified apart: the program's context
 * (which perf-buffer streams write with) reaches them typed as the kernel's
 * context of raw tracepoints.
 */
#define NS_RAW_TP_CTX ((struct bpf_raw_tracepoint_args *)ctx)
extern int ns_tcp_syscall_exit(struct bpf_raw_tracepoint_args *ctx, long id, long ret);
extern int ns_l7_syscall_enter(long id, __u64 key);
extern int ns_l7_syscall_exit(struct bpf_raw_tracepoint_args *ctx, __u64 id_fd, __u64 arg2, __u64 arg,
			      __u64 tgid_ret);
extern int ns_files_mmap(struct bpf_raw_tracepoint_args *ctx, __u64 prot, __u64 fd, long ret);

/* Whether fd may be a tracked socket, and the process (0 if not needed: bpf/l7_untracked.bpf.h). */
static __always_inline bool ns_l7_maybe_tracked(struct pt_regs *regs, __s32 fd, __u32 *tgid,
						struct task_struct **task, bool btf)
{
	return l7_maybe_tracked_by(l7_untracked_thread(regs, btf), fd, tgid, task);
}

/*
 * A close or write on an fd that is no tracked socket has nothing to
 * forget nor to date; the compat check comes after the filter (from the
 * task the filter's look fetched), as a compat call's fd register holds
 * something else.
 */
static __always_inline int ns_l7_dispatch_enter(struct pt_regs *regs, long id, bool btf)
{
	__s32 fd = (__s32)NS_SYSCALL_REG(btf, regs, NS_REG_ARG1);
	struct task_struct *task;
	__u32 tgid;

	if (!ns_l7_maybe_tracked(regs, fd, &tgid, &task, btf) || ns_syscall_compat_of(regs, task))
		return 0;
	return ns_l7_syscall_enter(id, l7_key(tgid, fd));
}

/*
 * The dispatch, for both program types below: btf is a constant in each
 * (NS_SYSCALL_REG, syscalls.bpf.h). The argument registers at exit are as
 * the caller left them.
 */
static __always_inline int ns_dispatch_enter(void *ctx, struct pt_regs *regs, long id, bool btf)
{
	switch (id) {
	case NS_NR_connect:
	case NS_NR_bind:
	case NS_NR_listen:
		if (ns_syscall_compat(regs))
			return 0;
		return ns_tcp_syscall_enter(id, NS_SYSCALL_REG(btf, regs, NS_REG_ARG1),
					    NS_SYSCALL_REG(btf, regs, NS_REG_ARG2));
	case NS_NR_close:
	NS_L7_WRITE_SYSCALLS
		if (ns_l7_off)
			return 0;
		return ns_l7_dispatch_enter(regs, id, btf);
	}
	return 0;
}

/*
 * The l7 exit's arguments: the fd shares a word with the number, and the
 * address of a sendto or recvfrom that has one takes the stack pointer's
 * place (NS_L7_ARG_IS_ADDR): a call takes five arguments at most.
 */
static __always_inline int ns_l7_dispatch_exit(void *ctx, struct pt_regs *regs, long id, long ret, bool btf)
{
	__s32 fd = (__s32)NS_SYSCALL_REG(btf, regs, NS_REG_ARG1);
	__u64 id_fd = (__u64)id << 32 | (__u32)fd;
	__u64 arg = 0;
	__u32 op = 0, kind = 0, tgid;
	struct task_struct *task;
	bool tracked = ns_l7_maybe_tracked(regs, fd, &tgid, &task, btf);

	if (id == NS_NR_sendto || id == NS_NR_recvfrom)
		arg = NS_SYSCALL_REG(btf, regs, NS_REG_ARG5);
	/*
	 * An untracked socket's send that names its peer may ask a DNS
	 * question, if it goes to port 53: any other stops here, its one helper
	 * call the port's read (bench/syscall's udp loop). A compat call's
	 * registers mean other things, whatever port they read as: it is
	 * skipped below.
	 */
	if (!tracked &&
	    (!ns_l7_call_shape(id, &op, &kind) || op != NS_L7_WRITE || !dns_send_names_peer(kind, arg) ||
	     dns_sockaddr_port(dns_name_ptr(NS_SYSCALL_REG(btf, regs, NS_REG_ARG2), kind, arg)) != NS_DNS_PORT))
		return 0;
	if (!tgid) { /* a question from a socket known untracked: the filter was not looked at */
		task = ns_current_task_btf();
		tgid = ns_current_tgid_of(task);
	}
	if (ns_syscall_compat_of(regs, task))
		return 0;
	if (arg)
		id_fd |= NS_L7_ARG_IS_ADDR;
	else
		arg = NS_SYSCALL_REG(btf, regs, NS_REG_SP);
	return ns_l7_syscall_exit(NS_RAW_TP_CTX, id_fd, NS_SYSCALL_REG(btf, regs, NS_REG_ARG2), arg,
				  (__u64)tgid << 32 | (__u32)ret);
}

static __always_inline int ns_dispatch_exit(void *ctx, struct pt_regs *regs, long ret, bool btf)
{
	long id = NS_SYSCALL_REG(btf, regs, NS_REG_NR);

	/* Compat syscalls are skipped here as at entry: another table. */
	switch (id) {
	case NS_NR_connect:
	case NS_NR_bind:
	case NS_NR_listen:
	case NS_NR_accept:
	case NS_NR_accept4:
		if (ns_syscall_compat(regs))
			return 0;
		return ns_tcp_syscall_exit(NS_RAW_TP_CTX, id, ret);
	NS_L7_DATA_SYSCALLS
		if (ns_l7_off)
			return 0;
		return ns_l7_dispatch_exit(ctx, regs, id, ret, btf);
	case NS_NR_mmap:
		if (ns_syscall_compat(regs))
			return 0;
		return ns_files_mmap(NS_RAW_TP_CTX, NS_SYSCALL_REG(btf, regs, NS_REG_ARG3),
				     NS_SYSCALL_REG(btf, regs, NS_REG_ARG5), ret);
	}
	return 0;
}

/*
 * Kernels with BTF-typed raw tracepoints (5.5): the registers are read with
 * plain loads. The loader keeps one pair of the two (src/bpf/probes.c).
 */
SEC("tp_btf/sys_enter")
int BPF_PROG(ns_sys_enter_btf, struct pt_regs *regs, long id)
{
	return ns_dispatch_enter(ctx, regs, id, true);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(ns_sys_exit_btf, struct pt_regs *regs, long ret)
{
	return ns_dispatch_exit(ctx, regs, ret, true);
}

SEC("raw_tp/sys_enter")
int BPF_PROG(ns_sys_enter, struct pt_regs *regs, long id)
{
	return ns_dispatch_enter(ctx, regs, id, false);
}

SEC("raw_tp/sys_exit")
int BPF_PROG(ns_sys_exit, struct pt_regs *regs, long ret)
{
	return ns_dispatch_exit(ctx, regs, ret, false);
}
