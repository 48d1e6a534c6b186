#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l7/http.h"

#define MAX_MSGS 16

/* What the stream machine reported. ret[i]: fn's return value for the i-th message. */
struct rec {
	struct http_msg m[MAX_MSGS];
	size_t n;
	int ret[MAX_MSGS];
};

static int record(void *ctx, const struct http_msg *m)
{
	struct rec *r = ctx;
	int ret = 0;

	if (r->n < MAX_MSGS) {
		r->m[r->n] = *m;
		ret = r->ret[r->n];
	}
	r->n++;
	return ret;
}

static void feed(struct http_stream *s, const char *data, size_t len, struct rec *r)
{
	http_stream_feed(s, data, len, len, record, r);
}

static void feed_str(struct http_stream *s, const char *data, struct rec *r)
{
	feed(s, data, strlen(data), r);
}

static struct http_request req_ok(const char *text)
{
	struct http_request req;
	size_t hl = 0;

	memset(&req, 0x5a, sizeof(req));
	if (http_parse_request(text, strlen(text), &req, &hl) != HTTP_COMPLETE)
		fail_msg("not a complete request head: \"%s\"", text);
	assert_int_equal(hl, strlen(text));
	return req;
}

static struct http_response resp_ok(const char *text, bool no_body)
{
	struct http_response resp;
	size_t hl = 0;

	memset(&resp, 0x5a, sizeof(resp));
	if (http_parse_response(text, strlen(text), no_body, &resp, &hl) != HTTP_COMPLETE)
		fail_msg("not a complete response head: \"%s\"", text);
	assert_int_equal(hl, strlen(text));
	return resp;
}

static int req_result(const char *text)
{
	struct http_request req;
	size_t hl;

	return http_parse_request(text, strlen(text), &req, &hl);
}

static int resp_result(const char *text)
{
	struct http_response resp;
	size_t hl;

	return http_parse_response(text, strlen(text), false, &resp, &hl);
}

static void assert_path(const char *target, const char *path)
{
	char text[512];
	struct http_request req;

	snprintf(text, sizeof(text), "GET %s HTTP/1.1\r\nHost: h\r\n\r\n", target);
	req = req_ok(text);
	assert_string_equal(req.path, path);
}

/* ---- request heads ---- */

static void test_request_simple(void **state)
{
	static const char text[] = "GET /index.html HTTP/1.1\r\nHost: example.com\r\n"
				   "User-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\nBODY";
	struct http_request req;
	size_t hl = 0;

	assert_int_equal(http_parse_request(text, strlen(text), &req, &hl), HTTP_COMPLETE);
	assert_int_equal(hl, strlen(text) - 4); /* the head only */
	assert_string_equal(req.method, "GET");
	assert_string_equal(req.path, "/index.html");
	assert_int_equal(req.version_minor, 1);
	assert_int_equal(req.body.kind, HTTP_BODY_NONE);

	req = req_ok("GET / HTTP/1.0\r\n\r\n"); /* no headers at all */
	assert_int_equal(req.version_minor, 0);
	assert_string_equal(req.path, "/");
}

static void test_request_methods(void **state)
{
	static const char *const methods[] = { "GET",	  "POST",    "PUT",	"DELETE", "HEAD",
					       "OPTIONS", "PATCH",   "CONNECT", "TRACE" };
	char text[128];

	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		struct http_request req;

		snprintf(text, sizeof(text), "%s /x HTTP/1.1\r\n\r\n", methods[i]);
		req = req_ok(text);
		assert_string_equal(req.method, methods[i]);
		assert_true(http_looks_like_request(text, strlen(text)));
	}
	/* any token parses, but detection only knows the standard methods */
	assert_string_equal(req_ok("PROPFIND /dav HTTP/1.1\r\n\r\n").method, "PROPFIND");
	assert_false(http_looks_like_request("PROPFIND /dav HTTP/1.1\r\n", 24));
	/* 15 characters fit, 16 do not */
	assert_string_equal(req_ok("ABCDEFGHIJKLMNO / HTTP/1.1\r\n\r\n").method, "ABCDEFGHIJKLMNO");
	assert_int_equal(req_result("ABCDEFGHIJKLMNOP / HTTP/1.1\r\n\r\n"), HTTP_INVALID);
}

static void test_request_query_fragment(void **state)
{
	assert_path("/a/b?x=1&y=2", "/a/b");
	assert_path("/a/b#frag", "/a/b");
	assert_path("/a#f?x", "/a");
	assert_path("/?q", "/");
	assert_path("/search?q=a/b", "/search");
	assert_path("/%7Euser/file%20name", "/%7Euser/file%20name");
}

static void test_request_absolute_form(void **state)
{
	assert_path("http://example.com/x", "/x");
	assert_path("http://example.com/x/y?z=1", "/x/y");
	assert_path("https://user@example.com:8443/a#b", "/a");
	assert_path("http://example.com", "/");
	assert_path("http://example.com?q=1", "/");
	assert_path("HTTP://EXAMPLE.COM/Up", "/Up");
	assert_path("*", "*"); /* OPTIONS * */
	/* authority-form (CONNECT) is kept as is */
	assert_string_equal(req_ok("CONNECT example.com:443 HTTP/1.1\r\n\r\n").path,
			    "example.com:443");
}

static void test_request_long_path(void **state)
{
	char target[1000], text[1200], want[HTTP_PATH_LEN];

	target[0] = '/';
	for (int i = 1; i < 900; i++)
		target[i] = 'a' + i % 26;
	target[900] = '\0';
	memcpy(want, target, HTTP_PATH_LEN - 1);
	want[HTTP_PATH_LEN - 1] = '\0';
	snprintf(text, sizeof(text), "GET %s?q=1 HTTP/1.1\r\n\r\n", target);
	assert_string_equal(req_ok(text).path, want);
	assert_int_equal(strlen(req_ok(text).path), HTTP_PATH_LEN - 1);
}

