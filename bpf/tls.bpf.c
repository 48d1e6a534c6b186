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

char LICENSE[] SEC("license") = "GPL";

extern int ns_l7_emit_tls(const struct tls_plaintext *p);

SEC("uprobe")
int BPF_KPROBE(ns_tls_enter, void *session, void *buf, __u64 num, void *len_ptr)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 fn = bpf_get_attach_cookie(ctx);
	struct tls_call c = {
		.session = (__u64)session,
		.buf = (__u64)buf,
		.len_ptr = (fn == NS_TLS_SSL_WRITE_EX || fn == NS_TLS_SSL_READ_EX) ? (__u64)len_ptr : 0,
		.sp = PT_REGS_SP(ctx),
		.ts_ns = bpf_ktime_get_ns(),
		.fd = -1,
		.fn = fn,
	};

	if (bpf_map_update_elem(&tls_calls, &id, &c, BPF_ANY))
		ns_drop(NS_DROP_TLS_CALLS_FULL);
	return 0;
}

/* Plaintext bytes the call moved, from its return value (rax) or *len_ptr. */
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
	struct tls_call *p = bpf_map_lookup_elem(&tls_calls, &id);

	/* Another call's return (nested, or a function with no call saved). */
	if (!p || PT_REGS_SP(ctx) != p->sp)
		return 0;
	struct tls_call c = *p;
	bpf_map_delete_elem(&tls_calls, &id);

	__u64 n = tls_result(&c, PT_REGS_RC(ctx));
	if (!n)
		return 0;
	if (c.fd < 0) {
		/* Served from the library's buffer: the session's socket is known. */
		struct tls_session_key k = { .session = c.session, .tgid = id >> 32 };
		struct tls_session *known = bpf_map_lookup_elem(&tls_sessions, &k);
		if (!known) {
			ns_drop(NS_DROP_TLS_NO_SOCKET);
			return 0;
		}
		c.fd = known->fd;
		c.sock = known->sock;
	}
	bool write = c.fn == NS_TLS_SSL_WRITE || c.fn == NS_TLS_SSL_WRITE_EX ||
		     c.fn == NS_TLS_GNUTLS_SEND;
	struct tls_plaintext pt = {
		.op = write ? NS_L7_WRITE : NS_L7_READ,
		.fd = c.fd,
		.ts_ns = c.ts_ns,
		.total = n,
		.buf = c.buf,
		.sock = c.sock,
	};
	ns_l7_emit_tls(&pt);
	return 0;
}
