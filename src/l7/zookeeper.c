/*
 * ZooKeeper's client protocol (jute), both directions. Every message is a
 * 4-byte big-endian length and a body. A session starts with a
 * ConnectRequest (protocol version, last zxid seen, timeout, session id,
 * password) answered by a ConnectResponse; then a request is an xid, an op
 * code and the op's body, an answer an xid, the zxid, an error code and a
 * body. Pairing is by xid (the connect pair gets an id of its own).
 *
 * Special xids: -1 is a watch event the server pushes (a push, not an
 * answer), -2 a ping and its answer (keep-alives: not reported), -4 an auth
 * packet, -8 the watches set again after a reconnect (reported like any
 * request). Operation: the op's name ("getData"); trace form: the name and
 * the path, and for multi the ops and paths inside it. Status: an error code
 * other than 0 fails, the code its number ("-101": no node), as Coroot
 * counts it.
 */
#include <stdio.h>
#include <string.h>

#include "proto.h"
#include "frames.h"

#define ZK_MAX_LEN (1u << 26)	 /* framing: longer is garbage (jute.maxbuffer is 1 MiB by default) */
#define ZK_DETECT_MAX (1u << 24) /* detection: a boundary is trusted below 16 MiB */
#define ZK_CONNECT_ID (1ull << 32) /* the connect pair's id: no xid is this */
#define ZK_MIN_ERR (-130)	       /* the lowest error code the server sends (throttled: -127) */

#define XID_WATCH (-1)
#define XID_PING (-2)
#define XID_AUTH (-4)
#define XID_SET_WATCHES (-8)

enum zk_body { ZB_NONE, ZB_PATH, ZB_MULTI, ZB_ANY };

struct zk_op {
	int code;
	const char *name;
	enum zk_body body;
};

/* The op codes (ZooDefs.OpCode), their names and what their body starts with. */
static const struct zk_op ops[] = {
	{ 1, "create", ZB_PATH },	      { 2, "delete", ZB_PATH },
	{ 3, "exists", ZB_PATH },	      { 4, "getData", ZB_PATH },
	{ 5, "setData", ZB_PATH },	      { 6, "getACL", ZB_PATH },
	{ 7, "setACL", ZB_PATH },	      { 8, "getChildren", ZB_PATH },
	{ 9, "sync", ZB_PATH },		      { 11, "ping", ZB_NONE },
	{ 12, "getChildren2", ZB_PATH },      { 13, "check", ZB_PATH },
	{ 14, "multi", ZB_MULTI },	      { 15, "create2", ZB_PATH },
	{ 16, "reconfig", ZB_ANY },	      { 17, "checkWatches", ZB_PATH },
	{ 18, "removeWatches", ZB_PATH },     { 19, "createContainer", ZB_PATH },
	{ 20, "deleteContainer", ZB_PATH },   { 21, "createTTL", ZB_PATH },
	{ 22, "multiRead", ZB_MULTI },	      { 100, "auth", ZB_ANY },
	{ 101, "setWatches", ZB_ANY },	      { 102, "sasl", ZB_ANY },
	{ 103, "getEphemerals", ZB_PATH },    { 104, "getAllChildrenNumber", ZB_PATH },
	{ 105, "setWatches2", ZB_ANY },	      { 106, "addWatch", ZB_PATH },
	{ 107, "whoAmI", ZB_NONE },	      { -11, "closeSession", ZB_NONE },
};

static const struct zk_op *op_by_code(int32_t code)
{
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (ops[i].code == code)
			return &ops[i];
	return NULL;
}

#define ZK_MULTI_WAITING 8

struct zk_state {
	struct l7_counters cnt;
	struct l7_framer d[2];
	bool connect_waiting; /* a ConnectRequest was seen: the next answer is its response */
	/*
	 * The xids of multi requests waiting: their answers' own header says
	 * ok when an op inside failed, the results tell. When full, one is
	 * overwritten (its answer then goes by its header alone).
	 */
	int32_t multi[ZK_MULTI_WAITING];
	unsigned n_multi, next_multi;
};

