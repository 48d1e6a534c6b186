/*
 * DNS over TCP (RFC 1035 4.2.2, RFC 7766): each message has a 2-byte length
 * before it, framed by the shared length-prefixed framer (frames.h). Pure:
 * one connection, fed one syscall's bytes at a time per direction (a server
 * reads the length alone, or a byte at a time); hands each message to a
 * callback, dated by the chunk it began in.
 */
#ifndef NODESCOPE_L7_DNS_TCP_H
#define NODESCOPE_L7_DNS_TCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frames.h"

struct dns_tcp {
	struct l7_framer dir[2]; /* [true]: the client's questions, [false]: the answers */
	uint64_t began_ns[2];	 /* when the message being read began */
};

/* A message (msg: its first len bytes kept, at most L7_READER_BUF) that began at ts_ns. */
typedef void (*dns_tcp_msg_fn)(void *ctx, const uint8_t *msg, size_t len, uint64_t ts_ns);

void dns_tcp_init(struct dns_tcp *d);
/*
 * One chunk of the client's (req) or the server's bytes: the first
 * `captured` of the `total` a syscall moved, at ts_ns. Framing lost to
 * uncaptured bytes picks up again at a chunk holding one whole message
 * (its length is the chunk's). Drops are counted in cnt.
 */
void dns_tcp_feed(struct dns_tcp *d, bool req, const uint8_t *data, size_t captured, size_t total,
		  uint64_t ts_ns, struct l7_counters *cnt, dns_tcp_msg_fn fn, void *ctx);

#endif
