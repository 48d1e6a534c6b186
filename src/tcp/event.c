#define _GNU_SOURCE /* strerrorname_np */
#include "event.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

int tcp_event_check(const void *data, size_t len)
{
	const struct ns_tcp_event *e = data;
	if (len < sizeof(*e))
		return -EINVAL;
	if (e->type < NS_TCP_CONNECT || e->type > NS_TCP_RETRANSMIT)
		return -EINVAL;
	if (e->family != AF_INET && e->family != AF_INET6)
		return -EINVAL;
	return 0;
}

const char *tcp_event_type_name(enum ns_tcp_event_type t)
{
	switch (t) {
	case NS_TCP_CONNECT:
		return "connect";
	case NS_TCP_CONNECT_ERROR:
		return "connect_error";
	case NS_TCP_ACCEPT:
		return "accept";
	case NS_TCP_CLOSE:
		return "close";
	case NS_TCP_LISTEN:
		return "listen";
	case NS_TCP_LISTEN_CLOSE:
		return "listen_close";
	case NS_TCP_RETRANSMIT:
		return "retransmit";
	}
	return "unknown";
}

const char *tcp_error_name(int err)
{
	switch (err) {
	case ECONNREFUSED:
		return "refused";
	case ETIMEDOUT:
		return "timeout";
	case EHOSTUNREACH:
		return "host unreachable";
	case ENETUNREACH:
		return "network unreachable";
	case ECONNRESET:
		return "reset";
	case ECONNABORTED:
		return "aborted";
	case EADDRNOTAVAIL:
		return "address not available";
	case EACCES:
	case EPERM:
		return "not permitted";
	}
	const char *name = strerrorname_np(err);
	return name ? name : "error";
}

void tcp_event_tuple(const struct ns_tcp_event *e, struct tcp_tuple *out)
{
	out->family = e->family;
	out->sport = e->sport;
	out->dport = e->dport;
	memcpy(out->saddr, e->saddr, sizeof(out->saddr));
	memcpy(out->daddr, e->daddr, sizeof(out->daddr));
}

static uint64_t sub_sat(uint64_t v, uint64_t n)
{
	return v > n ? v - n : 0;
}

void tcp_event_payload_bytes(struct ns_tcp_event *e, bool outbound)
{
	e->bytes_sent = sub_sat(e->bytes_sent, (outbound ? 1 : 0) +
						 ((e->flags & NS_TCP_F_FIN_ACKED) ? 1 : 0));
	e->bytes_received = sub_sat(e->bytes_received, (e->flags & NS_TCP_F_FIN_RECEIVED) ? 1 : 0);
}
