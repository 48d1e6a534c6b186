/*
 * The Kafka parser (src/l7/kafka.c). Debian 12 has no Kafka broker: the
 * requests are what Debian's python3-kafka 2.0.2 wrote (a producer with
 * acks=1, one with acks=0, a consumer), the answers a stand-in broker made
 * with that library's response encoders (tests/unit/data/l7/kafka_python.cap,
 * tests/e2e/srv_kafka.py); whole and split at every offset. Flexible versions
 * (which that client does not speak) are built here from the protocol's
 * message definitions.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "l7_harness.h"

#define KF (&l7_proto_kafka)
#define DATA "tests/unit/data/l7/"

static void check_conn(int conn, const char *pairs)
{
	struct h_conv v;
	static struct h_run r;
	h_load(&v, DATA "kafka_python.cap", conn);
	h_check_splits(KF, &v, &r);
	assert_string_equal(r.pairs.s, pairs);
	assert_int_equal(r.cnt.unparseable + r.cnt.lost + r.cnt.unpaired + r.cnt.truncated, 0);
	assert_not_contains(r.msgs.s, "secret");
	h_check_midstream(KF, &v);
	h_free(&v);
}

static void test_python_kafka(void **state)
{
	/* the version probe and metadata, a producer's three sends (one refused: too large) */
	check_conn(1, "ApiVersions | ApiVersions => ok\n"
		      "Metadata | Metadata => ok\n"
		      "Metadata | Metadata => ok\n");
	check_conn(2, "Produce | Produce events => ok\n"
		      "Produce | Produce events => ok\n"
		      "Produce | Produce full => failed 10\n");
	/* acks=0: no answer, counted without a reply */
	check_conn(4, "Produce | Produce events => noreply\n");
	check_conn(5, "ApiVersions | ApiVersions => ok\n"
		      "Metadata | Metadata => ok\n"
		      "Metadata | Metadata events => ok\n");
	/* the consumer's fetches (the last one unanswered at close) */
	check_conn(6, "Fetch | Fetch events => ok\n"
		      "Fetch | Fetch events => ok\n");
}

/* A message builder. */
struct b {
	uint8_t p[512];
	size_t n;
};
static void u8(struct b *b, unsigned v)
{
	b->p[b->n++] = (uint8_t)v;
}
static void be(struct b *b, uint64_t v, unsigned bytes)
{
	while (bytes--)
		u8(b, (unsigned)(v >> (bytes * 8)));
}
static void cstr(struct b *b, const char *s) /* compact string */
{
	u8(b, (unsigned)strlen(s) + 1);
	memcpy(b->p + b->n, s, strlen(s));
	b->n += strlen(s);
}
static void str16(struct b *b, const char *s)
{
	be(b, strlen(s), 2);
	memcpy(b->p + b->n, s, strlen(s));
	b->n += strlen(s);
}
/* The message: its length in front. */
static void add(struct h_conv *v, enum l7_dir dir, const struct b *b)
{
	uint8_t out[600];
	out[0] = out[1] = 0;
	out[2] = (uint8_t)(b->n >> 8);
	out[3] = (uint8_t)b->n;
	memcpy(out + 4, b->p, b->n);
	h_add(v, dir, out, b->n + 4);
}
static void req_header(struct b *b, unsigned key, unsigned ver, uint32_t corr)
{
	b->n = 0;
	be(b, key, 2);
	be(b, ver, 2);
	be(b, corr, 4);
	str16(b, "app");
	u8(b, 0); /* tagged fields: none */
}

/*
 * Flexible versions: header tagged fields (skipped, one with data), compact
 * strings and arrays; ApiVersions' answer has no header tags; Fetch's second
 * partition's error is found past the first one's records; answers out of
 * order pair by correlation id.
 */
