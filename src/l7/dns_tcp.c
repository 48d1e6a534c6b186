/* DNS over TCP framing. See dns_tcp.h. */
#include "dns_tcp.h"

#define DNS_TCP_HEADER 2

struct dns_tcp_call {
	struct dns_tcp *d;
	bool req;
	dns_tcp_msg_fn fn;
	void *ctx;
};

static int64_t body_len(const uint8_t *hdr, bool req)
{
	(void)req;
	return l7_be16(hdr);
}

/*
 * No magic to look for: a chunk that is one whole message (a client's write
 * of it) starts one. state is the chunk's total (dns_tcp_feed), the framer's
 * parser state being nothing here.
 */
static bool resync(void *state, const uint8_t *data, size_t captured, bool req)
{
	(void)req;
	const size_t *total = state;
	return captured >= DNS_TCP_HEADER && l7_be16(data) + (size_t)DNS_TCP_HEADER == *total;
}

static bool message(void *state, struct l7_framer *f, bool req, l7_msg_fn fn, void *ctx)
{
	(void)state, (void)fn, (void)req;
	const struct dns_tcp_call *c = ctx;
	if (!f->r.uncaptured)
		c->fn(c->ctx, f->r.at, f->r.have, c->d->began_ns[c->req]);
	return true;
}

static const struct l7_framing dns_framing = {
	.header = DNS_TCP_HEADER,
	.body_len = body_len,
	.resync = resync,
	.message = message,
};

void dns_tcp_init(struct dns_tcp *d)
{
	for (int i = 0; i < 2; i++)
		l7_framer_init(&d->dir[i], DNS_TCP_HEADER);
}

void dns_tcp_feed(struct dns_tcp *d, bool req, const uint8_t *data, size_t captured, size_t total,
		  uint64_t ts_ns, struct l7_counters *cnt, dns_tcp_msg_fn fn, void *ctx)
{
	struct l7_framer *f = &d->dir[req];
	struct dns_tcp_call c = { d, req, fn, ctx };

	if (captured > total)
		captured = total;
	if (f->lost || (!f->in_body && !f->r.started))
		d->began_ns[req] = ts_ns; /* a message begins in this chunk */
	l7_framer_feed(f, &dns_framing, cnt, &total, req, data, captured, total, NULL, &c);
}
