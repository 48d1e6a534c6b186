/*
 * NATS's client protocol, both directions: CRLF-terminated lines, an
 * operation word and its arguments, and for the publishing and delivering
 * operations a payload of the announced size (and CRLF) after the line.
 *
 * Client: CONNECT, PUB subject [reply] size, HPUB subject [reply]
 * header-size total-size, SUB, UNSUB, PING, PONG. Server: INFO, MSG subject
 * sid [reply] size, HMSG subject sid [reply] header-size total-size, +OK,
 * -ERR, PING, PONG. Operation words are case-insensitive. When the
 * server's INFO requires TLS, a TLS handshake follows: tls_started() says
 * so from then on, and the TLS library's plaintext goes on here.
 *
 * Messages are counted, not paired (the messages family, proto.h): a PUB or
 * HPUB the client writes is "produce", a MSG or HMSG the server delivers is
 * "consume", each a request without a reply whose trace form is the
 * subject. The rest is control traffic, framed and passed. Payloads are
 * skipped by their size, captured or not: never read.
 */
#define _GNU_SOURCE /* memmem */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "proto.h"
#include "reader.h"

#define NT_MAX_PAYLOAD (64u << 20) /* the server's largest max_payload */
#define NT_ARGS 6
#define TLS_REQUIRED "\"tls_required\":true"

enum nt_op {
	NT_BAD,
	NT_CONNECT,
	NT_PUB,
	NT_HPUB,
	NT_SUB,
	NT_UNSUB,
	NT_PING,
	NT_PONG,
	NT_INFO,
	NT_MSG,
	NT_HMSG,
	NT_OK,
	NT_ERR,
};

static const struct {
	const char *word;
	enum nt_op op;
	bool client; /* sent by the client (else by the server; PING and PONG both) */
} words[] = {
	{ "CONNECT", NT_CONNECT, true }, { "PUB", NT_PUB, true },    { "HPUB", NT_HPUB, true },
	{ "SUB", NT_SUB, true },	 { "UNSUB", NT_UNSUB, true }, { "PING", NT_PING, true },
	{ "PONG", NT_PONG, true },	 { "INFO", NT_INFO, false },  { "MSG", NT_MSG, false },
	{ "HMSG", NT_HMSG, false },	 { "+OK", NT_OK, false },     { "-ERR", NT_ERR, false },
	{ "PING", NT_PING, false },	 { "PONG", NT_PONG, false },
};

struct nt_dir {
	struct l7_reader r;
	bool lost, in_payload;
};

struct nt_state {
	struct l7_counters cnt;
	struct nt_dir d[2];
	bool tls; /* the server's INFO said tls_required: a TLS handshake comes next */
};

/* A line split in words (at most NT_ARGS; more is an error for the ops that take a size). */
struct nt_line {
	enum nt_op op;
	size_t n;
	const uint8_t *w[NT_ARGS];
	size_t wl[NT_ARGS];
	bool more; /* words past NT_ARGS */
};

static size_t split(const uint8_t *p, size_t n, struct nt_line *l)
{
	size_t i = 0;
	l->n = 0;
	l->more = false;
	while (i < n) {
		while (i < n && (p[i] == ' ' || p[i] == '\t'))
			i++;
		if (i == n)
			break;
		size_t s = i;
		while (i < n && p[i] != ' ' && p[i] != '\t')
			i++;
		if (l->n == NT_ARGS) {
			l->more = true;
			break;
		}
		l->w[l->n] = p + s;
		l->wl[l->n++] = i - s;
	}
	return l->n;
}

static bool size_word(const uint8_t *p, size_t n, uint64_t *v)
{
	uint64_t x = 0;
	if (!n || n > 9)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!isdigit(p[i]))
			return false;
		x = x * 10 + (uint64_t)(p[i] - '0');
	}
	*v = x;
	return x <= NT_MAX_PAYLOAD;
}

/* A subject: printable, no spaces (tokens split by dots; wildcards only in SUB). */
static bool subject(const uint8_t *p, size_t n)
{
	if (!n || n > 1024)
		return false;
	for (size_t i = 0; i < n; i++)
		if (p[i] <= 0x20 || p[i] >= 0x7f)
			return false;
	return true;
}

/*
 * Parses a line (without CRLF) from `client` (true) or the server: its op,
 * and for the ops with a payload its size. False: not NATS.
 */
static bool parse_line(const uint8_t *p, size_t n, bool client, struct nt_line *l, uint64_t *payload)
{
	*payload = 0;
	l->op = NT_BAD;
	if (!split(p, n, l))
		return false;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (words[i].client != client || strlen(words[i].word) != l->wl[0] ||
		    strncasecmp(words[i].word, (const char *)l->w[0], l->wl[0]))
			continue;
		l->op = words[i].op;
		break;
	}
	uint64_t hdr, total;
	switch (l->op) {
	case NT_PUB: /* subject [reply] size */
		return (l->n == 3 || l->n == 4) && !l->more && subject(l->w[1], l->wl[1]) &&
		       size_word(l->w[l->n - 1], l->wl[l->n - 1], payload);
	case NT_HPUB: /* subject [reply] hdr total */
		return (l->n == 4 || l->n == 5) && !l->more && subject(l->w[1], l->wl[1]) &&
		       size_word(l->w[l->n - 2], l->wl[l->n - 2], &hdr) &&
		       size_word(l->w[l->n - 1], l->wl[l->n - 1], payload) && hdr <= *payload;
	case NT_MSG: /* subject sid [reply] size */
		return (l->n == 4 || l->n == 5) && !l->more && subject(l->w[1], l->wl[1]) &&
		       size_word(l->w[l->n - 1], l->wl[l->n - 1], payload);
	case NT_HMSG: /* subject sid [reply] hdr total */
		return (l->n == 5 || l->n == 6) && !l->more && subject(l->w[1], l->wl[1]) &&
		       size_word(l->w[l->n - 2], l->wl[l->n - 2], &hdr) &&
		       size_word(l->w[l->n - 1], l->wl[l->n - 1], &total) && hdr <= total &&
		       (*payload = total, true);
	case NT_SUB: /* subject [queue] sid */
		return (l->n == 3 || l->n == 4) && !l->more && subject(l->w[1], l->wl[1]);
	case NT_UNSUB: /* sid [max] */
		return (l->n == 2 || l->n == 3) && !l->more;
	case NT_PING:
	case NT_PONG:
	case NT_OK:
		return l->n == 1;
	case NT_CONNECT:
	case NT_INFO:
		return l->n >= 2 && l->w[1][0] == '{';
	case NT_ERR:
		return true;
	default:
		return false;
	}
}

