/*
 * The node's network interfaces from rtnetlink (RTM_GETLINK and
 * RTM_GETADDR dumps): name, operational state, counters and addresses, as
 * Coroot reads them. Building requests and parsing answers are pure;
 * node_netlink_dump does the I/O on a socket the caller made in the
 * network namespace it wants.
 */
#ifndef NODESCOPE_NODE_NETLINK_H
#define NODESCOPE_NODE_NETLINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* IFNAMSIZ, without <net/if.h>, which cannot be included with <linux/if.h>. */
#define NODE_IFNAME_MAX 16

struct node_link {
	int index;
	char name[NODE_IFNAME_MAX];
	bool up;   /* IFLA_OPERSTATE is IF_OPER_UP (RFC 2863), as Coroot's "up" */
	bool down; /* IFLA_OPERSTATE is IF_OPER_DOWN (loopback's "unknown" is neither) */
	uint64_t rx_bytes, tx_bytes, rx_packets, tx_packets;
};

struct node_addr {
	int index;	/* the interface's */
	int family;	/* AF_INET or AF_INET6 */
	uint8_t ip[16]; /* IFA_LOCAL, else IFA_ADDRESS (the peer's on point-to-point links) */
};

typedef void (*node_link_fn)(void *ctx, const struct node_link *l);
typedef void (*node_addr_fn)(void *ctx, const struct node_addr *a);

/* A dump request of type (RTM_GETLINK or RTM_GETADDR), all families; its length (0: no room). */
size_t node_netlink_build_request(uint16_t type, uint32_t seq, void *buf, size_t len);

/*
 * Parses one datagram of a dump's answer, calling link_fn per RTM_NEWLINK
 * (with a name) and addr_fn per IPv4/IPv6 RTM_NEWADDR. Returns 1 when the
 * dump is done (NLMSG_DONE), 0 when more follows, -EINVAL for anything
 * malformed, or the kernel's -errno (NLMSG_ERROR).
 */
int node_netlink_parse(const void *buf, size_t len, node_link_fn link_fn, node_addr_fn addr_fn,
		       void *ctx);

/* A NETLINK_ROUTE socket in the caller's network namespace, or -errno. */
int node_netlink_open(void);
/* Dumps type through fd: 0 or -errno (-EINVAL: a malformed answer). */
int node_netlink_dump(int fd, uint16_t type, node_link_fn link_fn, node_addr_fn addr_fn, void *ctx);

#endif
