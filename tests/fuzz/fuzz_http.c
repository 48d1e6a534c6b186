/*
 * libFuzzer target for src/l7/http.c.
 *
 * Input: byte 0 = number of split descriptors (mod 33), byte 1 = what the
 * response callback returns (2 bits per message), byte 2 = flags (bit 0:
 * no_body for http_parse_response, bit 1: expand tokens, bit 2: chunk lengths
 * x16), then two bytes per descriptor (chunk length; bit 7 of the second set:
 * fully captured, else its low 7 bits are how many bytes were captured), then
 * the payload. Whatever the descriptors leave is one last, captured chunk.
 *
 * Besides "no crash, no read past captured" (each chunk is copied into a
 * buffer of exactly `captured` bytes), it checks:
 *  - a complete head is still NEED_MORE one byte shorter;
 *  - the chunked-body machine stops at the same place fed whole or byte by byte;
 *  - the stream machine reports the same messages for the payload fed whole
 *    and split (all captured): the whole run's messages are a prefix of the
 *    split run's, and equal when the whole run never lost track.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l7/http.h"

#include "fuzz_check.h"

#define MAX_DESC 32
#define MAX_MSGS 64

struct seen {
	struct http_msg m[MAX_MSGS];
	size_t n;
	unsigned int policy;
	const struct http_stream *s;
};

static void check_body(const struct http_body *b)
{
	CHECK(b->kind >= HTTP_BODY_NONE && b->kind <= HTTP_BODY_UNTIL_CLOSE);
	if (b->kind != HTTP_BODY_LENGTH)
		CHECK(b->remaining == 0);
	else
		CHECK(b->remaining > 0);
}

static void check_request(const struct http_request *req)
{
	size_t n = strnlen(req->method, HTTP_METHOD_LEN);

	CHECK(n > 0 && n < HTTP_METHOD_LEN);
	CHECK(strnlen(req->path, HTTP_PATH_LEN) < HTTP_PATH_LEN);
	CHECK(req->version_minor <= 1);
	check_body(&req->body);
}

static void check_response(const struct http_response *resp)
{
	CHECK(resp->status >= 100 && resp->status <= 599);
	CHECK(resp->version_minor <= 1);
	check_body(&resp->body);
}

static int on_msg(void *ctx, const struct http_msg *m)
{
	struct seen *v = ctx;
	int ret = (v->policy >> (2 * (v->n % 4))) & 3; /* 3: not a defined answer */

	CHECK(m->is_request == v->s->requests);
	if (m->is_request)
		check_request(&m->req);
	else
		check_response(&m->resp);
	if (v->n < MAX_MSGS)
		v->m[v->n] = *m;
	v->n++;
	return ret;
}

static bool same_msg(const struct http_msg *a, const struct http_msg *b)
{
	if (a->is_request != b->is_request)
		return false;
	if (a->is_request)
		return !strcmp(a->req.method, b->req.method) && !strcmp(a->req.path, b->req.path) &&
		       a->req.version_minor == b->req.version_minor &&
		       a->req.body.kind == b->req.body.kind &&
		       a->req.body.remaining == b->req.body.remaining;
	return a->resp.status == b->resp.status && a->resp.version_minor == b->resp.version_minor &&
	       a->resp.body.kind == b->resp.body.kind &&
	       a->resp.body.remaining == b->resp.body.remaining;
}

struct chunk {
	size_t len;
	size_t captured;
};

/* Feeds payload in the given chunks; each captured part in a buffer of its exact size. */
static void feed_chunks(struct http_stream *s, struct seen *v, const uint8_t *p,
			const struct chunk *c, size_t nc, bool all_captured)
{
	size_t pos = 0;

	for (size_t i = 0; i < nc; i++) {
		size_t cap = all_captured ? c[i].len : c[i].captured;
		char *buf = cap ? malloc(cap) : NULL;

		if (cap) {
			CHECK(buf);
			memcpy(buf, p + pos, cap);
		}
		http_stream_feed(s, buf, cap, c[i].len, on_msg, v);
		free(buf);
		CHECK(s->head_len <= HTTP_MAX_HEAD);
		pos += c[i].len;
	}
}

