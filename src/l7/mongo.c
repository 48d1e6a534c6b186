/*
 * MongoDB wire protocol: a 16-byte little-endian header (length, requestID,
 * responseTo, opCode) and a body. Pairing is by id: a reply's responseTo
 * names its request's requestID.
 *
 * OP_MSG (2013): flag bits, then sections: kind 0 is the command document,
 * whose first key is the command's name ("find") and whose value is often
 * the collection; kind 1 is a document sequence (inserted documents), passed.
 * A reply fails when its document says `ok: 0`; a reply too long to be seen
 * whole may hide `ok` past what was captured (the server puts it last on
 * success, first on error): its status is then unknown. moreToCome on a
 * request means no reply; on a reply, that more replies follow, each naming
 * the previous one: those are not paired. OP_QUERY / OP_REPLY (the legacy
 * pair, still used for the first hello by old drivers) are read the same
 * way; OP_COMPRESSED is reported with operation "unknown" and status unknown.
 *
 * Only the document's start is kept (the reader's buffer); elements are
 * walked with every length checked against it.
 */
#include <stdio.h>
#include <string.h>

#include "proto.h"
#include "frames.h"

#define OP_REPLY 1
#define OP_UPDATE 2001
#define OP_INSERT 2002
#define OP_QUERY 2004
#define OP_GET_MORE 2005
#define OP_DELETE 2006
#define OP_KILL_CURSORS 2007
#define OP_COMPRESSED 2012
#define OP_MSG 2013

#define MSG_CHECKSUM 0x1u
#define MSG_MORE_TO_COME 0x2u
#define MSG_EXHAUST 0x10000u

#define MG_MAX_LEN (48u << 20) /* the server's largest message */

struct mg_state {
	struct l7_counters cnt;
	struct l7_framer d[2];
	bool streaming; /* a reply with moreToCome came: its followers answer no request */
	uint32_t stream_id;
};

static bool known_op(uint32_t op, bool request)
{
	if (request)
		return op == OP_MSG || op == OP_QUERY || op == OP_COMPRESSED || op == OP_UPDATE ||
		       op == OP_INSERT || op == OP_GET_MORE || op == OP_DELETE || op == OP_KILL_CURSORS;
	return op == OP_MSG || op == OP_REPLY || op == OP_COMPRESSED;
}

/* One BSON element in b[0..n): type, key, where the value starts and its size. */
struct bson_el {
	uint8_t type;
	const char *key;
	const uint8_t *v;
	size_t vlen; /* the value's size; may reach past n */
};

/* The value size of a BSON type at v (avail bytes known), or -1 when unknown. */
static long bson_value_size(uint8_t t, const uint8_t *v, size_t avail)
{
	switch (t) {
	case 0x01: case 0x09: case 0x11: case 0x12:
		return 8;
	case 0x02: case 0x0d: case 0x0e:
		return avail >= 4 ? 4 + (long)l7_le32(v) : -1;
	case 0x03: case 0x04: case 0x0f:
		return avail >= 4 ? (long)l7_le32(v) : -1;
	case 0x05:
		return avail >= 4 ? 5 + (long)l7_le32(v) : -1;
	case 0x06: case 0x0a: case 0x7f: case 0xff:
		return 0;
	case 0x07:
		return 12;
	case 0x08:
		return 1;
	case 0x10:
		return 4;
	case 0x13:
		return 16;
	case 0x0b: {
		const uint8_t *z1 = memchr(v, 0, avail);
		const uint8_t *z2 = z1 ? memchr(z1 + 1, 0, avail - (size_t)(z1 + 1 - v)) : NULL;
		return z2 ? z2 + 1 - v : -1;
	}
	case 0x0c:
		return avail >= 4 ? 4 + (long)l7_le32(v) + 12 : -1;
	default:
		return -1;
	}
}

/*
 * The next element of the document b[0..n) at *off (start at 4, past the
 * document's length). Returns 1 with el, 0 at the document's end, -1 when the
 * rest is not in b or not BSON.
 */
static int bson_next(const uint8_t *b, size_t n, size_t *off, struct bson_el *el)
{
	if (*off >= n)
		return -1;
	uint8_t t = b[*off];
	if (!t)
		return 0;
	const uint8_t *k = b + *off + 1;
	const uint8_t *z = memchr(k, 0, n - *off - 1);
	if (!z)
		return -1;
	const uint8_t *v = z + 1;
	long sz = bson_value_size(t, v, (size_t)(b + n - v));
	if (sz < 0 || sz > (long)MG_MAX_LEN)
		return -1;
	el->type = t;
	el->key = (const char *)k;
	el->v = v;
	el->vlen = (size_t)sz;
	*off = (size_t)(v - b) + (size_t)sz;
	return 1;
}

