/*
 * The PostgreSQL parser (src/l7/postgres.c) on exchanges captured between
 * Debian's psql / pgbench and postgresql 15 (tests/unit/data/l7/pg_*.cap,
 * see capture_proxy.py), each fed whole and split at every offset, and on
 * built messages for what the captures lack.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "l7_harness.h"

#define PG (&l7_proto_postgres)
#define DATA "tests/unit/data/l7/"

/* A typed message: type, 4-byte length, body. */
static size_t msg(uint8_t *out, char type, const void *body, size_t n)
{
	out[0] = (uint8_t)type;
	uint32_t len = (uint32_t)n + 4;
	out[1] = (uint8_t)(len >> 24);
	out[2] = (uint8_t)(len >> 16);
	out[3] = (uint8_t)(len >> 8);
	out[4] = (uint8_t)len;
	memcpy(out + 5, body, n);
	return n + 5;
}

static void add_msg(struct h_conv *v, enum l7_dir dir, char type, const void *body, size_t n)
{
	uint8_t buf[512];
	h_add(v, dir, buf, msg(buf, type, body, n));
}

static void test_simple_query(void **state)
{
	struct h_conv v;
	static struct h_run r;
	h_load(&v, DATA "pg_simple.cap", 1);
	h_check_splits(PG, &v, &r);
	assert_string_equal(
		r.pairs.s,
		"SELECT | SELECT id, name FROM t WHERE name = ? AND id IN (?) => ok\n"
		"SELECT | SELECT * FROM no_such_table => failed 42P01\n"
		/* three statements in one Query: one request, failed by the third */
		"INSERT | INSERT INTO t VALUES (?); SELECT ?; SELECT ?/? => failed 22012\n"
		"COPY | COPY t TO STDOUT => ok\n"
		"COPY | COPY t FROM STDIN => ok\n");
	assert_not_contains(r.msgs.s, "secret");
	assert_int_equal(r.cnt.unparseable + r.cnt.lost + r.cnt.unpaired + r.cnt.truncated, 0);
	assert_false(r.tls);
	assert_true(h_check_midstream(PG, &v) >= 4);
	h_free(&v);
}

/* pgbench -M extended: unnamed statements, Parse/Bind/Describe/Execute/Sync each. */
static void test_extended(void **state)
{
	struct h_conv v;
	static struct h_run r;
	h_load(&v, DATA "pg_extended.cap", 2);
	h_check_splits(PG, &v, &r);
	assert_string_equal(r.pairs.s, "SELECT | SELECT name FROM t WHERE id = ?; => ok\n"
				       "UPDATE | UPDATE t SET name = ? WHERE id = ?; => ok\n"
				       "SELECT | SELECT name FROM t WHERE id = ?; => ok\n"
				       "UPDATE | UPDATE t SET name = ? WHERE id = ?; => ok\n");
	assert_true(h_check_midstream(PG, &v) >= 3);
	h_free(&v);
}

/*
 * pgbench -M prepared in a pipeline: named statements prepared once, four
 * Executes before one Sync; the third divides by zero. The capture ends at
 * the ErrorResponse (pgbench gave up): ReadyForQuery is added, and reports
 * the fourth Execute, which the server skipped.
 */
static void test_pipeline(void **state)
{
	struct h_conv v;
	static struct h_run r;
	h_load(&v, DATA "pg_pipeline.cap", 2);
	add_msg(&v, L7_DIR_RESPONSE, 'Z', "I", 1);
	h_check_splits(PG, &v, &r);
	assert_string_equal(r.pairs.s, "SELECT | SELECT name FROM t WHERE id = $1; => ok\n"
				       "INSERT | INSERT INTO t VALUES ($1, ?); => ok\n"
				       "SELECT | SELECT ?/?; => failed 22012\n"
				       "SELECT | SELECT ?; => failed (skipped)\n");
	h_free(&v);
}

/*
 * sslmode=require: SSLRequest answered 'S', then TLS records, which are not
 * parsed; the same state takes the plaintext the TLS library gives (here
 * built: the start-up, a query).
 */
