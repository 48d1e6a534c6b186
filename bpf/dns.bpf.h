/*
 * DNS over UDP in the l7 stream: a socket that is not connected names its
 * peer per datagram (sendto's and recvfrom's address, a message's
 * msg_name). A question sent to port 53 from an untracked UDP socket makes
 * it a DNS socket; every datagram of a DNS socket carries its own peer in
 * the record, so answers pair with questions by id and address.
 */
#ifndef NODESCOPE_DNS_BPF_H
#define NODESCOPE_DNS_BPF_H

#include "sockets.bpf.h"
#include "l7.bpf.h"

/* Where the datagram's address is: the syscall's address argument, or the message's name. */
static __always_inline __u64 dns_name_ptr(__u64 ptr, __u32 kind, __u64 addr)
{
	__u64 name = 0;

	if (kind == L7_BUF_PLAIN) /* sendto's dest_addr, recvfrom's src_addr */
		return addr;
	/* msg_name leads struct user_msghdr (and mmsghdr's msg_hdr) */
	if ((kind == L7_BUF_MSG || kind == L7_BUF_MMSG) &&
	    bpf_probe_read_user(&name, sizeof(name), (void *)ptr))
		return 0;
	return name;
}

/* Whether a send names its destination (only those can ask a DNS question unconnected). */
static __always_inline bool dns_send_names_peer(__u32 kind, __u64 addr)
{
	return kind == L7_BUF_PLAIN ? addr != 0 : kind == L7_BUF_MSG || kind == L7_BUF_MMSG;
}

/* The port of an IPv4 or IPv6 user sockaddr (host order), 0 for anything else. */
static __always_inline __u16 dns_sockaddr_port(__u64 uaddr)
{
	__u16 h[2];

	if (!uaddr || bpf_probe_read_user(h, sizeof(h), (void *)uaddr))
		return 0;
	if (h[0] != AF_INET && h[0] != AF_INET6)
		return 0;
	return bpf_ntohs(h[1]);
}

/*
 * An untracked socket about to send: a UDP socket sending to port 53 becomes
 * a DNS socket. Any other send pays the address check (nothing when the
 * call names no address, as a TCP send() does) and no map update. Out of
 * line: its copies in every call site of l7_enter overflowed the stack.
 */
static __noinline bool dns_udp_adopt(__u32 tgid, __s32 fd, __u64 ptr, __u32 kind, __u64 addr)
{
	if (dns_sockaddr_port(dns_name_ptr(ptr, kind, addr)) != NS_DNS_PORT)
		return false;
	struct sock *sk = sk_of_fd(fd);
	if (!sk_is_udp(sk))
		return false;
	track_dns_socket(tgid, fd, sk, 0);
	return true;
}

/*
 * The peer of one datagram of a DNS socket into s, from the address the call
 * named (a send's destination; a receive's source, written by the kernel).
 * A call with none (a connected socket's read or write) keeps the socket's.
 * false: the datagram is no DNS message of this socket (a client's socket
 * talking to a port other than 53). Under the socket hooks a receive's
 * source is not in the caller's buffer yet: NS_L7_F_PEER_UNKNOWN.
 */
static __always_inline bool dns_datagram_peer(struct ns_l7_sock *s, __u32 op, __u64 ptr, __u32 kind,
					      __u64 addr)
{
	struct sockaddr_in6 sa = {};
	__u64 name = dns_name_ptr(ptr, kind, addr);

	if (name && op == NS_L7_READ && ns_kernel_has(NS_FEAT_SOCKET_HOOKS)) {
		s->flags |= NS_L7_F_PEER_UNKNOWN;
		s->dport = 0;
		__builtin_memset(s->daddr, 0, sizeof(s->daddr));
		return true;
	}

	/* A sockaddr_in is shorter than a sockaddr_in6: read the longer only for IPv6. */
	if (name && bpf_probe_read_user(&sa, sizeof(struct sockaddr_in), (void *)name) == 0) {
		if (sa.sin6_family == AF_INET6 && bpf_probe_read_user(&sa, sizeof(sa), (void *)name))
			sa.sin6_family = 0;
		if (sa.sin6_family == AF_INET) {
			s->family = AF_INET;
			s->dport = bpf_ntohs(sa.sin6_port);
			__builtin_memset(s->daddr, 0, sizeof(s->daddr));
			__builtin_memcpy(s->daddr, &((struct sockaddr_in *)&sa)->sin_addr, 4);
		} else if (sa.sin6_family == AF_INET6) {
			s->family = AF_INET6;
			s->dport = bpf_ntohs(sa.sin6_port);
			__builtin_memcpy(s->daddr, &sa.sin6_addr, 16);
		}
	}
	return (s->flags & NS_L7_F_INBOUND) || s->dport == NS_DNS_PORT;
}

#endif