/* A ConnectRequest's body: protocol version 0, then at 24 a 16-byte password's length. */
static bool connect_request(const uint8_t *b, size_t n, uint32_t len)
{
	return (len == 44 || len == 45) && n >= 28 && l7_be32(b) == 0 && l7_be32(b + 24) == 16;
}

/* A ConnectResponse's: protocol version 0, a timeout, at 16 the password's length. */
static bool connect_response(const uint8_t *b, size_t n, uint32_t len)
{
	return (len == 36 || len == 37) && n >= 20 && l7_be32(b) == 0 && l7_be32(b + 16) == 16;
}

/* A regular request's head, checked (the body's first bytes as far as they are in b). */
static bool request_head(const uint8_t *b, size_t n, uint32_t len, const struct zk_op **op)
{
	if (n < 8 || len < 8)
		return false;
	int32_t xid = (int32_t)l7_be32(b), code = (int32_t)l7_be32(b + 4);
	const struct zk_op *o = op_by_code(code);
	if (!o)
		return false;
	if (xid < 0 && xid != XID_PING && xid != XID_AUTH && xid != XID_SET_WATCHES)
		return false;
	/* the special xids go with their ops */
	if ((xid == XID_PING) != (code == 11) || (xid == XID_AUTH) != (code == 100) ||
	    (xid == XID_SET_WATCHES && code != 101 && code != 105))
		return false;
	if (o->body == ZB_NONE && len != 8)
		return false;
	if (o->body == ZB_PATH) {
		if (len < 12)
			return false;
		if (n >= 12) {
			uint32_t pl = l7_be32(b + 8);
			if (pl < 1 || pl > len - 12)
				return false;
			if (n >= 13 && b[12] != '/')
				return false;
		}
	}
	*op = o;
	return true;
}

static bool response_head(const uint8_t *b, size_t n, uint32_t len)
{
	if (n < 16 || len < 16)
		return false;
	int32_t xid = (int32_t)l7_be32(b), err = (int32_t)l7_be32(b + 12);
	int64_t zxid = (int64_t)((uint64_t)l7_be32(b + 4) << 32 | l7_be32(b + 8));
	if (xid < 0 && xid != XID_WATCH && xid != XID_PING && xid != XID_AUTH &&
	    xid != XID_SET_WATCHES)
		return false;
	return zxid >= -1 && err <= 0 && err >= ZK_MIN_ERR;
}

static bool zk_detect_request(const uint8_t *p, size_t n)
{
	const struct zk_op *op;
	if (!p || n < 12)
		return false;
	uint32_t len = l7_be32(p);
	if (len >= ZK_DETECT_MAX)
		return false;
	return connect_request(p + 4, n - 4, len) || request_head(p + 4, n - 4, len, &op);
}

static bool zk_detect_response(const uint8_t *p, size_t n)
{
	if (!p || n < 20)
		return false;
	uint32_t len = l7_be32(p);
	if (len >= ZK_DETECT_MAX)
		return false;
	return connect_response(p + 4, n - 4, len) || response_head(p + 4, n - 4, len);
}

static int zk_init(void *sv)
{
	struct zk_state *s = sv;
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < 2; i++)
		l7_framer_init(&s->d[i], 4);
	return 0;
}

static struct l7_counters *zk_counters(void *sv)
{
	return &((struct zk_state *)sv)->cnt;
}

/* A jute string or buffer at b[*off]: its length (-1 null); false when not in b. */
static bool jute_bytes(const uint8_t *b, size_t n, size_t *off, const uint8_t **s, int32_t *len)
{
	if (n - *off < 4)
		return false;
	int32_t l = (int32_t)l7_be32(b + *off);
	*off += 4;
	*s = b + *off;
	*len = l;
	if (l <= 0)
		return l >= -1;
	if ((size_t)l > n - *off)
		return false;
	*off += (size_t)l;
	return true;
}

static void append(char *out, size_t cap, const char *fmt_sep, const uint8_t *p, size_t n)
{
	size_t k = strlen(out);
	if (k + 1 >= cap)
		return;
	snprintf(out + k, cap - k, "%s", fmt_sep);
	k = strlen(out);
	if (p && n)
		l7_copy_printable(out + k, cap - k, p, n);
}

