/*
 * HTTP/1.x heads, bodies and the per-direction stream machine. See http.h.
 *
 * A head is a start line and header lines, each ending in LF or CRLF, closed
 * by an empty line. Only complete lines are judged, except the start line,
 * which is also checked as far as it goes so that garbage is rejected before
 * HTTP_MAX_HEAD bytes of it have been gathered. Every check on a prefix is one
 * the whole line would fail too, so a head split at any byte parses the same.
 */
#include "http.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Chunked framing: the state in the low bits of chunk_state, a line length above. */
enum chunk_state {
	CS_SIZE_START,	  /* the first hex digit of a chunk size */
	CS_SIZE,	  /* more hex digits */
	CS_SIZE_WS,	  /* blanks after the size */
	CS_EXT,		  /* ";name=value" up to the end of the line */
	CS_SIZE_LF,	  /* CR seen at the end of the size line */
	CS_DATA,	  /* `remaining` bytes of chunk data */
	CS_DATA_END,	  /* the CRLF after the data */
	CS_DATA_LF,	  /* its CR seen */
	CS_TRAILER_START, /* the start of a trailer line or of the final empty line */
	CS_TRAILER,	  /* inside a trailer line */
	CS_FINAL_LF,	  /* the CR of the final empty line seen */
	CS_DONE,
	CS_ERROR, /* sticky: the framing was lost */
};

#define CS_BITS 4
#define CS_MASK ((1 << CS_BITS) - 1)
#define CS_MAX_LINE HTTP_MAX_HEAD /* a chunk-size line or the trailers, in bytes */

struct line {
	const unsigned char *p;
	size_t n; /* without the LF or CRLF */
};

struct head_info {
	bool has_length;
	uint64_t length;
	bool has_te;
	bool te_chunked; /* the last transfer coding is chunked */
	bool upgrade;	 /* an Upgrade header */
	bool seen;	 /* a header line came before */
	bool no_fold;	 /* the previous header may not be continued (framing headers) */
};