static void fuzz_stream(bool requests, const uint8_t *p, size_t len, const struct chunk *c,
			size_t nc, unsigned int policy, bool any_uncaptured)
{
	static struct http_stream whole, split;
	static struct seen a, b;
	struct chunk one = { .len = len, .captured = len };

	a.n = b.n = 0;
	a.policy = b.policy = policy;
	a.s = &whole;
	b.s = &split;

	http_stream_free(&whole); /* the last input's head being gathered, if any */
	http_stream_free(&split);
	http_stream_init(&whole, requests);
	feed_chunks(&whole, &a, p, &one, 1, true);
	CHECK(whole.messages == a.n);

	http_stream_init(&split, requests);
	feed_chunks(&split, &b, p, c, nc, true);
	CHECK(split.messages == b.n);
	CHECK(b.n >= a.n);
	for (size_t i = 0; i < a.n && i < MAX_MSGS; i++)
		CHECK(same_msg(&a.m[i], &b.m[i]));
	if (whole.state != HTTP_S_LOST) {
		CHECK(whole.errors == 0);
		CHECK(split.errors == 0);
		CHECK(b.n == a.n);
		CHECK(split.state == whole.state);
		CHECK(split.head_len == whole.head_len);
		if (whole.state == HTTP_S_BODY) {
			CHECK(split.body.kind == whole.body.kind);
			CHECK(split.body.remaining == whole.body.remaining);
			CHECK(split.body.chunk_state == whole.body.chunk_state);
		}
	}

	if (any_uncaptured) {
		http_stream_free(&split);
		http_stream_init(&split, requests);
		b.n = 0;
		feed_chunks(&split, &b, p, c, nc, false);
		CHECK(split.messages == b.n);
	}
}

static void fuzz_parse(const uint8_t *p, size_t len, bool no_body)
{
	const char *s = (const char *)p;
	struct http_request req;
	struct http_response resp;
	size_t hl = 0, hl2 = 0;
	int r;

	r = http_parse_request(s, len, &req, &hl);
	CHECK(r == HTTP_INVALID || r == HTTP_COMPLETE || r == HTTP_NEED_MORE);
	if (r == HTTP_NEED_MORE)
		CHECK(len < HTTP_MAX_HEAD);
	if (r == HTTP_COMPLETE) {
		CHECK(hl > 0 && hl <= len && hl <= HTTP_MAX_HEAD);
		check_request(&req);
		CHECK(http_parse_request(s, hl, &req, &hl2) == HTTP_COMPLETE && hl2 == hl);
		CHECK(http_parse_request(s, hl - 1, &req, &hl2) == HTTP_NEED_MORE);
	}

	r = http_parse_response(s, len, no_body, &resp, &hl);
	CHECK(r == HTTP_INVALID || r == HTTP_COMPLETE || r == HTTP_NEED_MORE);
	if (r == HTTP_COMPLETE) {
		CHECK(hl > 0 && hl <= len && hl <= HTTP_MAX_HEAD);
		check_response(&resp);
		if (no_body)
			CHECK(resp.body.kind == HTTP_BODY_NONE);
		CHECK(http_parse_response(s, hl - 1, no_body, &resp, &hl2) == HTTP_NEED_MORE);
	}

	(void)http_looks_like_request(s, len);
	(void)http_looks_like_response(s, len);
}

/* The chunked machine, whole and byte by byte; and with the data parts uncaptured. */
static void fuzz_chunked(const uint8_t *p, size_t len)
{
	const char *s = (const char *)p;
	struct http_body b = { .kind = HTTP_BODY_CHUNKED };
	bool done = false, done1 = false;
	long n = http_body_consume(&b, s, len, &done), n1 = 0;

	CHECK(n >= -1 && n <= (long)len);
	if (n < 0)
		CHECK(!done);
	b = (struct http_body){ .kind = HTTP_BODY_CHUNKED };
	for (size_t i = 0; i < len && !done1; i++) {
		long k = http_body_consume(&b, s + i, 1, &done1);

		CHECK(k == 0 || k == 1 || k == -1);
		if (k < 0) {
			n1 = -1;
			break;
		}
		n1 += k;
	}
	CHECK(n1 == n && done1 == done);

	/*
	 * The same with every data byte uncaptured: try a byte as uncaptured,
	 * and if that is refused (framing) give it; once accepted, the rest of
	 * the chunk (`remaining`) goes uncaptured in one call.
	 */
	b = (struct http_body){ .kind = HTTP_BODY_CHUNKED };
	n1 = 0;
	done1 = false;
	while ((size_t)n1 < len && !done1) {
		struct http_body save = b;
		long k = http_body_consume(&b, NULL, 1, &done1);

		if (k < 0) {
			b = save;
			k = http_body_consume(&b, s + n1, 1, &done1);
		} else if (k == 1 && b.remaining && !done1) {
			size_t more = len - n1 - 1 < b.remaining ? len - n1 - 1 : b.remaining;
			long k2 = http_body_consume(&b, NULL, more, &done1);

			CHECK(k2 == (long)more);
			k += k2;
		}
		if (k < 0) {
			n1 = -1;
			break;
		}
		n1 += k;
	}
	CHECK(n1 == n && done1 == done);

	b = (struct http_body){ .kind = HTTP_BODY_LENGTH, .remaining = len / 2 + 1 };
	n = http_body_consume(&b, NULL, len, &done);
	CHECK(n == (long)(len < len / 2 + 1 ? len : len / 2 + 1));
}