static void test_request_invalid(void **state)
{
	static const char *const bad[] = {
		"get\x01 / HTTP/1.1\r\n\r\n",
		"GET / HTTP/2.0\r\n\r\n",
		"GET / HTTP/1.2\r\n\r\n",
		"GET / HTTP/1.1 \r\n\r\n",
		"GET  / HTTP/1.1\r\n\r\n",
		"GET /\r\n\r\n",
		"GET / \r\n\r\n",
		"GET HTTP/1.1\r\n\r\n",
		" GET / HTTP/1.1\r\n\r\n",
		"\r\nGET / HTTP/1.1\r\n\r\n",
		"G(T / HTTP/1.1\r\n\r\n",
		"GET /a\x7f HTTP/1.1\r\n\r\n",
		"GET / HTTP/1.1\r\r\n\r\n",
		"GET / HTTP/1.1\r\nNoColon\r\n\r\n",
		"GET / HTTP/1.1\r\nHost : x\r\n\r\n",
		"GET / HTTP/1.1\r\n: x\r\n\r\n",
		"GET / HTTP/1.1\r\nHo st: x\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\001b\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n",
		"GET / HTTP/1.1\r\n Folded: first\r\n\r\n",
		"POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
		"POST / HTTP/1.1\r\nContent-Length: 12a\r\n\r\n",
		"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
		"POST / HTTP/1.1\r\nContent-Length: +5\r\n\r\n",
		"POST / HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n",
		"POST / HTTP/1.1\r\nContent-Length:\r\n\r\n",
		"POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n",
		"POST / HTTP/1.1\r\nContent-Length: 5\r\n 6\r\n\r\n",
		"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
		"POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (req_result(bad[i]) != HTTP_INVALID)
			fail_msg("accepted: \"%s\"", bad[i]);
	/* an invalid start line is rejected before the head is complete */
	assert_int_equal(req_result("GET / HTTP/1.1 x\r\n"), HTTP_INVALID);
	assert_int_equal(req_result("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"), HTTP_INVALID);
	assert_int_equal(req_result("GET /\x01"), HTTP_INVALID);
	assert_int_equal(req_result("GET / HTTQ"), HTTP_INVALID);
	/* a NUL is a control character like any other */
	assert_int_equal(http_parse_request("GET / HTTP/1.1\r\nA: \0\r\n\r\n", 24,
					    &(struct http_request){ 0 }, NULL),
			 HTTP_INVALID);
	/* NULL with nothing in it is just not there yet */
	assert_int_equal(http_parse_request(NULL, 0, &(struct http_request){ 0 }, NULL),
			 HTTP_NEED_MORE);
}

/*
 * The line scan looks at eight bytes at a time: a control byte is found at
 * any offset of a long value, and tabs, obs-text and a CR before the LF are not one.
 */
/* "GET / HTTP/1.1", then a header whose 24-byte value has tabs and obs-text. */
static size_t ctl_head(char *text)
{
	static const char head[] = "GET / HTTP/1.1\r\nX-Value: ", tail[] = "\r\nHost: h\r\n\r\n";
	size_t n = strlen(head);

	memcpy(text, head, n);
	for (size_t i = 0; i < 24; i++)
		text[n + i] = (char)(i % 5 == 4 ? '\t' : i % 7 == 6 ? 0xc3 : 'a' + (int)i);
	memcpy(text + n + 24, tail, strlen(tail));
	return n + 24 + strlen(tail);
}

static void test_header_ctl_every_offset(void **state)
{
	static const unsigned char bytes[] = { 0x00, 0x01, '\r', 0x1f, 0x7f };
	char text[128];
	struct http_request req;
	size_t at = strlen("GET / HTTP/1.1\r\nX-Value: ");

	for (size_t off = 0; off < 24; off++) {
		for (size_t b = 0; b < sizeof(bytes); b++) {
			size_t len = ctl_head(text);
			text[at + off] = (char)bytes[b];
			int r = http_parse_request(text, len, &req, NULL);
			if (r != HTTP_INVALID)
				fail_msg("byte 0x%02x at offset %zu of the value: %d", bytes[b], off, r);
		}
	}
	/* the same line without the control byte is fine */
	assert_int_equal(http_parse_request(text, ctl_head(text), &req, NULL), HTTP_COMPLETE);
}

static void test_request_folded_header(void **state)
{
	/* obs-fold continues an ordinary header */
	struct http_request req = req_ok("GET / HTTP/1.1\r\nX-Long: a\r\n\tb\r\nHost: h\r\n\r\n");

	assert_string_equal(req.path, "/");
}

static void test_request_bodies(void **state)
{
	struct http_request req;

	req = req_ok("POST /u HTTP/1.1\r\nContent-Length: 42\r\n\r\n");
	assert_int_equal(req.body.kind, HTTP_BODY_LENGTH);
	assert_int_equal(req.body.remaining, 42);

	req = req_ok("POST /u HTTP/1.1\r\ncontent-LENGTH:   7  \r\nContent-Length: 7\r\n\r\n");
	assert_int_equal(req.body.kind, HTTP_BODY_LENGTH);
	assert_int_equal(req.body.remaining, 7);

	req = req_ok("POST /u HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
	assert_int_equal(req.body.kind, HTTP_BODY_NONE);

	req = req_ok("POST /u HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
	assert_int_equal(req.body.kind, HTTP_BODY_CHUNKED);

	/* chunked wins over Content-Length */
	req = req_ok("POST /u HTTP/1.1\r\nContent-Length: 10\r\n"
		     "TRANSFER-ENCODING: Chunked\r\n\r\n");
	assert_int_equal(req.body.kind, HTTP_BODY_CHUNKED);

	req = req_ok("POST /u HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n");
	assert_int_equal(req.body.kind, HTTP_BODY_CHUNKED);
	req = req_ok("POST /u HTTP/1.1\r\nTransfer-Encoding: gzip\r\n"
		     "Transfer-Encoding: chunked\r\n\r\n");
	assert_int_equal(req.body.kind, HTTP_BODY_CHUNKED);

	/* without either, a request has no body */
	req = req_ok("DELETE /u/1 HTTP/1.1\r\nHost: h\r\n\r\n");
	assert_int_equal(req.body.kind, HTTP_BODY_NONE);
}

static void test_bare_lf(void **state)
{
	struct http_request req = req_ok("GET /lf HTTP/1.1\nHost: x\nContent-Length: 3\n\n");
	struct http_response resp;

	assert_string_equal(req.path, "/lf");
	assert_int_equal(req.body.kind, HTTP_BODY_LENGTH);
	req = req_ok("GET /mixed HTTP/1.1\r\nHost: x\nA: b\r\n\n");
	assert_string_equal(req.path, "/mixed");
	resp = resp_ok("HTTP/1.1 200 OK\nContent-Length: 1\n\r\n", false);
	assert_int_equal(resp.status, 200);
}

/* Every proper prefix of a valid head is HTTP_NEED_MORE, never HTTP_INVALID. */
static void test_need_more(void **state)
{
	static const char req_text[] = "POST /a?b HTTP/1.1\r\nHost: h\r\nX-Folded: a\r\n b\r\n"
				       "Content-Length: 3\r\n\r\n";
	static const char resp_text[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\n";
	struct http_request req;
	struct http_response resp;
	size_t hl;

	for (size_t n = 0; n < strlen(req_text); n++)
		if (http_parse_request(req_text, n, &req, &hl) != HTTP_NEED_MORE)
			fail_msg("request prefix of %zu bytes", n);
	for (size_t n = 0; n < strlen(resp_text); n++)
		if (http_parse_response(resp_text, n, false, &resp, &hl) != HTTP_NEED_MORE)
			fail_msg("response prefix of %zu bytes", n);
	assert_int_equal(http_parse_request(req_text, strlen(req_text), &req, &hl), HTTP_COMPLETE);
	assert_int_equal(hl, strlen(req_text));
}

/* ---- response heads ---- */

static void test_response_simple(void **state)
{
	struct http_response resp;

	resp = resp_ok("HTTP/1.1 200 OK\r\nContent-Length: 12\r\nServer: x\r\n\r\n", false);
	assert_int_equal(resp.status, 200);
	assert_int_equal(resp.version_minor, 1);
	assert_int_equal(resp.body.kind, HTTP_BODY_LENGTH);
	assert_int_equal(resp.body.remaining, 12);

	resp = resp_ok("HTTP/1.0 404 Not Found\r\n\r\n", false);
	assert_int_equal(resp.status, 404);
	assert_int_equal(resp.version_minor, 0);
	assert_int_equal(resp.body.kind, HTTP_BODY_UNTIL_CLOSE);

	assert_int_equal(resp_ok("HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", false).status, 200);
	assert_int_equal(resp_ok("HTTP/1.1 503 \r\n\r\n", false).status, 503);
	assert_int_equal(resp_ok("HTTP/1.1 599 Whatever\tit is\r\n\r\n", false).status, 599);
	assert_int_equal(resp_ok("HTTP/1.1 100 Continue\r\n\r\n", false).status, 100);

	assert_int_equal(resp_result("HTTP/1.1 600 No\r\n\r\n"), HTTP_INVALID);
	assert_int_equal(resp_result("HTTP/1.1 099 No\r\n\r\n"), HTTP_INVALID);
	assert_int_equal(resp_result("HTTP/1.1 20x No\r\n\r\n"), HTTP_INVALID);
	assert_int_equal(resp_result("HTTP/1.1 2000 No\r\n\r\n"), HTTP_INVALID);
	assert_int_equal(resp_result("HTTP/1.1  200 No\r\n\r\n"), HTTP_INVALID);
	assert_int_equal(resp_result("HTTP/1.1 20\r\n\r\n"), HTTP_INVALID);
	assert_int_equal(resp_result("HTTP/1.1\r\n\r\n"), HTTP_INVALID);
	assert_int_equal(resp_result("HTTP/2 200\r\n\r\n"), HTTP_INVALID);
	assert_int_equal(resp_result("http/1.1 200 OK\r\n\r\n"), HTTP_INVALID);
	assert_int_equal(resp_result("HTTP/1.1 200 O\x01K\r\n\r\n"), HTTP_INVALID);
	assert_int_equal(resp_result("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n"
				     "Content-Length: 2\r\n\r\n"),
			 HTTP_INVALID);
	/* early rejection of a partial status line */
	assert_int_equal(resp_result("HTTQ"), HTTP_INVALID);
	assert_int_equal(resp_result("HTTP/1.1 7"), HTTP_INVALID);
	assert_int_equal(resp_result("HTTP/1.1 2"), HTTP_NEED_MORE);
}

static void test_response_bodies(void **state)
{
	static const char cl[] = "HTTP/1.1 %d X\r\nContent-Length: 5\r\n\r\n";
	static const int none[] = { 100, 101, 103, 199, 204, 304 };
	char text[128];
	struct http_response resp;

	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		snprintf(text, sizeof(text), cl, none[i]);
		assert_int_equal(resp_ok(text, false).body.kind, HTTP_BODY_NONE);
	}
	snprintf(text, sizeof(text), cl, 200);
	assert_int_equal(resp_ok(text, false).body.kind, HTTP_BODY_LENGTH);
	assert_int_equal(resp_ok(text, true).body.kind, HTTP_BODY_NONE); /* HEAD */
	snprintf(text, sizeof(text), cl, 205);
	assert_int_equal(resp_ok(text, false).body.kind, HTTP_BODY_LENGTH);

	resp = resp_ok("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
		       false);
	assert_int_equal(resp.body.kind, HTTP_BODY_CHUNKED);
	resp = resp_ok("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", true);
	assert_int_equal(resp.body.kind, HTTP_BODY_NONE);
	resp = resp_ok("HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n", false);
	assert_int_equal(resp.body.kind, HTTP_BODY_NONE);
	/* a response whose last coding is not chunked ends with the connection */
	resp = resp_ok("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", false);
	assert_int_equal(resp.body.kind, HTTP_BODY_UNTIL_CLOSE);
	resp = resp_ok("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", false);
	assert_int_equal(resp.body.kind, HTTP_BODY_UNTIL_CLOSE);
	resp = resp_ok("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", false);
	assert_int_equal(resp.body.kind, HTTP_BODY_NONE);
}

static void test_head_too_long(void **state)
{
	static char text[HTTP_MAX_HEAD + 100];
	static const char start[] = "GET / HTTP/1.1\r\nX-Pad: ";
	struct http_request req;
	size_t hl, n;

	/* exactly HTTP_MAX_HEAD bytes is fine */
	n = strlen(start);
	memcpy(text, start, n);
	memset(text + n, 'a', HTTP_MAX_HEAD - n - 4);
	memcpy(text + HTTP_MAX_HEAD - 4, "\r\n\r\n", 4);
	assert_int_equal(http_parse_request(text, HTTP_MAX_HEAD, &req, &hl), HTTP_COMPLETE);
	assert_int_equal(hl, HTTP_MAX_HEAD);
	assert_int_equal(http_parse_request(text, HTTP_MAX_HEAD - 1, &req, &hl), HTTP_NEED_MORE);

	/* one more byte is not */
	memset(text + n, 'a', HTTP_MAX_HEAD - n - 3);
	memcpy(text + HTTP_MAX_HEAD - 3, "\r\n\r\n", 4);
	assert_int_equal(http_parse_request(text, HTTP_MAX_HEAD + 1, &req, &hl), HTTP_INVALID);
	assert_int_equal(http_parse_request(text, HTTP_MAX_HEAD, &req, &hl), HTTP_INVALID);
	assert_int_equal(http_parse_request(text, HTTP_MAX_HEAD - 1, &req, &hl), HTTP_NEED_MORE);

	/* a start line that never ends */
	text[0] = 'G', text[1] = 'E', text[2] = 'T', text[3] = ' ';
	memset(text + 4, '/', sizeof(text) - 4);
	assert_int_equal(http_parse_request(text, sizeof(text), &req, &hl), HTTP_INVALID);
}

/* ---- bodies ---- */

static void test_body_length(void **state)
{
	struct http_body b = { .kind = HTTP_BODY_LENGTH, .remaining = 10 };
	bool done = true;

	assert_int_equal(http_body_consume(&b, "abcd", 4, &done), 4);
	assert_false(done);
	assert_int_equal(b.remaining, 6);
	assert_int_equal(http_body_consume(&b, NULL, 5, &done), 5); /* not captured: fine */
	assert_false(done);
	assert_int_equal(http_body_consume(&b, "xyzHTTP/1.1", 11, &done), 1);
	assert_true(done);
	assert_int_equal(http_body_consume(&b, "x", 1, &done), 0);
	assert_true(done);

	b = (struct http_body){ .kind = HTTP_BODY_NONE };
	assert_int_equal(http_body_consume(&b, "x", 1, &done), 0);
	assert_true(done);

	b = (struct http_body){ .kind = HTTP_BODY_UNTIL_CLOSE };
	assert_int_equal(http_body_consume(&b, "HTTP/1.1 200 OK\r\n\r\n", 19, &done), 19);
	assert_false(done);
	assert_int_equal(http_body_consume(&b, NULL, 1000000, &done), 1000000);
	assert_false(done);
}

static struct http_body chunked(void)
{
	struct http_response resp = resp_ok("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
					    false);

	assert_int_equal(resp.body.kind, HTTP_BODY_CHUNKED);
	return resp.body;
}

/* Consumes text in one call and byte by byte: both stop at the same place. */
static void assert_chunked(const char *text, long want, bool want_done)
{
	struct http_body b = chunked();
	size_t len = strlen(text);
	bool done = false;
	long n = http_body_consume(&b, text, len, &done), total = 0;

	if (n != want || done != want_done)
		fail_msg("\"%s\": consumed %ld (want %ld), done %d", text, n, want, done);
	b = chunked();
	done = false;
	for (size_t i = 0; i < len && !done; i++) {
		n = http_body_consume(&b, text + i, 1, &done);
		if (n < 0) {
			total = -1;
			break;
		}
		total += n;
	}
	if (total != want || done != want_done)
		fail_msg("\"%s\" byte by byte: consumed %ld (want %ld)", text, total, want);
}

static void test_body_chunked(void **state)
{
	static const char body[] = "5\r\nhello\r\n6;name=\"va lue\";x\r\n world\r\n1A\r\n"
				   "abcdefghijklmnopqrstuvwxyz\r\n0\r\n\r\n";

	assert_chunked(body, strlen(body), true);
	assert_chunked("5\r\nhello\r\n0\r\n\r\nGET / HTTP/1.1\r\n", 15, true);
	/* trailers */
	assert_chunked("3\r\nabc\r\n0\r\nX-Checksum: 1\r\nX-Other: 2\r\n\r\nNEXT", 40, true);
	/* an extension on the last chunk, bare LF framing, blanks after the size */
	assert_chunked("3\nabc\n0;final\n\nNEXT", 15, true);
	assert_chunked("3 \t;e\r\nabc\r\n0 \r\n\r\n", 18, true);
	assert_chunked("000003\r\nabc\r\n0000\r\n\r\n", 21, true);
	/* not finished yet */
	assert_chunked("5\r\nhel", 6, false);
	assert_chunked("5\r\nhello\r\n0\r\nTrailer: x\r\n", 25, false);
	/* broken framing */
	assert_chunked("x\r\n", -1, false);
	assert_chunked("\r\n", -1, false);
	assert_chunked("5\r\nhelloX\r\n", -1, false);
	assert_chunked("5\rX", -1, false);
	assert_chunked("5;a\x01\r\n", -1, false);
	assert_chunked("10000000000000000\r\n", -1, false); /* more than 64 bits */
	assert_chunked("0\r\n\rX", -1, false);
}

static void test_body_chunked_uncaptured(void **state)
{
	struct http_body b = chunked();
	bool done = false;

	/* chunk data may be uncaptured */
	assert_int_equal(http_body_consume(&b, "100\r\nab", 7, &done), 7);
	assert_int_equal(b.remaining, 0x100 - 2);
	assert_int_equal(http_body_consume(&b, NULL, 0x100 - 2, &done), 0x100 - 2);
	assert_false(done);
	assert_int_equal(http_body_consume(&b, "\r\n0\r\n\r\n", 7, &done), 7);
	assert_true(done);

	/* framing may not */
	b = chunked();
	assert_int_equal(http_body_consume(&b, "3\r\nabc", 6, &done), 6);
	assert_int_equal(http_body_consume(&b, NULL, 10, &done), -1);
	/* and lost stays lost */
	assert_int_equal(http_body_consume(&b, "\r\n0\r\n\r\n", 7, &done), -1);
	assert_false(done);

	/* bulk skipping stops where the framing starts */
	b = chunked();
	assert_int_equal(http_body_consume(&b, "4\r\n", 3, &done), 3);
	assert_int_equal(http_body_consume(&b, NULL, 4, &done), 4);
	assert_int_equal(http_body_consume(&b, NULL, 5, &done), -1);
}

static void test_looks_like(void **state)
{
	assert_true(http_looks_like_request("GET /", 5));
	assert_true(http_looks_like_request("POST /api HTTP/1.1", 18));
	assert_true(http_looks_like_request("OPTIONS * HTTP/1.1", 18));
	assert_true(http_looks_like_request("CONNECT h:443 HTTP/1.1", 22));
	assert_false(http_looks_like_request("GET ", 4));
	assert_false(http_looks_like_request("GET /", 4));
	assert_false(http_looks_like_request("get /", 5));
	assert_false(http_looks_like_request("GETX /", 6));
	assert_false(http_looks_like_request("GET  /", 6));
	assert_false(http_looks_like_request("HTTP/1.1 200 OK", 15));
	assert_false(http_looks_like_request("\x16\x03\x01\x00\xa5", 5));
	assert_false(http_looks_like_request(NULL, 0));

	assert_true(http_looks_like_response("HTTP/1.1 200 OK\r\n", 17));
	assert_true(http_looks_like_response("HTTP/1.0", 8));
	assert_false(http_looks_like_response("HTTP/1.", 7));
	assert_false(http_looks_like_response("HTTP/2 200", 10));
	assert_false(http_looks_like_response("GET / HTTP/1.1", 14));
	assert_false(http_looks_like_response(NULL, 0));
}

/* ---- the stream machine ---- */

static void assert_req(const struct http_msg *m, const char *method, const char *path)
{
	assert_true(m->is_request);
	assert_string_equal(m->req.method, method);
	assert_string_equal(m->req.path, path);
}

static void assert_resp(const struct http_msg *m, int status)
{
	assert_false(m->is_request);
	assert_int_equal(m->resp.status, status);
}

static void test_stream_keepalive(void **state)
{
	struct http_stream s;
	struct rec r = { 0 };

	http_stream_init(&s, true);
	feed_str(&s, "GET /one HTTP/1.1\r\nHost: h\r\n\r\n", &r);
	feed_str(&s, "POST /two HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello", &r);
	feed_str(&s, "PUT /three HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", &r);
	feed_str(&s, "3\r\nabc\r\n", &r);
	feed_str(&s, "0\r\n\r\n", &r);
	feed_str(&s, "DELETE /four?x HTTP/1.1\r\n\r\n", &r);
	assert_int_equal(r.n, 4);
	assert_req(&r.m[0], "GET", "/one");
	assert_req(&r.m[1], "POST", "/two");
	assert_req(&r.m[2], "PUT", "/three");
	assert_req(&r.m[3], "DELETE", "/four");
	assert_int_equal(r.m[1].req.body.kind, HTTP_BODY_LENGTH);
	assert_int_equal(s.messages, 4);
	assert_int_equal(s.errors, 0);

	memset(&r, 0, sizeof(r));
	http_stream_init(&s, false);
	feed_str(&s, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", &r);
	feed_str(&s, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
		 &r);
	feed_str(&s, "HTTP/1.1 204 No Content\r\n\r\n", &r);
	feed_str(&s, "HTTP/1.1 304 Not Modified\r\nContent-Length: 100\r\n\r\n", &r);
	feed_str(&s, "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found", &r);
	assert_int_equal(r.n, 5);
	assert_resp(&r.m[0], 200);
	assert_resp(&r.m[1], 200);
	assert_int_equal(r.m[1].resp.body.kind, HTTP_BODY_CHUNKED);
	assert_resp(&r.m[2], 204);
	assert_resp(&r.m[3], 304);
	assert_resp(&r.m[4], 404);
	assert_int_equal(s.errors, 0);
	assert_int_equal(s.state, HTTP_S_HEAD);
}

/* A head split across chunks is gathered in a buffer that exists only while it is. */
static void test_stream_gathers_a_split_head_and_lets_its_buffer_go(void **state)
{
	struct http_stream s;
	struct rec r = { 0 };

	http_stream_init(&s, true);
	feed_str(&s, "GET /whole HTTP/1.1\r\nHost: h\r\n\r\n", &r);
	assert_null(s.head); /* a head in one chunk needs none */
	feed_str(&s, "GET /split HTTP/1.1\r\nHo", &r);
	assert_non_null(s.head);
	feed_str(&s, "st: h\r\n\r\n", &r);
	assert_int_equal(r.n, 2);
	assert_req(&r.m[1], "GET", "/split"); /* its strings pointed into the buffer when reported */
	assert_null(s.head);
	assert_int_equal(s.head_len, 0);

	/* Lost, or given up for a new start: the buffer goes too. */
	feed_str(&s, "GET /lost HTTP/1.1\r\nHo", &r);
	assert_non_null(s.head);
	feed_str(&s, "\x01\x02 not a header line\r\n\r\n", &r);
	assert_int_equal(s.errors, 1);
	assert_null(s.head);
	feed_str(&s, "GET /again HTTP/1.1\r\nHo", &r);
	assert_non_null(s.head);
	http_stream_free(&s);
	assert_null(s.head);
	assert_int_equal(s.head_len, 0);
}

static void test_stream_pipelining(void **state)
{
	static const char reqs[] = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n"
				   "POST /b HTTP/1.1\r\nContent-Length: 3\r\n\r\nxyz"
				   "GET /c?d HTTP/1.1\r\nHost: h\r\n\r\n";
	static const char resps[] = "HTTP/1.1 100 Continue\r\n\r\n"
				    "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"
				    "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
				    "1\r\nx\r\n0\r\n\r\n"
				    "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n";
	struct http_stream s;
	struct rec r = { 0 };

	http_stream_init(&s, true);
	feed_str(&s, reqs, &r);
	assert_int_equal(r.n, 3);
	assert_req(&r.m[0], "GET", "/a");
	assert_req(&r.m[1], "POST", "/b");
	assert_req(&r.m[2], "GET", "/c");
	assert_int_equal(s.errors, 0);

	memset(&r, 0, sizeof(r));
	http_stream_init(&s, false);
	feed_str(&s, resps, &r);
	assert_int_equal(r.n, 4);
	assert_resp(&r.m[0], 100);
	assert_resp(&r.m[1], 200);
	assert_resp(&r.m[2], 201);
	assert_resp(&r.m[3], 202);
	assert_int_equal(s.errors, 0);
}

static void test_stream_head_response(void **state)
{
	struct http_stream s;
	struct rec r = { .ret = { 1, 0 } }; /* the first request was HEAD */

	http_stream_init(&s, false);
	feed_str(&s, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"
		     "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
		 &r);
	assert_int_equal(r.n, 2);
	/* the message shows the framing of the headers; the stream skipped none of it */
	assert_int_equal(r.m[0].resp.body.kind, HTTP_BODY_LENGTH);
	assert_int_equal(s.errors, 0);
	assert_int_equal(s.state, HTTP_S_HEAD);
}

static void test_stream_leading_empty_lines(void **state)
{
	struct http_stream s;
	struct rec r = { 0 };

	http_stream_init(&s, true);
	feed_str(&s, "POST /a HTTP/1.1\r\nContent-Length: 1\r\n\r\nx\r\n", &r);
	feed_str(&s, "\r\nGET /b HTTP/1.1\r\n\r\n", &r);
	assert_int_equal(r.n, 2);
	assert_req(&r.m[1], "GET", "/b");
	assert_int_equal(s.errors, 0);
}

static void test_stream_until_close(void **state)
{
	struct http_stream s;
	struct rec r = { 0 };

	http_stream_init(&s, false);
	feed_str(&s, "HTTP/1.0 200 OK\r\nServer: old\r\n\r\nsome", &r);
	feed_str(&s, "HTTP/1.1 200 OK\r\n\r\n", &r); /* just body bytes */
	http_stream_feed(&s, NULL, 0, 100000, record, &r);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.m[0].resp.body.kind, HTTP_BODY_UNTIL_CLOSE);
	assert_int_equal(s.state, HTTP_S_BODY);
	assert_int_equal(s.errors, 0);
}

static void test_stream_head_split(void **state)
{
	struct http_stream s;
	struct rec r = { 0 };

	http_stream_init(&s, true);
	feed_str(&s, "GET /x", &r);
	feed_str(&s, "yz?q HTTP/1.1\r\nHo", &r);
	feed_str(&s, "st: h\r", &r);
	assert_int_equal(r.n, 0);
	feed_str(&s, "\n\r\nGET /next HTTP/1.1\r\n\r\n", &r);
	assert_int_equal(r.n, 2);
	assert_req(&r.m[0], "GET", "/xyz");
	assert_req(&r.m[1], "GET", "/next");
	assert_int_equal(s.errors, 0);
}

/* A recorded exchange: a request with a body and a chunked response, then another pair. */
#define REQ_BODY "{\"name\":\"widget\",\"qty\":42}"
static const char ex_req[] = "POST /api/v1/items?debug=1 HTTP/1.1\r\n"
			     "Host: example.com\r\n"
			     "Content-Type: application/json\r\n"
			     "Content-Length: 26\r\n"
			     "\r\n" REQ_BODY
			     "GET /health HTTP/1.1\r\n"
			     "Host: example.com\r\n"
			     "\r\n";
static const char ex_resp[] = "HTTP/1.1 201 Created\r\n"
			      "Content-Type: application/json\r\n"
			      "Transfer-Encoding: chunked\r\n"
			      "\r\n"
			      "7\r\n{\"id\":1\r\n"
			      "3;ext=\"a b\"\r\n, \"\r\n"
			      "9\r\nok\":true}\r\n"
			      "0\r\n"
			      "X-Checksum: abc\r\n"
			      "\r\n"
			      "HTTP/1.1 200 OK\r\n"
			      "Content-Length: 2\r\n"
			      "\r\n"
			      "ok";

struct split_case {
	const char *text;
	bool requests;
};

static void check_exchange(const struct split_case *c, const struct rec *r,
			   const struct http_stream *s, const char *how)
{
	if (r->n != 2 || s->errors)
		fail_msg("%s: %zu messages, %lu errors", how, r->n, (unsigned long)s->errors);
	if (c->requests) {
		assert_req(&r->m[0], "POST", "/api/v1/items");
		assert_int_equal(r->m[0].req.body.kind, HTTP_BODY_LENGTH);
		assert_int_equal(r->m[0].req.body.remaining, 26);
		assert_req(&r->m[1], "GET", "/health");
		assert_int_equal(r->m[1].req.body.kind, HTTP_BODY_NONE);
	} else {
		assert_resp(&r->m[0], 201);
		assert_int_equal(r->m[0].resp.body.kind, HTTP_BODY_CHUNKED);
		assert_resp(&r->m[1], 200);
		assert_int_equal(r->m[1].resp.body.kind, HTTP_BODY_LENGTH);
		assert_int_equal(r->m[1].resp.body.remaining, 2);
	}
	assert_int_equal(s->state, HTTP_S_HEAD); /* and the last body was skipped exactly */
}

static struct split_case exchange(bool requests)
{
	return (struct split_case){ .text = requests ? ex_req : ex_resp, .requests = requests };
}

static void test_stream_every_split(void **state)
{
	assert_int_equal(strlen(REQ_BODY), 26);
	for (int dir = 0; dir < 2; dir++) {
		struct split_case c = exchange(dir == 0);
		size_t len = strlen(c.text);
		struct http_stream s;
		struct rec r;
		char how[64];

		/* whole */
		memset(&r, 0, sizeof(r));
		http_stream_init(&s, c.requests);
		feed(&s, c.text, len, &r);
		check_exchange(&c, &r, &s, "whole");

		/* two chunks, split at every offset (0 and len: one of them empty) */
		for (size_t i = 0; i <= len; i++) {
			memset(&r, 0, sizeof(r));
			http_stream_init(&s, c.requests);
			feed(&s, c.text, i, &r);
			feed(&s, c.text + i, len - i, &r);
			snprintf(how, sizeof(how), "split at %zu", i);
			check_exchange(&c, &r, &s, how);
		}

		/* one byte at a time */
		memset(&r, 0, sizeof(r));
		http_stream_init(&s, c.requests);
		for (size_t i = 0; i < len; i++)
			feed(&s, c.text + i, 1, &r);
		check_exchange(&c, &r, &s, "1-byte chunks");

		/* three chunks, every pair of offsets */
		for (size_t i = 0; i <= len; i++) {
			for (size_t j = i; j <= len; j++) {
				memset(&r, 0, sizeof(r));
				http_stream_init(&s, c.requests);
				feed(&s, c.text, i, &r);
				feed(&s, c.text + i, j - i, &r);
				feed(&s, c.text + j, len - j, &r);
				snprintf(how, sizeof(how), "split at %zu and %zu", i, j);
				check_exchange(&c, &r, &s, how);
			}
		}
	}
}

static void test_stream_uncaptured_length_body(void **state)
{
	static const char head[] = "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n";
	static char chunk[sizeof(head) + 200];
	size_t hl = strlen(head);
	struct http_stream s;
	struct rec r = { 0 };

	memcpy(chunk, head, hl);
	memset(chunk + hl, 'x', 200);
	http_stream_init(&s, false);
	/* a 100044-byte write of which 244 bytes were captured */
	http_stream_feed(&s, chunk, hl + 200, hl + 100000, record, &r);
	assert_int_equal(s.state, HTTP_S_HEAD);
	feed_str(&s, "HTTP/1.1 200 OK\r\nContent-Length: 70000\r\n\r\nabc", &r);
	assert_int_equal(s.state, HTTP_S_BODY);
	/* the rest of that body in a second, wholly uncaptured write */
	http_stream_feed(&s, NULL, 0, 70000 - 3, record, &r);
	feed_str(&s, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", &r);
	assert_int_equal(r.n, 3);
	assert_resp(&r.m[0], 200);
	assert_resp(&r.m[1], 200);
	assert_resp(&r.m[2], 404);
	assert_int_equal(s.errors, 0);
}

static void test_stream_uncaptured_chunk_data(void **state)
{
	static const char head[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4000\r\n";
	struct http_stream s;
	struct rec r = { 0 };
	size_t hl = strlen(head);

	http_stream_init(&s, false);
	/* the chunk data is mostly uncaptured: that is fine */
	http_stream_feed(&s, head, hl, hl + 0x4000, record, &r);
	feed_str(&s, "\r\n0\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", &r);
	assert_int_equal(r.n, 2);
	assert_int_equal(s.errors, 0);
	assert_int_equal(s.state, HTTP_S_HEAD);
}

static void test_stream_uncaptured_chunk_framing(void **state)
{
	static const char head[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n";
	struct http_stream s;
	struct rec r = { 0 };
	size_t hl = strlen(head);

	http_stream_init(&s, false);
	/* 16 data bytes, then the framing after them was not captured */
	http_stream_feed(&s, head, hl, hl + 16 + 40, record, &r);
	assert_int_equal(s.errors, 1);
	assert_int_equal(s.state, HTTP_S_LOST);
	/* more of that body: still lost, no new error */
	feed_str(&s, "20\r\n0123456789abcdef0123456789abcdef\r\n", &r);
	feed_str(&s, "xx HTTP/1.1 200 OK\r\n\r\n", &r); /* does not start with a message */
	assert_int_equal(s.state, HTTP_S_LOST);
	assert_int_equal(s.errors, 1);
	assert_int_equal(r.n, 1);
	/* resynchronised at a chunk that starts with "HTTP/1.1" */
	feed_str(&s, "HTTP/1.1 302 Found\r\nContent-Length: 3\r\n\r\nabc"
		     "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
		 &r);
	assert_int_equal(r.n, 3);
	assert_resp(&r.m[1], 302);
	assert_resp(&r.m[2], 200);
	assert_int_equal(s.state, HTTP_S_HEAD);
	assert_int_equal(s.errors, 1);
}

static void test_stream_uncaptured_head(void **state)
{
	static const char text[] = "GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\n\r\n";
	struct http_stream s;
	struct rec r = { 0 };

	http_stream_init(&s, true);
	/* the first head was captured, the second not */
	http_stream_feed(&s, text, 28, strlen(text), record, &r);
	assert_int_equal(r.n, 1);
	assert_int_equal(s.errors, 1);
	assert_int_equal(s.state, HTTP_S_LOST);
	/* a head cut by the capture limit */
	feed_str(&s, "GET /c HTTP/1.1\r\n\r\n", &r);
	http_stream_feed(&s, "GET /d HTTP/1.1\r\nHo", 19, 40, record, &r);
	assert_int_equal(r.n, 2);
	assert_int_equal(s.errors, 2);
	feed_str(&s, "GET /e HTTP/1.1\r\n\r\n", &r);
	assert_int_equal(r.n, 3);
	assert_req(&r.m[2], "GET", "/e");
}

static uint32_t lcg(uint32_t *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return *seed >> 8;
}

static void test_stream_garbage(void **state)
{
	static char junk[65536];
	uint32_t seed = 42;

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = lcg(&seed) & 0xff;
	for (int dir = 0; dir < 2; dir++) {
		struct http_stream s;
		struct rec r = { 0 };
		size_t pos = 0;

		http_stream_init(&s, dir == 0);
		while (pos < sizeof(junk)) {
			size_t n = 1 + lcg(&seed) % 2000, cap;

			if (n > sizeof(junk) - pos)
				n = sizeof(junk) - pos;
			cap = lcg(&seed) % 4 ? n : lcg(&seed) % (n + 1);
			http_stream_feed(&s, junk + pos, cap, n + (cap < n ? 100 : 0), record, &r);
			pos += n;
		}
		assert_true(s.errors >= 1);
		assert_int_equal(r.n, 0);
		/* and it still finds a real message afterwards */
		feed_str(&s, dir == 0 ? "GET /ok HTTP/1.1\r\n\r\n" : "HTTP/1.1 200 OK\r\n\r\n", &r);
		assert_int_equal(r.n, 1);
	}
	/* heads that are nearly right */
	{
		static const char *const junk_heads[] = {
			"GET / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\n",
			"GET / HTTP/1.1\r\nBad Header\r\n\r\n",
			"GET / HTTP/1.1\r\n\x01\r\n\r\n",
			"GET /\r\n\r\n",
		};
		struct http_stream s;
		struct rec r = { 0 };

		http_stream_init(&s, true);
		for (size_t i = 0; i < sizeof(junk_heads) / sizeof(junk_heads[0]); i++)
			feed_str(&s, junk_heads[i], &r);
		assert_int_equal(s.errors, 4);
		assert_int_equal(r.n, 0);
	}
	/* a start line gathered over chunks is rejected as soon as it goes wrong */
	{
		struct http_stream s;
		struct rec r = { 0 };

		http_stream_init(&s, false);
		feed_str(&s, "HTTP/1.1 2", &r);
		assert_int_equal(s.state, HTTP_S_HEAD);
		feed_str(&s, "0x OK", &r);
		assert_int_equal(s.errors, 1);
		assert_int_equal(s.state, HTTP_S_LOST);
	}
}

static void test_stream_head_too_long(void **state)
{
	static char text[HTTP_MAX_HEAD + 1000];
	struct http_stream s;
	struct rec r = { 0 };
	size_t n = 0;

	n += sprintf(text, "GET / HTTP/1.1\r\n");
	while (n < sizeof(text) - 100)
		n += sprintf(text + n, "X-Pad-%05zu: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n", n);
	n += sprintf(text + n, "\r\n");
	http_stream_init(&s, true);
	for (size_t pos = 0; pos < n; pos += 1000)
		feed(&s, text + pos, n - pos < 1000 ? n - pos : 1000, &r);
	assert_int_equal(r.n, 0);
	assert_int_equal(s.errors, 1);
	assert_int_equal(s.state, HTTP_S_LOST);
	feed_str(&s, "GET /after HTTP/1.1\r\n\r\n", &r);
	assert_int_equal(r.n, 1);
	assert_req(&r.m[0], "GET", "/after");
}

static void test_stream_upgrade(void **state)
{
	static const char ws_frame[] = "\x81\x05hello\x82\x02\x00\x01";
	struct http_stream s;
	struct rec r = { 0 };

	/* 101: whatever follows is another protocol */
	http_stream_init(&s, false);
	feed_str(&s, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
		     "Connection: Upgrade\r\n\r\n\x81\x02hi",
		 &r);
	feed(&s, ws_frame, sizeof(ws_frame) - 1, &r);
	feed_str(&s, "HTTP/1.1 200 OK\r\n\r\n", &r);
	assert_int_equal(r.n, 1);
	assert_resp(&r.m[0], 101);
	assert_int_equal(s.state, HTTP_S_UPGRADED);
	assert_int_equal(s.errors, 0);

	/* the request side: an Upgrade request, then frames, is not an error */
	memset(&r, 0, sizeof(r));
	http_stream_init(&s, true);
	feed_str(&s, "GET /chat HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n"
		     "Connection: Upgrade\r\n\r\n",
		 &r);
	feed(&s, ws_frame, sizeof(ws_frame) - 1, &r);
	assert_int_equal(r.n, 1);
	assert_int_equal(s.errors, 0);
	/* and if the upgrade was refused, the next request is found */
	feed_str(&s, "GET /again HTTP/1.1\r\n\r\n", &r);
	assert_int_equal(r.n, 2);

	/* CONNECT: the caller says which response answers one (fn returns 2) */
	memset(&r, 0, sizeof(r));
	r.ret[0] = 2;
	r.ret[1] = 2;
	http_stream_init(&s, false);
	feed_str(&s, "HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 4\r\n\r\nauth",
		 &r);
	assert_int_equal(s.state, HTTP_S_HEAD);
	feed_str(&s, "HTTP/1.1 200 Connection established\r\n\r\n\x16\x03\x01", &r);
	feed_str(&s, "HTTP/1.1 200 OK\r\n\r\n", &r);
	assert_int_equal(r.n, 2);
	assert_int_equal(s.state, HTTP_S_UPGRADED);
	assert_int_equal(s.errors, 0);

	/* the CONNECT request itself */
	memset(&r, 0, sizeof(r));
	http_stream_init(&s, true);
	feed_str(&s, "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", &r);
	feed_str(&s, "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", &r);
	assert_int_equal(r.n, 1);
	assert_req(&r.m[0], "CONNECT", "example.com:443");
	assert_int_equal(s.errors, 0);
}

static void test_stream_null_fn(void **state)
{
	struct http_stream s;

	http_stream_init(&s, true);
	http_stream_feed(&s, "GET / HTTP/1.1\r\n\r\n", 18, 18, NULL, NULL);
	http_stream_feed(&s, NULL, 0, 0, NULL, NULL);
	assert_int_equal(s.messages, 1);
}

static void test_status_class(void **state)
{
	assert_string_equal(http_status_class(100), "1xx");
	assert_string_equal(http_status_class(200), "2xx");
	assert_string_equal(http_status_class(404), "4xx");
	assert_string_equal(http_status_class(599), "5xx");
	assert_string_equal(http_status_class(99), "unknown");
	assert_string_equal(http_status_class(600), "unknown");
	assert_string_equal(http_status_class(0), "unknown");
	assert_string_equal(http_status_class(-1), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_class),
		cmocka_unit_test(test_request_simple),
		cmocka_unit_test(test_header_ctl_every_offset),
		cmocka_unit_test(test_request_methods),
		cmocka_unit_test(test_request_query_fragment),
		cmocka_unit_test(test_request_absolute_form),
		cmocka_unit_test(test_request_long_path),
		cmocka_unit_test(test_request_invalid),
		cmocka_unit_test(test_request_folded_header),
		cmocka_unit_test(test_request_bodies),
		cmocka_unit_test(test_bare_lf),
		cmocka_unit_test(test_need_more),
		cmocka_unit_test(test_response_simple),
		cmocka_unit_test(test_response_bodies),
		cmocka_unit_test(test_head_too_long),
		cmocka_unit_test(test_body_length),
		cmocka_unit_test(test_body_chunked),
		cmocka_unit_test(test_body_chunked_uncaptured),
		cmocka_unit_test(test_looks_like),
		cmocka_unit_test(test_stream_keepalive),
		cmocka_unit_test(test_stream_gathers_a_split_head_and_lets_its_buffer_go),
		cmocka_unit_test(test_stream_pipelining),
		cmocka_unit_test(test_stream_head_response),
		cmocka_unit_test(test_stream_leading_empty_lines),
		cmocka_unit_test(test_stream_until_close),
		cmocka_unit_test(test_stream_head_split),
		cmocka_unit_test(test_stream_every_split),
		cmocka_unit_test(test_stream_uncaptured_length_body),
		cmocka_unit_test(test_stream_uncaptured_chunk_data),
		cmocka_unit_test(test_stream_uncaptured_chunk_framing),
		cmocka_unit_test(test_stream_uncaptured_head),
		cmocka_unit_test(test_stream_garbage),
		cmocka_unit_test(test_stream_head_too_long),
		cmocka_unit_test(test_stream_upgrade),
		cmocka_unit_test(test_stream_null_fn),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
