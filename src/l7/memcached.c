/*
 * Memcached, the text protocol (classic and meta commands) and the binary one.
 *
 * Text: a request is a command line, followed for storage commands (set, add,
 * replace, append, prepend, cas, ms) by a data block of the announced size.
 * A response is one line, or VALUE/VA items (each a line and a data block)
 * and STAT lines closed by END (a meta get's VA is complete by itself).
 * `noreply` (and the meta quiet flag `q`) asks for no answer: such requests
 * are counted but not paired. Binary: a 24-byte header (magic 0x80 request,
 * 0x81 response) and a body of the announced length; the quiet opcodes are
 * answered only on a hit or an error, so those answers are not paired either.
 *
 * The trace form is the command and its first key; values never are read.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "proto.h"
#include "reader.h"

#define MC_WORDS 8
#define MC_MAX_DATA (1ull << 31)

enum mc_st { MC_START, MC_LINE, MC_DATA, MC_BIN_HEADER, MC_BIN_BODY, MC_LOST };

struct mc_dir {
	struct l7_reader r;
	enum mc_st st;
	bool multi;	  /* response: inside VALUE/STAT items, up to END */
	bool data_ends;	  /* response: the data block ends the response (meta VA) */
	struct l7_msg pending; /* a request waiting for its data block */
	uint8_t hdr[24];       /* binary: the header, while its body is read */
};

struct mc_state {
	struct l7_counters cnt;
	struct mc_dir d[2];
};

struct cmd_info {
	const char *name;
	int8_t key;  /* the key's word index, -1: none */
	int8_t data; /* the data size's word index (storage commands), -1: none */
};

static const struct cmd_info commands[] = {
	{ "get", 1, -1 },     { "gets", 1, -1 },     { "gat", 2, -1 },	    { "gats", 2, -1 },
	{ "set", 1, 4 },      { "add", 1, 4 },	     { "replace", 1, 4 },   { "append", 1, 4 },
	{ "prepend", 1, 4 },  { "cas", 1, 4 },	     { "delete", 1, -1 },   { "incr", 1, -1 },
	{ "decr", 1, -1 },    { "touch", 1, -1 },    { "stats", -1, -1 },   { "version", -1, -1 },
	{ "flush_all", -1, -1 }, { "verbosity", -1, -1 }, { "quit", -1, -1 }, { "mg", 1, -1 },
	{ "ms", 1, 2 },	      { "md", 1, -1 },	     { "ma", 1, -1 },	    { "mn", -1, -1 },
	{ "me", 1, -1 },      { "cache_memlimit", -1, -1 }, { "shutdown", -1, -1 },
	{ "lru_crawler", -1, -1 }, { "watch", -1, -1 }, { "slabs", -1, -1 },
};

static const char *const replies[] = {
	"VALUE", "END",	  "STORED", "NOT_STORED", "EXISTS", "NOT_FOUND", "DELETED", "TOUCHED",
	"OK",	 "ERROR", "CLIENT_ERROR", "SERVER_ERROR", "STAT", "VERSION", "VA", "HD",
	"EN",	 "NF",	  "NS",	    "EX",	  "MN",	    "ME",	 "RESET",
};

/* Binary opcodes: names, and which are quiet. */
static const char *const bin_ops[] = {
	[0x00] = "get",	    [0x01] = "set",	   [0x02] = "add",     [0x03] = "replace",
	[0x04] = "delete",  [0x05] = "incr",	   [0x06] = "decr",    [0x07] = "quit",
	[0x08] = "flush_all", [0x09] = "getq",	   [0x0a] = "noop",    [0x0b] = "version",
	[0x0c] = "getk",    [0x0d] = "getkq",	   [0x0e] = "append",  [0x0f] = "prepend",
	[0x10] = "stats",   [0x11] = "setq",	   [0x12] = "addq",    [0x13] = "replaceq",
	[0x14] = "deleteq", [0x15] = "incrq",	   [0x16] = "decrq",   [0x17] = "quitq",
	[0x18] = "flushq",  [0x19] = "appendq",	   [0x1a] = "prependq", [0x1b] = "verbosity",
	[0x1c] = "touch",   [0x1d] = "gat",	   [0x1e] = "gatq",    [0x20] = "sasl_list_mechs",
	[0x21] = "sasl_auth", [0x22] = "sasl_step", [0x23] = "gatk",   [0x24] = "gatkq",
};
#define N_BIN_OPS (sizeof(bin_ops) / sizeof(bin_ops[0]))

