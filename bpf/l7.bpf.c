// SPDX-License-Identifier: GPL-2.0
/*
 * Stream l7: bounded prefixes of the data tracked TCP sockets read and
 * write, from the syscall tracepoints, or from the socket hooks at the end
 * of this file where they replace those. Any other fd costs one hash lookup.
 * Records are sized to what was captured.
 *
 * Everything happens at the syscall's exit, the arguments read back from
 * the saved registers, but a write's start time (a request starts with its
 * first byte): l7_stamp_write. No state per thread, no lookup at entry: the
 * entry's work was most of what nodescope paid above the capture floor
 * (bench/floor/capture.bpf.c).
 */
#include "common.bpf.h"
#include "sockets.bpf.h"
#include "syscalls.bpf.h"
#include "tls.bpf.h"
#include "l7.bpf.h"
#include "l7_records.bpf.h"
#include "dns.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Records are built in l7_scratch and copied out (l7_output): no stream slots. */
NS_STREAM_DEFINE(l7, 8)

/* A read, write or message in flight, as its exit sees it. */
struct l7_call {
	__u64 ts_ns;
	__u64 ptr;
	__u64 addr; /* sendto's or recvfrom's address argument */
	__s32 fd;
	__u32 op;
	__u32 kind;
	struct ns_l7_sock sock;
};

/*
 * The iovecs of one readv, writev, recvmsg or sendmsg captured: memcached
 * writes a reply in pieces, gRPC a header block as a slice a field (28 on a
 * channel's first request).
 */
#define L7_IOV_MAX 32

/* Whether the buffer a write is about to send starts with a TLS record header. */
static __always_inline bool l7_write_is_tls_record(__u64 ptr, __u32 kind)
{
	struct iovec iov = {};
	struct user_msghdr msg = {};
	__u8 h[5];

	switch (kind) {
	case L7_BUF_PLAIN:
		iov.iov_base = (void *)ptr;
		break;
	case L7_BUF_IOV:
		if (bpf_probe_read_user(&iov, sizeof(iov), (void *)ptr))
			return false;
		break;
	case L7_BUF_MSG:
	case L7_BUF_MMSG:
		if (bpf_probe_read_user(&msg, sizeof(msg), (void *)ptr) ||
		    bpf_probe_read_user(&iov, sizeof(iov), msg.msg_iov))
			return false;
		break;
	default:
		return false;
	}
	if (bpf_probe_read_user(h, sizeof(h), iov.iov_base))
		return false;
	return h[0] >= 0x14 && h[0] <= 0x17 && h[1] == 0x03 && h[2] <= 0x04;
}

/*
 * A socket syscall inside a TLS library call moves ciphertext: it is not
 * captured, but it names the socket of the call (and of its session, for
 * later calls that need no syscall). Returns true when it was such a call.
 * Only a socket already seen carrying TLS records, or a write of one,
 * counts: a runtime that runs its own code inside the call (Node.js runs the
 * handshake-done handler inside SSL_read) may write to any other socket.
 */
static __always_inline bool l7_inside_tls_call(__u64 id, __s32 fd, __u64 sp, __u64 ptr, __u32 op,
					       __u32 kind, struct ns_l7_sock *sock)
{
	/* A read on a socket not seen encrypted is no call's, whatever the thread is in. */
	if (!tls_call_maybe(id >> 32) || (!(sock->flags & NS_L7_F_ENCRYPTED) && op != NS_L7_WRITE))
		return false;
	struct tls_call *c = ns_thread_slot(&tls_calls, false);
	if (!c || !c->sp)
		return false;
	if (sp >= c->sp) {
		/* The call returned unseen (longjmp, a missed return site): forget it. */
		tls_call_end(c, id >> 32);
		return false;
	}
	if (!(sock->flags & NS_L7_F_ENCRYPTED) &&
	    (op != NS_L7_WRITE || !l7_write_is_tls_record(ptr, kind)))
		return false;
	if (c->fd < 0) {
		struct tls_session_key k = { .session = c->session, .tgid = id >> 32 };
		struct tls_session ts = { .fd = fd, .sock = *sock };
		c->fd = fd;
		c->sock = *sock;
		bpf_map_update_elem(&tls_sessions, &k, &ts, BPF_ANY);
	}
	sock->flags |= NS_L7_F_ENCRYPTED;
	return true;
}

