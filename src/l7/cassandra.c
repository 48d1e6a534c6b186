/*
 * Cassandra's native protocol (CQL), versions 4 and 5, both directions.
 *
 * A message (an envelope) is a 9-byte header (version, with 0x80 set on
 * responses; flags; a signed 2-byte stream id; opcode; a 4-byte length) and
 * a body. Pairing is by stream id: a client keeps many streams in flight,
 * and a stream is reused only once answered. Version 5 wraps every envelope
 * after the start-up (the client's STARTUP, the server's READY or
 * AUTHENTICATE) in segments: a 3-byte little-endian header (17 bits of
 * payload length, a self-contained flag) and its CRC24, the payload, a
 * CRC32. The envelopes are read from the payloads the same way; a
 * self-contained segment starts at an envelope, where a loss of framing
 * ends. Compressed segments (STARTUP asked for compression) are passed
 * unread, each counted truncated; version 4's compressed bodies keep the
 * opcode's status and operation, without statement or error code.
 *
 * Reported: QUERY (its statement's first keyword, the text with literals
 * stripped), PREPARE, EXECUTE (the prepared statement's text, learnt from
 * the RESULT answering its PREPARE) and BATCH (its first statement). RESULT
 * is ok, ERROR failed with its code ("0x2200": invalid). The start-up,
 * authentication and REGISTER exchanges are passed (their answers too); an
 * EVENT the server pushes is a push.
 */
#define _GNU_SOURCE /* memmem */
#include <stdio.h>
#include <string.h>

#include "proto.h"
#include "reader.h"
#include "sql_strip.h"
#include "stmts.h"

#define CQ_HEADER 9
#define CQ_MAX_LEN (256u << 20)	 /* the server's native_transport_max_frame_size is smaller */
#define CQ_DETECT_MAX (16u << 20) /* detection: a boundary is trusted below 16 MiB */
#define CQ_CONTROL_MAX 8
#define CQ_PREPARES_MAX 8
#define SEG_HEADER 6 /* 3 bytes and the CRC24 */

#define F_COMPRESSED 0x01
#define F_TRACING 0x02
#define F_CUSTOM 0x04
#define F_WARNING 0x08

enum {
	OP_ERROR = 0x00, OP_STARTUP = 0x01, OP_READY = 0x02, OP_AUTHENTICATE = 0x03,
	OP_OPTIONS = 0x05, OP_SUPPORTED = 0x06, OP_QUERY = 0x07, OP_RESULT = 0x08,
	OP_PREPARE = 0x09, OP_EXECUTE = 0x0a, OP_REGISTER = 0x0b, OP_EVENT = 0x0c,
	OP_BATCH = 0x0d, OP_AUTH_CHALLENGE = 0x0e, OP_AUTH_RESPONSE = 0x0f, OP_AUTH_SUCCESS = 0x10,
};

enum seg_st { SEG_HEAD, SEG_PAYLOAD, SEG_CRC };

struct cq_dir {
	struct l7_reader r; /* envelopes */
	bool lost, in_body;
	uint8_t hdr[CQ_HEADER];
	/* version 5's segments, once on */
	bool segments;
	enum seg_st seg;
	uint8_t seg_hdr[SEG_HEADER];
	unsigned seg_have;
	uint32_t seg_left; /* payload or CRC bytes still to come */
	bool seg_lost;
};

struct cq_prepare {
	int16_t stream;
	char op[L7_OP_LEN];
	char text[L7_TEXT_LEN];
};

struct cq_state {
	struct l7_counters cnt;
	struct cq_dir d[2];
	bool compression; /* STARTUP asked for it */
	/* streams of the start-up and REGISTER requests waiting: their answers are not reported */
	int16_t control[CQ_CONTROL_MAX];
	unsigned n_control;
	/* PREPAREs waiting for their RESULT, to learn the id */
	struct cq_prepare prepares[CQ_PREPARES_MAX];
	unsigned n_prepares;
	struct l7_stmts stmts; /* prepared id (hex) -> statement */
};

static bool request_opcode(uint8_t op)
{
	return op == OP_STARTUP || op == OP_OPTIONS || op == OP_QUERY || op == OP_PREPARE ||
	       op == OP_EXECUTE || op == OP_REGISTER || op == OP_BATCH || op == OP_AUTH_RESPONSE;
}

