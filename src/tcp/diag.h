/*
 * The byte counters of open TCP connections from the kernel's sock_diag
 * (NETLINK_SOCK_DIAG, inet_diag with tcp_info), read at a scrape: a pool
 * connection that lives for days shows its traffic, and nothing runs at
 * rest. A dump covers one network namespace: the caller opens one socket
 * per namespace. Building and parsing are pure; tcp_diag_dump does the I/O.
 */
#ifndef NODESCOPE_TCP_DIAG_H
#define NODESCOPE_TCP_DIAG_H

#include <stddef.h>
#include <stdint.h>

#include "conn_table.h"

/* One socket of a dump: its tuple (local = s*) and tcp_info's byte counters. */
typedef void (*tcp_diag_fn)(void *ctx, const struct tcp_tuple *tuple, uint64_t bytes_acked,
			    uint64_t bytes_received);

/* The dump request for family's established TCP sockets; its length (0: no room). */
size_t tcp_diag_build_request(uint16_t family, uint32_t seq, void *buf, size_t len);

/*
 * Parses one datagram of the answer, calling fn per socket. Returns 1 when
 * the dump is done (NLMSG_DONE), 0 when more follows, -EINVAL for anything
 * malformed, or the kernel's -errno (NLMSG_ERROR).
 */
int tcp_diag_parse(const void *buf, size_t len, tcp_diag_fn fn, void *ctx);

/* A NETLINK_SOCK_DIAG socket in the caller's network namespace, or -errno. */
int tcp_diag_open(void);
/* Dumps family's TCP sockets through fd: 0 or -errno. */
int tcp_diag_dump(int fd, uint16_t family, tcp_diag_fn fn, void *ctx);

#endif
