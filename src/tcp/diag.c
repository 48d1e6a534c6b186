#include "diag.h"

#include "util/netlink.h"

#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/*
 * Established connections only (TCP_ESTABLISHED, 1 in include/net/tcp_states.h):
 * no FIN is in their counters yet, either way. A closing one's last bytes
 * come with its close event.
 */
#define DIAG_STATES (1u << 1)

size_t tcp_diag_build_request(uint16_t family, uint32_t seq, void *buf, size_t len)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} req = {
		.nlh = { .nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			 .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP, .nlmsg_seq = seq },
		.r = { .sdiag_family = (uint8_t)family, .sdiag_protocol = IPPROTO_TCP,
		       .idiag_ext = 1u << (INET_DIAG_INFO - 1), .idiag_states = DIAG_STATES },
	};
	if (len < sizeof(req))
		return 0;
	memcpy(buf, &req, sizeof(req));
	return sizeof(req);
}

/* The tcp_info attribute's two counters, if the attribute is long enough to hold them. */
static int info_bytes(const struct inet_diag_msg *m, size_t len, uint64_t *acked, uint64_t *received)
{
	size_t off = NLMSG_ALIGN(sizeof(*m));

	while (off + sizeof(struct nlattr) <= len) {
		const struct nlattr *a = (const void *)((const char *)m + off);
		if (a->nla_len < sizeof(*a) || off + a->nla_len > len)
			return -EINVAL;
		if (a->nla_type == INET_DIAG_INFO) {
			size_t n = a->nla_len - sizeof(*a);
			const char *p = (const char *)a + sizeof(*a);
			size_t need = offsetof(struct tcp_info, tcpi_bytes_received) +
				      sizeof(uint64_t);
			if (n < need)
				return -EINVAL;
			memcpy(acked, p + offsetof(struct tcp_info, tcpi_bytes_acked), sizeof(*acked));
			memcpy(received, p + offsetof(struct tcp_info, tcpi_bytes_received),
			       sizeof(*received));
			return 0;
		}
		off += NLA_ALIGN(a->nla_len);
	}
	return -ENOENT;
}

struct parse_ctx {
	tcp_diag_fn fn;
	void *ctx;
};

static int parse_msg(void *ctx, uint16_t type, const void *data, size_t len)
{
	const struct parse_ctx *p = ctx;
	const struct inet_diag_msg *m = data;
	uint64_t acked, received;

	if (type != SOCK_DIAG_BY_FAMILY)
		return 0;
	if (len < sizeof(*m))
		return -EINVAL;
	int rc = info_bytes(m, len, &acked, &received);
	if (rc == -EINVAL)
		return rc;
	if (!rc && (m->idiag_family == AF_INET || m->idiag_family == AF_INET6)) {
		struct tcp_tuple t = { .family = m->idiag_family,
				       .sport = ntohs(m->id.idiag_sport),
				       .dport = ntohs(m->id.idiag_dport) };
		memcpy(t.saddr, m->id.idiag_src, sizeof(t.saddr));
		memcpy(t.daddr, m->id.idiag_dst, sizeof(t.daddr));
		if (m->idiag_family == AF_INET) { /* only the first word is the address */
			memset(t.saddr + 4, 0, 12);
			memset(t.daddr + 4, 0, 12);
		}
		p->fn(p->ctx, &t, acked, received);
	}
	return 0;
}

int tcp_diag_parse(const void *buf, size_t len, tcp_diag_fn fn, void *ctx)
{
	struct parse_ctx p = { fn, ctx };
	return netlink_walk(buf, len, parse_msg, &p);
}

int tcp_diag_open(void)
{
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	return fd < 0 ? -errno : fd;
}

int tcp_diag_dump(int fd, uint16_t family, tcp_diag_fn fn, void *ctx)
{
	char req[128] __attribute__((aligned(8)));
	size_t n = tcp_diag_build_request(family, 0, req, sizeof(req));
	struct parse_ctx p = { fn, ctx };

	return n ? netlink_dump(fd, req, n, parse_msg, &p) : -EINVAL;
}
