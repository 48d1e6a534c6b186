/*
 * TCP sockets that exist before the agent starts, and UDP sockets of DNS
 * (bound to port 53, or connected to it), from /proc (every network namespace).
 */
#ifndef NODESCOPE_TCP_SCAN_H
#define NODESCOPE_TCP_SCAN_H

#include <stdint.h>

#include "conn_table.h"

#define TCP_STATE_ESTABLISHED 1
#define TCP_STATE_LISTEN 10

struct tcp_scan_entry {
	struct tcp_tuple tuple;
	int state;
	uint64_t inode;
	uint64_t netns;
	uint32_t pid; /* first process found holding it */
	int fd;
	bool inbound; /* established, on a port something listens on in its netns */
	bool udp;     /* a DNS socket: a server's (inbound, sport 53) or a client's (dport 53) */
};

/*
 * Parses one data line of /proc/net/tcp (family AF_INET) or tcp6 (AF_INET6).
 * Pure. Returns 0, or -EINVAL for the header or a malformed line.
 */
int tcp_scan_parse_line(const char *line, uint16_t family, struct tcp_scan_entry *out);

typedef void (*tcp_scan_fn)(void *ctx, const struct tcp_scan_entry *e);
/* Calls fn for each established or listening TCP socket and each DNS UDP socket held by a process. */
int tcp_scan(tcp_scan_fn fn, void *ctx);

#endif