/* A bind record: the session's plaintext sent unbound belongs to fd's connection. */
static __always_inline void l7_emit_bind(void *ctx, __u64 session, __s32 fd, const struct ns_l7_sock *sock)
{
	__u32 slot;
	struct ns_l7_event *e = l7_rec_take(&slot);
	if (!e)
		return;
	e->op = NS_L7_BIND;
	e->pid = bpf_get_current_pid_tgid() >> 32;
	e->ts_ns = bpf_ktime_get_ns();
	e->fd = fd;
	e->total = e->captured = sizeof(session);
	e->conn = *sock;
	__builtin_memcpy(e->data, &session, sizeof(session));
	l7_output(ctx, e, NS_L7_HEADER_SIZE + sizeof(session));
	l7_rec_give(slot);
}

/*
 * Ciphertext moved outside any TLS call: an event loop driving a library on
 * memory BIOs. A read is remembered for the thread's next SSL_read; a write
 * is the ciphertext of the thread's last SSL_write whose socket was unknown.
 */
static __always_inline void l7_ciphertext(void *ctx, __u64 id, __s32 fd, __u32 op, const struct ns_l7_sock *sock)
{
	struct tls_call *c;

	if (op == NS_L7_READ) {
		c = ns_thread_slot(&tls_calls, true);
		if (c) {
			c->enc_read_set = 1;
			c->enc_read_fd = fd;
			c->enc_read_sock = *sock;
		}
		return;
	}
	c = ns_thread_slot(&tls_calls, false);
	if (!c || !c->pending_session)
		return;
	__u64 session = c->pending_session;
	c->pending_session = 0;
	tls_session_bind(session, id >> 32, fd, sock);
	l7_emit_bind(ctx, session, fd, sock);
}

/*
 * Finds the user buffer of a call: a plain one (*iovp 0), or an iovec
 * array (*iovp its address; *base and *len are then its first element's).
 */
static __always_inline int l7_buffer(const struct l7_call *c, __u64 *base, __u64 *len, __u64 *iovp)
{
	struct iovec iov = {};
	struct user_msghdr msg = {};

	*iovp = 0;
	switch (c->kind) {
	case L7_BUF_NONE:
		*base = 0;
		*len = 0;
		return 0;
	case L7_BUF_PLAIN:
		*base = c->ptr;
		*len = ~0ull;
		return 0;
	case L7_BUF_IOV:
		*iovp = c->ptr;
		break;
	case L7_BUF_MSG:
	case L7_BUF_MMSG: /* msg_hdr is the first member of struct mmsghdr */
		if (bpf_probe_read_user(&msg, sizeof(msg), (void *)c->ptr))
			return -1;
		*iovp = (__u64)msg.msg_iov;
		break;
	default:
		return -1;
	}
	if (bpf_probe_read_user(&iov, sizeof(iov), (void *)*iovp))
		return -1;
	*base = (__u64)iov.iov_base;
	*len = iov.iov_len;
	return 0;
}

/* Copies up to NS_L7_CAPTURE bytes of a user buffer into the record. */
static __always_inline void l7_capture(struct ns_l7_event *e, __u64 base, __u64 len)
{
	__u64 n = (__u64)e->total < len ? (__u64)e->total : len;
	if (n > NS_L7_CAPTURE)
		n = NS_L7_CAPTURE;
	n &= (NS_L7_CAPTURE << 1) - 1; /* a bound the verifier can see */
	if (n > NS_L7_CAPTURE)
		n = NS_L7_CAPTURE;
	if (n && bpf_probe_read_user(e->data, n, (void *)base))
		n = 0;
	e->captured = n;
}