static bool is_ctl(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

static bool is_blank(unsigned char c)
{
	return c == ' ' || c == '\t';
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alpha(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* RFC 9110 token characters, as a table: every header name byte is tested. */
static const bool tchar[256] = {
	['0' ... '9'] = true, ['A' ... 'Z'] = true, ['a' ... 'z'] = true,
	['!'] = true, ['#'] = true, ['$'] = true, ['%'] = true, ['&'] = true, ['\''] = true,
	['*'] = true, ['+'] = true, ['-'] = true, ['.'] = true, ['^'] = true, ['_'] = true,
	['`'] = true, ['|'] = true, ['~'] = true,
};

static bool is_tchar(unsigned char c)
{
	return tchar[c];
}

/* A request-target byte: visible ASCII or obs-text. */
static bool is_target_char(unsigned char c)
{
	return c > 0x20 && c != 0x7f;
}

static int hex_value(unsigned char c)
{
	if (is_digit(c))
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Case-insensitive comparison of p[0..n) with a lower-case literal. */
static bool ieq(const unsigned char *p, size_t n, const char *lit)
{
	size_t i;

	if (n != strlen(lit))
		return false;
	for (i = 0; i < n; i++) {
		unsigned char c = p[i];

		if (c >= 'A' && c <= 'Z')
			c |= 0x20;
		if (c != (unsigned char)lit[i])
			return false;
	}
	return true;
}

/*
 * The bytes that end a line or make it malformed: below 0x20, or 0x7f. Bit 7
 * of each byte of the result is set for such a byte of x; the lowest set bit
 * is exact (a borrow only reaches the bytes above a true one), so only the
 * first one is trusted.
 */
static uint64_t special_bytes(uint64_t x)
{
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
	uint64_t y = x ^ (0x7f * ones);

	return ((x - 0x20 * ones) & ~x & high) | ((y - ones) & ~y & high);
}

/*
 * The offset of the first special byte (as above) in p[0..n), or n: sixteen
 * bytes a step with SSE2 (every x86-64 has it), eight with the word trick.
 */
static size_t next_special(const unsigned char *p, size_t n)
{
	size_t i = 0;
#ifdef __SSE2__
	const __m128i lo = _mm_set1_epi8(0x1f), del = _mm_set1_epi8(0x7f);
	for (; i + 16 <= n; i += 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(p + i));
		/* unsigned x <= 0x1f is min(x, 0x1f) == x */
		__m128i m = _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(x, lo), x), _mm_cmpeq_epi8(x, del));
		unsigned bits = (unsigned)_mm_movemask_epi8(m);
		if (bits)
			return i + (size_t)__builtin_ctz(bits);
	}
#endif
	for (; i + 8 <= n; i += 8) {
		uint64_t x, m;
		memcpy(&x, p + i, 8);
		m = special_bytes(x);
		if (m)
			return i + ((size_t)__builtin_ctzll(m) >> 3);
	}
	for (; i < n; i++)
		if (is_ctl(p[i]))
			return i;
	return n;
}

/*
 * The next complete line from buf[*pos..len); false if there is none yet.
 * *ctl: the line holds a control byte other than a tab (a bare CR included).
 * One pass finds both: every byte of every head passes here, and the line
 * ends and tabs are the only special bytes a well-formed head has.
 */
static bool next_line(const unsigned char *buf, size_t len, size_t *pos, struct line *l, bool *ctl)
{
	size_t i = *pos;
	bool bad = false;

	while (i < len) {
		i += next_special(buf + i, len - i);
		if (i == len)
			break;
		if (buf[i] == '\n' || (buf[i] == '\r' && i + 1 < len && buf[i + 1] == '\n')) {
			l->p = buf + *pos;
			l->n = i - *pos;
			*pos = i + (buf[i] == '\r' ? 2 : 1);
			*ctl = bad;
			return true;
		}
		if (buf[i] != '\t')
			bad = true;
		i++;
	}
	return false;
}

/* "HTTP/1.0" or "HTTP/1.1", or while !complete a prefix of one. */
static int parse_version(const unsigned char *p, size_t n, bool complete, uint8_t *minor)
{
	static const char prefix[] = "HTTP/1.";
	size_t i;

	if (n > 8 || (complete && n < 8))
		return HTTP_INVALID;
	if (n < 8) {
		for (i = 0; i < n && i < 7; i++)
			if (p[i] != (unsigned char)prefix[i])
				return HTTP_INVALID;
		return HTTP_NEED_MORE;
	}
	/* The whole version: one constant-size compare (a tenth of a head's parse byte by byte). */
	if (memcmp(p, prefix, 7))
		return HTTP_INVALID;
	if (p[7] != '0' && p[7] != '1')
		return HTTP_INVALID;
	*minor = p[7] - '0';
	return complete ? HTTP_COMPLETE : HTTP_NEED_MORE;
}

/* Scheme "://" at the start of t: returns the length up to the authority, or 0. */
static size_t scheme_len(const unsigned char *t, size_t n)
{
	size_t i = 0;

	if (!n || !is_alpha(t[0]))
		return 0;
	while (i < n && (is_alpha(t[i]) || is_digit(t[i]) || t[i] == '+' || t[i] == '-' ||
			 t[i] == '.'))
		i++;
	if (n - i < 3 || memcmp(t + i, "://", 3))
		return 0;
	return i + 3;
}

/* The path of a request target: no scheme and authority, query or fragment. */
static void target_path(const unsigned char *t, size_t n, char *out)
{
	size_t s = scheme_len(t, n), i;

	if (s) {
		/* absolute-form: skip the authority */
		for (i = s; i < n && t[i] != '/' && t[i] != '?' && t[i] != '#'; i++)
			;
		if (i == n || t[i] != '/') {
			strcpy(out, "/");
			return;
		}
		t += i;
		n -= i;
	}
	for (i = 0; i < n && t[i] != '?' && t[i] != '#'; i++)
		;
	if (i > HTTP_PATH_LEN - 1)
		i = HTTP_PATH_LEN - 1;
	memcpy(out, t, i);
	out[i] = '\0';
}

/*
 * "METHOD SP target SP HTTP/1.x". !complete: p[0..n) is the start of the
 * line; HTTP_NEED_MORE unless it already cannot be a request line.
 */
static int parse_request_line(const unsigned char *p, size_t n, bool complete,
			      struct http_request *req)
{
	size_t i = 0, t;
	int r;

	while (i < n && is_tchar(p[i]))
		i++;
	if (i >= HTTP_METHOD_LEN)
		return HTTP_INVALID;
	if (i == n)
		return complete ? HTTP_INVALID : HTTP_NEED_MORE;
	if (i == 0 || p[i] != ' ')
		return HTTP_INVALID;
	memcpy(req->method, p, i);
	req->method[i] = '\0';
	t = ++i;
	while (i < n && is_target_char(p[i]))
		i++;
	if (i == n)
		return complete ? HTTP_INVALID : HTTP_NEED_MORE;
	if (i == t || p[i] != ' ')
		return HTTP_INVALID;
	r = parse_version(p + i + 1, n - i - 1, complete, &req->version_minor);
	if (r == HTTP_COMPLETE)
		target_path(p + t, i - t, req->path);
	return r;
}

/* "HTTP/1.x SP 3DIGIT [SP reason]", or while !complete a prefix of one. */
static int parse_status_line(const unsigned char *p, size_t n, bool complete,
			     struct http_response *resp)
{
	size_t i;
	int r;

	r = parse_version(p, n < 8 ? n : 8, complete && n <= 8, &resp->version_minor);
	if (r == HTTP_INVALID)
		return r;
	if (n <= 8)
		return complete ? HTTP_INVALID : HTTP_NEED_MORE;
	if (p[8] != ' ')
		return HTTP_INVALID;
	for (i = 9; i < n && i < 12; i++)
		if (!is_digit(p[i]))
			return HTTP_INVALID;
	if (n > 9 && (p[9] < '1' || p[9] > '5'))
		return HTTP_INVALID;
	if (n < 12)
		return complete ? HTTP_INVALID : HTTP_NEED_MORE;
	if (n > 12 && p[12] != ' ')
		return HTTP_INVALID;
	for (i = 13; i < n; i++)
		if (is_ctl(p[i]) && p[i] != '\t')
			return HTTP_INVALID;
	resp->status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
	return complete ? HTTP_COMPLETE : HTTP_NEED_MORE;
}

static int parse_length(const unsigned char *p, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (!n)
		return -1;
	for (i = 0; i < n; i++) {
		if (!is_digit(p[i]) || v > (UINT64_MAX - (p[i] - '0')) / 10)
			return -1;
		v = v * 10 + (p[i] - '0');
	}
	*out = v;
	return 0;
}

/* A Transfer-Encoding list: remembers whether its last coding is chunked. */
static void parse_te(const unsigned char *p, size_t n, struct head_info *h)
{
	size_t i = 0;

	h->has_te = true;
	while (i < n) {
		size_t s, e, next;

		while (i < n && (is_blank(p[i]) || p[i] == ','))
			i++;
		if (i == n)
			break;
		for (next = i; next < n && p[next] != ','; next++)
			;
		for (e = i; e < next && p[e] != ';'; e++)
			;
		s = i;
		while (e > s && is_blank(p[e - 1]))
			e--;
		h->te_chunked = ieq(p + s, e - s, "chunked");
		i = next;
	}
}

/* ctl: the line holds a control byte other than a tab (next_line). */
static int parse_header(const unsigned char *p, size_t n, bool ctl, struct head_info *h)
{
	size_t i = 0, v, e;

	if (ctl)
		return HTTP_INVALID;
	if (is_blank(p[0])) {
		/* obs-fold: continues the previous value; never for framing headers */
		return h->seen && !h->no_fold ? HTTP_COMPLETE : HTTP_INVALID;
	}
	for (i = 0; i < n && is_tchar(p[i]); i++)
		;
	if (i == 0 || i == n || p[i] != ':')
		return HTTP_INVALID;
	for (v = i + 1; v < n && is_blank(p[v]); v++)
		;
	for (e = n; e > v && is_blank(p[e - 1]); e--)
		;
	h->seen = true;
	h->no_fold = false;
	if (ieq(p, i, "content-length")) {
		uint64_t len;

		h->no_fold = true;
		if (parse_length(p + v, e - v, &len) ||
		    (h->has_length && h->length != len))
			return HTTP_INVALID;
		h->has_length = true;
		h->length = len;
	} else if (ieq(p, i, "transfer-encoding")) {
		h->no_fold = true;
		parse_te(p + v, e - v, h);
	} else if (ieq(p, i, "upgrade")) {
		h->upgrade = true;
	}
	return HTTP_COMPLETE;
}

static void set_body(struct http_body *b, enum http_body_kind kind, uint64_t remaining)
{
	b->kind = kind;
	b->remaining = kind == HTTP_BODY_LENGTH ? remaining : 0;
	b->chunk_state = CS_SIZE_START;
}

/*
 * Parses a head into req (is_request) or resp. *upgrade: a request after
 * which the connection may carry another protocol (CONNECT, Upgrade).
 */
static int parse_head(const char *buf, size_t len, bool is_request, bool no_body,
		      struct http_request *req, struct http_response *resp, size_t *head_len,
		      bool *upgrade)
{
	const unsigned char *p = (const unsigned char *)buf;
	size_t lim = len < HTTP_MAX_HEAD ? len : HTTP_MAX_HEAD;
	int need = len >= HTTP_MAX_HEAD ? HTTP_INVALID : HTTP_NEED_MORE;
	struct head_info h = { 0 };
	struct line l;
	size_t pos = 0;
	bool ctl;
	int r;

	/* Field by field: clearing the whole path buffer was a tenth of the parse. */
	if (is_request) {
		req->method[0] = req->path[0] = '\0';
		req->version_minor = 0;
		req->body = (struct http_body){ 0 };
	} else {
		memset(resp, 0, sizeof(*resp));
	}
	*upgrade = false;
	if (!buf)
		return len ? HTTP_INVALID : HTTP_NEED_MORE;
	/* The start line's own checks reject any control byte in it. */
	if (!next_line(p, lim, &pos, &l, &ctl)) {
		/* only a part of the start line: reject it now if it cannot become one */
		size_t n = lim;

		if (n && p[n - 1] == '\r')
			n--;
		r = is_request ? parse_request_line(p, n, false, req) :
				 parse_status_line(p, n, false, resp);
		return r == HTTP_INVALID ? r : need;
	}
	r = is_request ? parse_request_line(l.p, l.n, true, req) :
			 parse_status_line(l.p, l.n, true, resp);
	if (r != HTTP_COMPLETE)
		return HTTP_INVALID;
	for (;;) {
		if (!next_line(p, lim, &pos, &l, &ctl))
			return need;
		if (!l.n && !ctl)
			break;
		if (parse_header(l.p, l.n, ctl, &h) != HTTP_COMPLETE)
			return HTTP_INVALID;
	}

	if (is_request) {
		/* RFC 9112 6.3: a request whose framing is not chunked is unreadable */
		if (h.has_te && !h.te_chunked)
			return HTTP_INVALID;
		if (h.has_te)
			set_body(&req->body, HTTP_BODY_CHUNKED, 0);
		else if (h.has_length && h.length)
			set_body(&req->body, HTTP_BODY_LENGTH, h.length);
		else
			set_body(&req->body, HTTP_BODY_NONE, 0);
		/* 8 bytes of a 16-byte buffer: the NUL included, one compare */
		*upgrade = h.upgrade || !memcmp(req->method, "CONNECT", 8);
	} else {
		int st = resp->status;

		if (no_body || st < 200 || st == 204 || st == 304)
			set_body(&resp->body, HTTP_BODY_NONE, 0);
		else if (h.has_te)
			set_body(&resp->body, h.te_chunked ? HTTP_BODY_CHUNKED :
							     HTTP_BODY_UNTIL_CLOSE, 0);
		else if (h.has_length)
			set_body(&resp->body, h.length ? HTTP_BODY_LENGTH : HTTP_BODY_NONE,
				 h.length);
		else
			set_body(&resp->body, HTTP_BODY_UNTIL_CLOSE, 0);
	}
	if (head_len)
		*head_len = pos;
	return HTTP_COMPLETE;
}

int http_parse_request(const char *buf, size_t len, struct http_request *req, size_t *head_len)
{
	bool upgrade;

	return parse_head(buf, len, true, false, req, NULL, head_len, &upgrade);
}

int http_parse_response(const char *buf, size_t len, bool no_body, struct http_response *resp,
			size_t *head_len)
{
	bool upgrade;

	return parse_head(buf, len, false, no_body, NULL, resp, head_len, &upgrade);
}

/* The end of a chunk-size line: its data follows, or the trailers after the last chunk. */
static int size_line_done(struct http_body *b)
{
	return b->remaining ? CS_DATA : CS_TRAILER_START;
}

static long chunked_consume(struct http_body *b, const unsigned char *data, size_t len,
			    bool *done)
{
	int st = b->chunk_state & CS_MASK;
	unsigned int line = (unsigned int)b->chunk_state >> CS_BITS;
	size_t i = 0;

	if (b->chunk_state < 0 || st >= CS_ERROR)
		goto lost;
	while (i < len && st != CS_DONE) {
		unsigned char c;
		int v;

		if (st == CS_DATA) {
			/* the data itself: skipped in bulk, captured or not */
			uint64_t n = len - i;

			if (n > b->remaining)
				n = b->remaining;
			i += n;
			b->remaining -= n;
			if (!b->remaining)
				st = CS_DATA_END;
			continue;
		}
		if (!data)
			goto lost; /* framing that was not captured */
		c = data[i++];
		if (st >= CS_TRAILER_START) {
			/* the trailers as a whole are bounded, in `remaining` */
			if (++b->remaining > CS_MAX_LINE)
				goto lost;
		} else if (++line > CS_MAX_LINE) {
			goto lost;
		}
		switch (st) {
		case CS_SIZE_START:
			v = hex_value(c);
			if (v < 0)
				goto lost;
			b->remaining = v;
			st = CS_SIZE;
			break;
		case CS_SIZE:
			v = hex_value(c);
			if (v >= 0) {
				if (b->remaining > UINT64_MAX >> 4)
					goto lost;
				b->remaining = b->remaining << 4 | v;
				break;
			}
			/* fall through */
		case CS_SIZE_WS:
			if (is_blank(c))
				st = CS_SIZE_WS;
			else if (c == ';')
				st = CS_EXT;
			else if (c == '\r')
				st = CS_SIZE_LF;
			else if (c == '\n')
				st = size_line_done(b);
			else
				goto lost;
			break;
		case CS_EXT:
			if (c == '\r')
				st = CS_SIZE_LF;
			else if (c == '\n')
				st = size_line_done(b);
			else if (is_ctl(c) && c != '\t')
				goto lost;
			break;
		case CS_SIZE_LF:
			if (c != '\n')
				goto lost;
			st = size_line_done(b);
			break;
		case CS_DATA_END:
			if (c == '\r')
				st = CS_DATA_LF;
			else if (c == '\n')
				st = CS_SIZE_START;
			else
				goto lost;
			break;
		case CS_DATA_LF:
			if (c != '\n')
				goto lost;
			st = CS_SIZE_START;
			break;
		case CS_TRAILER_START:
			if (c == '\r')
				st = CS_FINAL_LF;
			else if (c == '\n')
				st = CS_DONE;
			else
				st = CS_TRAILER;
			break;
		case CS_TRAILER:
			if (c == '\n')
				st = CS_TRAILER_START;
			break;
		case CS_FINAL_LF:
			if (c != '\n')
				goto lost;
			st = CS_DONE;
			break;
		default:
			goto lost;
		}
		if (st == CS_SIZE_START || st == CS_DATA || st == CS_TRAILER_START)
			line = 0;
	}
	b->chunk_state = st | (int)(line << CS_BITS);
	*done = st == CS_DONE;
	return (long)i;
lost:
	b->chunk_state = CS_ERROR;
	return -1;
}

long http_body_consume(struct http_body *b, const char *data, size_t len, bool *done)
{
	bool fin = false;
	long n;

	if (len > LONG_MAX)
		len = LONG_MAX;
	switch (b->kind) {
	case HTTP_BODY_NONE:
		n = 0;
		fin = true;
		break;
	case HTTP_BODY_LENGTH:
		n = (long)(len < b->remaining ? len : b->remaining);
		b->remaining -= n;
		fin = !b->remaining;
		break;
	case HTTP_BODY_CHUNKED:
		n = chunked_consume(b, (const unsigned char *)data, len, &fin);
		break;
	case HTTP_BODY_UNTIL_CLOSE:
		n = (long)len;
		break;
	default:
		n = -1;
		break;
	}
	if (done)
		*done = n >= 0 && fin;
	return n;
}

bool http_looks_like_request(const char *buf, size_t len)
{
	static const char *const methods[] = {
		"GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "CONNECT", "TRACE",
	};
	size_t i;

	if (!buf)
		return false;
	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		size_t n = strlen(methods[i]);

		/*
		 * "GET /": the method, one space and the start of a target. A
		 * target is never JSON: NATS's first line is "CONNECT {...}".
		 */
		if (len > n + 1 && !memcmp(buf, methods[i], n) && buf[n] == ' ' &&
		    is_target_char(buf[n + 1]) && buf[n + 1] != '{')
			return true;
	}
	return false;
}