/* The bytes of one op's body inside a multi after its path, so the next header is found. */
static bool skip_multi_op(const uint8_t *b, size_t n, size_t *off, int code)
{
	const uint8_t *s;
	int32_t l;
	switch (code) {
	case 1: case 15: case 19: case 21: /* create*: data, acl, flags [, ttl] */
		if (!jute_bytes(b, n, off, &s, &l) || n - *off < 4)
			return false;
		{
			int32_t acls = (int32_t)l7_be32(b + *off);
			*off += 4;
			for (int32_t i = 0; i < acls; i++) {
				if (n - *off < 4)
					return false;
				*off += 4; /* perms */
				if (!jute_bytes(b, n, off, &s, &l) || !jute_bytes(b, n, off, &s, &l))
					return false;
			}
		}
		*off += code == 21 ? 12 : 4;
		return *off <= n;
	case 2: case 13: /* delete, check: version */
		*off += 4;
		return *off <= n;
	case 5: /* setData: data, version */
		if (!jute_bytes(b, n, off, &s, &l))
			return false;
		*off += 4;
		return *off <= n;
	case 4: case 8: case 12: /* multiRead's reads: the watch flag */
		*off += 1;
		return *off <= n;
	default:
		return false;
	}
}

/* multi's ops: "multi(create /a, delete /b)" as far as the kept body goes. */
static void multi_text(const uint8_t *b, size_t n, const char *name, char *out, size_t cap)
{
	size_t off = 8;
	bool first = true;
	snprintf(out, cap, "%s(", name);
	for (int k = 0; k < 64 && n - off >= 9; k++) {
		int32_t code = (int32_t)l7_be32(b + off);
		bool done = b[off + 4] != 0;
		off += 9;
		if (done || code == -1)
			break;
		const struct zk_op *o = op_by_code(code);
		if (!o || o->body != ZB_PATH) {
			append(out, cap, first ? "?" : ", ?", NULL, 0);
			first = false;
			break;
		}
		/* Set only once the length was there to read: none, nothing to show. */
		const uint8_t *s = NULL;
		int32_t l = 0;
		bool whole = jute_bytes(b, n, &off, &s, &l);
		append(out, cap, first ? "" : ", ", (const uint8_t *)o->name, strlen(o->name));
		first = false;
		if (l > 0)
			append(out, cap, " ", s, whole ? (size_t)l : n - (size_t)(s - b));
		if (!whole || !skip_multi_op(b, n, &off, code))
			break;
	}
	append(out, cap, ")", NULL, 0);
}

static void request(struct zk_state *s, struct l7_framer *d, l7_msg_fn fn, void *ctx)
{
	const uint8_t *b = d->r.at;
	size_t n = d->r.have;
	struct l7_msg m;
	l7_msg_init(&m, L7_MSG_REQUEST);
	m.has_id = true;
	const struct zk_op *op;

	if (n < 8)
		return; /* its head was not captured: counted truncated, its answer unpaired */
	if (connect_request(b, n, l7_be32(d->hdr))) {
		s->connect_waiting = true;
		m.id = ZK_CONNECT_ID;
		strcpy(m.op, "connect");
		strcpy(m.text, "connect");
	} else if (request_head(b, n, l7_be32(d->hdr), &op)) {
		int32_t xid = (int32_t)l7_be32(b);
		if (xid == XID_PING)
			return; /* keep-alive */
		m.id = (uint32_t)xid;
		l7_join(m.op, sizeof(m.op), op->name, NULL);
		if (op->body == ZB_MULTI) {
			if (s->n_multi < ZK_MULTI_WAITING) {
				s->multi[s->n_multi++] = xid;
			} else {
				s->multi[s->next_multi] = xid;
				s->next_multi = (s->next_multi + 1) % ZK_MULTI_WAITING;
			}
			multi_text(b, n, op->name, m.text, sizeof(m.text));
		} else if (op->body == ZB_PATH && n >= 12) {
			size_t pl = l7_be32(b + 8);
			size_t have = n - 12 < pl ? n - 12 : pl;
			char path[L7_TEXT_LEN - L7_OP_LEN];
			l7_copy_printable(path, sizeof(path), b + 12, have);
			l7_join(m.text, sizeof(m.text), op->name, path);
		} else {
			l7_join(m.text, sizeof(m.text), op->name, NULL);
		}
	} else {
		/* an op this parser does not know: framed by its length all the same */
		strcpy(m.op, "unknown");
		strcpy(m.text, "unknown");
		m.id = l7_be32(b);
	}
	s->cnt.messages++;
	fn(ctx, &m);
}

