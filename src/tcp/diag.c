#include "diag.h"

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

int tcp_diag_parse(const void *buf, size_t len, tcp_diag_fn fn, void *ctx)
{
	size_t off = 0;

	while (off + sizeof(struct nlmsghdr) <= len) {
		const struct nlmsghdr *h = (const void *)((const char *)buf + off);
		if (h->nlmsg_len < sizeof(*h) || off + h->nlmsg_len > len)
			return -EINVAL;
		if (h->nlmsg_type == NLMSG_DONE)
			return 1;
		if (h->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(h);
			if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
				return -EINVAL;
			return e->error ? e->error : -EINVAL;
		}
		if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY) {
			const struct inet_diag_msg *m = NLMSG_DATA(h);
			size_t mlen = h->nlmsg_len - NLMSG_HDRLEN;
			uint64_t acked, received;
			if (mlen < sizeof(*m))
				return -EINVAL;
			int rc = info_bytes(m, mlen, &acked, &received);
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
				fn(ctx, &t, acked, received);
			}
		}
		off += NLMSG_ALIGN(h->nlmsg_len);
	}
	return 0;
}

int tcp_diag_open(void)
{
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	return fd < 0 ? -errno : fd;
}

int tcp_diag_dump(int fd, uint16_t family, tcp_diag_fn fn, void *ctx)
{
	static uint32_t seq;
	char buf[32768] __attribute__((aligned(8)));
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	size_t n = tcp_diag_build_request(family, ++seq, buf, sizeof(buf));

	if (sendto(fd, buf, n, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -errno;
	for (;;) {
		ssize_t got = recv(fd, buf, sizeof(buf), 0);
		if (got < 0)
			return errno == EINTR ? 0 : -errno;
		int rc = tcp_diag_parse(buf, (size_t)got, fn, ctx);
		if (rc)
			return rc > 0 ? 0 : rc;
	}
}
