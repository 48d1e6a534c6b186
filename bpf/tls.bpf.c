// SPDX-License-Identifier: GPL-2.0
/*
 * TLS plaintext from library calls (OpenSSL-family SSL_read/SSL_write and
 * their _ex forms, GnuTLS gnutls_record_recv/send). User space attaches
 * ns_tls_enter at each function's entry and ns_tls_ret at every return
 * instruction that can end it — never a uretprobe, which rewrites the return
 * address on the stack of the traced program. The BPF cookie says which
 * function an entry probe is on.
 */
#include "common.bpf.h"
#include "sockets.bpf.h"
#include "tls.bpf.h"
#include "arch.bpf.h"

char LICENSE[] SEC("license") = "GPL";

extern int ns_l7_emit_tls(bpf_user_pt_regs_t *ctx, const struct tls_plaintext *p);

/* Hands total bytes of plaintext at buf, moved on fd's connection sock, to stream l7. */
static __always_inline void tls_send(void *ctx, __u32 op, __s32 fd, __u64 ts_ns, __u64 total, __u64 buf,
				     const struct ns_l7_sock *sock)
{
	struct tls_plaintext pt = {
		.op = op, .fd = fd, .ts_ns = ts_ns, .total = total, .buf = buf, .sock = *sock,
	};
	ns_l7_emit_tls(ctx, &pt);
}

SEC("uprobe")
int BPF_KPROBE(ns_tls_enter, void *session, void *buf, __u64 num, void *len_ptr)
{
	__u32 fn = bpf_get_attach_cookie(ctx);
	struct tls_call *c = ns_thread_slot(&tls_calls, true);

	if (!c) {
		ns_drop(NS_DROP_TLS_CALLS_FULL);
		return 0;
	}
	c->session = (__u64)session;
	c->buf = (__u64)buf;
	c->len_ptr = (fn == NS_TLS_SSL_WRITE_EX || fn == NS_TLS_SSL_READ_EX) ? (__u64)len_ptr : 0;
	tls_call_begin(c, bpf_get_current_pid_tgid() >> 32, PT_REGS_SP(ctx));
	c->ts_ns = bpf_ktime_get_ns();
	c->fd = -1;
	c->fn = fn;
	return 0;
}

