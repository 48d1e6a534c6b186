/*
 * Coroot's --track-public-network: which outbound destinations are kept.
 * A private (RFC 1918, 100.64.0.0/10, fc00::/7) or loopback destination
 * always is; a link-local one never; a public one only inside the given
 * networks, the node's own public networks, or when NAT sends it to a kept
 * address (then that destination stays kept, as in Coroot). With Coroot's
 * default 0.0.0.0/0 every IPv4 destination is kept and no public IPv6 one.
 */
#ifndef NODESCOPE_TCP_PUBLIC_NET_H
#define NODESCOPE_TCP_PUBLIC_NET_H

#include <stdbool.h>
#include <stdint.h>

#include "cli.h"
#include "util/strmap.h"

struct tcp_public_net {
	const struct ns_cidrs *given;
	struct ns_cidrs node;	/* the node's own public networks, read at start */
	struct strmap let_in;	/* public destinations kept for their NAT target */
};

/* Whether addr (IPv4-mapped IPv6 as IPv4) is in one of l's networks. Pure. */
bool ns_cidrs_contain(const struct ns_cidrs *l, uint16_t family, const uint8_t addr[16]);

/* given outlives f. */
int tcp_public_net_init(struct tcp_public_net *f, const struct ns_cidrs *given);
void tcp_public_net_destroy(struct tcp_public_net *f);
/* Adds a network of the node's own (its public addresses' networks). */
void tcp_public_net_add_node(struct tcp_public_net *f, const struct ns_cidr *net);
/* Adds the networks of the public addresses on the interfaces of the caller's namespace. */
void tcp_public_net_read_node(struct tcp_public_net *f);
/* Whether a connection to dst, which NAT sends to actual (dst without NAT), is left out. */
bool tcp_public_net_skip(struct tcp_public_net *f, uint16_t family, const uint8_t dst[16],
			 uint16_t actual_family, const uint8_t actual[16]);

#endif