/*
 * After l7_capture has copied an iovec array's first element whole, copies
 * what the next ones moved (e->total in all, in order) up to the capture
 * size. Everything walked so far was copied whole, so the bytes left are
 * e->total - e->captured: the walk ends where they do, so it never reads past
 * the array whatever its length.
 *
 * A global function, verified once apart from its caller. Each step reads
 * its position back from the record (a volatile load: an unknown number to
 * the verifier), so the paths of one step meet again at the next and the
 * verifier's states do not multiply with the steps (kernels from 6.13 on ran
 * past a million instructions otherwise). The copy's offset and length are
 * masked after barrier_var() has made them opaque: 5.10's and 6.1's verifiers
 * learn no bound from the clamps, which compare two registers, and without
 * the barrier the compiler would drop the masks as redundant.
 */
__noinline int ns_l7_capture_iov_rest(__u64 iovp, __u32 slot)
{
	struct ns_l7_event *e = bpf_map_lookup_elem(&l7_scratch, &slot);
	if (!e)
		return 0;

	for (int i = 1; i < L7_IOV_MAX; i++) {
		__u64 off = *(volatile __u32 *)&e->captured, total = e->total;
		struct iovec v;
		if (off >= total || off >= NS_L7_CAPTURE ||
		    bpf_probe_read_user(&v, sizeof(v), (void *)(iovp + i * sizeof(v))))
			break;
		__u64 n = v.iov_len;
		if (n > total - off)
			n = total - off;
		if (n > NS_L7_CAPTURE - off)
			n = NS_L7_CAPTURE - off;
		__u64 at = off;
		barrier_var(at);
		barrier_var(n);
		at &= NS_L7_CAPTURE - 1;    /* off < NS_L7_CAPTURE: a no-op */
		n &= 2 * NS_L7_CAPTURE - 1; /* n <= NS_L7_CAPTURE: a no-op */
		if (n && bpf_probe_read_user(e->data + at, n, v.iov_base))
			break;
		*(volatile __u32 *)&e->captured = off + n;
	}
	return 0;
}

/* ...and sends it. */
static __always_inline void l7_emit(void *ctx, struct ns_l7_event *e, __u64 base, __u64 len)
{
	l7_capture(e, base, len);
	l7_output(ctx, e, NS_L7_HEADER_SIZE + e->captured);
}

/* A TLS record header (handshake or alert, TLS 1.0-1.3) starts this buffer. */
static __always_inline bool l7_is_tls_record(const struct ns_l7_event *e)
{
	return e->captured >= 5 && (e->data[0] == 0x16 || e->data[0] == 0x15) &&
	       e->data[1] == 0x03 && e->data[2] <= 0x04;
}

/* One read, write or message (of sendmmsg) that moved ret bytes, built in record slot e. */
static __always_inline void l7_exit_rec(void *ctx, __u64 id, struct l7_call *call, long ret,
					struct ns_l7_event *e, __u32 slot)
{
	__u64 base, len, iovp;
	if (l7_buffer(call, &base, &len, &iovp))
		return;

	e->op = call->op;
	e->pid = id >> 32;
	e->ts_ns = call->ts_ns;
	e->fd = call->fd;
	e->total = ret;
	e->conn = call->sock;
	if ((call->sock.flags & NS_L7_F_DNS) && !dns_datagram_peer(&e->conn, call->op, call->ptr, call->kind, call->addr))
		return;
	/*
	 * Copied once, then looked at: ciphertext from a TLS library not probed
	 * (or its handshake) is not worth sending. Only a connection's first
	 * ciphertext pays the longer copy; later calls stop at entry.
	 */
	l7_capture(e, base, len);
	if (iovp && len < e->total && e->captured == len)
		ns_l7_capture_iov_rest(iovp, slot);
	/* (A DNS message's id can look like a record header.) */
	if (!(call->sock.flags & NS_L7_F_DNS) && l7_is_tls_record(e)) {
		__u64 key = l7_key(id >> 32, call->fd);
		struct ns_l7_sock *sock = bpf_map_lookup_elem(&l7_socks, &key);
		if (sock && sock->sock == call->sock.sock)
			sock->flags |= NS_L7_F_ENCRYPTED;
		call->sock.flags |= NS_L7_F_ENCRYPTED;
		l7_ciphertext(ctx, id, call->fd, call->op, &call->sock);
		return;
	}
	/* read back from the record (the walk wrote it): bounded again for the verifier */
	__u64 n = e->captured;
	n &= (NS_L7_CAPTURE << 1) - 1;
	if (n > NS_L7_CAPTURE)
		n = NS_L7_CAPTURE;
	l7_output(ctx, e, NS_L7_HEADER_SIZE + n);
}

