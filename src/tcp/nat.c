#include "nat.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "addr.h"
#include "conntrack.h"
#include "util/netns.h"

/* A destination found not translated is not asked about again for this long. */
#define NO_NAT_TTL_NS (10ull * 1000000000ull)
#define NO_NAT_MAX 65536

int tcp_nat_init(struct tcp_nat *n, uint64_t host_netns)
{
	memset(n, 0, sizeof(*n));
	n->host_fd = -1; /* tcp_nat_destroy is safe after a failure */
	if (strmap_init(&n->no_nat, NO_NAT_MAX))
		return -ENOMEM;
	n->host_netns = host_netns;
	n->cap = TCP_NAT_SOCKETS;
	n->host_fd = netns_host_socket(conntrack_open, "NAT is looked up in");
	return 0;
}

static void close_sock(struct tcp_nat *n, size_t i)
{
	close(n->socks[i].fd);
	n->socks[i] = n->socks[--n->n_socks];
}

void tcp_nat_destroy(struct tcp_nat *n)
{
	while (n->n_socks)
		close_sock(n, n->n_socks - 1);
	if (n->host_fd >= 0)
		close(n->host_fd);
	n->host_fd = -1;
	strmap_destroy(&n->no_nat);
}

/* The ctnetlink socket of pid's namespace netns, made on first use; -1 when it cannot be. */
static int netns_fd(struct tcp_nat *n, uint32_t pid, uint64_t netns)
{
	size_t lru = 0;

	for (size_t i = 0; i < n->n_socks; i++) {
		if (n->socks[i].netns == netns) {
			n->socks[i].used = ++n->tick;
			return n->socks[i].fd;
		}
		if (n->socks[i].used < n->socks[lru].used)
			lru = i;
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/%u/ns/net", pid);
	int fd = netns_socket_of(path, netns, conntrack_open);
	if (fd < 0) {
		n->n_netns_failed++; /* gone meanwhile, or its pid another process's by now */
		return -1;
	}
	if (n->n_socks >= n->cap) {
		close_sock(n, lru);
		n->n_evicted++;
	}
	n->socks[n->n_socks++] = (struct tcp_nat_sock){ netns, pid, fd, ++n->tick };
	return fd;
}

/* Whether the conntrack behind fd rewrote tuple's destination: the new one in actual. */
static bool translated(int fd, const struct tcp_tuple *tuple, const char *peer, char *actual,
		       size_t len)
{
	uint16_t family, port;
	uint8_t addr[16];
	char found[TCP_ADDR_STRLEN];

	if (fd < 0 || conntrack_lookup(fd, tuple, &family, addr, &port))
		return false;
	tcp_addr_format(family, addr, port, found, sizeof(found));
	if (!strcmp(found, peer))
		return false;
	snprintf(actual, len, "%s", found);
	return true;
}

void tcp_nat_resolve(struct tcp_nat *n, const struct tcp_tuple *tuple, uint32_t pid,
		     uint64_t netns, const char *peer, char *actual, size_t len, uint64_t now_ns)
{
	char key[TCP_ADDR_STRLEN + 24];

	if (n->host_fd < 0)
		return;
	/* Most destinations are never translated, and each lookup is two syscalls. */
	snprintf(key, sizeof(key), "%llx %s", (unsigned long long)netns, peer);
	int64_t *until = strmap_get(&n->no_nat, key);
	if (until && (uint64_t)*until > now_ns)
		return;
	if (!netns)
		n->n_netns_failed++; /* its process gone before its namespace was known */
	else if (netns != n->host_netns &&
		 translated(netns_fd(n, pid, netns), tuple, peer, actual, len))
		return;
	if (translated(n->host_fd, tuple, peer, actual, len))
		return;
	until = strmap_upsert(&n->no_nat, key);
	if (!until) {
		/* Full: forget every verdict, they are only a shortcut. */
		strmap_destroy(&n->no_nat);
		strmap_init(&n->no_nat, NO_NAT_MAX);
		until = strmap_upsert(&n->no_nat, key);
	}
	if (until)
		*until = (int64_t)(now_ns + NO_NAT_TTL_NS);
}

void tcp_nat_sweep(struct tcp_nat *n)
{
	char path[64];

	for (size_t i = n->n_socks; i-- > 0;) {
		snprintf(path, sizeof(path), "/proc/%u/ns/net", n->socks[i].pid);
		if (netns_inode(path) != n->socks[i].netns)
			close_sock(n, i);
	}
}