static bool response_opcode(uint8_t op)
{
	return op == OP_ERROR || op == OP_READY || op == OP_AUTHENTICATE || op == OP_SUPPORTED ||
	       op == OP_RESULT || op == OP_EVENT || op == OP_AUTH_CHALLENGE || op == OP_AUTH_SUCCESS;
}

static bool header_ok(const uint8_t *h, bool req, uint32_t max)
{
	uint8_t v = h[0];
	if (req ? v != 0x04 && v != 0x05 : v != 0x84 && v != 0x85)
		return false;
	if (h[1] & ~0x1f)
		return false;
	int16_t stream = (int16_t)l7_be16(h + 2);
	uint8_t op = h[4];
	if (req ? !request_opcode(op) || stream < 0 : !response_opcode(op))
		return false;
	if (!req && (op == OP_EVENT) != (stream == -1))
		return false;
	return l7_be32(h + 5) < max;
}

static bool detect(const uint8_t *p, size_t n, bool req)
{
	if (!p || n < CQ_HEADER || !header_ok(p, req, CQ_DETECT_MAX))
		return false;
	uint32_t len = l7_be32(p + 5);
	/* a statement: a long string with a letter first */
	if (req && (p[4] == OP_QUERY || p[4] == OP_PREPARE) && !(p[1] & (F_COMPRESSED | F_CUSTOM))) {
		if (len < 5 || (n >= 13 && l7_be32(p + 9) > len - 4))
			return false;
		if (n >= 14 && !((p[13] | 0x20) >= 'a' && (p[13] | 0x20) <= 'z') && p[13] != ' ' &&
		    p[13] != '\n' && p[13] != '(' && p[13] != '/' && p[13] != '-')
			return false;
	}
	return true;
}

static bool cq_detect_request(const uint8_t *p, size_t n)
{
	return detect(p, n, true);
}

static bool cq_detect_response(const uint8_t *p, size_t n)
{
	return detect(p, n, false);
}

static void reset_envelopes(struct cq_dir *d)
{
	d->lost = false;
	d->in_body = false;
	l7_reader_next(&d->r, L7_U_FIXED, CQ_HEADER);
}

static int cq_init(void *sv)
{
	struct cq_state *s = sv;
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < 2; i++)
		reset_envelopes(&s->d[i]);
	return 0;
}

static void cq_free(void *sv)
{
	l7_stmts_free(&((struct cq_state *)sv)->stmts);
}

static struct l7_counters *cq_counters(void *sv)
{
	return &((struct cq_state *)sv)->cnt;
}

/* A cursor over a kept body. */
struct cur {
	const uint8_t *p;
	size_t n, off;
	bool bad;
};

static const uint8_t *take(struct cur *c, size_t k)
{
	if (c->bad || c->n - c->off < k) {
		c->bad = true;
		return NULL;
	}
	c->off += k;
	return c->p + c->off - k;
}

static uint32_t u32(struct cur *c)
{
	const uint8_t *p = take(c, 4);
	return p ? l7_be32(p) : 0;
}

static uint16_t u16(struct cur *c)
{
	const uint8_t *p = take(c, 2);
	return p ? l7_be16(p) : 0;
}

/* [string list] warnings, [bytes map] custom payload: skipped. */
static void skip_flags(struct cur *c, uint8_t flags, bool req)
{
	if (!req && (flags & F_TRACING))
		take(c, 16);
	if (!req && (flags & F_WARNING)) {
		unsigned n = u16(c);
		for (unsigned i = 0; i < n && !c->bad; i++)
			take(c, u16(c));
	}
	if (flags & F_CUSTOM) {
		unsigned n = u16(c);
		for (unsigned i = 0; i < n && !c->bad; i++) {
			take(c, u16(c));
			int32_t l = (int32_t)u32(c);
			if (l > 0)
				take(c, (size_t)l);
		}
	}
}

