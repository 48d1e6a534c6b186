#include "netlink.h"

#include <errno.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "util/netlink.h"

size_t node_netlink_build_request(uint16_t type, uint32_t seq, void *buf, size_t len)
{
	/* An ifinfomsg is the larger of the two headers; the kernel reads rtgen_family from either. */
	struct {
		struct nlmsghdr nlh;
		struct ifinfomsg ifi;
	} req = {
		.nlh = { .nlmsg_len = sizeof(req), .nlmsg_type = type,
			 .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP, .nlmsg_seq = seq },
		.ifi = { .ifi_family = AF_UNSPEC },
	};
	if (len < sizeof(req) || (type != RTM_GETLINK && type != RTM_GETADDR))
		return 0;
	memcpy(buf, &req, sizeof(req));
	return sizeof(req);
}

/* Walks the attributes of [p, p + len): calls fn for each, -EINVAL if one overruns. */
#define FOR_EACH_ATTR(a, p, len, off)                                                      \
	for (size_t off = 0; off + sizeof(struct rtattr) <= (len); off += RTA_ALIGN((a)->rta_len)) \
		if (((a) = (const struct rtattr *)((const char *)(p) + off)),                  \
		    (a)->rta_len < sizeof(struct rtattr) || off + (a)->rta_len > (len))        \
			return -EINVAL;                                                        \
		else

static int parse_link(const void *msg, size_t len, node_link_fn fn, void *ctx)
{
	const struct ifinfomsg *ifi = msg;
	const struct rtattr *a;
	struct node_link l = { 0 };
	size_t hdr = NLMSG_ALIGN(sizeof(*ifi));

	if (len < sizeof(*ifi))
		return -EINVAL;
	l.index = ifi->ifi_index;
	int have_stats64 = 0;
	FOR_EACH_ATTR(a, (const char *)msg + hdr, len > hdr ? len - hdr : 0, off)
	{
		const char *data = RTA_DATA(a);
		size_t n = RTA_PAYLOAD(a);
		switch (a->rta_type) {
		case IFLA_IFNAME:
			/* A C string that must end inside its attribute and fit a name. */
			if (!n || !memchr(data, '\0', n) || strnlen(data, n) >= sizeof(l.name))
				return -EINVAL;
			strcpy(l.name, data);
			break;
		case IFLA_OPERSTATE:
			if (n < 1)
				return -EINVAL;
			l.up = (uint8_t)data[0] == IF_OPER_UP;
			l.down = (uint8_t)data[0] == IF_OPER_DOWN;
			break;
		case IFLA_STATS64: {
			struct rtnl_link_stats64 s;
			if (n < offsetof(struct rtnl_link_stats64, rx_errors))
				return -EINVAL;
			memset(&s, 0, sizeof(s));
			memcpy(&s, data, n < sizeof(s) ? n : sizeof(s)); /* payload may be unaligned */
			l.rx_packets = s.rx_packets;
			l.tx_packets = s.tx_packets;
			l.rx_bytes = s.rx_bytes;
			l.tx_bytes = s.tx_bytes;
			have_stats64 = 1;
			break;
		}
		case IFLA_STATS: { /* 32-bit counters, only if there is nothing better */
			struct rtnl_link_stats s;
			if (n < offsetof(struct rtnl_link_stats, rx_errors))
				return -EINVAL;
			if (have_stats64)
				break;
			memset(&s, 0, sizeof(s));
			memcpy(&s, data, n < sizeof(s) ? n : sizeof(s));
			l.rx_packets = s.rx_packets;
			l.tx_packets = s.tx_packets;
			l.rx_bytes = s.rx_bytes;
			l.tx_bytes = s.tx_bytes;
			break;
		}
		}
	}
	if (l.name[0])
		fn(ctx, &l);
	return 0;
}

static int parse_addr(const void *msg, size_t len, node_addr_fn fn, void *ctx)
{
	const struct ifaddrmsg *ifa = msg;
	const struct rtattr *a;
	size_t hdr = NLMSG_ALIGN(sizeof(*ifa));
	struct node_addr ad = { 0 };
	int have_local = 0, have_addr = 0;
	uint8_t address[16] = { 0 };

	if (len < sizeof(*ifa))
		return -EINVAL;
	if (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6)
		return 0;
	size_t alen = ifa->ifa_family == AF_INET ? 4 : 16;
	ad.index = (int)ifa->ifa_index;
	ad.family = ifa->ifa_family;
	FOR_EACH_ATTR(a, (const char *)msg + hdr, len > hdr ? len - hdr : 0, off)
	{
		if (a->rta_type != IFA_LOCAL && a->rta_type != IFA_ADDRESS)
			continue;
		if (RTA_PAYLOAD(a) != alen)
			return -EINVAL;
		if (a->rta_type == IFA_LOCAL) {
			memcpy(ad.ip, RTA_DATA(a), alen);
			have_local = 1;
		} else {
			memcpy(address, RTA_DATA(a), alen);
			have_addr = 1;
		}
	}
	if (!have_local && !have_addr)
		return 0;
	if (!have_local)
		memcpy(ad.ip, address, alen);
	fn(ctx, &ad);
	return 0;
}

struct parse_ctx {
	node_link_fn link_fn;
	node_addr_fn addr_fn;
	void *ctx;
};

static int parse_msg(void *ctx, uint16_t type, const void *data, size_t len)
{
	const struct parse_ctx *p = ctx;
	if (type == RTM_NEWLINK && p->link_fn)
		return parse_link(data, len, p->link_fn, p->ctx);
	if (type == RTM_NEWADDR && p->addr_fn)
		return parse_addr(data, len, p->addr_fn, p->ctx);
	return 0;
}

int node_netlink_parse(const void *buf, size_t len, node_link_fn link_fn, node_addr_fn addr_fn,
		       void *ctx)
{
	struct parse_ctx p = { link_fn, addr_fn, ctx };
	return netlink_walk(buf, len, parse_msg, &p);
}

int node_netlink_open(void)
{
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	/* The kernel answers a dump at once; this only bounds a scrape if it ever did not. */
	struct timeval tv = { .tv_sec = 2 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

int node_netlink_dump(int fd, uint16_t type, node_link_fn link_fn, node_addr_fn addr_fn, void *ctx)
{
	char req[64] __attribute__((aligned(8)));
	size_t n = node_netlink_build_request(type, 0, req, sizeof(req));
	struct parse_ctx p = { link_fn, addr_fn, ctx };

	return n ? netlink_dump(fd, req, n, parse_msg, &p) : -EINVAL;
}
