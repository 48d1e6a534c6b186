/*
 * PostgreSQL frontend/backend protocol 3.0, both directions.
 *
 * Framing: a type byte and a 4-byte big-endian length counting itself, except
 * the startup-phase packets from the client (StartupMessage, SSLRequest,
 * GSSENCRequest, CancelRequest), which have no type byte: their first byte is
 * the top of a length, always 0, which no typed message has.
 *
 * Requests: a simple Query is one request completed by ReadyForQuery (its
 * statements' errors fold into it); in the extended protocol each Execute is
 * one request (the statement it runs comes from Bind's portal and Parse's
 * statement, named or unnamed) completed by CommandComplete,
 * EmptyQueryResponse, PortalSuspended or ErrorResponse, and Sync is a
 * barrier: after an error the server skips to it, and ReadyForQuery reports
 * the Executes it skipped. COPY needs nothing more: the data flows between
 * the request and its CommandComplete. After an SSLRequest answered 'S' (or
 * a GSSENCRequest answered 'G') the bytes are encrypted: tls_started().
 */
#include <stdio.h>
#include <string.h>

#include "proto.h"
#include "reader.h"
#include "sql_strip.h"
#include "stmts.h"

#define PG_MAX_LEN (1u << 30) /* the server's own limit on a message */
#define PG_DETECT_MAX_LEN (1u << 24)
#define PG_PORTALS 8

#define CODE_PROTOCOL3 196608
#define CODE_SSL 80877103
#define CODE_GSSENC 80877104
#define CODE_CANCEL 80877102

enum pg_st { PG_HEADER, PG_BODY, PG_LOST, PG_SSL_ANSWER };

struct pg_dir {
	struct l7_reader r;
	enum pg_st st;
	uint8_t type; /* 0: a startup-phase packet */
	uint8_t code0; /* a startup packet's first code byte (read with the header) */
};

struct pg_portal {
	char name[L7_STMT_NAME_LEN];
	char op[L7_OP_LEN];
	char text[L7_TEXT_LEN];
	bool used;
};

struct pg_state {
	struct l7_counters cnt;
	struct pg_dir d[2];
	bool tls;
	bool auth;	   /* between a StartupMessage and the first ReadyForQuery */
	uint8_t encrypt;   /* 'S' (SSLRequest) or 'G' (GSSENCRequest) awaiting its answer */
	struct l7_stmt unnamed;
	struct pg_portal portals[PG_PORTALS]; /* [0]: the unnamed portal */
	unsigned next_portal;
	struct l7_stmts named;
};

/* The message types each side sends: a switch, as every message's header is checked. */
static bool known_type(uint8_t t, bool request)
{
	if (request) {
		switch (t) {
		case 'Q': case 'P': case 'B': case 'E': case 'S': case 'D': case 'C':
		case 'H': case 'X': case 'd': case 'c': case 'f': case 'p': case 'F':
			return true;
		}
		return false;
	}
	switch (t) {
	case 'R': case 'S': case 'K': case 'Z': case 'T': case 'D': case 'C': case 'I':
	case 'E': case 'N': case '1': case '2': case '3': case 'n': case 't': case 's':
	case 'G': case 'H': case 'W': case 'd': case 'c': case 'A': case 'v': case 'V':
		return true;
	}
	return false;
}

static bool printable_text(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] < 0x20 && p[i] != '\n' && p[i] != '\r' && p[i] != '\t')
			return false;
	return true;
}

/*
 * The body of a message of type t, as far as it was captured (n of len
 * bytes): does it look like that message? Only types whose shape is fixed
 * are checked beyond their length.
 */
static bool body_ok(uint8_t t, bool request, const uint8_t *b, size_t n, uint32_t len)
{
	if (request) {
		switch (t) {
		case 'Q':
			if (n == len)
				return len >= 1 && b[len - 1] == 0 && printable_text(b, len - 1);
			return printable_text(b, n);
		case 'S':
		case 'H':
		case 'c':
			return len == 0;
		case 'E':
			return len >= 5;
		case 'X':
			return len == 0;
		default:
			return true;
		}
	}
	switch (t) {
	case 'Z':
		return len == 1 && (n < 1 || b[0] == 'I' || b[0] == 'T' || b[0] == 'E');
	case '1':
	case '2':
	case '3':
	case 'n':
	case 'I':
	case 's':
		return len == 0;
	case 'C':
		if (n == len)
			return len >= 2 && b[len - 1] == 0 && printable_text(b, len - 1);
		return printable_text(b, n);
	case 'E':
	case 'N':
		/* fields: a letter, a string; the first is the severity */
		return len >= 2 && (n < 1 || b[0] == 'S' || b[0] == 'V');
	case 'K':
		return len == 8;
	case 'D':
	case 'T':
		return len >= 2;
	case 'R':
		return len >= 4 && (n < 4 || l7_be32(b) <= 12);
	default:
		return true;
	}
}