/* A number value (double, int32, int64, bool) as a double: -1 when not a number. */
static double bson_number(const struct bson_el *el, const uint8_t *end)
{
	if (el->v + el->vlen > end)
		return -1;
	switch (el->type) {
	case 0x01: {
		double d;
		memcpy(&d, el->v, 8);
		return d;
	}
	case 0x10:
		return (double)(int32_t)l7_le32(el->v);
	case 0x12:
		return (double)(int64_t)((uint64_t)l7_le32(el->v) | (uint64_t)l7_le32(el->v + 4) << 32);
	case 0x08:
		return el->v[0] ? 1 : 0;
	default:
		return -1;
	}
}

/* A string value, printable, into out; false if not a whole string. */
static bool bson_string(const struct bson_el *el, const uint8_t *end, char *out, size_t cap)
{
	if (el->type != 0x02 || el->vlen < 5 || el->v + el->vlen > end)
		return false;
	l7_copy_printable(out, cap, el->v + 4, el->vlen - 5);
	return true;
}

/* A command document: its name, collection and $db. */
static void command_doc(const uint8_t *b, size_t n, struct l7_msg *m)
{
	struct bson_el el;
	size_t off = 4;
	char coll[96] = "", db[64] = "";
	bool first = true;
	const uint8_t *end = b + n;

	if (n < 5)
		return;
	while (bson_next(b, n, &off, &el) == 1) {
		if (first) {
			l7_copy_printable(m->op, sizeof(m->op), el.key, strlen(el.key));
			bson_string(&el, end, coll, sizeof(coll));
			first = false;
		} else if (!strcmp(el.key, "$db")) {
			bson_string(&el, end, db, sizeof(db));
		}
	}
	if (db[0] && coll[0])
		snprintf(m->text, sizeof(m->text), "%s %s.%s", m->op, db, coll);
	else if (db[0] || coll[0])
		l7_join(m->text, sizeof(m->text), m->op, db[0] ? db : coll);
	else
		l7_join(m->text, sizeof(m->text), m->op, NULL);
}

/* A reply document: ok 0 fails, with its code. */
static void reply_doc(const uint8_t *b, size_t n, struct l7_msg *m)
{
	struct bson_el el;
	size_t off = 4;
	int r;
	const uint8_t *end = b + n;

	m->status = L7_STATUS_UNKNOWN;
	if (n < 5)
		return;
	while ((r = bson_next(b, n, &off, &el)) == 1) {
		if (!strcmp(el.key, "ok")) {
			double ok = bson_number(&el, end);
			if (ok < 0)
				continue;
			m->status = ok == 0 ? L7_STATUS_FAILED : L7_STATUS_OK;
		} else if (!strcmp(el.key, "code")) {
			double c = bson_number(&el, end);
			if (c >= -1e9 && c <= 1e9)
				snprintf(m->code, sizeof(m->code), "%d", (int)c);
		}
	}
	if (m->status != L7_STATUS_FAILED)
		m->code[0] = '\0';
}

/* The kind 0 section of an OP_MSG body b[0..n) (after the flag bits): its document, or NULL. */
static const uint8_t *msg_body(const uint8_t *b, size_t n, size_t *dn)
{
	size_t off = 4;
	while (off < n) {
		uint8_t kind = b[off++];
		if (kind == 0) {
			*dn = n - off;
			return b + off;
		}
		if (kind != 1 || off + 4 > n)
			return NULL;
		off += l7_le32(b + off); /* a document sequence: its size counts itself */
	}
	return NULL;
}

static bool header_ok(const uint8_t *h, bool request)
{
	uint32_t len = l7_le32(h), op = l7_le32(h + 12);
	return len >= 21 && len <= MG_MAX_LEN && known_op(op, request) &&
	       (request ? l7_le32(h + 8) == 0 : l7_le32(h + 8) != 0);
}

static bool detect(const uint8_t *p, size_t n, bool request)
{
	if (!p || n < 21 || !header_ok(p, request))
		return false;
	uint32_t len = l7_le32(p), op = l7_le32(p + 12);
	if (op == OP_MSG) {
		uint32_t flags = l7_le32(p + 16);
		if (flags & ~(MSG_CHECKSUM | MSG_MORE_TO_COME | MSG_EXHAUST))
			return false;
		if (p[20] > 1)
			return false;
		if (p[20] == 0 && n >= 26) {
			uint32_t dl = l7_le32(p + 21);
			if (dl < 5 || dl > len - 21)
				return false;
			uint8_t t = p[25];
			return (t >= 0x01 && t <= 0x13) || t == 0x7f || t == 0xff;
		}
		return true;
	}
	if (op == OP_REPLY)
		return len >= 36 && l7_le32(p + 16) < 0x10;
	return true;
}

static bool mg_detect_request(const uint8_t *p, size_t n)
{
	return detect(p, n, true);
}

static bool mg_detect_response(const uint8_t *p, size_t n)
{
	return detect(p, n, false);
}

static int mg_init(void *sv)
{
	struct mg_state *s = sv;
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < 2; i++)
		l7_framer_init(&s->d[i], 16);
	return 0;
}