static void test_ssl(void **state)
{
	static const uint8_t startup[] = { 0, 0, 0, 0x17, 0, 3, 0, 0, 'u', 's', 'e', 'r', 0,
					   'p', 'o', 's', 't', 'g', 'r', 'e', 's', 0, 0 };
	struct h_conv v;
	static struct h_run r;
	h_load(&v, DATA "pg_ssl.cap", 1);
	size_t raw = v.n;
	h_add(&v, L7_DIR_REQUEST, startup, sizeof(startup));
	add_msg(&v, L7_DIR_RESPONSE, 'R', "\0\0\0\0", 4);
	add_msg(&v, L7_DIR_RESPONSE, 'Z', "I", 1);
	add_msg(&v, L7_DIR_REQUEST, 'Q', "SELECT 1", 9);
	add_msg(&v, L7_DIR_RESPONSE, 'C', "SELECT 1", 9);
	add_msg(&v, L7_DIR_RESPONSE, 'Z', "I", 1);
	for (size_t i = raw; i < v.n; i++)
		v.c[i].plaintext = true;
	h_check_splits(PG, &v, &r);
	assert_true(r.tls);
	assert_string_equal(r.pairs.s, "SELECT | SELECT ? => ok\n");
	assert_int_equal(r.cnt.unparseable + r.cnt.lost + r.cnt.unpaired, 0);
	h_free(&v);
}

/* SSLRequest answered 'N': the startup follows in the clear. */
static void test_ssl_refused(void **state)
{
	static const uint8_t ssl[] = { 0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f };
	static const uint8_t startup[] = { 0, 0, 0, 0x17, 0, 3, 0, 0, 'u', 's', 'e', 'r', 0,
					   'p', 'o', 's', 't', 'g', 'r', 'e', 's', 0, 0 };
	struct h_conv v = { 0 };
	static struct h_run r;
	h_add(&v, L7_DIR_REQUEST, ssl, sizeof(ssl));
	h_adds(&v, L7_DIR_RESPONSE, "N");
	h_add(&v, L7_DIR_REQUEST, startup, sizeof(startup));
	add_msg(&v, L7_DIR_RESPONSE, 'R', "\0\0\0\0", 4);
	add_msg(&v, L7_DIR_RESPONSE, 'Z', "I", 1);
	add_msg(&v, L7_DIR_REQUEST, 'Q', "SELECT 1", 9);
	add_msg(&v, L7_DIR_RESPONSE, 'C', "SELECT 1", 9);
	add_msg(&v, L7_DIR_RESPONSE, 'Z', "I", 1);
	h_check_splits(PG, &v, &r);
	assert_false(r.tls);
	assert_string_equal(r.pairs.s, "SELECT | SELECT ? => ok\n");
	assert_int_equal(r.cnt.unpaired, 0);
	h_free(&v);
}