static __always_inline int l7_exit_one(void *ctx, __u64 id, struct l7_call *call, long ret)
{
	__u32 slot;
	struct ns_l7_event *e = l7_rec_take(&slot);

	if (e) {
		l7_exit_rec(ctx, id, call, ret, e, slot);
		l7_rec_give(slot);
	}
	return 0;
}

/* sendmmsg's message i (its byte count is its msg_len). */
static __always_inline void l7_exit_mmsg(void *ctx, __u64 id, const struct l7_call *c, unsigned i)
{
	struct l7_call m = *c;
	unsigned int n = 0;

	m.ptr += i * sizeof(struct mmsghdr);
	if (bpf_probe_read_user(&n, sizeof(n), (void *)(m.ptr + offsetof(struct mmsghdr, msg_len))) ||
	    !n)
		return;
	l7_exit_one(ctx, id, &m, n);
}

/*
 * When the last write to start on this CPU started, and on which process's
 * fd (l7_key). Every write whose fd may be a tracked socket (the l7 filter)
 * is stamped at entry: a per-CPU slot and a clock read cost less than the
 * socket lookup that would tell. Its exit takes the stamp if it is still
 * its fd's; a write that slept while another one started on its CPU (or
 * moved to another CPU) is dated by its return, and one that slept while
 * another thread wrote to the same fd on its CPU by that write's start.
 */
struct l7_write_start {
	__u64 ts_ns;
	__u64 key;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct l7_write_start);
} l7_write_starts SEC(".maps");

static __always_inline int l7_stamp_write(__u64 key)
{
	__u32 zero = 0;
	struct l7_write_start *w = bpf_map_lookup_elem(&l7_write_starts, &zero);

	if (w) {
		w->ts_ns = bpf_ktime_get_ns();
		w->key = key;
	}
	return 0;
}

/* This write's stamp from its entry, or its return. (No key is 0: tgid 0 makes no syscall.) */
static __always_inline __u64 l7_write_started(__u64 key)
{
	__u32 zero = 0;
	struct l7_write_start *w = bpf_map_lookup_elem(&l7_write_starts, &zero);

	if (w && w->key == key) {
		w->key = 0;
		return w->ts_ns;
	}
	return bpf_ktime_get_ns();
}

extern int ns_tcp_sock_first_use(struct bpf_raw_tracepoint_args *ctx, __u64 sk, __u64 key);

/*
 * An untracked socket's read or write that may make it one the l7 stream
 * captures: from either hooks, a UDP socket's question to port 53 (the
 * connect, accept and bind hooks track the rest); from the socket hooks
 * (sk set), which have none of those, also an accepted connection's first
 * use (its owner is known only now) and a UDP socket connected or bound to
 * port 53 (tcp.bpf.c).
 */
static __always_inline struct ns_l7_sock *l7_first_use(void *ctx, __u32 tgid, __s32 fd, __u64 ptr, __u32 op,
							__u32 kind, __u64 addr, __u64 sk)
{
	__u64 key = l7_key(tgid, fd);

	if (sk && ns_tcp_sock_first_use(ctx, sk, key))
		return bpf_map_lookup_elem(&l7_socks, &key);
	if (op != NS_L7_WRITE || !dns_send_names_peer(kind, addr) || !dns_udp_adopt(tgid, fd, ptr, kind, addr))
		return NULL;
	return bpf_map_lookup_elem(&l7_socks, &key);
}