/*
 * The chunk starts with a line of these ops: a whole line, ending in CRLF.
 * PING, PONG and +OK alone are not taken (a Redis inline PING, a Redis +OK
 * look the same); an error needs NATS's quotes.
 */
static bool detect(const uint8_t *p, size_t n, bool client)
{
	struct nt_line l;
	uint64_t payload;
	if (!p || n < 6)
		return false;
	const uint8_t *lf = memchr(p, '\n', n < 1100 ? n : 1100);
	if (!lf || lf == p || lf[-1] != '\r')
		return false;
	size_t len = (size_t)(lf - p - 1);
	if (!parse_line(p, len, client, &l, &payload))
		return false;
	switch (l.op) {
	case NT_PING:
	case NT_PONG:
	case NT_OK:
		return false;
	case NT_ERR:
		return len > 6 && p[4] == ' ' && p[5] == '\'' && p[len - 1] == '\'';
	case NT_CONNECT:
	case NT_INFO:
		return p[len - 1] == '}';
	default:
		return true;
	}
}

static bool nt_detect_request(const uint8_t *p, size_t n)
{
	return detect(p, n, true);
}

static bool nt_detect_response(const uint8_t *p, size_t n)
{
	return detect(p, n, false);
}

static int nt_init(void *sv)
{
	struct nt_state *s = sv;
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < 2; i++)
		l7_reader_next(&s->d[i].r, L7_U_LINE, 0);
	return 0;
}

static struct l7_counters *nt_counters(void *sv)
{
	return &((struct nt_state *)sv)->cnt;
}

static bool nt_tls_started(void *sv)
{
	return ((struct nt_state *)sv)->tls;
}

static void nt_feed(void *sv, enum l7_dir dir, const uint8_t *data, size_t captured, size_t total,
		    l7_msg_fn fn, void *ctx)
{
	struct nt_state *s = sv;
	struct nt_dir *d = &s->d[dir];
	bool client = dir == L7_DIR_REQUEST;
	size_t pos = 0;

	if (d->lost) {
		if (!detect(data, captured, client))
			return;
		d->lost = false;
		d->in_payload = false;
		l7_reader_next(&d->r, L7_U_LINE, 0);
	}
	while (pos < total || (d->in_payload && !d->r.left)) {
		enum l7_take t = l7_reader_take(&d->r, data, captured, total, &pos);
		if (t == L7_TAKE_MORE)
			break;
		if (t == L7_TAKE_LOST) {
			s->cnt.lost++;
			d->lost = true;
			return;
		}
		if (d->in_payload) {
			d->in_payload = false;
			l7_reader_next(&d->r, L7_U_LINE, 0);
			continue;
		}
		size_t n = d->r.have;
		if (n && d->r.at[n - 1] == '\r')
			n--;
		struct nt_line l;
		uint64_t payload;
		if (!n) {
			l7_reader_next(&d->r, L7_U_LINE, 0);
			continue; /* a blank line: nothing */
		}
		if (!parse_line(d->r.at, n, client, &l, &payload) &&
		    !(d->r.cut && (l.op == NT_CONNECT || l.op == NT_INFO))) {
			s->cnt.unparseable++;
			d->lost = true;
			return;
		}
		if (l.op == NT_INFO && !s->tls &&
		    memmem(d->r.at, n, TLS_REQUIRED, sizeof(TLS_REQUIRED) - 1)) {
			/* the raw bytes are TLS records from here; the plaintext comes decrypted */
			s->tls = true;
			l7_reader_next(&d->r, L7_U_LINE, 0);
			return;
		}
		if (l.op == NT_PUB || l.op == NT_HPUB || l.op == NT_MSG || l.op == NT_HMSG) {
			struct l7_msg m;
			l7_msg_init(&m, L7_MSG_REQUEST_NOREPLY);
			strcpy(m.op, client ? "produce" : "consume");
			l7_copy_printable(m.text, sizeof(m.text), l.w[1], l.wl[1]);
			s->cnt.messages++;
			fn(ctx, &m);
			d->in_payload = true;
			l7_reader_next(&d->r, L7_U_SKIP, payload + 2);
			continue;
		}
		l7_reader_next(&d->r, L7_U_LINE, 0);
	}
}

const struct l7_proto l7_proto_nats = {
	.name = "nats",
	.family = L7_FAMILY_MESSAGES,
	.pair = L7_PAIR_FIFO,
	.default_port = 4222,
	.state_size = sizeof(struct nt_state),
	.detect_request = nt_detect_request,
	.detect_response = nt_detect_response,
	.init = nt_init,
	.feed = nt_feed,
	.counters = nt_counters,
	.tls_started = nt_tls_started,
};
