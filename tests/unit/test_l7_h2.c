/*
 * The HTTP/2 parser (src/l7/h2.c) on what Debian's nghttpd (h2c) served
 * nghttp (three requests multiplexed on one connection) and curl
 * (--http2-prior-knowledge: a GET with a cookie, a POST answered 404) in
 * tests/unit/data/l7/h2_nghttp.cap; whole and split at every offset. gRPC
 * (trailers, a trailers-only error, a reset) on frames built here.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "l7/h2.h"
#include "l7_harness.h"

#define H2 (&l7_proto_http2)
#define DATA "tests/unit/data/l7/"

static void test_nghttp(void **state)
{
	struct h_conv v;
	static struct h_run r;
	h_load(&v, DATA "h2_nghttp.cap", 1);
	h_check_splits(H2, &v, &r);
	assert_string_equal(r.pairs.s, "GET | GET /index.html => ok 2xx\n"
				       "GET | GET /missing => ok 4xx\n"
				       "GET | GET /index.html => ok 2xx\n");
	assert_not_contains(r.msgs.s, "secret");
	assert_int_equal(r.cnt.unparseable + r.cnt.lost + r.cnt.unpaired + r.cnt.truncated, 0);
	h_free(&v);
	h_load(&v, DATA "h2_nghttp.cap", 2);
	h_check_splits(H2, &v, &r);
	assert_string_equal(r.pairs.s, "GET | GET /index.html => ok 2xx\n");
	assert_not_contains(r.msgs.s, "secret");
	h_free(&v);
	h_load(&v, DATA "h2_nghttp.cap", 3);
	h_check_splits(H2, &v, &r);
	assert_string_equal(r.pairs.s, "POST | POST /missing => ok 4xx\n");
	h_free(&v);
}

/* A frame into b. */
static size_t frame(uint8_t *b, uint8_t type, uint8_t flags, uint32_t stream, const void *p, size_t n)
{
	b[0] = (uint8_t)(n >> 16);
	b[1] = (uint8_t)(n >> 8);
	b[2] = (uint8_t)n;
	b[3] = type;
	b[4] = flags;
	b[5] = (uint8_t)(stream >> 24);
	b[6] = (uint8_t)(stream >> 16);
	b[7] = (uint8_t)(stream >> 8);
	b[8] = (uint8_t)stream;
	memcpy(b + 9, p, n);
	return n + 9;
}

/* A literal field without indexing, raw strings. */
static size_t lit(uint8_t *b, const char *name, const char *value)
{
	size_t k = 0, nl = strlen(name), vl = strlen(value);
	b[k++] = 0;
	b[k++] = (uint8_t)nl;
	memcpy(b + k, name, nl);
	k += nl;
	b[k++] = (uint8_t)vl;
	memcpy(b + k, value, vl);
	return k + vl;
}

static void request(struct h_conv *v, uint32_t stream, const char *path)
{
	uint8_t blk[256], f[300];
	size_t n = 0;
	blk[n++] = 0x83; /* :method POST */
	blk[n++] = 0x86; /* :scheme http */
	n += lit(blk + n, ":path", path);
	n += lit(blk + n, "content-type", "application/grpc");
	n += lit(blk + n, "te", "trailers");
	h_add(v, L7_DIR_REQUEST, f, frame(f, 1, 0x4, stream, blk, n));
	h_add(v, L7_DIR_REQUEST, f, frame(f, 0, 0x1, stream, "\0\0\0\0\2hi", 7));
}