static bool startup_packet(const uint8_t *p, size_t n)
{
	if (n < 8)
		return false;
	uint32_t len = l7_be32(p), code = l7_be32(p + 4);
	if (code == CODE_SSL || code == CODE_GSSENC)
		return len == 8;
	if (code == CODE_CANCEL)
		return len == 16;
	/*
	 * Parameters follow, the first named by a lower-case word ("user"): a
	 * Kafka Metadata v0 request has the same first 8 bytes shape, then its
	 * binary correlation id.
	 */
	if (n > 8 && !((p[8] >= 'a' && p[8] <= 'z') || p[8] == '_'))
		return false;
	return code == CODE_PROTOCOL3 && len >= 9 && len <= 10000;
}

/* A walk over the messages the chunk starts with: all must look right, one at least complete. */
static bool detect(const uint8_t *p, size_t n, bool request)
{
	size_t off = 0;
	unsigned complete = 0;

	if (request && startup_packet(p, n))
		return true;
	for (unsigned k = 0; k < 16 && off + 5 <= n; k++) {
		uint8_t t = p[off];
		uint32_t len = l7_be32(p + off + 1);
		if (!known_type(t, request) || len < 4 || len > PG_DETECT_MAX_LEN)
			return false;
		size_t avail = n - off - 5;
		if (avail > len - 4)
			avail = len - 4;
		if (!body_ok(t, request, p + off + 5, avail, len - 4))
			return false;
		if (avail < len - 4) {
			if (complete)
				return true;
			/*
			 * The chunk ends inside its first message: only a long
			 * statement or row whose start can be checked is taken.
			 */
			if (len > (1u << 20) || avail < 16)
				return false;
			if (request)
				return (t == 'Q' || t == 'P') && printable_text(p + off + 5, avail);
			return (t == 'T' || t == 'D') && l7_be16(p + off + 5) <= 1664;
		}
		complete++;
		off += 1 + len;
	}
	return complete > 0 && (off == n || off + 5 > n);
}

static bool pg_detect_request(const uint8_t *p, size_t n)
{
	return p && detect(p, n, true);
}

static bool pg_detect_response(const uint8_t *p, size_t n)
{
	return p && detect(p, n, false);
}

static int pg_init(void *sv)
{
	struct pg_state *s = sv;
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < 2; i++)
		l7_reader_next(&s->d[i].r, L7_U_FIXED, 5);
	return 0;
}

static void pg_free(void *sv)
{
	struct pg_state *s = sv;
	l7_stmts_free(&s->named);
}

static struct l7_counters *pg_counters(void *sv)
{
	return &((struct pg_state *)sv)->cnt;
}

static bool pg_tls_started(void *sv)
{
	return ((struct pg_state *)sv)->tls;
}

/* A NUL-terminated string at b[*off] within n bytes: its start, or NULL (cut). */
static const char *cstr(const uint8_t *b, size_t n, size_t *off)
{
	const uint8_t *z = *off < n ? memchr(b + *off, 0, n - *off) : NULL;
	if (!z)
		return NULL;
	const char *s = (const char *)b + *off;
	*off = (size_t)(z - b) + 1;
	return s;
}

/* A NUL-terminated statement at b (n bytes kept of the message; cut: not all of it). */
static void statement(const uint8_t *b, size_t n, bool cut, char *op, char *text)
{
	const uint8_t *z = memchr(b, 0, n);
	size_t len = z ? (size_t)(z - b) : n;
	sql_operation((const char *)b, len, op, L7_OP_LEN);
	sql_strip(SQL_POSTGRES, (const char *)b, len, text, L7_TEXT_LEN);
	if (!z && cut)
		sql_mark_cut(text, L7_TEXT_LEN);
}

static struct pg_portal *portal(struct pg_state *s, const char *name, bool create)
{
	if (!name[0])
		return create || s->portals[0].used ? &s->portals[0] : NULL;
	for (unsigned i = 1; i < PG_PORTALS; i++)
		if (s->portals[i].used && !strncmp(s->portals[i].name, name, L7_STMT_NAME_LEN - 1))
			return &s->portals[i];
	if (!create)
		return NULL;
	struct pg_portal *p = &s->portals[1 + s->next_portal++ % (PG_PORTALS - 1)];
	if (p->used)
		s->cnt.table_full++;
	return p;
}

static void emit(struct pg_state *s, struct l7_msg *m, l7_msg_fn fn, void *ctx)
{
	s->cnt.messages++;
	fn(ctx, m);
}