/* A [long string] statement, stripped, into m (as much as was kept). */
static void statement(struct cur *c, bool cut, struct l7_msg *m)
{
	uint32_t len = u32(c);
	if (c->bad)
		return;
	size_t have = c->n - c->off < len ? c->n - c->off : len;
	sql_strip(SQL_POSTGRES, (const char *)c->p + c->off, have, m->text, sizeof(m->text));
	if (have < len && cut)
		sql_mark_cut(m->text, sizeof(m->text));
	sql_operation((const char *)c->p + c->off, have, m->op, sizeof(m->op));
	take(c, have);
}

static void hex_id(const uint8_t *p, size_t n, char *out, size_t cap)
{
	size_t k = 0;
	for (size_t i = 0; i < n && k + 3 <= cap; i++)
		k += (size_t)snprintf(out + k, cap - k, "%02x", p[i]);
	out[k] = '\0';
}

static bool in_control(struct cq_state *s, int16_t stream, bool remove)
{
	for (unsigned i = 0; i < s->n_control; i++) {
		if (s->control[i] != stream)
			continue;
		if (remove)
			s->control[i] = s->control[--s->n_control];
		return true;
	}
	return false;
}

static void request(struct cq_state *s, struct cq_dir *d, l7_msg_fn fn, void *ctx)
{
	const uint8_t *h = d->hdr;
	uint8_t op = h[4], flags = h[1];
	int16_t stream = (int16_t)l7_be16(h + 2);
	struct cur c = { .p = d->r.at, .n = d->r.have };
	struct l7_msg m;
	l7_msg_init(&m, L7_MSG_REQUEST);
	m.has_id = true;
	m.id = (uint16_t)stream;

	if (op == OP_STARTUP || op == OP_OPTIONS || op == OP_REGISTER || op == OP_AUTH_RESPONSE) {
		if (op == OP_STARTUP && !(flags & F_COMPRESSED))
			s->compression = memmem(d->r.at, d->r.have, "COMPRESSION", 11) != NULL;
		if (op == OP_STARTUP && h[0] == 0x05)
			d->segments = true; /* the client's next message is in a segment */
		if (s->n_control < CQ_CONTROL_MAX && !in_control(s, stream, false))
			s->control[s->n_control++] = stream;
		return;
	}
	bool opaque = flags & F_COMPRESSED;
	if (!opaque)
		skip_flags(&c, flags, true);
	switch (op) {
	case OP_QUERY:
		if (!opaque)
			statement(&c, d->r.cut, &m);
		if (!m.op[0])
			strcpy(m.op, "QUERY");
		break;
	case OP_PREPARE:
		if (!opaque)
			statement(&c, d->r.cut, &m);
		if (s->n_prepares < CQ_PREPARES_MAX) {
			struct cq_prepare *p = &s->prepares[s->n_prepares++];
			p->stream = stream;
			memcpy(p->op, m.op, sizeof(p->op));
			memcpy(p->text, m.text, sizeof(p->text));
		}
		strcpy(m.op, "PREPARE");
		break;
	case OP_EXECUTE: {
		strcpy(m.op, "EXECUTE");
		unsigned n = opaque ? 0 : u16(&c);
		const uint8_t *id = opaque ? NULL : take(&c, n);
		char name[L7_STMT_NAME_LEN];
		if (id) {
			hex_id(id, n, name, sizeof(name));
			const struct l7_stmt *st = l7_stmts_get(&s->stmts, name);
			if (st) {
				memcpy(m.op, st->op, sizeof(m.op));
				memcpy(m.text, st->text, sizeof(m.text));
			}
		}
		break;
	}
	case OP_BATCH: {
		strcpy(m.op, "BATCH");
		take(&c, 1); /* type */
		unsigned n = u16(&c);
		const uint8_t *kind = n ? take(&c, 1) : NULL;
		struct l7_msg first;
		l7_msg_init(&first, L7_MSG_REQUEST);
		if (kind && *kind == 0) {
			statement(&c, d->r.cut, &first);
		} else if (kind && *kind == 1) {
			unsigned il = u16(&c);
			const uint8_t *id = take(&c, il);
			char name[L7_STMT_NAME_LEN];
			const struct l7_stmt *st = NULL;
			if (id) {
				hex_id(id, il, name, sizeof(name));
				st = l7_stmts_get(&s->stmts, name);
			}
			if (st)
				memcpy(first.text, st->text, sizeof(first.text));
		}
		char head[16];
		snprintf(head, sizeof(head), "BATCH(%u)", n);
		if (first.text[0] || !opaque)
			l7_join(m.text, sizeof(m.text), head, first.text);
		break;
	}
	}
	if (!m.text[0])
		l7_join(m.text, sizeof(m.text), m.op, NULL);
	s->cnt.messages++;
	fn(ctx, &m);
}