static void test_grpc(void **state)
{
	struct h_conv v = { 0 };
	static struct h_run r;
	uint8_t blk[256], f[300];
	size_t n;
	h_adds(&v, L7_DIR_REQUEST, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
	request(&v, 1, "/shop.Orders/Get");
	request(&v, 3, "/shop.Orders/Put");
	request(&v, 5, "/shop.Orders/Watch");
	/* stream 3: trailers-only, UNAUTHENTICATED */
	n = 0;
	blk[n++] = 0x88; /* :status 200 */
	n += lit(blk + n, "content-type", "application/grpc");
	n += lit(blk + n, "grpc-status", "16");
	h_add(&v, L7_DIR_RESPONSE, f, frame(f, 1, 0x5, 3, blk, n));
	/* stream 1: headers, data, trailers OK (the headers padded) */
	n = 0;
	blk[n++] = 2; /* pad length */
	blk[n++] = 0x88;
	n += lit(blk + n, "content-type", "application/grpc+proto");
	blk[n++] = 0;
	blk[n++] = 0;
	h_add(&v, L7_DIR_RESPONSE, f, frame(f, 1, 0x4 | 0x8, 1, blk, n));
	h_add(&v, L7_DIR_RESPONSE, f, frame(f, 0, 0, 1, "\0\0\0\0\2ok", 7));
	n = lit(blk, "grpc-status", "0");
	/* the trailers in two frames: HEADERS and CONTINUATION */
	size_t k = frame(f, 1, 0x1, 1, blk, 5);
	k += frame(f + k, 9, 0x4, 1, blk + 5, n - 5);
	h_add(&v, L7_DIR_RESPONSE, f, k);
	/* stream 5: reset by the server */
	h_add(&v, L7_DIR_RESPONSE, f, frame(f, 3, 0, 5, "\0\0\0\x8", 4));
	h_check_splits(H2, &v, &r);
	assert_string_equal(r.pairs.s, "POST | POST /shop.Orders/Put => failed grpc:UNAUTHENTICATED\n"
				       "POST | POST /shop.Orders/Get => ok grpc:OK\n"
				       "POST | POST /shop.Orders/Watch => failed reset\n");
	assert_int_equal(r.cnt.unparseable + r.cnt.lost + r.cnt.unpaired + r.cnt.truncated, 0);
	h_free(&v);
}

/*
 * A frame header not captured loses the framing (and the HPACK table) until
 * a chunk starts with a frame: the stream whose answer went by stays
 * waiting; the next request and answer (literal fields) pair.
 */
static void test_loss(void **state)
{
	struct h_conv v = { 0 };
	static struct h_run r;
	uint8_t blk[256], f[300];
	size_t n;
	h_adds(&v, L7_DIR_REQUEST, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
	request(&v, 1, "/a.B/C");
	n = 0;
	blk[n++] = 0x88;
	n += lit(blk + n, "content-type", "application/grpc");
	n += lit(blk + n, "grpc-status", "0");
	h_add(&v, L7_DIR_RESPONSE, f, frame(f, 1, 0x5, 1, blk, n));
	v.c[v.n - 1].len = 4;
	v.c[v.n - 1].no_split = true;
	h_add(&v, L7_DIR_RESPONSE, f, frame(f, 8, 0, 0, "\0\0\1\0", 4)); /* WINDOW_UPDATE */
	v.c[v.n - 1].no_split = true;
	request(&v, 3, "/a.B/D");
	h_add(&v, L7_DIR_RESPONSE, f, frame(f, 1, 0x5, 3, blk, n));
	h_check_splits(H2, &v, &r);
	assert_string_equal(r.pairs.s, "POST | POST /a.B/D => ok grpc:OK\n");
	assert_int_equal(r.cnt.lost, 1);
	assert_int_equal(r.cnt.unpaired, 0);
	h_free(&v);
}

/* A literal field with incremental indexing, a static table name (index < 63), raw value. */
static size_t lit_indexed(uint8_t *b, uint8_t name_index, const char *value)
{
	size_t vl = strlen(value);
	b[0] = 0x40 | name_index;
	b[1] = (uint8_t)vl;
	memcpy(b + 2, value, vl);
	return vl + 2;
}

/* Header blocks of `n` bytes in one frame each: HEADERS (END_HEADERS | flags). */
static void headers(struct h_conv *v, enum l7_dir dir, uint32_t stream, uint8_t flags,
		    const uint8_t *blk, size_t n)
{
	uint8_t f[300];
	h_add(v, dir, f, frame(f, 1, 0x4 | flags, stream, blk, n));
}

/*
 * A gRPC connection seen from its middle (an agent started after it): its
 * first request and answer filled both HPACK tables, and what follows names
 * those entries. A block that names a lost entry is counted (undecoded) and
 * its message still reported; the next literals are learnt and decode the
 * blocks after them; a request's content-type makes the stream gRPC when the
 * answer's names a lost entry, so the trailers' grpc-status is its code.
 */
static void test_middle(void **state)
{
	struct h_conv v = { 0 };
	static struct h_run r;
	uint8_t blk[256], f[300];
	size_t n;
	/* The unseen past: the client's table [62] content-type grpc, [63] :path /a.B/C; the
	 * server's [62] grpc-status 0, [63] content-type grpc. */
	static const uint8_t lost_refs[] = { 0x83, 0x86, 0xbf, 0xbe };
	headers(&v, L7_DIR_REQUEST, 3, 0, lost_refs, sizeof(lost_refs));
	h_add(&v, L7_DIR_REQUEST, f, frame(f, 0, 0x1, 3, "\0\0\0\0\2hi", 7));
	static const uint8_t status_lost_ct[] = { 0x88, 0xbf };
	headers(&v, L7_DIR_RESPONSE, 3, 0, status_lost_ct, sizeof(status_lost_ct));
	h_add(&v, L7_DIR_RESPONSE, f, frame(f, 0, 0, 3, "\0\0\0\0\2ok", 7));
	static const uint8_t lost_trailer[] = { 0xbe };
	headers(&v, L7_DIR_RESPONSE, 3, 0x1, lost_trailer, sizeof(lost_trailer));
	/* Stream 5: new literals, learnt. */
	n = 0;
	blk[n++] = 0x83;
	blk[n++] = 0x86;
	n += lit_indexed(blk + n, 4, "/a.B/D");		   /* :path */
	n += lit_indexed(blk + n, 31, "application/grpc"); /* content-type */
	headers(&v, L7_DIR_REQUEST, 5, 0x1, blk, n);
	headers(&v, L7_DIR_RESPONSE, 5, 0, status_lost_ct, sizeof(status_lost_ct));
	n = 0;
	blk[n++] = 0x40; /* literal name, indexed */
	blk[n++] = 11;
	memcpy(blk + n, "grpc-status", 11);
	n += 11;
	blk[n++] = 1;
	blk[n++] = '5';
	headers(&v, L7_DIR_RESPONSE, 5, 0x1, blk, n);
	/* Stream 7: the client's [63] is now /a.B/D, [62] content-type; the server's [62] grpc-status 5. */
	headers(&v, L7_DIR_REQUEST, 7, 0x1, lost_refs, sizeof(lost_refs));
	headers(&v, L7_DIR_RESPONSE, 7, 0, status_lost_ct, sizeof(status_lost_ct));
	headers(&v, L7_DIR_RESPONSE, 7, 0x1, lost_trailer, sizeof(lost_trailer));
	h_check_splits(H2, &v, &r);
	assert_string_equal(r.pairs.s, "unknown | unknown => ok 2xx\n"
				       "POST | POST /a.B/D => failed grpc:NOT_FOUND\n"
				       "POST | POST /a.B/D => failed grpc:NOT_FOUND\n");
	/* stream 3's three blocks, the answers' headers on 5 and 7 */
	assert_int_equal(r.cnt.undecoded, 5);
	assert_int_equal(r.cnt.unparseable + r.cnt.lost + r.cnt.unpaired + r.cnt.truncated, 0);
	h_free(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nghttp),
		cmocka_unit_test(test_grpc),
		cmocka_unit_test(test_loss),
		cmocka_unit_test(test_middle),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
