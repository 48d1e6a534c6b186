/*
 * A listen on a wildcard address (0.0.0.0, ::) as Coroot reports it: one
 * listen_addr per address of the listener's network namespace, so the
 * server can tell which container an address of the node belongs to.
 * Addresses of interfaces that are down, link-local and multicast ones are
 * left out, and loopback unless the namespace is the host's (PID 1's; a
 * container's loopback is no service of the node). An IPv4 wildcard takes
 * the IPv4 addresses, an IPv6 one (dual-stack) all of them.
 */
#ifndef NODESCOPE_TCP_LISTEN_ADDRS_H
#define NODESCOPE_TCP_LISTEN_ADDRS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TCP_LISTEN_ADDRS_MAX 64 /* addresses of one namespace taken; more are left out */

struct tcp_ns_addr {
	int ifindex;
	uint16_t family;
	uint8_t ip[16];
};

/* What one namespace has, as the rtnetlink dumps give it. */
struct tcp_ns_addrs {
	int down[TCP_LISTEN_ADDRS_MAX]; /* interfaces whose operational state is down */
	size_t n_down;
	struct tcp_ns_addr addrs[TCP_LISTEN_ADDRS_MAX];
	size_t n_addrs;
};

/* Whether interface ifindex of ns is down. */
bool tcp_ns_addrs_down(const struct tcp_ns_addrs *ns, int ifindex);

/* Whether addr (network byte order, IPv4 in its first 4 bytes) is 0.0.0.0 or ::. */
bool tcp_addr_unspecified(uint16_t family, const uint8_t addr[16]);

/*
 * The listen addresses of a wildcard listen on port by family, from ns:
 * "ip:port" strings, each NUL-terminated, an empty one last, malloc'd. NULL
 * when none is left (the caller keeps the wildcard) or out of memory. Pure.
 */
char *tcp_listen_expand(const struct tcp_ns_addrs *ns, uint16_t family, uint16_t port,
			bool host_netns);

/* Reads ns from pid's network namespace (rtnetlink). 0 or -errno. */
int tcp_ns_addrs_read(uint32_t pid, struct tcp_ns_addrs *ns);

#endif
