/*
 * Redis RESP2 and RESP3, both directions.
 *
 * A value is a line (its type byte, then text up to CRLF), a bulk's data of
 * known length, or an aggregate of N values (maps and attributes 2N). The
 * machine keeps a stack of what each open aggregate still expects, so any
 * nesting is followed without copying; only the command, its first argument
 * (requests) and the first element and error code (responses) are kept.
 * An attribute (`|`) precedes the value it describes and is not one itself.
 * Requests are arrays of bulk strings, or inline commands (a line of words).
 *
 * Pairing is in order: pipelined commands, MULTI (+OK), queued commands
 * (+QUEUED) and EXEC (an array) each get one reply. SUBSCRIBE and its kin
 * are answered by pushes (one confirmation per channel), not replies: they
 * are requests without a reply, and once a connection subscribed, arrays
 * headed "message", "subscribe" and the like are pushes, as RESP3 `>` values
 * always are.
 *
 * The trace form keeps the command and its first argument (the key, for
 * most commands) and drops every later argument (values); commands whose
 * first argument is a secret, a script or a value (AUTH, HELLO, ECHO, EVAL,
 * ...) keep the command only, and container commands (CLIENT, CONFIG, ...)
 * their subcommand.
 */
#include <assert.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "proto.h"
#include "reader.h"

#define RD_DEPTH 16
#define RD_CMD_LEN 24
#define RD_ARG_LEN 128
#define RD_MAX_BULK (1ull << 32)

struct rd_dir {
	struct l7_reader r;
	bool lost;
	bool in_bulk;	     /* reading a bulk's data and its CRLF */
	uint64_t left[RD_DEPTH]; /* values each open aggregate still expects */
	bool attr[RD_DEPTH];	 /* that aggregate is an attribute */
	uint64_t top_n;		 /* the top aggregate's size */
	unsigned depth;
	uint8_t top; /* the top-level value's type, 0 before it began */
	char cmd[RD_CMD_LEN];	/* request: the command; response: the first element */
	char arg[RD_ARG_LEN];	/* request: the first argument */
	bool has_arg;
	char err[L7_CODE_LEN]; /* response: an error's code */
};

struct rd_state {
	struct l7_counters cnt;
	struct rd_dir d[2];
	bool subscribed;
};

/*
 * The commands whose text is not "COMMAND key", in one table sorted by name
 * (looked up by bisection per request; its first use asserts the order):
 * BARE: the first argument must not leave the process, or is no key;
 * CONTAINER: the first argument is a subcommand; SUBSCRIBE: answered by
 * pushes (UNSUBSCRIBE: ... and leaves them).
 */
enum rd_class {
	RD_BARE = 1,
	RD_CONTAINER = 2,
	RD_SUBSCRIBE = 4,
	RD_UNSUBSCRIBE = 8 | RD_SUBSCRIBE,
};