/* A RESULT of kind Prepared answering a PREPARE: the id now names its statement. */
static void prepared(struct cq_state *s, int16_t stream, struct cur *c)
{
	for (unsigned i = 0; i < s->n_prepares; i++) {
		if (s->prepares[i].stream != stream)
			continue;
		struct cq_prepare p = s->prepares[i];
		s->prepares[i] = s->prepares[--s->n_prepares];
		if (u32(c) != 4)
			return;
		unsigned n = u16(c);
		const uint8_t *id = take(c, n);
		if (!id)
			return;
		char name[L7_STMT_NAME_LEN];
		hex_id(id, n, name, sizeof(name));
		int r = l7_stmts_put(&s->stmts, name, p.op, p.text);
		if (r != 0)
			s->cnt.table_full++;
		return;
	}
}

static void response(struct cq_state *s, struct cq_dir *d, l7_msg_fn fn, void *ctx)
{
	const uint8_t *h = d->hdr;
	uint8_t op = h[4], flags = h[1];
	int16_t stream = (int16_t)l7_be16(h + 2);
	struct cur c = { .p = d->r.at, .n = d->r.have };
	struct l7_msg m;
	l7_msg_init(&m, L7_MSG_RESPONSE);
	m.has_id = true;
	m.id = (uint16_t)stream;

	if (in_control(s, stream, op != OP_AUTH_CHALLENGE)) {
		if (h[0] == 0x85 && (op == OP_READY || op == OP_AUTHENTICATE))
			d->segments = true; /* the server's next message is in a segment */
		return;
	}
	bool opaque = flags & F_COMPRESSED;
	if (!opaque)
		skip_flags(&c, flags, false);
	if (op == OP_EVENT) {
		m.kind = L7_MSG_PUSH;
	} else if (op == OP_ERROR) {
		m.status = L7_STATUS_FAILED;
		uint32_t code = opaque ? 0 : u32(&c);
		if (!opaque && !c.bad)
			snprintf(m.code, sizeof(m.code), "0x%04x", code);
		/* a PREPARE that failed */
		for (unsigned i = 0; i < s->n_prepares; i++)
			if (s->prepares[i].stream == stream)
				s->prepares[i] = s->prepares[--s->n_prepares];
	} else if (op == OP_RESULT) {
		if (!opaque)
			prepared(s, stream, &c);
	} else {
		return; /* READY, SUPPORTED... answering something not seen */
	}
	s->cnt.messages++;
	fn(ctx, &m);
}

static void segments(struct cq_state *s, struct cq_dir *d, bool req, const uint8_t *data,
		     size_t captured, size_t total, l7_msg_fn fn, void *ctx);

/* Envelopes from data[0..total) (the first `captured` bytes there). */
static void envelopes(struct cq_state *s, struct cq_dir *d, bool req, const uint8_t *data,
		      size_t captured, size_t total, l7_msg_fn fn, void *ctx)
{
	size_t pos = 0;
	while (pos < total && !d->lost) {
		enum l7_take t = l7_reader_take(&d->r, data, captured, total, &pos);
		if (t == L7_TAKE_MORE)
			return;
		if (t == L7_TAKE_LOST) {
			s->cnt.lost++;
			d->lost = true;
			return;
		}
		if (!d->in_body) {
			memcpy(d->hdr, d->r.at, CQ_HEADER);
			if (!header_ok(d->hdr, req, CQ_MAX_LEN)) {
				s->cnt.unparseable++;
				d->lost = true;
				return;
			}
			d->in_body = true;
			l7_reader_next(&d->r, L7_U_BODY, l7_be32(d->hdr + 5));
			if (l7_be32(d->hdr + 5))
				continue;
			/* an empty body (OPTIONS, READY): complete now */
		}
		if (d->r.uncaptured)
			s->cnt.truncated++;
		d->in_body = false;
		bool was_segments = d->segments;
		(req ? request : response)(s, d, fn, ctx);
		l7_reader_next(&d->r, L7_U_FIXED, CQ_HEADER);
		if (d->segments != was_segments) {
			/* the rest of this chunk is segments */
			d->seg = SEG_HEAD;
			d->seg_have = 0;
			if (pos < total) {
				size_t cap = captured > pos ? captured - pos : 0;
				segments(s, d, req, cap ? data + pos : NULL, cap, total - pos, fn,
					 ctx);
			}
			return;
		}
	}
}

