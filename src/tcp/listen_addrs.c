#include "listen_addrs.h"

#include <errno.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "addr.h"
#include "node/net.h"
#include "node/netlink.h"
#include "util/netns.h"

bool tcp_addr_unspecified(uint16_t family, const uint8_t addr[16])
{
	static const uint8_t zero[16];
	return !memcmp(addr, zero, family == AF_INET ? 4 : 16);
}

bool tcp_ns_addrs_down(const struct tcp_ns_addrs *ns, int ifindex)
{
	for (size_t i = 0; i < ns->n_down; i++)
		if (ns->down[i] == ifindex)
			return true;
	return false;
}

char *tcp_listen_expand(const struct tcp_ns_addrs *ns, uint16_t family, uint16_t port,
			bool host_netns)
{
	char *out = malloc(ns->n_addrs * TCP_ADDR_STRLEN + 1);
	size_t len = 0;

	if (!out)
		return NULL;
	for (size_t i = 0; i < ns->n_addrs; i++) {
		const struct tcp_ns_addr *a = &ns->addrs[i];
		if ((family == AF_INET && a->family != AF_INET) || tcp_ns_addrs_down(ns, a->ifindex) ||
		    !node_net_ip_kept(a->family, a->ip) ||
		    (tcp_addr_loopback(a->family, a->ip) && !host_netns))
			continue;
		tcp_addr_format(a->family, a->ip, port, out + len, TCP_ADDR_STRLEN);
		len += strlen(out + len) + 1;
	}
	if (!len) {
		free(out);
		return NULL;
	}
	out[len] = '\0';
	return out;
}

static void on_link(void *ctx, const struct node_link *l)
{
	struct tcp_ns_addrs *ns = ctx;
	if (l->down && ns->n_down < TCP_LISTEN_ADDRS_MAX)
		ns->down[ns->n_down++] = l->index;
}

static void on_addr(void *ctx, const struct node_addr *a)
{
	struct tcp_ns_addrs *ns = ctx;
	if (ns->n_addrs == TCP_LISTEN_ADDRS_MAX)
		return;
	struct tcp_ns_addr *x = &ns->addrs[ns->n_addrs++];
	x->ifindex = a->index;
	x->family = (uint16_t)a->family;
	memset(x->ip, 0, sizeof(x->ip));
	memcpy(x->ip, a->ip, a->family == AF_INET ? 4 : 16);
}

int tcp_ns_addrs_read(uint32_t pid, struct tcp_ns_addrs *ns)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%u/ns/net", pid);
	int fd = netns_socket(path, node_netlink_open);
	if (fd < 0)
		return fd;
	ns->n_down = ns->n_addrs = 0;
	int err = node_netlink_dump(fd, RTM_GETLINK, on_link, NULL, ns);
	if (!err)
		err = node_netlink_dump(fd, RTM_GETADDR, NULL, on_addr, ns);
	close(fd);
	return err;
}
