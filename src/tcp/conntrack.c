#include "conntrack.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netlink.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct nl_builder {
	char *buf;
	size_t len, cap;
	int overflow;
};

static struct nlattr *put_attr(struct nl_builder *b, uint16_t type, const void *data, size_t n)
{
	size_t need = NLA_ALIGN(NLA_HDRLEN + n);
	if (b->len + need > b->cap) {
		b->overflow = 1;
		return NULL;
	}
	struct nlattr *a = (struct nlattr *)(b->buf + b->len);
	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + n);
	if (n)
		memcpy((char *)a + NLA_HDRLEN, data, n);
	memset((char *)a + NLA_HDRLEN + n, 0, need - NLA_HDRLEN - n);
	b->len += need;
	return a;
}

static struct nlattr *nest_start(struct nl_builder *b, uint16_t type)
{
	return put_attr(b, type | NLA_F_NESTED, NULL, 0);
}

static void nest_end(struct nl_builder *b, struct nlattr *a)
{
	if (a)
		a->nla_len = (uint16_t)((b->buf + b->len) - (char *)a);
}

int conntrack_build_get(const struct tcp_tuple *t, uint32_t seq, void *buf, size_t len)
{
	struct nl_builder b = { buf, 0, len, 0 };
	size_t head = NLMSG_ALIGN(sizeof(struct nlmsghdr)) + NLMSG_ALIGN(sizeof(struct nfgenmsg));
	int v4 = t->family == AF_INET;
	uint8_t proto = 6; /* IPPROTO_TCP */
	uint16_t sport = htons(t->sport), dport = htons(t->dport);

	if (len < head)
		return -ENOSPC;
	memset(buf, 0, head);
	b.len = head;
	struct nlattr *orig = nest_start(&b, CTA_TUPLE_ORIG);
	struct nlattr *ip = nest_start(&b, CTA_TUPLE_IP);
	put_attr(&b, v4 ? CTA_IP_V4_SRC : CTA_IP_V6_SRC, t->saddr, v4 ? 4 : 16);
	put_attr(&b, v4 ? CTA_IP_V4_DST : CTA_IP_V6_DST, t->daddr, v4 ? 4 : 16);
	nest_end(&b, ip);
	struct nlattr *pr = nest_start(&b, CTA_TUPLE_PROTO);
	put_attr(&b, CTA_PROTO_NUM, &proto, 1);
	put_attr(&b, CTA_PROTO_SRC_PORT, &sport, 2);
	put_attr(&b, CTA_PROTO_DST_PORT, &dport, 2);
	nest_end(&b, pr);
	nest_end(&b, orig);
	if (b.overflow)
		return -ENOSPC;

	struct nlmsghdr *nh = buf;
	nh->nlmsg_len = (uint32_t)b.len;
	nh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_GET;
	nh->nlmsg_flags = NLM_F_REQUEST;
	nh->nlmsg_seq = seq;
	struct nfgenmsg *g = (struct nfgenmsg *)((char *)buf + NLMSG_ALIGN(sizeof(*nh)));
	g->nfgen_family = (uint8_t)t->family;
	g->version = NFNETLINK_V0;
	return (int)b.len;
}

/* Finds attribute `type` among [p, p+len); returns its payload or NULL. */
static const struct nlattr *find_attr(const char *p, size_t len, uint16_t type)
{
	while (len >= (size_t)NLA_HDRLEN) {
		const struct nlattr *a = (const struct nlattr *)p;
		if (a->nla_len < NLA_HDRLEN || a->nla_len > len)
			return NULL;
		if ((a->nla_type & NLA_TYPE_MASK) == type)
			return a;
		size_t step = NLA_ALIGN(a->nla_len);
		if (step > len)
			return NULL;
		p += step;
		len -= step;
	}
	return NULL;
}

static const char *payload(const struct nlattr *a)
{
	return (const char *)a + NLA_HDRLEN;
}

static size_t payload_len(const struct nlattr *a)
{
	return a->nla_len - NLA_HDRLEN;
}

int conntrack_parse_reply(const void *buf, size_t len, uint16_t *family, uint8_t addr[16],
			  uint16_t *port)
{
	const struct nlmsghdr *nh = buf;
	if (len < sizeof(*nh) || nh->nlmsg_len > len || nh->nlmsg_len < sizeof(*nh))
		return -EINVAL;
	if (nh->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(nh);
		if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
			return -EINVAL;
		return e->error ? (e->error == -ENOENT ? -ENOENT : e->error) : -ENOENT;
	}
	size_t head = NLMSG_ALIGN(sizeof(*nh)) + NLMSG_ALIGN(sizeof(struct nfgenmsg));
	if (nh->nlmsg_len < head)
		return -EINVAL;
	const struct nfgenmsg *g = (const void *)((const char *)buf + NLMSG_ALIGN(sizeof(*nh)));
	const char *attrs = (const char *)buf + head;
	size_t alen = nh->nlmsg_len - head;

	const struct nlattr *reply = find_attr(attrs, alen, CTA_TUPLE_REPLY);
	if (!reply)
		return -EINVAL;
	const struct nlattr *ip = find_attr(payload(reply), payload_len(reply), CTA_TUPLE_IP);
	const struct nlattr *pr = find_attr(payload(reply), payload_len(reply), CTA_TUPLE_PROTO);
	if (!ip || !pr)
		return -EINVAL;
	int v4 = g->nfgen_family == AF_INET;
	const struct nlattr *src = find_attr(payload(ip), payload_len(ip),
					     v4 ? CTA_IP_V4_SRC : CTA_IP_V6_SRC);
	const struct nlattr *sp = find_attr(payload(pr), payload_len(pr), CTA_PROTO_SRC_PORT);
	if (!src || payload_len(src) != (v4 ? 4u : 16u) || !sp || payload_len(sp) != 2)
		return -EINVAL;
	memset(addr, 0, 16);
	memcpy(addr, payload(src), payload_len(src));
	uint16_t p;
	memcpy(&p, payload(sp), 2);
	*port = ntohs(p);
	*family = v4 ? AF_INET : AF_INET6;
	return 0;
}

int conntrack_open(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
	if (fd < 0)
		return -errno;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int conntrack_lookup(int fd, const struct tcp_tuple *t, uint16_t *family, uint8_t addr[16],
		     uint16_t *port)
{
	char req[256], resp[4096];
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };

	int n = conntrack_build_get(t, 1, req, sizeof(req));
	if (n < 0)
		return n;
	if (sendto(fd, req, (size_t)n, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -errno;
	/* The kernel answers within the sendto: this read does not wait. */
	ssize_t r = recv(fd, resp, sizeof(resp), MSG_DONTWAIT);
	if (r < 0)
		return errno == EAGAIN ? -ENOENT : -errno;
	return conntrack_parse_reply(resp, (size_t)r, family, addr, port);
}