/* Named statements and portals: Execute reports the statement; Close forgets it. */
static void test_named_statements(void **state)
{
	struct h_conv v = { 0 };
	static struct h_run r;
	static const char parse[] = "s1\0SELECT * FROM t WHERE a = $1 AND b = 'k'\0\0\0";
	static const char bind[] = "p1\0s1\0\0\0\0\0\0\0";
	static const char exec[] = "p1\0\0\0\0\0";
	static const char close_s[] = "Ss1";
	uint8_t buf[512];
	size_t n = msg(buf, 'P', parse, sizeof(parse) - 1);
	n += msg(buf + n, 'B', bind, sizeof(bind) - 1);
	n += msg(buf + n, 'E', exec, sizeof(exec) - 1);
	n += msg(buf + n, 'E', exec, sizeof(exec) - 1);
	n += msg(buf + n, 'S', "", 0);
	h_add(&v, L7_DIR_REQUEST, buf, n);
	n = msg(buf, '1', "", 0);
	n += msg(buf + n, '2', "", 0);
	n += msg(buf + n, 's', "", 0);
	n += msg(buf + n, 'E', "SERROR\0C57014\0Mcanceled\0\0", 25);
	n += msg(buf + n, 'Z', "I", 1);
	h_add(&v, L7_DIR_RESPONSE, buf, n);
	/* Close the statement, then Bind to it: the Execute's statement is unknown */
	n = msg(buf, 'C', close_s, sizeof(close_s));
	n += msg(buf + n, 'B', bind, sizeof(bind) - 1);
	n += msg(buf + n, 'E', exec, sizeof(exec) - 1);
	n += msg(buf + n, 'S', "", 0);
	h_add(&v, L7_DIR_REQUEST, buf, n);
	n = msg(buf, '3', "", 0);
	n += msg(buf + n, '2', "", 0);
	n += msg(buf + n, 'I', "", 0);
	n += msg(buf + n, 'Z', "I", 1);
	h_add(&v, L7_DIR_RESPONSE, buf, n);
	h_check_splits(PG, &v, &r);
	assert_string_equal(r.pairs.s,
			    "SELECT | SELECT * FROM t WHERE a = $1 AND b = ? => ok\n"
			    "SELECT | SELECT * FROM t WHERE a = $1 AND b = ? => failed 57014\n"
			    "EXECUTE |  => ok\n");
	h_free(&v);
}

/*
 * Uncaptured bytes: a long Query whose end was not copied is framed past
 * (its literal cut, not leaked, the message counted truncated); a header in
 * uncaptured bytes loses the framing until a chunk starts with a message.
 */
static void test_uncaptured(void **state)
{
	struct h_conv v = { 0 };
	static struct h_run r;
	char q[300];
	memset(q, 'x', sizeof(q));
	memcpy(q, "SELECT 'secret", 14);
	q[sizeof(q) - 1] = 0;
	add_msg(&v, L7_DIR_REQUEST, 'Q', q, sizeof(q));
	v.c[0].len = 40; /* of 305 */
	add_msg(&v, L7_DIR_RESPONSE, 'C', "SELECT 1", 9);
	add_msg(&v, L7_DIR_RESPONSE, 'Z', "I", 1);
	/* garbage where a message should start */
	h_adds(&v, L7_DIR_REQUEST, "\x01garbage");
	/* two Queries in one chunk (it resynchronises), the second's header not captured */
	uint8_t buf[128];
	size_t n = msg(buf, 'Q', "SELECT 2", 9);
	n += msg(buf + n, 'Q', "SELECT 3", 9);
	h_add(&v, L7_DIR_REQUEST, buf, n);
	v.c[v.n - 1].len = 16;
	v.c[v.n - 1].no_split = true;
	n = msg(buf, 'C', "SELECT 1", 9);
	n += msg(buf + n, 'Z', "I", 1);
	h_add(&v, L7_DIR_RESPONSE, buf, n);
	/* after lost framing, a chunk at a message boundary */
	add_msg(&v, L7_DIR_REQUEST, 'Q', "SELECT 4", 9);
	v.c[v.n - 1].no_split = true;
	add_msg(&v, L7_DIR_RESPONSE, 'E', "SERROR\0C42703\0\0", 16);
	add_msg(&v, L7_DIR_RESPONSE, 'Z', "I", 1);
	h_check_splits(PG, &v, &r);
	assert_string_equal(r.pairs.s, "SELECT | SELECT ?... => ok\n"
				       "SELECT | SELECT ? => ok\n"
				       "SELECT | SELECT ? => failed 42703\n");
	assert_int_equal(r.cnt.truncated, 1);
	assert_int_equal(r.cnt.lost, 1);
	assert_int_equal(r.cnt.unparseable, 1);
	h_free(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_simple_query),   cmocka_unit_test(test_extended),
		cmocka_unit_test(test_pipeline),       cmocka_unit_test(test_ssl),
		cmocka_unit_test(test_ssl_refused),    cmocka_unit_test(test_named_statements),
		cmocka_unit_test(test_uncaptured),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
