/*
 * Where a connection really goes when NAT rewrote it: asks the kernel's
 * connection tracking (ctnetlink) for the reply direction of a tuple.
 * Message building and parsing are pure; conntrack_lookup does the I/O.
 */
#ifndef NODESCOPE_TCP_CONNTRACK_H
#define NODESCOPE_TCP_CONNTRACK_H

#include <stddef.h>
#include <stdint.h>

#include "conn_table.h"

/* Builds a ctnetlink GET for the original-direction tuple; returns its length or -ENOSPC. */
int conntrack_build_get(const struct tcp_tuple *t, uint32_t seq, void *buf, size_t len);
/*
 * Parses the kernel's answer: 0 with the actual destination (the reply
 * direction's source) in *family/addr/port, -ENOENT when the connection is
 * not tracked, -EINVAL for anything malformed.
 */
int conntrack_parse_reply(const void *buf, size_t len, uint16_t *family, uint8_t addr[16],
			  uint16_t *port);

/* A ctnetlink socket, or -errno. */
int conntrack_open(void);
/* The actual destination of t: 0, -ENOENT (not tracked / no conntrack), or -errno. */
int conntrack_lookup(int fd, const struct tcp_tuple *t, uint16_t *family, uint8_t addr[16],
		     uint16_t *port);

#endif
