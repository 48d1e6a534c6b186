/*
 * DNS over TCP (RFC 1035 4.2.2, RFC 7766): each message has a 2-byte length
 * before it. Pure: one direction of a connection, fed one syscall's bytes at
 * a time (a server reads the length alone, or a byte at a time), hands each
 * message whose bytes were all captured to a callback.
 */
#ifndef NODESCOPE_L7_DNS_TCP_H
#define NODESCOPE_L7_DNS_TCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DNS_TCP_MSG_MAX 4096 /* longer messages are skipped (counted truncated) */

struct dns_tcp_dir {
	uint8_t len_have;  /* bytes of the length prefix read (0..2) */
	uint8_t len_buf[2];
	bool in_msg;	   /* past the prefix, inside a message */
	bool keep;	   /* the message's bytes so far were captured and fit */
	bool lost;	   /* a length prefix was not captured: the framing is gone for good */
	uint32_t need;	   /* the message's length */
	uint32_t got;	   /* its bytes seen */
	uint64_t ts_ns;	   /* when its first chunk came */
	uint64_t truncated; /* messages skipped: not all captured, or longer than DNS_TCP_MSG_MAX */
	uint8_t buf[DNS_TCP_MSG_MAX];
};

typedef void (*dns_tcp_msg_fn)(void *ctx, const uint8_t *msg, size_t len, uint64_t ts_ns);

/*
 * One chunk: the first `captured` of the `total` bytes a syscall moved, at
 * ts_ns. Returns false once the framing is lost (a length not captured);
 * the direction gives nothing more.
 */
bool dns_tcp_feed(struct dns_tcp_dir *d, const uint8_t *data, size_t captured, size_t total,
		  uint64_t ts_ns, dns_tcp_msg_fn fn, void *ctx);

#endif