static const struct rd_command {
	const char *name;
	uint8_t cls;
} rd_commands[] = {
	{ "ACL", RD_CONTAINER },	 { "AUTH", RD_BARE },
	{ "CLIENT", RD_CONTAINER },	 { "CLUSTER", RD_CONTAINER },
	{ "COMMAND", RD_CONTAINER },	 { "CONFIG", RD_CONTAINER },
	{ "DEBUG", RD_CONTAINER },	 { "DISCARD", RD_BARE },
	{ "ECHO", RD_BARE },		 { "EVAL", RD_BARE },
	{ "EVALSHA", RD_BARE },		 { "EVALSHA_RO", RD_BARE },
	{ "EVAL_RO", RD_BARE },		 { "EXEC", RD_BARE },
	{ "FAILOVER", RD_BARE },	 { "FCALL", RD_BARE },
	{ "FCALL_RO", RD_BARE },	 { "FUNCTION", RD_CONTAINER },
	{ "HELLO", RD_BARE },		 { "LATENCY", RD_CONTAINER },
	{ "MEMORY", RD_CONTAINER },	 { "MIGRATE", RD_BARE },
	{ "MODULE", RD_CONTAINER },	 { "MULTI", RD_BARE },
	{ "OBJECT", RD_CONTAINER },	 { "PING", RD_BARE },
	{ "PSUBSCRIBE", RD_SUBSCRIBE },	 { "PUBSUB", RD_CONTAINER },
	{ "PUNSUBSCRIBE", RD_UNSUBSCRIBE }, { "QUIT", RD_BARE },
	{ "REPLICAOF", RD_BARE },	 { "RESET", RD_BARE },
	{ "SCRIPT", RD_CONTAINER },	 { "SELECT", RD_BARE },
	{ "SHUTDOWN", RD_BARE },	 { "SLAVEOF", RD_BARE },
	{ "SLOWLOG", RD_CONTAINER },	 { "SSUBSCRIBE", RD_SUBSCRIBE },
	{ "SUBSCRIBE", RD_SUBSCRIBE },	 { "SUNSUBSCRIBE", RD_UNSUBSCRIBE },
	{ "SWAPDB", RD_BARE },		 { "UNSUBSCRIBE", RD_UNSUBSCRIBE },
	{ "WAIT", RD_BARE },		 { "XGROUP", RD_CONTAINER },
	{ "XINFO", RD_CONTAINER },
};

#define RD_N_COMMANDS (sizeof(rd_commands) / sizeof(rd_commands[0]))

/* The class of an upper-case command name (0: a plain "COMMAND key"). */
static unsigned rd_class_of(const char *cmd)
{
	static bool sorted;
	size_t lo = 0, hi = RD_N_COMMANDS;

	/* Every test and fuzz run stops here if an edit broke the order. */
	for (size_t i = 1; !sorted && i < RD_N_COMMANDS; i++)
		assert(strcmp(rd_commands[i - 1].name, rd_commands[i].name) < 0);
	sorted = true;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(cmd, rd_commands[mid].name);
		if (!c)
			return rd_commands[mid].cls;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return 0;
}

static const char *const push_kinds[] = {
	"message",     "pmessage",   "smessage",     "subscribe",    "psubscribe",
	"ssubscribe",  "unsubscribe", "punsubscribe", "sunsubscribe",
};

static bool push_kind(const char *s)
{
	for (size_t i = 0; i < sizeof(push_kinds) / sizeof(push_kinds[0]); i++)
		if (!strcasecmp(s, push_kinds[i]))
			return true;
	return false;
}

static bool aggregate_type(uint8_t t)
{
	return t == '*' || t == '~' || t == '>' || t == '%' || t == '|';
}

static bool bulk_type(uint8_t t)
{
	return t == '$' || t == '!' || t == '=';
}

static bool simple_type(uint8_t t)
{
	switch (t) {
	case '+': case '-': case ':': case '_': case '#': case ',': case '(':
		return true;
	}
	return false;
}

/* A decimal in [p, p+n), optionally negative: false unless all digits. */
static bool number(const uint8_t *p, size_t n, int64_t *v)
{
	bool neg = n && p[0] == '-';
	size_t i = neg;
	uint64_t x = 0;
	if (i == n || n - i > 18)
		return false;
	for (; i < n; i++) {
		if (!isdigit(p[i]))
			return false;
		x = x * 10 + (p[i] - '0');
	}
	*v = neg ? -(int64_t)x : (int64_t)x;
	return true;
}

/* A line at p ending in CRLF within n bytes: its length without CRLF, or -1. */
static long crlf_line(const uint8_t *p, size_t n)
{
	const uint8_t *lf = memchr(p, '\n', n < 512 ? n : 512);
	if (!lf || lf == p || lf[-1] != '\r')
		return -1;
	return lf - p - 1;
}

static bool printable(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] < 0x20 || p[i] == 0x7f)
			return false;
	return true;
}