static void startup(struct pg_state *s, const struct l7_reader *r, uint8_t code0)
{
	if (r->have < 3)
		return;
	uint32_t code = (uint32_t)code0 << 24 | (uint32_t)r->at[0] << 16 |
			(uint32_t)r->at[1] << 8 | r->at[2];
	if (code == CODE_SSL || code == CODE_GSSENC) {
		struct pg_dir *d = &s->d[L7_DIR_RESPONSE];
		s->encrypt = code == CODE_SSL ? 'S' : 'G';
		if (d->st == PG_HEADER && !d->r.started) {
			d->st = PG_SSL_ANSWER;
			l7_reader_next(&d->r, L7_U_FIXED, 1);
		}
	} else if (code == CODE_PROTOCOL3) {
		s->auth = true;
	}
}

/*
 * A message to the server. The struct l7_msg (some 360 bytes, zeroed) is
 * made only where one is sent or used: a Bind, sent with every query of a
 * prepared statement, makes none.
 */
static void request(struct pg_state *s, uint8_t type, const struct l7_reader *r, l7_msg_fn fn,
		    void *ctx)
{
	const uint8_t *b = r->at;
	size_t n = r->have, off = 0;
	const char *name, *stmt;

	switch (type) {
	case 'Q': {
		struct l7_msg m;
		l7_msg_init(&m, L7_MSG_REQUEST_UNTIL_SYNC);
		statement(b, n, r->cut, m.op, m.text);
		emit(s, &m, fn, ctx);
		break;
	}
	case 'P': {
		struct l7_msg m;
		l7_msg_init(&m, L7_MSG_REQUEST);
		if (!(name = cstr(b, n, &off)))
			break;
		statement(b + off, n - off, r->cut, m.op, m.text);
		if (!name[0]) {
			memcpy(s->unnamed.op, m.op, sizeof(m.op));
			memcpy(s->unnamed.text, m.text, sizeof(m.text));
		} else if (l7_stmts_put(&s->named, name, m.op, m.text)) {
			s->cnt.table_full++;
		}
		break;
	}
	case 'B': {
		if (!(name = cstr(b, n, &off)) || !(stmt = cstr(b, n, &off)))
			break;
		const struct l7_stmt *st = stmt[0] ? l7_stmts_get(&s->named, stmt) : &s->unnamed;
		struct pg_portal *p = portal(s, name, true);
		p->used = true;
		l7_join(p->name, sizeof(p->name), name, NULL);
		l7_join(p->op, sizeof(p->op), st ? st->op : "", NULL);
		l7_join(p->text, sizeof(p->text), st ? st->text : "", NULL);
		break;
	}
	case 'E': {
		struct l7_msg m;
		l7_msg_init(&m, L7_MSG_REQUEST);
		if (!(name = cstr(b, n, &off)))
			break;
		const struct pg_portal *p = portal(s, name, false);
		if (p && p->op[0]) {
			l7_join(m.op, sizeof(m.op), p->op, NULL);
			l7_join(m.text, sizeof(m.text), p->text, NULL);
		} else {
			/* bound before we saw the connection: the statement is unknown */
			strcpy(m.op, "EXECUTE");
		}
		emit(s, &m, fn, ctx);
		break;
	}
	case 'S': {
		struct l7_msg m;
		l7_msg_init(&m, L7_MSG_SYNC);
		emit(s, &m, fn, ctx);
		break;
	}
	case 'C': {
		struct pg_portal *p;
		if (n < 1 || !(name = (off = 1, cstr(b, n, &off))))
			break;
		if (b[0] == 'S')
			l7_stmts_del(&s->named, name);
		else if (b[0] == 'P' && (p = portal(s, name, false)))
			memset(p, 0, sizeof(*p));
		break;
	}
	default:
		break;
	}
}

static void error_code(const uint8_t *b, size_t n, char *code)
{
	size_t off = 0;
	while (off < n && b[off]) {
		uint8_t f = b[off++];
		const char *v = cstr(b, n, &off);
		if (!v)
			return;
		if (f == 'C') {
			l7_copy_printable(code, L7_CODE_LEN, v, strlen(v));
			return;
		}
	}
}

/* A message from the server: most (rows, BindComplete) answer nothing and make no struct l7_msg. */
static void response(struct pg_state *s, uint8_t type, const struct l7_reader *r, l7_msg_fn fn,
		     void *ctx)
{
	enum l7_msg_kind kind = L7_MSG_RESPONSE;

	if (s->auth) {
		/* the start-up exchange answers no request */
		if (type == 'Z')
			s->auth = false;
		l7_handshake(fn, ctx);
		return;
	}
	switch (type) {
	case 'E':
	case 'C':
	case 'I':
	case 's':
		break;
	case 'Z':
		kind = L7_MSG_SYNC_REPLY;
		break;
	default:
		return;
	}
	struct l7_msg m;
	l7_msg_init(&m, kind);
	if (type == 'E') {
		m.status = L7_STATUS_FAILED;
		error_code(r->at, r->have, m.code);
	}
	emit(s, &m, fn, ctx);
}