/* Was xid a multi's? Forgets it. */
static bool multi_answer(struct zk_state *s, int32_t xid)
{
	for (unsigned i = 0; i < s->n_multi; i++) {
		if (s->multi[i] != xid)
			continue;
		s->multi[i] = s->multi[--s->n_multi];
		return true;
	}
	return false;
}

/*
 * A failed multi's results are all errors (type -1, each followed by its
 * code): 0 for the ops before the failing one, its code, then -2 for the
 * rest. The first non-zero is the failure.
 */
static int32_t multi_error(const uint8_t *b, size_t n)
{
	size_t off = 16;
	for (int k = 0; k < 64 && n - off >= 9; k++) {
		int32_t type = (int32_t)l7_be32(b + off);
		bool done = b[off + 4] != 0;
		int32_t err = (int32_t)l7_be32(b + off + 5);
		if (done || type != -1)
			return 0;
		if (err)
			return err;
		off += 13; /* the header and the error result's code */
		if (off > n)
			return 0;
	}
	return 0;
}

static void response(struct zk_state *s, struct l7_framer *d, l7_msg_fn fn, void *ctx)
{
	const uint8_t *b = d->r.at;
	size_t n = d->r.have;
	struct l7_msg m;
	l7_msg_init(&m, L7_MSG_RESPONSE);
	m.has_id = true;

	bool connect = s->connect_waiting && connect_response(b, n, l7_be32(d->hdr));
	s->connect_waiting = false;
	if (connect) {
		m.id = ZK_CONNECT_ID;
	} else if (n < 16) {
		return; /* its head was not captured: counted truncated */
	} else {
		int32_t xid = (int32_t)l7_be32(b), err = (int32_t)l7_be32(b + 12);
		if (xid == XID_PING)
			return;
		m.id = (uint32_t)xid;
		if (xid == XID_WATCH)
			m.kind = L7_MSG_PUSH;
		if (!err && multi_answer(s, xid))
			err = multi_error(b, n);
		if (err) {
			m.status = L7_STATUS_FAILED;
			snprintf(m.code, sizeof(m.code), "%d", err);
		}
	}
	s->cnt.messages++;
	fn(ctx, &m);
}

static int64_t body_len(const uint8_t *hdr, bool req)
{
	uint32_t len = l7_be32(hdr);
	return len < (req ? 8u : 16u) || len >= ZK_MAX_LEN ? -1 : (int64_t)len;
}

static bool resync(void *sv, const uint8_t *data, size_t captured, bool req)
{
	return (req ? zk_detect_request : zk_detect_response)(data, captured);
}

static bool message(void *sv, struct l7_framer *d, bool req, l7_msg_fn fn, void *ctx)
{
	(req ? request : response)(sv, d, fn, ctx);
	return true;
}

static const struct l7_framing zk_framing = {
	.header = 4, .body_len = body_len, .resync = resync, .message = message
};

static void zk_feed(void *sv, enum l7_dir dir, const uint8_t *data, size_t captured, size_t total,
		    l7_msg_fn fn, void *ctx)
{
	struct zk_state *s = sv;
	l7_framer_feed(&s->d[dir], &zk_framing, &s->cnt, s, dir == L7_DIR_REQUEST, data, captured,
		       total, fn, ctx);
}

const struct l7_proto l7_proto_zookeeper = {
	.name = "zookeeper",
	.family = L7_FAMILY_REQUESTS,
	.pair = L7_PAIR_BY_ID,
	.default_port = 2181,
	.state_size = sizeof(struct zk_state),
	.detect_request = zk_detect_request,
	.detect_response = zk_detect_response,
	.init = zk_init,
	.feed = zk_feed,
	.counters = zk_counters,
};