static bool rd_detect_request(const uint8_t *p, size_t n)
{
	int64_t v, blen;
	long l;
	if (!p || n < 8 || p[0] != '*' || (l = crlf_line(p, n)) < 2)
		return false;
	if (!number(p + 1, (size_t)l - 1, &v) || v < 1 || v > 1 << 20)
		return false;
	const uint8_t *b = p + l + 2;
	size_t m = n - (size_t)l - 2;
	long bl = crlf_line(b, m);
	if (bl < 2 || b[0] != '$' || !number(b + 1, (size_t)bl - 1, &blen) || blen < 1 || blen > 64)
		return false;
	const uint8_t *c = b + bl + 2;
	size_t cn = m - (size_t)bl - 2;
	if (cn < (size_t)blen + 2)
		return false;
	for (int64_t i = 0; i < blen; i++)
		if (!isalpha(c[i]) && c[i] != '_' && c[i] != '-' && c[i] != '|')
			return false;
	return c[blen] == '\r' && c[blen + 1] == '\n';
}

static bool rd_detect_response(const uint8_t *p, size_t n);

/*
 * What follows a simple value in the chunk, when a line of it is there: a
 * reply too (pipelined). NATS's "+OK" is followed by its "MSG ..." lines.
 */
static bool rd_then(const uint8_t *p, size_t n, long l)
{
	const uint8_t *q = p + l + 2;
	size_t m = n - (size_t)l - 2;
	return !memchr(q, '\n', m < 512 ? m : 512) || rd_detect_response(q, m);
}

static bool rd_detect_response(const uint8_t *p, size_t n)
{
	int64_t v;
	long l;
	if (!p || n < 3 || (l = crlf_line(p, n)) < 1)
		return false;
	const uint8_t *s = p + 1;
	size_t sl = (size_t)l - 1;
	switch (p[0]) {
	case '+':
		return printable(s, sl) && rd_then(p, n, l);
	case '-': {
		/* an upper-case code word: "ERR", "WRONGTYPE" */
		size_t k = 0;
		while (k < sl && isupper(s[k]))
			k++;
		/* no Redis message opens with a quote; NATS's ("-ERR 'Unknown ...'") do */
		return k >= 2 && (k == sl || (s[k] == ' ' && (k + 1 == sl || s[k + 1] != '\''))) &&
		       printable(s, sl);
	}
	case ':':
	case '(':
		return number(s, sl, &v);
	case '_':
		return sl == 0;
	case '#':
		return sl == 1 && (s[0] == 't' || s[0] == 'f');
	case ',':
		if (sl == 3 && (!memcmp(s, "inf", 3) || !memcmp(s, "nan", 3)))
			return true;
		if (sl == 4 && !memcmp(s, "-inf", 4))
			return true;
		for (size_t i = 0; i < sl; i++)
			if (!isdigit(s[i]) && !strchr(".eE+-", s[i]))
				return false;
		return sl > 0;
	case '$':
	case '!':
	case '=':
		if (!number(s, sl, &v) || v < -1 || (v > 0 && (uint64_t)v > RD_MAX_BULK))
			return false;
		if (v >= 0 && n >= (size_t)l + 2 + (size_t)v + 2)
			return p[l + 2 + v] == '\r' && p[l + 2 + v + 1] == '\n';
		return true;
	case '*':
	case '~':
	case '>':
	case '%':
	case '|':
		if (!number(s, sl, &v) || v < -1 || v > 1 << 30)
			return false;
		if (v > 0 && n > (size_t)l + 2)
			return rd_detect_response(p + l + 2, n - (size_t)l - 2) ||
			       (n - (size_t)l - 2 < 3);
		return true;
	default:
		return false;
	}
}

static void reset_msg(struct rd_dir *d)
{
	d->depth = 0;
	d->top = 0;
	d->in_bulk = false;
	d->cmd[0] = d->arg[0] = d->err[0] = '\0';
	d->has_arg = false;
}

static int rd_init(void *sv)
{
	struct rd_state *s = sv;
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < 2; i++) {
		reset_msg(&s->d[i]);
		l7_reader_next(&s->d[i].r, L7_U_LINE, 0);
	}
	return 0;
}

static struct l7_counters *rd_counters(void *sv)
{
	return &((struct rd_state *)sv)->cnt;
}