static void test_flexible(void **state)
{
	struct h_conv v = { 0 };
	static struct h_run r;
	struct b b;

	/* ApiVersions v3 and its answer (header v0: no tags) */
	req_header(&b, 18, 3, 1);
	cstr(&b, "app-client");
	cstr(&b, "1.0");
	u8(&b, 0);
	add(&v, L7_DIR_REQUEST, &b);
	b.n = 0;
	be(&b, 1, 4);
	be(&b, 0, 2);	/* error */
	u8(&b, 2);	/* one api */
	be(&b, 0, 2);
	be(&b, 0, 2);
	be(&b, 9, 2);
	u8(&b, 0);
	be(&b, 0, 4);	/* throttle */
	u8(&b, 0);
	add(&v, L7_DIR_RESPONSE, &b);

	/* Produce v9 (a header tag with two bytes of data) then Fetch v12, pipelined */
	req_header(&b, 0, 9, 2);
	b.n--;
	u8(&b, 1), u8(&b, 5), u8(&b, 2), u8(&b, 0xaa), u8(&b, 0xbb);
	u8(&b, 0);	 /* transactional id: null */
	be(&b, 0xffff, 2); /* acks -1 */
	be(&b, 30000, 4);
	u8(&b, 2);
	cstr(&b, "orders");
	u8(&b, 2);
	be(&b, 0, 4);
	u8(&b, 1); /* records: empty */
	u8(&b, 0), u8(&b, 0), u8(&b, 0);
	add(&v, L7_DIR_REQUEST, &b);
	req_header(&b, 1, 12, 3);
	be(&b, 0xffffffff, 4), be(&b, 500, 4), be(&b, 1, 4), be(&b, 1 << 20, 4), u8(&b, 0);
	be(&b, 0, 4), be(&b, 0xffffffff, 4);
	u8(&b, 2);
	cstr(&b, "payments");
	u8(&b, 1);
	u8(&b, 0);
	u8(&b, 1), u8(&b, 1), u8(&b, 0);
	add(&v, L7_DIR_REQUEST, &b);

	/* Fetch's answer first: partition 0 ok with 3 bytes of records, partition 1 error 1 */
	b.n = 0;
	be(&b, 3, 4);
	u8(&b, 0);
	be(&b, 0, 4), be(&b, 0, 2), be(&b, 0, 4);
	u8(&b, 2);
	cstr(&b, "payments");
	u8(&b, 3);
	for (unsigned part = 0; part < 2; part++) {
		be(&b, part, 4);
		be(&b, part, 2); /* error */
		be(&b, 10, 8), be(&b, 10, 8), be(&b, 0, 8);
		u8(&b, 1);		   /* aborted: none */
		be(&b, 0xffffffff, 4);	   /* preferred read replica */
		u8(&b, 4), u8(&b, 1), u8(&b, 2), u8(&b, 3); /* records */
		u8(&b, 0);
	}
	u8(&b, 0);
	u8(&b, 0);
	add(&v, L7_DIR_RESPONSE, &b);
	/* Produce's: partition 0 NOT_LEADER_OR_FOLLOWER (6) */
	b.n = 0;
	be(&b, 2, 4);
	u8(&b, 0);
	u8(&b, 2);
	cstr(&b, "orders");
	u8(&b, 2);
	be(&b, 0, 4), be(&b, 6, 2), be(&b, 0, 8), be(&b, 0, 8), be(&b, 0, 8);
	u8(&b, 1), u8(&b, 0), u8(&b, 0);
	u8(&b, 0);
	be(&b, 0, 4);
	u8(&b, 0);
	add(&v, L7_DIR_RESPONSE, &b);

	/* Heartbeat v1 (throttle first) failing REBALANCE_IN_PROGRESS (27) */
	req_header(&b, 12, 1, 4);
	b.n--; /* not flexible: no header tags */
	str16(&b, "group-a");
	be(&b, 3, 4);
	str16(&b, "member-1");
	add(&v, L7_DIR_REQUEST, &b);
	b.n = 0;
	be(&b, 4, 4), be(&b, 0, 4), be(&b, 27, 2);
	add(&v, L7_DIR_RESPONSE, &b);

	/* every request is recognised at its start, the flexible ones too */
	for (size_t i = 0; i < v.n; i++)
		if (v.c[i].dir == L7_DIR_REQUEST)
			assert_true(KF->detect_request(v.c[i].data, v.c[i].len));
	h_check_splits(KF, &v, &r);
	assert_string_equal(r.pairs.s, "ApiVersions | ApiVersions => ok\n"
				       "Fetch | Fetch payments => failed 1\n"
				       "Produce | Produce orders => failed 6\n"
				       "Heartbeat | Heartbeat group-a => failed 27\n");
	assert_int_equal(r.cnt.unparseable + r.cnt.lost + r.cnt.unpaired, 0);
	h_free(&v);
}

