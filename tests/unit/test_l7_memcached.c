/*
 * The memcached parser (src/l7/memcached.c) on exchanges captured between
 * python3-pymemcache or a raw client (meta commands, the binary protocol)
 * and Debian's memcached 1.6 (tests/unit/data/l7/mc_*.cap), whole and split
 * at every offset.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "l7_harness.h"

#define MC (&l7_proto_memcached)
#define DATA "tests/unit/data/l7/"

/* Storage with data blocks, noreply, multi-key gets, cas, stats, a client error. */
static void test_text(void **state)
{
	struct h_conv v;
	static struct h_run r;
	h_load(&v, DATA "mc_text.cap", 1);
	h_check_splits(MC, &v, &r);
	assert_string_equal(r.pairs.s, "set | set user:1 => noreply\n"
				       "get | get user:1 => ok\n"
				       "get | get missing => ok\n"
				       "get | get user:1 => ok\n"
				       "set | set n => noreply\n"
				       "incr | incr n => ok\n"
				       "gets | gets n => ok\n"
				       "cas | cas n => ok\n"
				       "delete | delete n => noreply\n"
				       "add | add user:1 => ok\n"
				       "touch | touch user:1 => noreply\n"
				       "stats | stats => ok\n"
				       "incr | incr user:1 => failed CLIENT_ERROR\n");
	assert_not_contains(r.msgs.s, "secret");
	assert_int_equal(r.cnt.unparseable + r.cnt.lost + r.cnt.unpaired, 0);
	assert_true(h_check_midstream(MC, &v) >= 5);
	h_free(&v);
}

/* Meta commands (a quiet one gets no reply), an unknown command answered ERROR; binary. */
static void test_meta_and_binary(void **state)
{
	struct h_conv v;
	static struct h_run r;
	h_load(&v, DATA "mc_raw.cap", 1);
	h_check_splits(MC, &v, &r);
	assert_string_equal(r.pairs.s, "ms | ms m1 => ok\n"
				       "mg | mg m1 => ok\n"
				       "mg | mg nothere => ok\n"
				       "md | md m1 => noreply\n"
				       "mn | mn => ok\n"
				       "unknown | unknown => failed ERROR\n");
	h_free(&v);
	h_load(&v, DATA "mc_raw.cap", 2);
	h_check_splits(MC, &v, &r);
	assert_string_equal(r.pairs.s, "set | set b1 => ok\n"
				       "get | get b1 => ok\n"
				       "get | get nokey => ok\n"
				       "getq | getq nokey => noreply\n"
				       "noop | noop => ok\n");
	assert_not_contains(r.msgs.s, "secret");
	assert_int_equal(r.cnt.unparseable + r.cnt.unpaired, 0);
	h_free(&v);
}

/* A value bigger than the capture is passed by its announced size. */
static void test_uncaptured(void **state)
{
	struct h_conv v = { 0 };
	static struct h_run r;
	char big[700];
	int n = snprintf(big, sizeof(big), "set k 0 0 600\r\n");
	memset(big + n, 'v', 600);
	memcpy(big + n + 600, "\r\nget k\r\n", 9);
	h_add(&v, L7_DIR_REQUEST, big, (size_t)n + 609);
	v.c[0].len = 40;
	h_adds(&v, L7_DIR_RESPONSE, "STORED\r\n");
	/* the get after the value was in the uncaptured part: lost, then a new chunk */
	h_adds(&v, L7_DIR_RESPONSE, "END\r\n");
	h_adds(&v, L7_DIR_REQUEST, "delete k\r\n");
	v.c[v.n - 1].no_split = true;
	h_adds(&v, L7_DIR_RESPONSE, "DELETED\r\n");
	h_check_splits(MC, &v, &r);
	assert_string_equal(r.pairs.s, "set | set k => ok\n"
				       "delete | delete k => ok\n");
	assert_int_equal(r.cnt.lost, 1);
	/* the reply to the unseen get was unpaired */
	assert_int_equal(r.cnt.unpaired, 1);
	h_free(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_meta_and_binary),
		cmocka_unit_test(test_uncaptured),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