static void copy_word(char *out, size_t cap, const uint8_t *p, size_t n, bool upper)
{
	size_t k = 0;
	for (size_t i = 0; i < n && k + 1 < cap; i++) {
		uint8_t c = p[i];
		out[k++] = c < 0x20 || c >= 0x7f ? '?' : upper ? (char)toupper(c) : (char)c;
	}
	out[k] = '\0';
}

static void emit_request(struct rd_state *s, struct rd_dir *d, l7_msg_fn fn, void *ctx)
{
	struct l7_msg m;
	l7_msg_init(&m, L7_MSG_REQUEST);

	unsigned cls = rd_class_of(d->cmd);

	l7_join(m.op, sizeof(m.op), d->cmd, NULL);
	if (cls & RD_SUBSCRIBE) {
		if (cls != RD_UNSUBSCRIBE)
			s->subscribed = true;
		if (s->subscribed)
			m.kind = L7_MSG_REQUEST_NOREPLY;
	}
	if (!d->has_arg || (cls & RD_BARE)) {
		l7_join(m.text, sizeof(m.text), d->cmd, NULL);
	} else if (cls & RD_CONTAINER) {
		char sub[RD_CMD_LEN];
		copy_word(sub, sizeof(sub), (const uint8_t *)d->arg, strlen(d->arg), true);
		l7_join(m.text, sizeof(m.text), d->cmd, sub);
	} else {
		l7_join(m.text, sizeof(m.text), d->cmd, d->arg);
	}
	s->cnt.messages++;
	fn(ctx, &m);
}

static void emit_response(struct rd_state *s, struct rd_dir *d, l7_msg_fn fn, void *ctx)
{
	struct l7_msg m;
	l7_msg_init(&m, L7_MSG_RESPONSE);

	if (d->top == '>' ||
	    (s->subscribed && (d->top == '*') && push_kind(d->cmd)))
		m.kind = L7_MSG_PUSH;
	else if (d->top == '-' || d->top == '!') {
		m.status = L7_STATUS_FAILED;
		memcpy(m.code, d->err, sizeof(m.code));
	}
	s->cnt.messages++;
	fn(ctx, &m);
}

/* A value ended: close the aggregates it completes. True when the top-level value is over. */
static bool value_done(struct rd_dir *d)
{
	while (d->depth) {
		if (--d->left[d->depth - 1])
			return false;
		bool attr = d->attr[--d->depth];
		if (attr) {
			/* an attribute is not a value: its parent still waits */
			if (!d->depth)
				d->top = 0;
			return false;
		}
	}
	return true;
}

/* The error code: the error's first word when it is upper case ("ERR", "WRONGTYPE"). */
static void error_code(char *out, const uint8_t *p, size_t n)
{
	size_t k = 0;
	while (k < n && k + 1 < L7_CODE_LEN && isupper(p[k]))
		k++;
	memcpy(out, p, k);
	out[k] = '\0';
}

/* Which element of the top-level aggregate the current value is (0 the first). */
static uint64_t top_index(const struct rd_dir *d)
{
	return d->depth == 1 ? d->top_n - d->left[0] : UINT64_MAX;
}

static void keep(struct rd_dir *d, bool req, const uint8_t *p, size_t n)
{
	uint64_t i = top_index(d);
	if (i == 0)
		copy_word(d->cmd, sizeof(d->cmd), p, n, req);
	else if (i == 1 && req) {
		copy_word(d->arg, sizeof(d->arg), p, n, false);
		d->has_arg = true;
	}
}

static void inline_command(struct rd_dir *d, const uint8_t *p, size_t n)
{
	size_t i = 0, s;
	while (i < n && p[i] == ' ')
		i++;
	for (s = i; i < n && p[i] != ' '; i++)
		;
	copy_word(d->cmd, sizeof(d->cmd), p + s, i - s, true);
	while (i < n && p[i] == ' ')
		i++;
	for (s = i; i < n && p[i] != ' '; i++)
		;
	if (i > s) {
		copy_word(d->arg, sizeof(d->arg), p + s, i - s, false);
		d->has_arg = true;
	}
}