/*
 * Uncaptured bytes: a body cut after its error code keeps its status; a
 * length not captured loses the framing, and the answers resynchronise only
 * on a correlation id waiting (not on a chunk that merely looks like Kafka).
 */
static void test_loss(void **state)
{
	struct h_conv v = { 0 };
	static struct h_run r;
	struct b b;

	req_header(&b, 12, 1, 7);
	b.n--;
	str16(&b, "g");
	be(&b, 1, 4);
	str16(&b, "m");
	add(&v, L7_DIR_REQUEST, &b);
	b.n = 0;
	be(&b, 7, 4), be(&b, 0, 4), be(&b, 0, 2);
	for (int i = 0; i < 20; i++)
		u8(&b, 0xee);
	add(&v, L7_DIR_RESPONSE, &b);
	v.c[v.n - 1].len = 14; /* up to the error code */
	/* a request, then an answer whose length is not captured */
	req_header(&b, 12, 1, 8);
	b.n--;
	str16(&b, "g");
	be(&b, 1, 4);
	str16(&b, "m");
	add(&v, L7_DIR_REQUEST, &b);
	b.n = 0;
	be(&b, 8, 4), be(&b, 0, 4), be(&b, 0, 2);
	add(&v, L7_DIR_RESPONSE, &b);
	v.c[v.n - 1].len = 2;
	v.c[v.n - 1].no_split = true;
	/* an answer to nothing waiting: ignored; then one to request 9 */
	req_header(&b, 12, 1, 9);
	b.n--;
	str16(&b, "g");
	be(&b, 1, 4);
	str16(&b, "m");
	add(&v, L7_DIR_REQUEST, &b);
	b.n = 0;
	be(&b, 55, 4), be(&b, 0, 4), be(&b, 0, 2);
	add(&v, L7_DIR_RESPONSE, &b);
	v.c[v.n - 1].no_split = true;
	b.n = 0;
	be(&b, 9, 4), be(&b, 0, 4), be(&b, 25, 2);
	add(&v, L7_DIR_RESPONSE, &b);
	v.c[v.n - 1].no_split = true;
	h_check_splits(KF, &v, &r);
	assert_string_equal(r.pairs.s, "Heartbeat | Heartbeat g => ok\n"
				       "Heartbeat | Heartbeat g => failed 25\n");
	assert_int_equal(r.cnt.truncated, 1);
	assert_int_equal(r.cnt.lost, 1);
	assert_int_equal(r.cnt.unpaired, 0);
	h_free(&v);
}

/*
 * More requests in flight than the parser remembers (256): the oldest is
 * forgotten, counted table_full, and its answer's status is unknown.
 */
static void test_inflight_full(void **state)
{
	struct h_conv v = { 0 };
	static struct h_run r;
	static uint8_t all[300 * 30];
	size_t n = 0;
	struct b b;
	for (uint32_t corr = 1; corr <= 257; corr++) {
		req_header(&b, 12, 1, corr);
		b.n--;
		str16(&b, "g");
		be(&b, 1, 4);
		str16(&b, "m");
		all[n] = all[n + 1] = 0;
		all[n + 2] = (uint8_t)(b.n >> 8);
		all[n + 3] = (uint8_t)b.n;
		memcpy(all + n + 4, b.p, b.n);
		n += b.n + 4;
	}
	h_add(&v, L7_DIR_REQUEST, all, n);
	v.c[0].no_split = true;
	b.n = 0;
	be(&b, 1, 4), be(&b, 0, 4), be(&b, 27, 2);
	add(&v, L7_DIR_RESPONSE, &b);
	b.n = 0;
	be(&b, 257, 4), be(&b, 0, 4), be(&b, 27, 2);
	add(&v, L7_DIR_RESPONSE, &b);
	h_run(KF, &v, &r);
	assert_int_equal(r.cnt.table_full, 1);
	assert_string_equal(r.pairs.s, "Heartbeat | Heartbeat g => unknown\n"
				       "Heartbeat | Heartbeat g => failed 27\n");
	h_free(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_python_kafka),
		cmocka_unit_test(test_flexible),
		cmocka_unit_test(test_loss),
		cmocka_unit_test(test_inflight_full),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