static bool bin_quiet(uint8_t op)
{
	return op == 0x09 || op == 0x0d || (op >= 0x11 && op <= 0x1a) || op == 0x1e || op == 0x24;
}

/* Splits a line into words (at most MC_WORDS); returns their count. */
static unsigned words(const uint8_t *p, size_t n, const uint8_t **w, size_t *wl)
{
	unsigned k = 0;
	size_t i = 0;
	while (k < MC_WORDS) {
		while (i < n && p[i] == ' ')
			i++;
		if (i == n)
			break;
		w[k] = p + i;
		while (i < n && p[i] != ' ')
			i++;
		wl[k] = (size_t)(p + i - w[k]);
		k++;
	}
	return k;
}

static bool word_is(const uint8_t *w, size_t wl, const char *s)
{
	return wl == strlen(s) && !memcmp(w, s, wl);
}

static const struct cmd_info *command(const uint8_t *w, size_t wl)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (word_is(w, wl, commands[i].name))
			return &commands[i];
	return NULL;
}

static bool reply_word(const uint8_t *w, size_t wl)
{
	for (size_t i = 0; i < sizeof(replies) / sizeof(replies[0]); i++)
		if (word_is(w, wl, replies[i]))
			return true;
	return false;
}

static bool decimal(const uint8_t *p, size_t n, uint64_t *v)
{
	uint64_t x = 0;
	if (!n || n > 19)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!isdigit(p[i]))
			return false;
		x = x * 10 + (p[i] - '0');
	}
	*v = x;
	return true;
}

static bool printable(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] < 0x20 || p[i] >= 0x7f)
			return false;
	return true;
}

/* A binary header that is self-consistent, the whole message in the chunk or cut by its end. */
static bool bin_header(const uint8_t *p, size_t n, uint8_t magic)
{
	if (n < 24 || p[0] != magic || p[1] >= N_BIN_OPS || !bin_ops[p[1]] || p[5] != 0)
		return false;
	uint32_t body = l7_be32(p + 8);
	uint16_t key = l7_be16(p + 2);
	/* a response's status is one of the small codes */
	return body >= (uint32_t)key + p[4] && body < (1u << 30) && p[4] <= 20 &&
	       (magic == 0x80 || l7_be16(p + 6) < 0x100);
}

/* A first line: printable, ending in CRLF, its first word accepted by ok(). */
static bool text_line(const uint8_t *p, size_t n, bool request)
{
	size_t lim = n < 2048 ? n : 2048;
	const uint8_t *lf = memchr(p, '\n', lim);
	if (!lf || lf == p || lf[-1] != '\r')
		return false;
	size_t ln = (size_t)(lf - p) - 1;
	const uint8_t *w[MC_WORDS];
	size_t wl[MC_WORDS];
	if (!printable(p, ln) || !words(p, ln, w, wl) || w[0] != p)
		return false;
	if (!request)
		return reply_word(w[0], wl[0]);
	const struct cmd_info *c = command(w[0], wl[0]);
	unsigned k = words(p, ln, w, wl);
	return c && (c->key < 0 || (unsigned)c->key < k) && (c->data < 0 || (unsigned)c->data < k);
}

static bool mc_detect_request(const uint8_t *p, size_t n)
{
	return p && (bin_header(p, n, 0x80) || text_line(p, n, true));
}

static bool mc_detect_response(const uint8_t *p, size_t n)
{
	return p && (bin_header(p, n, 0x81) || text_line(p, n, false));
}

static int mc_init(void *sv)
{
	memset(sv, 0, sizeof(struct mc_state));
	return 0;
}

static struct l7_counters *mc_counters(void *sv)
{
	return &((struct mc_state *)sv)->cnt;
}

static void emit(struct mc_state *s, struct l7_msg *m, l7_msg_fn fn, void *ctx)
{
	s->cnt.messages++;
	fn(ctx, m);
}

static void set_text(struct l7_msg *m, const uint8_t *cmd, size_t cl, const uint8_t *key, size_t kl)
{
	char k[128];
	l7_copy_printable(m->op, sizeof(m->op), cmd, cl);
	if (key) {
		l7_copy_printable(k, sizeof(k), key, kl);
		l7_join(m->text, sizeof(m->text), m->op, k);
	} else {
		l7_join(m->text, sizeof(m->text), m->op, NULL);
	}
}

