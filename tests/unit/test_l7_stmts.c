/* src/l7/stmts.c: a connection's prepared statements. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "l7/stmts.h"

static void put_n(struct l7_stmts *t, unsigned from, unsigned to)
{
	char name[16], text[32];
	for (unsigned i = from; i < to; i++) {
		snprintf(name, sizeof(name), "s%u", i);
		snprintf(text, sizeof(text), "SELECT %u", i);
		assert_int_equal(l7_stmts_put(t, name, "SELECT", text), 0);
	}
}

static void assert_text(const struct l7_stmts *t, const char *name, const char *text)
{
	const struct l7_stmt *s = l7_stmts_get(t, name);
	if (!text) {
		assert_null(s);
		return;
	}
	assert_non_null(s);
	assert_string_equal(s->text, text);
}

static void test_put_get_replace(void **state)
{
	struct l7_stmts t = { 0 };
	assert_null(l7_stmts_get(&t, "a")); /* nothing allocated yet */
	assert_int_equal(l7_stmts_put(&t, "", "SELECT", "x"), 0); /* the unnamed one is not kept here */
	assert_null(t.e);
	put_n(&t, 0, 3);
	assert_text(&t, "s1", "SELECT 1");
	assert_int_equal(l7_stmts_put(&t, "s1", "UPDATE", "UPDATE t"), 0);
	assert_text(&t, "s1", "UPDATE t");
	assert_int_equal(t.n, 3);
	assert_null(l7_stmts_get(&t, ""));
	l7_stmts_free(&t);
	assert_null(l7_stmts_get(&t, "s1"));
}

/* Deleted entries are found no more, their slots reused; the look-up bound follows the last used one. */
static void test_delete_and_reuse(void **state)
{
	struct l7_stmts t = { 0 };
	put_n(&t, 0, 4);
	assert_int_equal(t.hi, 4);
	l7_stmts_del(&t, "s1");
	assert_text(&t, "s1", NULL);
	assert_int_equal(t.hi, 4);
	l7_stmts_del(&t, "s3");
	assert_int_equal(t.hi, 3);
	l7_stmts_del(&t, "s2");
	assert_int_equal(t.hi, 1); /* s1's hole and s2, s3 gone: s0 is the last */
	assert_text(&t, "s0", "SELECT 0");
	put_n(&t, 10, 12); /* into the freed slots, in order */
	assert_int_equal(t.hi, 3);
	assert_int_equal(t.n, 3);
	assert_text(&t, "s10", "SELECT 10");
	assert_text(&t, "s11", "SELECT 11");
	l7_stmts_del(&t, "nope");
	assert_int_equal(t.n, 3);
	l7_stmts_free(&t);
}

/* Full: the oldest entry makes room (put says so), whatever slot it is in. */
static void test_full_evicts_oldest(void **state)
{
	struct l7_stmts t = { 0 };
	put_n(&t, 0, L7_STMTS_MAX);
	assert_int_equal(t.hi, L7_STMTS_MAX);
	assert_int_equal(l7_stmts_put(&t, "s0", "SELECT", "again"), 0); /* a replacement: s0 is now the newest */
	assert_int_equal(l7_stmts_put(&t, "new", "SELECT", "new"), 1);
	assert_text(&t, "s1", NULL);
	assert_text(&t, "s0", "again");
	assert_text(&t, "new", "new");
	assert_text(&t, "s2", "SELECT 2");
	assert_int_equal(t.n, L7_STMTS_MAX);
	l7_stmts_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_get_replace),
		cmocka_unit_test(test_delete_and_reuse),
		cmocka_unit_test(test_full_evicts_oldest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