bool http_looks_like_response(const char *buf, size_t len)
{
	return buf && len >= 8 && !memcmp(buf, "HTTP/1.", 7) && is_digit(buf[7]);
}

void http_stream_init(struct http_stream *s, bool requests)
{
	memset(s, 0, sizeof(*s));
	s->requests = requests;
	s->state = HTTP_S_HEAD;
}

/* The gathered head is parsed, lost or given up: its buffer goes. */
static void head_release(struct http_stream *s)
{
	free(s->head);
	s->head = NULL;
	s->head_len = 0;
}

void http_stream_free(struct http_stream *s)
{
	head_release(s);
}

static void lose(struct http_stream *s)
{
	s->errors++;
	s->state = HTTP_S_LOST;
	head_release(s);
}

/* A head was parsed into m: report it and decide what follows it. */
static void dispatch(struct http_stream *s, struct http_msg *m, bool upgrade, http_msg_fn fn,
		     void *ctx)
{
	int ret = 0;

	m->is_request = s->requests;
	s->messages++;
	if (fn)
		ret = fn(ctx, m);
	if (s->requests) {
		if (upgrade) {
			/*
			 * CONNECT or Upgrade: another protocol may follow.
			 * Not an error: wait for a chunk that starts with a
			 * request (the upgrade was refused) and ignore the rest.
			 */
			s->state = HTTP_S_LOST;
			return;
		}
		s->body = m->req.body;
	} else {
		int st = m->resp.status;

		if (st == 101 || (ret == 2 && st >= 200 && st < 300)) {
			s->state = HTTP_S_UPGRADED;
			return;
		}
		s->body = m->resp.body;
		if (ret == 1)
			set_body(&s->body, HTTP_BODY_NONE, 0);
	}
	s->state = s->body.kind == HTTP_BODY_NONE ? HTTP_S_HEAD : HTTP_S_BODY;
}