/* A request line. Returns the data block's size + 2 to read next, 0 if none, -1 if garbage. */
static int64_t request_line(struct mc_state *s, struct mc_dir *d, l7_msg_fn fn, void *ctx)
{
	const uint8_t *w[MC_WORDS];
	size_t wl[MC_WORDS];
	size_t n = d->r.have;
	if (n && d->r.at[n - 1] == '\r')
		n--;
	unsigned k = words(d->r.at, n, w, wl);
	if (!k)
		return 0;
	const struct cmd_info *c = command(w[0], wl[0]);
	static const struct cmd_info unknown = { "unknown", -1, -1 };
	if (!c) {
		/* the server answers ERROR: still a request, for the pairing */
		c = &unknown;
		w[0] = (const uint8_t *)unknown.name;
		wl[0] = strlen(unknown.name);
	}
	struct l7_msg *m = &d->pending;
	l7_msg_init(m, L7_MSG_REQUEST);
	set_text(m, w[0], wl[0], c->key >= 0 && (unsigned)c->key < k ? w[c->key] : NULL,
		 c->key >= 0 && (unsigned)c->key < k ? wl[c->key] : 0);
	bool meta = wl[0] == 2 && w[0][0] == 'm';
	for (unsigned i = 1; i < k; i++)
		if ((!meta && word_is(w[i], wl[i], "noreply")) || (meta && word_is(w[i], wl[i], "q")))
			m->kind = L7_MSG_REQUEST_NOREPLY;
	if (word_is(w[0], wl[0], "quit"))
		m->kind = L7_MSG_REQUEST_NOREPLY;
	uint64_t size = 0;
	if (c->data >= 0) {
		if ((unsigned)c->data >= k || !decimal(w[c->data], wl[c->data], &size) ||
		    size > MC_MAX_DATA)
			return -1;
		return (int64_t)size + 2; /* reported once the block is past */
	}
	emit(s, m, fn, ctx);
	return 0;
}

/* A response line. Returns the data block's size + 2, 0 if none, -1 if garbage. */
static int64_t response_line(struct mc_state *s, struct mc_dir *d, l7_msg_fn fn, void *ctx)
{
	const uint8_t *w[MC_WORDS];
	size_t wl[MC_WORDS];
	size_t n = d->r.have;
	uint64_t size;
	if (n && d->r.at[n - 1] == '\r')
		n--;
	unsigned k = words(d->r.at, n, w, wl);
	if (!k)
		return -1;
	if (word_is(w[0], wl[0], "VALUE")) {
		if (k < 4 || !decimal(w[3], wl[3], &size) || size > MC_MAX_DATA)
			return -1;
		d->multi = true;
		return (int64_t)size + 2;
	}
	if (word_is(w[0], wl[0], "VA")) {
		if (k < 2 || !decimal(w[1], wl[1], &size) || size > MC_MAX_DATA)
			return -1;
		d->data_ends = true;
		return (int64_t)size + 2;
	}
	if (word_is(w[0], wl[0], "STAT")) {
		d->multi = true;
		return 0;
	}
	struct l7_msg m;
	l7_msg_init(&m, L7_MSG_RESPONSE);
	if (word_is(w[0], wl[0], "ERROR") || word_is(w[0], wl[0], "CLIENT_ERROR") ||
	    word_is(w[0], wl[0], "SERVER_ERROR")) {
		m.status = L7_STATUS_FAILED;
		l7_copy_printable(m.code, sizeof(m.code), w[0], wl[0]);
	} else if (!reply_word(w[0], wl[0]) && !decimal(w[0], wl[0], &size)) {
		return -1;
	}
	d->multi = false;
	emit(s, &m, fn, ctx);
	return 0;
}