/*
 * The socket hooks see a sendmmsg or recvmmsg a message at a time, ret its
 * bytes, but not which message: the kernel writes a message's msg_len after
 * moving it, so the first message's still 0 says this is the first, else it
 * is the second (a resolver's A and AAAA questions, as the syscall hooks
 * capture them; callers zero msg_len, as glibc's resolver does).
 */
static __always_inline int l7_exit_mmsg_sock(void *ctx, __u64 id, const struct l7_call *c, long ret)
{
	struct l7_call m = *c;
	unsigned int first_len = 0;

	if (!bpf_probe_read_user(&first_len, sizeof(first_len),
				 (void *)(c->ptr + offsetof(struct mmsghdr, msg_len))) && first_len) {
		if (!(c->sock.flags & NS_L7_F_DNS))
			return 0;
		m.ptr += sizeof(struct mmsghdr);
	}
	return l7_exit_one(ctx, id, &m, ret);
}

/*
 * addr: sendto's or recvfrom's address argument (0 for the other calls).
 * id: the process in the high half, as bpf_get_current_pid_tgid's (the
 * thread is not needed). sk: the socket, from the socket hooks; 0 from the
 * syscall hooks.
 */
static __always_inline int l7_exit(void *ctx, __u64 id, __s32 fd, __u64 ptr, __u32 op, __u32 kind,
				   __u64 sp, __u64 addr, long ret, __u64 sk)
{
	__u64 key = l7_key(id >> 32, fd);

	/*
	 * A call that moved nothing (an event loop's last read, the one that
	 * says EAGAIN) matters only inside a TLS call, which learns its socket
	 * from it: the thread's slot costs less than the socket's lookup, and
	 * the filter of processes in a call less again.
	 */
	if (ret <= 0) {
		if (!tls_call_maybe(id >> 32))
			return 0;
		struct tls_call *c = ns_thread_slot(&tls_calls, false);
		if (!c || !c->sp)
			return 0;
	}
	struct ns_l7_sock *sock = l7_socks_find(key);

	/*
	 * The socket hooks name the socket: an entry for another one is an fd
	 * closed and reused unseen (no close hook there), and goes.
	 */
	if (sk && sock && sock->sock && sock->sock != sk) {
		l7_socks_delete(key);
		sock = NULL;
	}
	/* Not a tracked socket: the common, cheap case (unless its first use makes it one). */
	if (!sock && !(sock = l7_first_use(ctx, id >> 32, fd, ptr, op, kind, addr, sk)))
		return 0;
	if (!l7_sock_adopt(sock, key, fd))
		return 0;
	if (l7_inside_tls_call(id, fd, sp, ptr, op, kind, sock))
		return 0;
	if (sock->flags & NS_L7_F_ENCRYPTED) {
		if (kind != L7_BUF_NONE)
			l7_ciphertext(ctx, id, fd, op, sock);
		return 0;
	}
	if (ret <= 0)
		return 0;
	struct l7_call call = {
		/* The socket hooks see a write's end only, which dates it. */
		.ts_ns = op == NS_L7_WRITE && !sk ? l7_write_started(key) : bpf_ktime_get_ns(),
		.ptr = ptr,
		.addr = addr,
		.fd = fd,
		.op = op,
		.kind = kind,
		.sock = *sock,
	};
	if (call.kind != L7_BUF_MMSG)
		return l7_exit_one(ctx, id, &call, ret);
	if (sk) /* the socket hooks: one message, ret its bytes */
		return l7_exit_mmsg_sock(ctx, id, &call, ret);
	/*
	 * sendmmsg and recvmmsg return the messages moved. A stream's first is
	 * captured; a resolver sends its A and AAAA questions in one call (and
	 * a server may read two), each a record.
	 */
	l7_exit_mmsg(ctx, id, &call, 0);
	if (ret > 1 && (call.sock.flags & NS_L7_F_DNS))
		l7_exit_mmsg(ctx, id, &call, 1);
	return 0;
}

