/*
 * HTTP/2 (RFC 9113) and gRPC over it, both directions, pure: frames, each
 * direction's header blocks through its HPACK decoder (src/l7/hpack.c),
 * streams paired by id.
 *
 * The client's connection preface, then 9-byte frame headers (length,
 * type, flags, stream) and payloads. HEADERS (with CONTINUATION) from the
 * client opening a stream with :method is a request: its operation the
 * method, its text the method and :path (the query dropped: it may carry
 * values). The server's first final HEADERS (:status, not 1xx) answers it;
 * for gRPC (content-type application/grpc) the answer waits for the
 * trailers' grpc-status (or a trailers-only response), its time still the
 * first HEADERS'. A stream the server resets is answered failed, "reset".
 * The code is the status label as Coroot counts HTTP/2: "2xx"-style, or
 * "grpc:OK"-style for gRPC; a status of 5xx or a gRPC status other than OK
 * fails. PUSH_PROMISE blocks are decoded (they feed the server's table)
 * and not reported; DATA and the other frames are skipped by length.
 *
 * A header block too long for the reader's buffer (several frames are
 * joined up to H2_BLOCK_MAX) or not captured whole loses that direction's
 * HPACK table (counted truncated or lost); later blocks decode what they
 * can (see hpack.h), and a request whose :method or :path could not be
 * read is reported with operation "unknown".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2.h"
#include "hpack.h"
#include "reader.h"

static const char H2_PREFACE[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
#define H2_PREFACE_LEN 24
#define H2_HEADER 9
#define H2_MAX_FRAME (1u << 24)
#define H2_BLOCK_MAX 16384 /* a header block kept across CONTINUATION frames */
#define H2_STREAMS 128	   /* streams waiting for an answer */

enum { F_DATA, F_HEADERS, F_PRIORITY, F_RST, F_SETTINGS, F_PUSH, F_PING, F_GOAWAY, F_WINDOW,
       F_CONTINUATION };

#define FL_END_STREAM 0x1
#define FL_END_HEADERS 0x4
#define FL_PADDED 0x8
#define FL_PRIORITY 0x20

static const char *const grpc_names[] = {
	"OK",	       "CANCELLED",	    "UNKNOWN",		 "INVALID_ARGUMENT",
	"DEADLINE_EXCEEDED", "NOT_FOUND",	    "ALREADY_EXISTS",	 "PERMISSION_DENIED",
	"RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",	 "OUT_OF_RANGE",
	"UNIMPLEMENTED", "INTERNAL",		    "UNAVAILABLE",	 "DATA_LOSS",
	"UNAUTHENTICATED",
};

enum h2_st { H2_FRAME_HEAD, H2_PREFACE_TAIL, H2_PAYLOAD };

struct h2_dir {
	struct l7_reader r;
	enum h2_st st;
	bool lost;
	uint8_t hdr[H2_HEADER];
	struct hpack hp;
	/* the header block being joined */
	uint8_t *block;
	size_t block_len, block_cap;
	bool in_block, block_bad, block_push;
	uint32_t block_stream;
	uint8_t block_flags; /* the HEADERS frame's */
};

struct h2_stream {
	uint32_t id; /* 0: free */
	bool grpc;   /* asked or answered with content-type application/grpc: waits for trailers */
	bool answered;
	uint16_t status;
};

struct h2_state {
	struct l7_counters cnt;
	struct h2_dir d[2];
	struct h2_stream streams[H2_STREAMS];
};

/* What a decoded block said. */
struct h2_fields {
	char method[16], path[L7_TEXT_LEN - 16], content_type[32];
	int status, grpc_status;
	bool unknown; /* a field named an entry not known */
};

static bool frame_plausible(const uint8_t *p, bool client)
{
	uint32_t len = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
	uint8_t type = p[3];
	uint32_t stream = l7_be32(p + 5);
	/* detection trusts frames of the default size (16 KiB), with only their type's flags set */
	static const uint8_t flags[] = { 0x09, 0x2d, 0, 0, 0x01, 0x0c, 0x01, 0, 0, 0x04 };
	if (len > 16384 || (stream & 0x80000000u) || type > F_CONTINUATION ||
	    (p[4] & ~flags[type]))
		return false;
	switch (type) {
	case F_SETTINGS:
		return stream == 0 && len % 6 == 0 && (!(p[4] & 1) || len == 0);
	case F_PING:
		return stream == 0 && len == 8;
	case F_GOAWAY:
		return stream == 0 && len >= 8;
	case F_WINDOW:
		return len == 4;
	case F_RST:
		return stream && len == 4;
	case F_PRIORITY:
		return stream && len == 5;
	case F_HEADERS:
		/* a client opens odd streams */
		return stream && (!client || stream & 1) && len > 0;
	case F_DATA:
	case F_PUSH:
	case F_CONTINUATION:
		return stream != 0;
	default:
		return false; /* an extension frame: not taken as a boundary */
	}
}