/* State HEAD at data[pos]: returns where the head ended (or total when lost). */
static size_t feed_head(struct http_stream *s, const char *data, size_t captured, size_t total,
			size_t pos, http_msg_fn fn, void *ctx)
{
	struct http_msg m;
	size_t hl = 0, used;
	bool upgrade;
	int r;

	if (!s->head_len) {
		/* empty lines between messages are allowed (RFC 9112 2.2) */
		while (pos < captured && (data[pos] == '\r' || data[pos] == '\n'))
			pos++;
		if (pos == total)
			return pos;
	}
	if (pos >= captured) {
		lose(s); /* bytes where a head should be were not captured */
		return total;
	}
	/* parse_head fills the half the direction uses (m.req or m.resp), dispatch the rest. */
	if (!s->head_len) {
		r = parse_head(data + pos, captured - pos, s->requests, false, &m.req, &m.resp, &hl,
			       &upgrade);
		if (r == HTTP_NEED_MORE && captured - pos < HTTP_MAX_HEAD) {
			if (!(s->head = malloc(HTTP_MAX_HEAD))) {
				lose(s); /* no room to gather it: lost, and counted so */
				return total;
			}
			memcpy(s->head, data + pos, captured - pos);
			s->head_len = captured - pos;
			return captured;
		}
		used = hl;
	} else {
		size_t old = s->head_len, n = captured - pos;
		bool had_line = memchr(s->head, '\n', old);

		if (n > HTTP_MAX_HEAD - old)
			n = HTTP_MAX_HEAD - old;
		memcpy(s->head + old, data + pos, n);
		s->head_len += n;
		/* past the start line only complete lines count: wait for an LF */
		if (had_line && s->head_len < HTTP_MAX_HEAD && !memchr(data + pos, '\n', n))
			return pos + n;
		r = parse_head(s->head, s->head_len, s->requests, false, &m.req, &m.resp, &hl,
			       &upgrade);
		if (r == HTTP_NEED_MORE && s->head_len < HTTP_MAX_HEAD)
			return pos + n;
		s->head_len = 0;
		used = hl > old ? hl - old : 0;
	}
	if (r != HTTP_COMPLETE || !used) {
		lose(s);
		return total;
	}
	dispatch(s, &m, upgrade, fn, ctx);
	head_release(s); /* a gathered head: m pointed into it until now */
	return pos + used;
}