static struct l7_counters *mg_counters(void *sv)
{
	return &((struct mg_state *)sv)->cnt;
}

static bool message(void *sv, struct l7_framer *d, bool req, l7_msg_fn fn, void *ctx)
{
	struct mg_state *s = sv;
	const uint8_t *h = d->hdr, *b = d->r.at;
	size_t n = d->r.have, dn = 0;
	uint32_t op = l7_le32(h + 12);
	struct l7_msg m;
	l7_msg_init(&m, L7_MSG_REQUEST);
	m.has_id = true;
	const uint8_t *doc = NULL;

	if (req) {
		m.kind = L7_MSG_REQUEST;
		m.id = l7_le32(h + 4);
		switch (op) {
		case OP_MSG:
			if (n >= 4 && (l7_le32(b) & MSG_MORE_TO_COME))
				m.kind = L7_MSG_REQUEST_NOREPLY;
			if ((doc = msg_body(b, n, &dn)))
				command_doc(doc, dn, &m);
			break;
		case OP_QUERY: {
			/* flags, collection, skip, limit, the query */
			const uint8_t *z = n > 4 ? memchr(b + 4, 0, n - 4) : NULL;
			if (z && (size_t)(z + 9 - b) <= n) {
				size_t cl = (size_t)(z - b - 4);
				if (cl >= 5 && !memcmp(z - 5, ".$cmd", 5)) {
					command_doc(z + 9, n - (size_t)(z + 9 - b), &m);
					if (!strchr(m.text, ' ') && cl > 5) {
						/* the database is the collection name's start: "admin.$cmd" */
						char db[64];
						l7_copy_printable(db, sizeof(db), b + 4, cl - 5);
						l7_join(m.text, sizeof(m.text), m.op, db);
					}
				} else {
					strcpy(m.op, "query");
					char coll[96];
					l7_copy_printable(coll, sizeof(coll), b + 4, cl);
					snprintf(m.text, sizeof(m.text), "query %s", coll);
				}
			}
			break;
		}
		case OP_GET_MORE:
			strcpy(m.op, "getMore");
			break;
		case OP_COMPRESSED:
			strcpy(m.op, "unknown");
			break;
		default:
			/* legacy writes: no reply */
			m.kind = L7_MSG_REQUEST_NOREPLY;
			strcpy(m.op, op == OP_INSERT ? "insert" : op == OP_UPDATE ? "update" :
				     op == OP_DELETE ? "delete" : "killCursors");
			break;
		}
		if (!m.text[0])
			l7_join(m.text, sizeof(m.text), m.op, NULL);
	} else {
		uint32_t to = l7_le32(h + 8), id = l7_le32(h + 4);
		m.kind = L7_MSG_RESPONSE;
		m.id = to;
		m.status = L7_STATUS_UNKNOWN;
		if (s->streaming && to == s->stream_id)
			m.kind = L7_MSG_PUSH; /* a follower of a moreToCome reply */
		s->streaming = false;
		switch (op) {
		case OP_MSG:
			if (n >= 4 && (l7_le32(b) & MSG_MORE_TO_COME)) {
				s->streaming = true;
				s->stream_id = id;
			}
			if ((doc = msg_body(b, n, &dn)))
				reply_doc(doc, dn, &m);
			break;
		case OP_REPLY:
			if (n >= 20 && (l7_le32(b) & 0x2)) {
				m.status = L7_STATUS_FAILED; /* QueryFailure */
			} else if (n > 20) {
				reply_doc(b + 20, n - 20, &m);
			}
			break;
		default:
			break; /* compressed: unknown */
		}
	}
	s->cnt.messages++;
	fn(ctx, &m);
	return true;
}

static int64_t body_len(const uint8_t *hdr, bool req)
{
	return header_ok(hdr, req) ? (int64_t)l7_le32(hdr) - 16 : -1;
}

static bool resync(void *sv, const uint8_t *data, size_t captured, bool req)
{
	return detect(data, captured, req);
}

static const struct l7_framing mg_framing = {
	.header = 16, .body_len = body_len, .resync = resync, .message = message
};

static void mg_feed(void *sv, enum l7_dir dir, const uint8_t *data, size_t captured, size_t total,
		    l7_msg_fn fn, void *ctx)
{
	struct mg_state *s = sv;
	l7_framer_feed(&s->d[dir], &mg_framing, &s->cnt, s, dir == L7_DIR_REQUEST, data, captured,
		       total, fn, ctx);
}

const struct l7_proto l7_proto_mongo = {
	.name = "mongo",
	.pair = L7_PAIR_BY_ID,
	.default_port = 27017,
	.state_size = sizeof(struct mg_state),
	.detect_request = mg_detect_request,
	.detect_response = mg_detect_response,
	.init = mg_init,
	.feed = mg_feed,
	.counters = mg_counters,
};