static void bin_message(struct mc_state *s, struct mc_dir *d, bool req, l7_msg_fn fn, void *ctx,
			const uint8_t *h)
{
	struct l7_msg m;
	l7_msg_init(&m, L7_MSG_REQUEST);
	uint8_t op = h[1];
	uint16_t keylen = l7_be16(h + 2);
	uint8_t extras = h[4];
	const uint8_t *b = d->r.at;
	size_t have = d->r.have;

	if (req) {
		m.kind = bin_quiet(op) || op == 0x07 ? L7_MSG_REQUEST_NOREPLY : L7_MSG_REQUEST;
		const char *name = op < N_BIN_OPS && bin_ops[op] ? bin_ops[op] : "unknown";
		const uint8_t *key = keylen && have > extras ? b + extras : NULL;
		size_t kl = key ? (have - extras < keylen ? have - extras : keylen) : 0;
		set_text(&m, (const uint8_t *)name, strlen(name), key, kl);
	} else {
		uint16_t status = l7_be16(h + 6);
		m.kind = bin_quiet(op) ? L7_MSG_PUSH : L7_MSG_RESPONSE;
		/* key not found, exists, not stored answer the request: ok, as in text */
		m.status = status == 0 || status == 1 || status == 2 || status == 5 ? L7_STATUS_OK :
										      L7_STATUS_FAILED;
		if (m.status == L7_STATUS_FAILED)
			snprintf(m.code, sizeof(m.code), "0x%04x", status);
	}
	emit(s, &m, fn, ctx);
}

static void next(struct mc_dir *d, enum mc_st st, enum l7_unit u, uint64_t n)
{
	d->st = st;
	l7_reader_next(&d->r, u, n);
}

static void mc_feed(void *sv, enum l7_dir dir, const uint8_t *data, size_t captured, size_t total,
		    l7_msg_fn fn, void *ctx)
{
	struct mc_state *s = sv;
	struct mc_dir *d = &s->d[dir];
	bool req = dir == L7_DIR_REQUEST;
	size_t pos = 0;
	uint8_t hdr[24];

	if (d->st == MC_LOST) {
		if (!(req ? mc_detect_request : mc_detect_response)(data, captured))
			return;
		d->st = MC_START; /* resynchronised at this chunk */
		d->multi = d->data_ends = false;
	}
	while (pos < total || (d->st == MC_BIN_BODY && !d->r.left)) {
		if (d->st == MC_START) {
			if (pos >= captured) {
				s->cnt.lost++;
				d->st = MC_LOST;
				return;
			}
			if (!d->multi && data[pos] == (req ? 0x80 : 0x81))
				next(d, MC_BIN_HEADER, L7_U_FIXED, 24);
			else
				next(d, MC_LINE, L7_U_LINE, 0);
		}
		enum l7_take t = l7_reader_take(&d->r, data, captured, total, &pos);
		if (t == L7_TAKE_MORE)
			break;
		if (t == L7_TAKE_LOST) {
			s->cnt.lost++;
			d->st = MC_LOST;
			return;
		}
		int64_t more = 0;
		switch (d->st) {
		case MC_LINE:
			if (d->r.cut)
				s->cnt.truncated++;
			more = req ? request_line(s, d, fn, ctx) : response_line(s, d, fn, ctx);
			if (more < 0) {
				s->cnt.unparseable++;
				d->st = MC_LOST;
				return;
			}
			if (more)
				next(d, MC_DATA, L7_U_SKIP, (uint64_t)more);
			else
				d->st = d->multi ? MC_LINE : MC_START;
			if (d->st == MC_LINE)
				l7_reader_next(&d->r, L7_U_LINE, 0);
			break;
		case MC_DATA:
			if (req) {
				emit(s, &d->pending, fn, ctx);
			} else if (d->data_ends) {
				struct l7_msg m;
				l7_msg_init(&m, L7_MSG_RESPONSE);
				d->data_ends = false;
				emit(s, &m, fn, ctx);
			}
			if (d->multi)
				next(d, MC_LINE, L7_U_LINE, 0);
			else
				d->st = MC_START;
			break;
		case MC_BIN_HEADER:
			memcpy(hdr, d->r.at, 24);
			if (!bin_header(hdr, 24, req ? 0x80 : 0x81)) {
				s->cnt.unparseable++;
				d->st = MC_LOST;
				return;
			}
			memcpy(d->hdr, hdr, 24);
			next(d, MC_BIN_BODY, L7_U_BODY, l7_be32(hdr + 8));
			break;
		case MC_BIN_BODY:
			if (d->r.uncaptured)
				s->cnt.truncated++;
			bin_message(s, d, req, fn, ctx, d->hdr);
			d->st = MC_START;
			break;
		default:
			return;
		}
	}
}

const struct l7_proto l7_proto_memcached = {
	.name = "memcached",
	.pair = L7_PAIR_FIFO,
	.default_port = 11211,
	.state_size = sizeof(struct mc_state),
	.detect_request = mc_detect_request,
	.detect_response = mc_detect_response,
	.init = mc_init,
	.feed = mc_feed,
	.counters = mc_counters,
};