static bool h2_detect(const uint8_t *p, size_t n, bool client)
{
	if (!p)
		return false;
	if (client && n >= H2_PREFACE_LEN && !memcmp(p, H2_PREFACE, H2_PREFACE_LEN))
		return true;
	/* the first frame, and the next when it starts in the chunk */
	if (n < H2_HEADER || !frame_plausible(p, client))
		return false;
	size_t len = (size_t)p[0] << 16 | (size_t)p[1] << 8 | p[2];
	if (n >= H2_HEADER + len + H2_HEADER)
		return frame_plausible(p + H2_HEADER + len, client);
	return true;
}

static bool h2_detect_request(const uint8_t *p, size_t n)
{
	return h2_detect(p, n, true);
}

static bool h2_detect_response(const uint8_t *p, size_t n)
{
	return h2_detect(p, n, false);
}

static int h2_init(void *sv)
{
	struct h2_state *s = sv;
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < 2; i++) {
		hpack_init(&s->d[i].hp);
		s->d[i].st = H2_FRAME_HEAD;
		l7_reader_next(&s->d[i].r, L7_U_FIXED, H2_HEADER);
	}
	return 0;
}

static void h2_free(void *sv)
{
	struct h2_state *s = sv;
	for (int i = 0; i < 2; i++) {
		hpack_free(&s->d[i].hp);
		free(s->d[i].block);
		s->d[i].block = NULL;
		s->d[i].block_cap = 0;
	}
}

static struct l7_counters *h2_counters(void *sv)
{
	return &((struct h2_state *)sv)->cnt;
}

static bool name_is(const char *name, size_t nlen, const char *want)
{
	return nlen == strlen(want) && !memcmp(name, want, nlen);
}

static int small_int(const char *v, size_t n)
{
	int x = 0;
	if (!n || n > 4)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		x = x * 10 + (v[i] - '0');
	}
	return x;
}

static void on_field(void *ctx, const char *name, size_t nlen, const char *value, size_t vlen)
{
	struct h2_fields *f = ctx;
	if (!value) {
		f->unknown = true;
		return;
	}
	if (name_is(name, nlen, ":method")) {
		l7_copy_printable(f->method, sizeof(f->method), value, vlen);
	} else if (name_is(name, nlen, ":path")) {
		/* the query may carry values: dropped */
		const char *q = memchr(value, '?', vlen);
		l7_copy_printable(f->path, sizeof(f->path), value, q ? (size_t)(q - value) : vlen);
	} else if (name_is(name, nlen, ":status")) {
		f->status = small_int(value, vlen);
	} else if (name_is(name, nlen, "grpc-status")) {
		f->grpc_status = small_int(value, vlen);
	} else if (name_is(name, nlen, "content-type")) {
		l7_copy_printable(f->content_type, sizeof(f->content_type), value, vlen);
	}
}

static bool is_grpc(const char *content_type)
{
	return !strncmp(content_type, "application/grpc", 16);
}

static struct h2_stream *stream_find(struct h2_state *s, uint32_t id)
{
	for (unsigned i = 0; i < H2_STREAMS; i++)
		if (s->streams[i].id == id)
			return &s->streams[i];
	return NULL;
}

static struct h2_stream *stream_add(struct h2_state *s, uint32_t id)
{
	struct h2_stream *free_slot = NULL, *lowest = NULL;
	for (unsigned i = 0; i < H2_STREAMS; i++) {
		struct h2_stream *st = &s->streams[i];
		if (!st->id && !free_slot)
			free_slot = st;
		if (st->id && (!lowest || st->id < lowest->id))
			lowest = st;
	}
	if (!free_slot) {
		/* the oldest stream (the lowest id) is the likeliest never answered */
		free_slot = lowest;
		s->cnt.table_full++;
	}
	memset(free_slot, 0, sizeof(*free_slot));
	free_slot->id = id;
	return free_slot;
}