/* One line (without LF). Returns 1: top value done, 0: more, -1: garbage. */
static int line(struct rd_state *s, struct rd_dir *d, bool req)
{
	const uint8_t *p = d->r.at;
	size_t n = d->r.have;
	int64_t v;

	if (n && p[n - 1] == '\r')
		n--;
	if (!n)
		return d->depth || !req ? -1 : 0; /* an empty inline command is ignored */
	uint8_t t = p[0];
	if (!d->depth && !d->top) {
		if (t != '|') {
			d->top = t;
			d->cmd[0] = d->arg[0] = d->err[0] = '\0';
			d->has_arg = false;
		}
	}
	if (simple_type(t)) {
		if (d->depth == 0 && (t == '-'))
			error_code(d->err, p + 1, n - 1);
		if (!req && top_index(d) == 0 && t == '+')
			keep(d, false, p + 1, n - 1);
		return value_done(d);
	}
	if (bulk_type(t)) {
		if (!number(p + 1, n - 1, &v) || v < -1 || (v > 0 && (uint64_t)v > RD_MAX_BULK))
			return -1;
		if (v < 0)
			return value_done(d);
		d->in_bulk = true;
		l7_reader_next(&d->r, L7_U_BODY, (uint64_t)v + 2);
		return 0;
	}
	if (aggregate_type(t)) {
		if (!number(p + 1, n - 1, &v) || v < -1)
			return -1;
		uint64_t count = v <= 0 ? 0 : (uint64_t)v * (t == '%' || t == '|' ? 2 : 1);
		if (!count)
			return t == '|' ? 0 : value_done(d);
		if (d->depth == RD_DEPTH)
			return -1;
		if (!d->depth)
			d->top_n = count;
		d->left[d->depth] = count;
		d->attr[d->depth++] = t == '|';
		return 0;
	}
	if (req && !d->depth) {
		inline_command(d, p, n);
		d->top = 'i';
		return 1;
	}
	return -1;
}

/*
 * The whole-message path: most requests are an array of bulk strings and
 * most answers one simple value or bulk, each whole in the chunk's captured
 * bytes (a pipeline's chunk holds many). Such a message is read here in one
 * pass; anything else (a split, an inline command, a nested or null value,
 * garbage) returns 0 and goes through the reader, which gives the same
 * result at any split (the unit tests compare the two at every offset).
 */

/* The line at p within n bytes: its length without CR LF, and the bytes it takes. */
static bool whole_line(const uint8_t *p, size_t n, size_t *len, size_t *took)
{
	const uint8_t *lf = memchr(p, '\n', n);
	if (!lf)
		return false;
	size_t l = (size_t)(lf - p);
	*took = l + 1;
	*len = l && p[l - 1] == '\r' ? l - 1 : l;
	return true;
}

/* The bulk string at p within n bytes ("$len" CR LF, len bytes, CR LF): false unless whole. */
static bool whole_bulk(const uint8_t *p, size_t n, const uint8_t **body, size_t *blen, size_t *took)
{
	size_t len, off;
	int64_t v;
	if (!n || p[0] != '$' || !whole_line(p, n, &len, &off) || !len ||
	    !number(p + 1, len - 1, &v) || v < 0 || (uint64_t)v > n - off || n - off - (uint64_t)v < 2 ||
	    p[off + v] != '\r' || p[off + v + 1] != '\n')
		return false;
	*body = p + off;
	*blen = (size_t)v;
	*took = off + (size_t)v + 2;
	return true;
}

/*
 * Both are entered only at a message's start, where reset_msg left the
 * command, argument and error empty; what a request that turns out not
 * whole wrote there, the reader's path clears again at the same start.
 */