static void lose(struct pg_state *s, struct pg_dir *d, bool garbage)
{
	if (garbage)
		s->cnt.unparseable++;
	else
		s->cnt.lost++;
	d->st = PG_LOST;
}

/* A typed message's header that may be one: a type the side sends, a length within the server's limit. */
static bool typed_header(uint8_t type, uint32_t len, bool req)
{
	return known_type(type, req) && len >= 4 && len <= PG_MAX_LEN;
}

/* The typed message in d->r (d->type) to its side's parser. */
static void typed_message(struct pg_state *s, struct pg_dir *d, bool req, l7_msg_fn fn, void *ctx)
{
	if (req)
		request(s, d->type, &d->r, fn, ctx);
	else
		response(s, d->type, &d->r, fn, ctx);
}

static void pg_feed(void *sv, enum l7_dir dir, const uint8_t *data, size_t captured, size_t total,
		    l7_msg_fn fn, void *ctx)
{
	struct pg_state *s = sv;
	struct pg_dir *d = &s->d[dir];
	bool req = dir == L7_DIR_REQUEST;
	size_t pos = 0;

	if (d->st == PG_LOST) {
		if (!detect(data, captured, req))
			return;
		d->st = PG_HEADER; /* resynchronised at this chunk */
		l7_reader_next(&d->r, L7_U_FIXED, 5);
	}
	while (pos < total || (d->st == PG_BODY && !d->r.left)) {
		/*
		 * A typed message whole in the captured bytes (most are: a
		 * query's Bind, Execute and Sync come in one chunk) is handed
		 * to its parser where it lies, as the reader would hand it
		 * after its header and body; anything else, the start-up and
		 * garbage included, goes through the reader.
		 */
		if (d->st == PG_HEADER && !d->r.started && pos < captured && captured - pos >= 5) {
			const uint8_t *h = data + pos;
			uint32_t len = l7_be32(h + 1);
			if (h[0] && typed_header(h[0], len, req) && len - 4 <= captured - pos - 5) {
				d->type = h[0];
				l7_reader_whole(&d->r, h + 5, len - 4);
				typed_message(s, d, req, fn, ctx);
				pos += 1 + len;
				l7_reader_next(&d->r, L7_U_FIXED, 5);
				continue;
			}
		}
		enum l7_take t = l7_reader_take(&d->r, data, captured, total, &pos);
		if (t == L7_TAKE_MORE)
			break;
		if (t == L7_TAKE_LOST) {
			lose(s, d, false);
			break;
		}
		const uint8_t *b = d->r.at;
		switch (d->st) {
		case PG_SSL_ANSWER:
			l7_handshake(fn, ctx);
			if (b[0] == s->encrypt) {
				/* what follows is TLS: the plaintext comes next, from the start-up on */
				s->tls = true;
				s->encrypt = 0;
				d->st = PG_HEADER;
				l7_reader_next(&d->r, L7_U_FIXED, 5);
				return;
			}
			s->encrypt = 0;
			d->st = PG_HEADER;
			if (b[0] == 'N') {
				l7_reader_next(&d->r, L7_U_FIXED, 5);
			} else {
				/* an old server's ErrorResponse instead: its header's first byte */
				lose(s, d, true);
				return;
			}
			break;
		case PG_HEADER: {
			uint32_t len = l7_be32(b + (b[0] ? 1 : 0));
			d->type = b[0];
			if (!b[0]) {
				/* a startup packet: the length was b[0..4), b[4] begins the code */
				if (!req || len < 8 || len > 10000) {
					lose(s, d, true);
					return;
				}
				d->code0 = b[4];
				d->st = PG_BODY;
				l7_reader_next(&d->r, L7_U_BODY, len - 5);
				break;
			}
			if (!typed_header(b[0], len, req)) {
				lose(s, d, true);
				return;
			}
			d->st = PG_BODY;
			l7_reader_next(&d->r, L7_U_BODY, len - 4);
			break;
		}
		case PG_BODY:
			if (d->r.uncaptured)
				s->cnt.truncated++;
			if (!d->type) {
				startup(s, &d->r, d->code0);
				l7_handshake(fn, ctx);
			} else {
				typed_message(s, d, req, fn, ctx);
			}
			d->st = PG_HEADER;
			l7_reader_next(&d->r, L7_U_FIXED, 5);
			break;
		case PG_LOST:
			return;
		}
	}
}

const struct l7_proto l7_proto_postgres = {
	.name = "postgres",
	.pair = L7_PAIR_FIFO,
	.default_port = 5432,
	.state_size = sizeof(struct pg_state),
	.detect_request = pg_detect_request,
	.detect_response = pg_detect_response,
	.init = pg_init,
	.feed = pg_feed,
	.free = pg_free,
	.counters = pg_counters,
	.tls_started = pg_tls_started,
};