static void answer(struct h2_state *s, struct h2_stream *st, bool reset, int grpc_status,
		   l7_msg_fn fn, void *ctx)
{
	struct l7_msg m;
	l7_msg_init(&m, L7_MSG_RESPONSE);
	m.has_id = true;
	m.id = st->id;
	if (reset) {
		m.status = L7_STATUS_FAILED;
		strcpy(m.code, "reset");
	} else if (st->grpc || grpc_status >= 0) {
		if (grpc_status < 0) {
			m.status = L7_STATUS_UNKNOWN;
			strcpy(m.code, "grpc:UNKNOWN");
		} else {
			const char *name = (size_t)grpc_status < sizeof(grpc_names) / sizeof(grpc_names[0]) ?
						   grpc_names[grpc_status] :
						   "UNKNOWN";
			snprintf(m.code, sizeof(m.code), "grpc:%s", name);
			if (grpc_status != 0)
				m.status = L7_STATUS_FAILED;
		}
	} else if (st->status >= 100 && st->status <= 599) {
		snprintf(m.code, sizeof(m.code), "%dxx", st->status / 100);
		if (st->status >= 500)
			m.status = L7_STATUS_FAILED;
	} else {
		m.status = L7_STATUS_UNKNOWN;
		strcpy(m.code, "unknown");
	}
	st->id = 0;
	s->cnt.messages++;
	fn(ctx, &m);
}

/* A whole header block from `client` (or the server) on stream `id`. */
static void block(struct h2_state *s, struct h2_dir *d, bool client, l7_msg_fn fn, void *ctx)
{
	struct h2_fields f = { .status = -1, .grpc_status = -1 };
	uint32_t id = d->block_stream;
	bool end_stream = d->block_flags & FL_END_STREAM;

	if (d->block_bad) {
		hpack_lost(&d->hp);
		f.unknown = true;
	} else if (hpack_decode(&d->hp, d->block, d->block_len, on_field, &f) < 0) {
		s->cnt.unparseable++;
		f.unknown = true;
	}
	if (f.unknown)
		s->cnt.undecoded++;
	if (d->block_push)
		return;
	if (client) {
		if (!f.method[0] && !f.unknown)
			return; /* the client's trailers */
		struct l7_msg m;
		l7_msg_init(&m, L7_MSG_REQUEST);
		m.has_id = true;
		m.id = id;
		if (f.method[0] && f.path[0]) {
			l7_join(m.op, sizeof(m.op), f.method, NULL);
			l7_join(m.text, sizeof(m.text), f.method, f.path);
		} else {
			strcpy(m.op, "unknown");
			strcpy(m.text, "unknown");
		}
		/* the request's content-type is enough: the answer's may name a lost entry */
		stream_add(s, id)->grpc = is_grpc(f.content_type);
		s->cnt.messages++;
		fn(ctx, &m);
		return;
	}
	struct h2_stream *st = stream_find(s, id);
	if (!st)
		return; /* a stream whose request was not seen */
	if (!st->answered) {
		if (f.status >= 100 && f.status < 200 && f.status != 101)
			return; /* informational: the final answer follows */
		st->answered = true;
		st->status = f.status < 0 ? 0 : (uint16_t)f.status;
		st->grpc |= is_grpc(f.content_type);
		if (end_stream || !st->grpc)
			answer(s, st, false, f.grpc_status, fn, ctx);
		return;
	}
	/* trailers */
	answer(s, st, false, f.grpc_status, fn, ctx);
}

/* The block buffer holds n bytes (grown as blocks need, up to H2_BLOCK_MAX). */
static bool block_room(struct h2_state *s, struct h2_dir *d, size_t n)
{
	if (n <= d->block_cap)
		return true;
	if (n > H2_BLOCK_MAX)
		return false;
	size_t cap = d->block_cap ? d->block_cap : 1024;
	while (cap < n)
		cap *= 2;
	uint8_t *b = realloc(d->block, cap);
	if (!b) {
		s->cnt.table_full++;
		return false;
	}
	d->block = b;
	d->block_cap = cap;
	return true;
}