static size_t rd_whole_request(struct rd_dir *d, const uint8_t *p, size_t n)
{
	size_t len, off, took, blen;
	const uint8_t *body;
	int64_t count;

	if (p[0] != '*' || !whole_line(p, n, &len, &off) || !len || !number(p + 1, len - 1, &count) ||
	    count < 1)
		return 0;
	for (int64_t i = 0; i < count; i++) {
		if (!whole_bulk(p + off, n - off, &body, &blen, &took))
			return 0;
		if (i == 0)
			copy_word(d->cmd, sizeof(d->cmd), body, blen, true);
		else if (i == 1)
			copy_word(d->arg, sizeof(d->arg), body, blen, false);
		off += took;
	}
	d->top = '*';
	d->has_arg = count > 1;
	return off;
}

static size_t rd_whole_response(struct rd_dir *d, const uint8_t *p, size_t n)
{
	size_t len, took, blen;
	const uint8_t *body;
	uint8_t t = p[0];

	if (t == '$') {
		if (!whole_bulk(p, n, &body, &blen, &took))
			return 0;
	} else if (!simple_type(t) || !whole_line(p, n, &len, &took) || !len) {
		return 0;
	}
	d->top = t;
	if (t == '-')
		error_code(d->err, p + 1, len - 1);
	return took;
}

/* A whole message: to the pairing, and the direction ready for the next one. */
static void message_done(struct rd_state *s, struct rd_dir *d, bool req, l7_msg_fn fn, void *ctx)
{
	if (req)
		emit_request(s, d, fn, ctx);
	else
		emit_response(s, d, fn, ctx);
	reset_msg(d);
}

static void rd_feed(void *sv, enum l7_dir dir, const uint8_t *data, size_t captured, size_t total,
		    l7_msg_fn fn, void *ctx)
{
	struct rd_state *s = sv;
	struct rd_dir *d = &s->d[dir];
	bool req = dir == L7_DIR_REQUEST;
	size_t pos = 0;

	if (d->lost) {
		if (!(req ? rd_detect_request : rd_detect_response)(data, captured))
			return;
		d->lost = false; /* resynchronised at this chunk */
		reset_msg(d);
		l7_reader_next(&d->r, L7_U_LINE, 0);
	}
	while (pos < total || (d->in_bulk && !d->r.left)) {
		/* at a message's start, with the reader's line not begun */
		if (pos < captured && !d->depth && !d->top && !d->in_bulk && !d->r.started) {
			size_t took = req ? rd_whole_request(d, data + pos, captured - pos)
					  : rd_whole_response(d, data + pos, captured - pos);
			if (took) {
				pos += took;
				message_done(s, d, req, fn, ctx);
				continue;
			}
		}
		enum l7_take t = l7_reader_take(&d->r, data, captured, total, &pos);
		if (t == L7_TAKE_MORE)
			break;
		int r;
		if (t == L7_TAKE_LOST) {
			s->cnt.lost++;
			d->lost = true;
			return;
		}
		if (d->in_bulk) {
			d->in_bulk = false;
			if (d->r.uncaptured)
				s->cnt.truncated++;
			size_t n = d->r.have;
			bool whole = !d->r.cut;
			if (whole && (n < 2 || d->r.at[n - 2] != '\r' || d->r.at[n - 1] != '\n')) {
				r = -1;
			} else {
				keep(d, req, d->r.at, whole ? n - 2 : n);
				if (!d->depth && d->top == '!')
					error_code(d->err, d->r.at, whole ? n - 2 : n);
				r = value_done(d);
			}
		} else {
			if (d->r.cut)
				s->cnt.truncated++;
			r = line(s, d, req);
			if (d->in_bulk)
				continue;
		}
		if (r < 0) {
			s->cnt.unparseable++;
			d->lost = true;
			return;
		}
		if (r > 0)
			message_done(s, d, req, fn, ctx);
		l7_reader_next(&d->r, L7_U_LINE, 0);
	}
}

const struct l7_proto l7_proto_redis = {
	.name = "redis",
	.pair = L7_PAIR_FIFO,
	.default_port = 6379,
	.state_size = sizeof(struct rd_state),
	.detect_request = rd_detect_request,
	.detect_response = rd_detect_response,
	.init = rd_init,
	.feed = rd_feed,
	.counters = rd_counters,
};
