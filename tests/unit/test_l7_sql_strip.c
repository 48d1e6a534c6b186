/* src/l7/sql_strip.c: statements with their literals stripped. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "l7/sql_strip.h"

static const char *strip(enum sql_dialect d, const char *in)
{
	static char out[256];
	size_t n = sql_strip(d, in, strlen(in), out, sizeof(out));
	assert_int_equal(n, strlen(out));
	return out;
}

#define PG(in, want) assert_string_equal(strip(SQL_POSTGRES, in), want)
#define MY(in, want) assert_string_equal(strip(SQL_MYSQL, in), want)
#define CH(in, want) assert_string_equal(strip(SQL_CLICKHOUSE, in), want)

static void test_literals(void **state)
{
	PG("SELECT * FROM t WHERE a = 1 AND b = 'x'", "SELECT * FROM t WHERE a = ? AND b = ?");
	PG("SELECT 1.5e-3, .5, 0x1F, -7", "SELECT ?, ?, ?, -?");
	PG("SELECT 'it''s', E'a\\'b', B'0101', X'ff', N'n'", "SELECT ?, ?, ?, ?, ?");
	PG("SELECT $$a 'quoted' body$$, $fn$ x $$ y $fn$ + 1", "SELECT ?, ? + ?");
	PG("SELECT * FROM t1 WHERE c2 = $1 AND \"Col 3\" = $12", "SELECT * FROM t1 WHERE c2 = $1 AND \"Col 3\" = $12");
	PG("SELECT a::int, ts AT TIME ZONE 'UTC'", "SELECT a::int, ts AT TIME ZONE ?");
	/* MySQL: backslash escapes, "" strings, `` identifiers, # comments, charset introducers */
	MY("SELECT * FROM `t` WHERE a = \"x\\\"y\" AND b = 'o\\'k' # note", "SELECT * FROM `t` WHERE a = ? AND b = ?");
	MY("INSERT INTO t VALUES (_utf8mb4'x', ?)", "INSERT INTO t VALUES (?)");
	/* ClickHouse: "" is an identifier */
	CH("SELECT \"x\" FROM t WHERE s = 'a\\'b'", "SELECT \"x\" FROM t WHERE s = ?");
}

static void test_lists_and_comments(void **state)
{
	PG("SELECT * FROM t WHERE id IN (1, 2, 3)", "SELECT * FROM t WHERE id IN (?)");
	PG("INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y'), (3, 'z')", "INSERT INTO t (a, b) VALUES (?)");
	PG("SELECT f(a, 1), g()", "SELECT f(a, ?), g()");
	PG("SELECT /* a /* nested */ comment */ 1 -- tail\n FROM t", "SELECT ? FROM t");
	PG("  SELECT\n\t1\n\n", "SELECT ?");
	PG("WHERE (a, b) IN ((1, 2), (3, 4))", "WHERE (a, b) IN ((?))");
}

/* A literal cut by the end of the capture is still replaced: what is shown never leaks it. */
static void test_cut_input(void **state)
{
	PG("SELECT * FROM users WHERE password = 'hunter2 and more", "SELECT * FROM users WHERE password = ?");
	PG("SELECT $body$ secret", "SELECT ?");
	MY("SELECT \"secr", "SELECT ?");
	PG("SELECT /* unterminated secret", "SELECT");
}

/* The output is bounded, cut at a character boundary with "...", and valid UTF-8. */
static void test_bounded(void **state)
{
	char in[4096], out[32];
	memset(in, 0, sizeof(in));
	for (int i = 0; i < 400; i++)
		strcat(in, "col, ");
	size_t n = sql_strip(SQL_POSTGRES, in, strlen(in), out, sizeof(out));
	assert_true(n < sizeof(out));
	assert_int_equal(strlen(out), n);
	assert_memory_equal(out + n - 3, "...", 3);
	/* a two-byte character near the end is not split */
	const char *u = "SELECT \xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9";
	n = sql_strip(SQL_POSTGRES, u, strlen(u), out, 20);
	assert_true(n < 20);
	for (size_t i = 0; i + 3 < n; i++)
		assert_false((unsigned char)out[i] == 0xc3 && ((unsigned char)out[i + 1] & 0xc0) != 0x80);
	/* control and invalid bytes do not come out */
	n = sql_strip(SQL_POSTGRES, "SELECT \x01\xff a", 11, out, sizeof(out));
	assert_string_equal(out, "SELECT ? a");
	/* tiny outputs */
	assert_int_equal(sql_strip(SQL_POSTGRES, "SELECT 1", 8, out, 4), 0);
	assert_string_equal(out, "");
	assert_int_equal(sql_strip(SQL_POSTGRES, "SELECT 1", 8, out, 0), 0);
}

static void test_mark_cut(void **state)
{
	char out[16] = "SELECT ?";
	sql_mark_cut(out, sizeof(out));
	assert_string_equal(out, "SELECT ?...");
	sql_mark_cut(out, sizeof(out));
	assert_string_equal(out, "SELECT ?...");
	/* no room: the end makes way, not inside a character */
	strcpy(out, "SELECT abcd\xc3\xa9xy");
	sql_mark_cut(out, sizeof(out));
	assert_string_equal(out, "SELECT abcd...");
}

/* sql_operation of n bytes of in, into cap bytes. */
static const char *operation(const char *in, size_t n, size_t cap)
{
	static char op[16];
	assert_true(cap <= sizeof(op));
	sql_operation(in, n, op, cap);
	return op;
}

static void test_operation(void **state)
{
	assert_string_equal(operation("  /* c */ -- x\n (select 1)", 26, 16), "SELECT");
	assert_string_equal(operation("insert into t", 13, 16), "INSERT");
	assert_string_equal(operation("'x'", 3, 16), "");
	assert_string_equal(operation("abcdefghijklmnopqrstuvwxyz", 26, 4), "ABC");
	/* isspace's blanks lead in; another control byte or a non-letter ends the word */
	assert_string_equal(operation("\v\f\r\tUpDate_x", 14, 16), "UPDATE");
	assert_string_equal(operation("\x01select", 7, 16), "");
	assert_string_equal(operation("Zz\xc3\xa9", 4, 16), "ZZ");
}

/* What each byte is, as the C locale has it (sql_strip's class table). */
static void test_byte_classes(void **state)
{
	/* control bytes separate tokens; DEL is an operator byte, shown as a blank */
	PG("SELECT\x01" "a\x0b" "FROM\x1ft", "SELECT a FROM t");
	PG("SELECT a\x7f" "b", "SELECT a b");
	/* identifiers: letters, digits, '_', '$' after the first byte, any UTF-8 sequence */
	PG("SELECT café, x$y, _z9 FROM t", "SELECT café, x$y, _z9 FROM t");
	PG("SELECT naïve_1 FROM \xc3\xa9t\xc3\xa9", "SELECT naïve_1 FROM été");
	/* dollar-quote tags of letters, digits and '_'; a digit first is a parameter */
	PG("SELECT $tag1$ body $x$ $tag1$, $a_b$q$a_b$, $2", "SELECT ?, ?, $2");
	/* hexadecimal, exponents and digit separators */
	PG("SELECT 0xAbC_1, 1e+5, 3.14_15, 7E-2", "SELECT ?, ?, ?, ?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_literals), cmocka_unit_test(test_lists_and_comments),
		cmocka_unit_test(test_cut_input), cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_mark_cut), cmocka_unit_test(test_operation),
		cmocka_unit_test(test_byte_classes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