/* Version 5's segments from data[0..total): their payloads go to envelopes(). */
static void segments(struct cq_state *s, struct cq_dir *d, bool req, const uint8_t *data,
		     size_t captured, size_t total, l7_msg_fn fn, void *ctx)
{
	size_t pos = 0;
	while (pos < total && !d->seg_lost) {
		size_t n = total - pos, cap = captured > pos ? captured - pos : 0;
		switch (d->seg) {
		case SEG_HEAD: {
			if (n > SEG_HEADER - d->seg_have)
				n = SEG_HEADER - d->seg_have;
			if (cap < n) {
				/* no segment can be told from its bytes without its CRC24: given up */
				s->cnt.lost++;
				d->seg_lost = true;
				return;
			}
			memcpy(d->seg_hdr + d->seg_have, data + pos, n);
			d->seg_have += (unsigned)n;
			pos += n;
			if (d->seg_have < SEG_HEADER)
				return;
			uint32_t hdr = l7_le24(d->seg_hdr);
			bool self_contained = hdr >> 17 & 1;
			if (s->compression) {
				/* 5 header bytes: the other 2 of the CRC24 go with the payload */
				d->seg_left = (hdr & 0x1ffff) + 2;
			} else {
				d->seg_left = hdr & 0x1ffff;
				if (self_contained && (d->lost || d->in_body || d->r.started))
					reset_envelopes(d); /* an envelope starts here: a loss ends */
			}
			d->seg = d->seg_left ? SEG_PAYLOAD : SEG_CRC;
			if (!d->seg_left)
				d->seg_left = 4;
			break;
		}
		case SEG_PAYLOAD:
			if (n > d->seg_left)
				n = d->seg_left;
			if (cap > n)
				cap = n;
			if (s->compression)
				s->cnt.truncated += d->seg_left == n; /* passed unread, once each */
			else
				envelopes(s, d, req, cap ? data + pos : NULL, cap, n, fn, ctx);
			pos += n;
			d->seg_left -= (uint32_t)n;
			if (!d->seg_left) {
				d->seg = SEG_CRC;
				d->seg_left = 4;
			}
			break;
		case SEG_CRC:
			if (n > d->seg_left)
				n = d->seg_left;
			pos += n;
			d->seg_left -= (uint32_t)n;
			if (!d->seg_left) {
				d->seg = SEG_HEAD;
				d->seg_have = 0;
			}
			break;
		}
	}
}

static void cq_feed(void *sv, enum l7_dir dir, const uint8_t *data, size_t captured, size_t total,
		    l7_msg_fn fn, void *ctx)
{
	struct cq_state *s = sv;
	struct cq_dir *d = &s->d[dir];
	bool req = dir == L7_DIR_REQUEST;

	if (d->segments) {
		segments(s, d, req, data, captured, total, fn, ctx);
		return;
	}
	if (d->lost) {
		if (!detect(data, captured, req))
			return;
		reset_envelopes(d);
	}
	envelopes(s, d, req, data, captured, total, fn, ctx);
}

const struct l7_proto l7_proto_cassandra = {
	.name = "cassandra",
	.family = L7_FAMILY_QUERIES,
	.pair = L7_PAIR_BY_ID,
	.default_port = 9042,
	.state_size = sizeof(struct cq_state),
	.detect_request = cq_detect_request,
	.detect_response = cq_detect_response,
	.init = cq_init,
	.feed = cq_feed,
	.free = cq_free,
	.counters = cq_counters,
};