/* Called by the TLS return probes (tls.bpf.c). */
__hidden int ns_l7_emit_tls(bpf_user_pt_regs_t *ctx, const struct tls_plaintext *p)
{
	__u32 slot;
	struct ns_l7_event *e;

	if (!p || !p->total || p->total > 0xffffffffull || !(e = l7_rec_take(&slot)))
		return 0;
	e->op = p->op;
	e->pid = bpf_get_current_pid_tgid() >> 32;
	e->ts_ns = p->op == NS_L7_WRITE ? p->ts_ns : bpf_ktime_get_ns();
	e->fd = p->fd;
	e->total = p->total;
	e->conn = p->sock;
	e->conn.flags |= NS_L7_F_TLS;
	l7_emit(ctx, e, p->buf, ~0ull);
	l7_rec_give(slot);
	return 0;
}

/*
 * Called by the syscall dispatcher (syscalls.bpf.c), which has read the
 * process from the kernel (one helper call) and found the fd's slot in the
 * l7 filter set: at entry for close and the writes (key: l7_key of the
 * process and fd), at exit for the reads and writes it lists.
 *
 * At exit, id_fd holds the syscall number in bits 32-62 and the fd in the
 * low half; bit 63 (NS_L7_ARG_IS_ADDR) says that arg is sendto's or
 * recvfrom's address, else it is the stack pointer (five arguments at most:
 * a datagram sent to an address is no TLS library's). tgid_ret: the process
 * in the high half, the syscall's return value in the low (a read or write
 * returns 2 GiB less a page at most, sendmmsg and recvmmsg 1024 messages).
 */
__hidden int ns_l7_syscall_enter(long id, __u64 key)
{
	if (id == NS_NR_close) {
		/* A closed fd number may be reused for anything: forget it at once. */
		l7_socks_delete(key);
		return 0;
	}
	return l7_stamp_write(key);
}

__hidden int ns_l7_syscall_exit(struct bpf_raw_tracepoint_args *ctx, __u64 id_fd, __u64 arg2, __u64 arg,
				__u64 tgid_ret)
{
	long id = (id_fd >> 32) & ~(NS_L7_ARG_IS_ADDR >> 32);
	__s32 fd = (__s32)id_fd;
	__u64 addr = id_fd & NS_L7_ARG_IS_ADDR ? arg : 0, sp = id_fd & NS_L7_ARG_IS_ADDR ? 0 : arg;
	__u32 op, kind;

	if (!ns_l7_call_shape(id, &op, &kind))
		return 0;
	return l7_exit(ctx, tgid_ret & ~0xffffffffull, fd, arg2, op, kind, sp, addr, (__s32)tgid_ret, 0);
}

/*
 * The socket hooks, which the loader attaches instead of the syscall hooks
 * (src/bpf/probes.c, probes_pick_hooks): a socket's send or receive, in
 * sock_sendmsg and sock_recvmsg after the call. Nothing else passes there,
 * so no other syscall on the node pays anything. The call, its fd and
 * buffer come from the caller's saved registers (ns_l7_sock_syscall).
 */
static __always_inline int l7_sock_call(void *ctx, struct sock *sk, int ret)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 op, kind;
	struct pt_regs *regs = ns_l7_sock_syscall(task, &op, &kind);

	if (!regs)
		return 0;
	long id = regs->NS_REG_NR;
	__u64 addr = 0, sp = regs->NS_REG_SP;
	if (id == NS_NR_sendto || id == NS_NR_recvfrom)
		addr = regs->NS_REG_ARG5;
	if (addr) /* as the syscall hooks pass it: no TLS library sends to an address */
		sp = 0;
	return l7_exit(ctx, (__u64)task->tgid << 32, (__s32)regs->NS_REG_ARG1, regs->NS_REG_ARG2, op, kind,
		       sp, addr, ret, (__u64)sk);
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(ns_sock_send, struct sock *sk, int ret, int flags)
{
	return l7_sock_call(ctx, sk, ret);
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(ns_sock_recv, struct sock *sk, int ret, int flags)
{
	return l7_sock_call(ctx, sk, ret);
}