/*
 * Flag bit 1: bytes 0xe0..0xff of the payload stand for these tokens, so the
 * fuzzer reaches complete heads and bodies without a seed corpus.
 */
static const char *const tokens[32] = {
	"GET ",
	"POST ",
	"HEAD ",
	"CONNECT ",
	"PROPFIND ",
	"/",
	" HTTP/1.1\r\n",
	" HTTP/1.0\r\n",
	"HTTP/1.1 ",
	"HTTP/1.0 ",
	"200 OK\r\n",
	"101 Switching Protocols\r\n",
	"204 No Content\r\n",
	"304 Not Modified\r\n",
	"100 Continue\r\n",
	"\r\n",
	"\n",
	"Content-Length: ",
	"content-length:",
	"Transfer-Encoding: chunked\r\n",
	"Transfer-Encoding: gzip\r\n",
	"Upgrade: websocket\r\n",
	"Host: h\r\n",
	"http://host",
	"?q=1#f",
	"0\r\n\r\n",
	"\r\n0\r\n\r\n",
	";ext=1",
	"10\r\n",
	"ffffffffffffffff",
	" \t",
	"X-Trailer: 1\r\n",
};

#define MAX_DECODED (1 << 15)

/* The payload in a buffer of its exact size (so reading past it is caught). */
static uint8_t *payload_copy(const uint8_t *p, size_t n, bool expand, size_t *out_len)
{
	size_t len = 0;
	uint8_t *out;

	if (!expand) {
		out = malloc(n ? n : 1);
		CHECK(out);
		memcpy(out, p, n);
		*out_len = n;
		return out;
	}
	for (size_t i = 0; i < n; i++)
		len += p[i] >= 0xe0 ? strlen(tokens[p[i] - 0xe0]) : 1;
	if (len > MAX_DECODED)
		len = MAX_DECODED;
	out = malloc(len ? len : 1);
	CHECK(out);
	*out_len = len;
	for (size_t i = 0, o = 0; i < n && o < len; i++) {
		const char *t = p[i] >= 0xe0 ? tokens[p[i] - 0xe0] : NULL;
		size_t k = t ? strlen(t) : 1;

		if (k > len - o)
			k = len - o;
		memcpy(out + o, t ? (const uint8_t *)t : p + i, k);
		o += k;
	}
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct chunk c[MAX_DESC + 1];
	const uint8_t *desc;
	size_t nd, nc = 0, pos = 0, off, len;
	unsigned int policy, flags;
	bool any_uncaptured = false;
	uint8_t *p;

	if (size < 3)
		return 0;
	nd = data[0] % (MAX_DESC + 1);
	policy = data[1];
	flags = data[2];
	off = 3 + 2 * nd;
	if (off > size)
		return 0;
	desc = data + 3;
	p = payload_copy(data + off, size - off, flags & 2, &len);

	for (size_t i = 0; i < nd && pos < len; i++) {
		/* flag bit 2: chunk lengths in units of 16 bytes */
		size_t n = (size_t)desc[2 * i] << (flags & 4 ? 4 : 0);
		uint8_t cap = desc[2 * i + 1];

		if (n > len - pos)
			n = len - pos;
		c[nc].len = n;
		c[nc].captured = cap & 0x80 ? n : (cap & 0x7f) < n ? (cap & 0x7f) : n;
		if (c[nc].captured < n)
			any_uncaptured = true;
		pos += n;
		nc++;
	}
	c[nc].len = len - pos;
	c[nc].captured = len - pos;
	nc++;

	fuzz_parse(p, len, flags & 1);
	fuzz_chunked(p, len);
	fuzz_stream(true, p, len, c, nc, policy, any_uncaptured);
	fuzz_stream(false, p, len, c, nc, policy, any_uncaptured);
	free(p);
	return 0;
}
