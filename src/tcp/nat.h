/*
 * Where NAT sent a connection, asked of conntrack where the translation
 * happened: first the connecting process's own network namespace (NAT
 * inside a pod), then the host's (PID 1's: a Service's ClusterIP DNAT is
 * there), however the agent itself is deployed. ctnetlink answers only for
 * the namespace its socket was made in, so there is one socket per
 * namespace, made on first use by entering it (util/netns.c) and kept in a
 * small table keyed by the namespace's inode.
 */
#ifndef NODESCOPE_TCP_NAT_H
#define NODESCOPE_TCP_NAT_H

#include <stddef.h>
#include <stdint.h>

#include "conn_table.h"
#include "util/strmap.h"

/* Namespaces with a socket kept (kubelet's default is 110 pods a node); least recently used out. */
#define TCP_NAT_SOCKETS 128

struct tcp_nat_sock {
	uint64_t netns; /* its namespace's inode */
	uint32_t pid;	/* the process it was entered through: gone, the socket is closed */
	int fd;
	uint64_t used; /* when last asked (tcp_nat.tick) */
};

struct tcp_nat {
	uint64_t host_netns; /* PID 1's namespace's inode */
	int host_fd;	     /* ctnetlink there; -1 without (no NAT lookups at all) */
	struct tcp_nat_sock socks[TCP_NAT_SOCKETS];
	size_t n_socks, cap; /* cap: TCP_NAT_SOCKETS (tests lower it) */
	uint64_t tick;
	struct strmap no_nat; /* "netns destination" -> until when it is known not translated */
	uint64_t n_netns_failed; /* process namespaces not entered: only the host's was asked */
	uint64_t n_evicted;	 /* sockets closed to make room for another namespace's */
};

/* Opens the host's socket; host_netns from netns_host_inode(). 0 or -ENOMEM. */
int tcp_nat_init(struct tcp_nat *n, uint64_t host_netns);
void tcp_nat_destroy(struct tcp_nat *n);

/*
 * The actual destination of a connection (tuple as its process sees it,
 * peer its formatted destination) made by pid in namespace netns (0:
 * unknown, its process gone) into actual (len bytes), which is left as it
 * is when no namespace translated it.
 */
void tcp_nat_resolve(struct tcp_nat *n, const struct tcp_tuple *tuple, uint32_t pid,
		     uint64_t netns, const char *peer, char *actual, size_t len, uint64_t now_ns);

/*
 * Closes the sockets of namespaces whose process is gone (a kept socket
 * would keep a deleted pod's namespace alive); run at each scrape.
 */
void tcp_nat_sweep(struct tcp_nat *n);

#endif