/* Plaintext bytes the call moved, from its return value (rax, x0) or *len_ptr. */
static __always_inline __u64 tls_result(const struct tls_call *c, __u64 rc)
{
	__u64 n = 0;

	switch (c->fn) {
	case NS_TLS_SSL_WRITE:
	case NS_TLS_SSL_READ:
		return (int)rc > 0 ? (int)rc : 0;
	case NS_TLS_SSL_WRITE_EX:
	case NS_TLS_SSL_READ_EX:
		if ((int)rc != 1 || !c->len_ptr ||
		    bpf_probe_read_user(&n, sizeof(n), (void *)c->len_ptr))
			return 0;
		return n;
	case NS_TLS_GNUTLS_SEND:
	case NS_TLS_GNUTLS_RECV:
		return (long)rc > 0 ? rc : 0;
	}
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(ns_tls_ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct tls_call *p = ns_thread_slot(&tls_calls, false);

	/* Another call's return (nested, or a function with no call saved). */
	if (!p || !p->sp || PT_REGS_SP(ctx) != p->sp)
		return 0;
	struct tls_call c = *p;
	tls_call_end(p, id >> 32);

	__u64 n = tls_result(&c, PT_REGS_RC(ctx));
	if (!n)
		return 0;
	bool write = c.fn == NS_TLS_SSL_WRITE || c.fn == NS_TLS_SSL_WRITE_EX ||
		     c.fn == NS_TLS_GNUTLS_SEND;
	__u32 op = write ? NS_L7_WRITE : NS_L7_READ;
	if (c.fd >= 0) {
		tls_send(ctx, op, c.fd, c.ts_ns, n, c.buf, &c.sock);
		return 0;
	}
	/* No syscall inside: served from the library's buffer, or a memory BIO. */
	__u32 tgid = id >> 32;
	struct tls_session *known = tls_session_of(c.session, tgid);
	if (known) {
		struct ns_l7_sock sock = known->sock;
		tls_send(ctx, op, known->fd, c.ts_ns, n, c.buf, &sock);
	} else if (!write && p->enc_read_set) {
		/* Its ciphertext was the thread's latest read. */
		struct ns_l7_sock sock = p->enc_read_sock;
		__s32 fd = p->enc_read_fd;
		tls_session_bind(c.session, tgid, fd, &sock);
		tls_send(ctx, op, fd, c.ts_ns, n, c.buf, &sock);
	} else if (write) {
		/* Its ciphertext is the thread's next write: sent now, bound then. */
		struct ns_l7_sock unbound = { .sock = c.session, .flags = NS_L7_F_UNBOUND };
		p->pending_session = c.session;
		tls_send(ctx, op, -1, c.ts_ns, n, c.buf, &unbound);
	} else {
		ns_drop(NS_DROP_TLS_NO_SOCKET);
	}
	return 0;
}

/*
 * Go's crypto/tls.(*Conn).Write and Read. Write is sent from its entry (the
 * fewer probes a first-run binary needs, the sooner it is covered). Read's
 * result comes at its return sites; goroutines move between threads and
 * their stacks move, so a Read is keyed by its goroutine (g: bpf/arch/:
 * r14 or the TLS slot at fs-8 on amd64, x28 on arm64) and every return site of the
 * function is its return. The socket comes from the Conn: its first field is
 * a net.Conn interface whose data is a *net.TCPConn -> *netFD -> poll.FD,
 * Sysfd at offset 16 (fdMutex: state u64, rsema u32, wsema u32). These
 * offsets hold for every Go release from 1.9 on.
 */
#define GO_IFACE_DATA 8
#define GO_POLLFD_SYSFD 16

struct go_call_key {
	__u64 g;
	__u32 tgid;
	__u32 pad;
};

struct go_call {
	__u64 buf;
	__u64 ts_ns;
	__s32 fd;
	__u32 fn;
	struct ns_l7_sock sock;
};

/* LRU: a goroutine that dies inside a call leaves nothing behind for long. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct go_call_key);
	__type(value, struct go_call);
} go_calls SEC(".maps");

static __always_inline __u64 go_stack_word(struct pt_regs *ctx, unsigned int i)
{
	__u64 v = 0;
	bpf_probe_read_user(&v, sizeof(v), (void *)(PT_REGS_SP(ctx) + 8 * i));
	return v;
}

static __always_inline __u64 go_goroutine(struct pt_regs *ctx, bool stack_abi)
{
	if (!stack_abi)
		return NS_GO_REG_G(ctx);
	return ns_go_stack_abi_g(ctx);
}

SEC("uprobe")
int ns_tls_go_enter(struct pt_regs *ctx)
{
	__u32 cookie = bpf_get_attach_cookie(ctx);
	bool stack_abi = cookie & NS_TLS_COOKIE_GO_STACK_ABI;
	__u64 conn = stack_abi ? go_stack_word(ctx, 1) : NS_GO_REG_ARG0(ctx);
	__u64 buf = stack_abi ? go_stack_word(ctx, 2) : NS_GO_REG_ARG1(ctx);
	__u64 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 data = 0, netfd = 0;
	__s64 fd = -1;

	if (bpf_probe_read_user(&data, sizeof(data), (void *)(conn + GO_IFACE_DATA)) ||
	    bpf_probe_read_user(&netfd, sizeof(netfd), (void *)data) ||
	    bpf_probe_read_user(&fd, sizeof(fd), (void *)(netfd + GO_POLLFD_SYSFD)) || fd < 0 ||
	    fd > 0x7fffffff)
		return 0;
	__u64 key = l7_key(tgid, fd);
	struct ns_l7_sock *sock = bpf_map_lookup_elem(&l7_socks, &key);
	__u32 fn = NS_TLS_COOKIE_FN(cookie);
	/*
	 * Under the socket hooks an accepted connection is tracked at its first
	 * read or write: a server's first Read, whose handshake makes those, is
	 * looked up again at its return.
	 */
	if (!sock && (fn == NS_TLS_GO_WRITE || !ns_kernel_has(NS_FEAT_SOCKET_HOOKS))) {
		ns_drop(NS_DROP_TLS_NO_SOCKET);
		return 0;
	}
	if (sock && !l7_sock_adopt(sock, key, fd))
		return 0;
	if (fn == NS_TLS_GO_WRITE) {
		if (!sock) /* (as above: for the verifier) */
			return 0;
		/* Write sends all of b or fails the connection: emit it now, no return probe. */
		__u64 len = stack_abi ? go_stack_word(ctx, 3) : NS_GO_REG_ARG2(ctx);
		tls_send(ctx, NS_L7_WRITE, fd, bpf_ktime_get_ns(), len, buf, sock);
		return 0;
	}
	struct go_call_key k = { .g = go_goroutine(ctx, stack_abi), .tgid = tgid };
	struct go_call c = {
		.buf = buf,
		.ts_ns = bpf_ktime_get_ns(),
		.fd = fd,
		.fn = fn,
	};
	if (sock)
		c.sock = *sock;
	if (bpf_map_update_elem(&go_calls, &k, &c, BPF_ANY))
		ns_drop(NS_DROP_TLS_CALLS_FULL);
	return 0;
}

SEC("uprobe")
int ns_tls_go_ret(struct pt_regs *ctx)
{
	__u32 cookie = bpf_get_attach_cookie(ctx);
	bool stack_abi = cookie & NS_TLS_COOKIE_GO_STACK_ABI;
	struct go_call_key k = { .g = go_goroutine(ctx, stack_abi),
				 .tgid = bpf_get_current_pid_tgid() >> 32 };
	struct go_call *p = bpf_map_lookup_elem(&go_calls, &k);

	if (!p || p->fn != NS_TLS_COOKIE_FN(cookie))
		return 0;
	struct go_call c = *p;
	bpf_map_delete_elem(&go_calls, &k);
	/* n is the first result: the first result register, or on the stack after the receiver and the slice. */
	__s64 n = stack_abi ? (__s64)go_stack_word(ctx, 5) : (__s64)NS_GO_REG_ARG0(ctx);
	if (n <= 0)
		return 0;
	if (!c.sock.sock) { /* not tracked at the call's entry (ns_tls_go_enter) */
		__u64 key = l7_key(k.tgid, c.fd);
		struct ns_l7_sock *sock = bpf_map_lookup_elem(&l7_socks, &key);
		if (!sock) {
			ns_drop(NS_DROP_TLS_NO_SOCKET);
			return 0;
		}
		c.sock = *sock;
	}
	tls_send(ctx, NS_L7_READ, c.fd, c.ts_ns, n, c.buf, &c.sock);
	return 0;
}
