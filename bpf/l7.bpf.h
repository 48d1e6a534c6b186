/*
 * The shape of the reads and writes the l7 stream captures: what a syscall
 * moves and where its buffer is. One table for the l7 handlers (l7.bpf.c),
 * the DNS helpers (dns.bpf.h) and the capture floor (bench/floor/).
 */
#ifndef NODESCOPE_L7_BPF_H
#define NODESCOPE_L7_BPF_H

#include "syscalls.bpf.h"

enum l7_buf_kind {
	L7_BUF_PLAIN = 0, /* read, write, recvfrom, sendto: (fd, buf) */
	L7_BUF_IOV = 1,	  /* readv, writev: (fd, iov) */
	L7_BUF_MSG = 2,	  /* recvmsg, sendmsg: (fd, msghdr) */
	L7_BUF_MMSG = 3,  /* sendmmsg, recvmmsg: (fd, mmsghdr[]) — the first message */
	L7_BUF_NONE = 4,  /* sendfile: bytes moved from a file, nothing to capture */
};

/* op (NS_L7_WRITE or NS_L7_READ) and kind of syscall id; false for any other syscall. */
static __always_inline bool ns_l7_call_shape(long id, __u32 *op, __u32 *kind)
{
	*op = NS_L7_WRITE;
	switch (id) {
	case NS_NR_write:
	case NS_NR_sendto:
		*kind = L7_BUF_PLAIN;
		return true;
	case NS_NR_writev:
		*kind = L7_BUF_IOV;
		return true;
	case NS_NR_sendmsg:
		*kind = L7_BUF_MSG;
		return true;
	case NS_NR_sendmmsg:
		*kind = L7_BUF_MMSG;
		return true;
	case NS_NR_sendfile:
		*kind = L7_BUF_NONE;
		return true;
	}
	*op = NS_L7_READ;
	switch (id) {
	case NS_NR_read:
	case NS_NR_recvfrom:
		*kind = L7_BUF_PLAIN;
		return true;
	case NS_NR_readv:
		*kind = L7_BUF_IOV;
		return true;
	case NS_NR_recvmsg:
		*kind = L7_BUF_MSG;
		return true;
	case NS_NR_recvmmsg:
		*kind = L7_BUF_MMSG;
		return true;
	}
	return false;
}

#define NS_PF_KTHREAD 0x00200000

/*
 * The read or write a socket hook (sock_send_length, sock_recv_length) fires
 * in: the calling task's syscall, from its saved registers, with its op and
 * kind. NULL for a kernel thread's send or receive and for one made outside
 * such a syscall (io_uring, the kernel's own sockets, splice).
 */
static __always_inline struct pt_regs *ns_l7_sock_syscall(struct task_struct *task, __u32 *op, __u32 *kind)
{
	if (task->flags & NS_PF_KTHREAD)
		return NULL;
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!ns_l7_call_shape(regs->NS_REG_NR, op, kind) || ns_syscall_compat_of(regs, task))
		return NULL;
	return regs;
}

#endif