/* State BODY at data[pos]: returns where the body ended (or total). */
static size_t feed_body(struct http_stream *s, const char *data, size_t captured, size_t total,
			size_t pos)
{
	while (pos < total) {
		bool in_data = pos < captured;
		size_t n = (in_data ? captured : total) - pos;
		bool done = false;
		long used = http_body_consume(&s->body, in_data ? data + pos : NULL, n, &done);

		if (used < 0 || (!used && !done)) {
			lose(s);
			return total;
		}
		pos += used;
		if (done) {
			s->state = HTTP_S_HEAD;
			break;
		}
	}
	return pos;
}

void http_stream_feed(struct http_stream *s, const char *data, size_t captured, size_t total,
		      http_msg_fn fn, void *ctx)
{
	size_t pos = 0;

	if (!data)
		captured = 0;
	if (captured > total)
		captured = total;
	if (s->state == HTTP_S_LOST &&
	    (s->requests ? http_looks_like_request(data, captured) :
			   http_looks_like_response(data, captured))) {
		s->state = HTTP_S_HEAD; /* resynchronised at this chunk */
		head_release(s);
	}
	while (pos < total) {
		if (s->state == HTTP_S_HEAD)
			pos = feed_head(s, data, captured, total, pos, fn, ctx);
		else if (s->state == HTTP_S_BODY)
			pos = feed_body(s, data, captured, total, pos);
		else
			break; /* LOST until the next chunk, or UPGRADED for good */
	}
}

const char *http_status_class(int status)
{
	static const char *const classes[] = { "1xx", "2xx", "3xx", "4xx", "5xx" };
	return status >= 100 && status <= 599 ? classes[status / 100 - 1] : "unknown";
}