/* A frame's payload (its start kept in the reader). */
static void frame(struct h2_state *s, struct h2_dir *d, bool client, l7_msg_fn fn, void *ctx)
{
	const uint8_t *h = d->hdr, *p = d->r.at;
	uint8_t type = h[3], flags = h[4];
	uint32_t id = l7_be32(h + 5) & 0x7fffffff;
	size_t n = d->r.have;

	switch (type) {
	case F_HEADERS:
	case F_PUSH: {
		size_t off = 0, pad = 0;
		d->in_block = true;
		d->block_len = 0;
		d->block_bad = d->r.cut;
		d->block_stream = id;
		d->block_flags = flags;
		d->block_push = type == F_PUSH;
		if (d->r.cut)
			s->cnt.truncated++;
		if (flags & FL_PADDED) {
			pad = n ? p[0] : 0;
			off = 1;
		}
		if (type == F_HEADERS && (flags & FL_PRIORITY))
			off += 5;
		if (type == F_PUSH)
			off += 4; /* the promised stream */
		if (off + pad > n)
			d->block_bad = true;
		else if (!d->block_bad) {
			size_t len = n - off - pad;
			if (!block_room(s, d, len))
				d->block_bad = true;
			else {
				if (len)
					memcpy(d->block, p + off, len);
				d->block_len = len;
			}
		}
		break;
	}
	case F_CONTINUATION:
		if (!d->in_block || id != d->block_stream) {
			s->cnt.unparseable++;
			return;
		}
		if (d->r.cut)
			s->cnt.truncated++;
		if (d->r.cut || d->block_bad || !block_room(s, d, d->block_len + n))
			d->block_bad = true;
		else if (n) {
			memcpy(d->block + d->block_len, p, n);
			d->block_len += n;
		}
		break;
	case F_DATA:
		if (!client && (flags & FL_END_STREAM)) {
			struct h2_stream *st = stream_find(s, id);
			if (st && st->answered)
				answer(s, st, false, -1, fn, ctx); /* gRPC without trailers */
		}
		return;
	case F_RST:
		if (id) {
			struct h2_stream *st = stream_find(s, id);
			if (st)
				answer(s, st, true, -1, fn, ctx);
		}
		return;
	default:
		return;
	}
	if (flags & FL_END_HEADERS) {
		d->in_block = false;
		block(s, d, client, fn, ctx);
	}
}

static void h2_feed(void *sv, enum l7_dir dir, const uint8_t *data, size_t captured, size_t total,
		    l7_msg_fn fn, void *ctx)
{
	struct h2_state *s = sv;
	struct h2_dir *d = &s->d[dir];
	bool client = dir == L7_DIR_REQUEST;
	size_t pos = 0;

	if (d->lost) {
		if (!h2_detect(data, captured, client))
			return;
		d->lost = false;
		d->in_block = false;
		d->st = H2_FRAME_HEAD;
		l7_reader_next(&d->r, L7_U_FIXED, H2_HEADER);
	}
	while (pos < total) {
		enum l7_take t = l7_reader_take(&d->r, data, captured, total, &pos);
		if (t == L7_TAKE_MORE)
			break;
		if (t == L7_TAKE_LOST) {
			s->cnt.lost++;
			d->lost = true;
			hpack_lost(&d->hp); /* a header block may have gone by */
			return;
		}
		switch (d->st) {
		case H2_FRAME_HEAD: {
			memcpy(d->hdr, d->r.at, H2_HEADER);
			if (client && !memcmp(d->hdr, H2_PREFACE, H2_HEADER)) {
				/* the connection preface's first 9 bytes: the other 15 follow */
				d->st = H2_PREFACE_TAIL;
				l7_reader_next(&d->r, L7_U_FIXED, H2_PREFACE_LEN - H2_HEADER);
				continue;
			}
			size_t len = (size_t)d->hdr[0] << 16 | (size_t)d->hdr[1] << 8 | d->hdr[2];
			uint8_t type = d->hdr[3];
			if (len >= H2_MAX_FRAME || (d->in_block && type != F_CONTINUATION)) {
				s->cnt.unparseable++;
				d->lost = true;
				hpack_lost(&d->hp);
				return;
			}
			bool keep = type == F_HEADERS || type == F_CONTINUATION || type == F_PUSH;
			d->st = H2_PAYLOAD;
			l7_reader_next(&d->r, keep ? L7_U_BODY : L7_U_SKIP, len);
			if (len)
				continue;
			frame(s, d, client, fn, ctx);
			break;
		}
		case H2_PREFACE_TAIL:
			if (memcmp(d->r.at, H2_PREFACE + H2_HEADER, H2_PREFACE_LEN - H2_HEADER)) {
				s->cnt.unparseable++;
				d->lost = true;
				return;
			}
			break;
		case H2_PAYLOAD:
			frame(s, d, client, fn, ctx);
			break;
		}
		d->st = H2_FRAME_HEAD;
		l7_reader_next(&d->r, L7_U_FIXED, H2_HEADER);
	}
}

const struct l7_proto l7_proto_http2 = {
	.name = "http2",
	.family = L7_FAMILY_HTTP,
	.pair = L7_PAIR_BY_ID,
	.default_port = 0,
	.state_size = sizeof(struct h2_state),
	.detect_request = h2_detect_request,
	.detect_response = h2_detect_response,
	.init = h2_init,
	.feed = h2_feed,
	.free = h2_free,
	.counters = h2_counters,
};
