#define _GNU_SOURCE /* memmem */
/*
 * The ClickHouse native protocol parser (src/l7/clickhouse.c) on exchanges
 * captured between Debian's clickhouse-client and clickhouse-server 18.16
 * (tests/unit/data/l7/clickhouse_*.cap), whole and split at every offset.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "l7_harness.h"

#define CH (&l7_proto_clickhouse)
#define DATA "tests/unit/data/l7/"

/*
 * Hello, Ping, a Query with its compressed empty data block; the reply's
 * compressed Data, ProfileInfo, Progress and EndOfStream.
 */
static void test_select(void **state)
{
	struct h_conv v;
	static struct h_run r;
	h_load(&v, DATA "clickhouse_select.cap", 1);
	h_check_splits(CH, &v, &r);
	assert_string_equal(r.pairs.s, "SELECT | SELECT ?, ? WHERE ? IN (?) => ok\n");
	assert_not_contains(r.msgs.s, "secret");
	assert_int_equal(r.cnt.unparseable + r.cnt.lost + r.cnt.unpaired, 0);
	h_free(&v);
}

/* An Exception answers the query: failed, with its code (60: no such table). */
static void test_exception(void **state)
{
	struct h_conv v;
	static struct h_run r;
	h_load(&v, DATA "clickhouse_error.cap", 1);
	h_check_splits(CH, &v, &r);
	assert_string_equal(r.pairs.s, "SELECT | SELECT * FROM no_such_table => failed 60\n");
	assert_int_equal(r.cnt.unparseable + r.cnt.lost + r.cnt.unpaired, 0);
	h_free(&v);
}

/*
 * A connection seen from its middle: the Query parses at the revision this
 * server speaks, and the server's EndOfStream written alone resynchronises
 * the replies after an uncompressed block that cannot be followed.
 */
static void test_midstream(void **state)
{
	struct h_conv v, w = { 0 };
	static struct h_run r;
	h_load(&v, DATA "clickhouse_select.cap", 1);
	/* from the Query on */
	for (size_t i = 4; i < v.n; i++)
		h_add(&w, v.c[i].dir, v.c[i].data, v.c[i].len);
	h_run(CH, &w, &r);
	assert_string_equal(r.pairs.s, "SELECT | SELECT ?, ? WHERE ? IN (?) => ok\n");
	h_free(&w);
	/*
	 * The same query asking for uncompressed blocks: its Data packet cannot
	 * be followed, the reply is lost until EndOfStream comes alone.
	 */
	h_add(&w, L7_DIR_REQUEST, v.c[4].data, v.c[4].len);
	uint8_t *q = memmem(w.c[0].data, w.c[0].len, "\x02\x01\x27SELECT", 9);
	assert_non_null(q);
	q[1] = 0;
	static const char data[] = "\x01\x00\x01\x00\x02\xff\xff\xff\xff\x00\x01\x01\x01x\x05UInt8\x07";
	h_add(&w, L7_DIR_RESPONSE, data, sizeof(data) - 1);
	h_adds(&w, L7_DIR_RESPONSE, "\x05");
	h_run(CH, &w, &r);
	/* the server's block, and the client's own empty block after the query */
	assert_int_equal(r.cnt.unparseable, 2);
	assert_string_equal(r.pairs.s, "SELECT | SELECT ?, ? WHERE ? IN (?) => ok\n");
	h_free(&w);
	h_free(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_select),
		cmocka_unit_test(test_exception),
		cmocka_unit_test(test_midstream),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
