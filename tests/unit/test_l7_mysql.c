/*
 * The MySQL/MariaDB parser (src/l7/mysql.c) on exchanges captured between
 * Debian's mariadb client, python3-pymysql, perl DBD::MariaDB (server-side
 * prepared statements) and mariadb-server 10.11 (tests/unit/data/l7/my_*.cap),
 * whole and split at every offset, and on built packets.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "l7_harness.h"

#define MY (&l7_proto_mysql)
#define DATA "tests/unit/data/l7/"

static void add_packet(struct h_conv *v, enum l7_dir dir, uint8_t seq, const void *p, size_t n)
{
	uint8_t buf[512];
	buf[0] = (uint8_t)n;
	buf[1] = (uint8_t)(n >> 8);
	buf[2] = (uint8_t)(n >> 16);
	buf[3] = seq;
	memcpy(buf + 4, p, n);
	h_add(v, dir, buf, n + 4);
}

static void test_query(void **state)
{
	struct h_conv v;
	static struct h_run r;
	h_load(&v, DATA "my_query.cap", 1);
	h_check_splits(MY, &v, &r);
	assert_string_equal(r.pairs.s,
			    "SELECT | SELECT id, name FROM t WHERE name = ? AND id IN (?) => ok\n"
			    "SELECT | SELECT * FROM no_such_table => failed 1146\n");
	assert_not_contains(r.msgs.s, "secret");
	assert_int_equal(r.cnt.unparseable + r.cnt.lost + r.cnt.unpaired, 0);
	assert_true(h_check_midstream(MY, &v) >= 1);
	h_free(&v);
	h_load(&v, DATA "my_multi.cap", 1);
	h_check_splits(MY, &v, &r);
	assert_string_equal(r.pairs.s, "INSERT | INSERT INTO t VALUES (?) => ok\n"
				       "SELECT | SELECT ? => ok\n"
				       "SELECT | SELECT ? => ok\n"
				       "SELECT | SELECT name FROM t => ok\n");
	assert_true(h_check_midstream(MY, &v) >= 3);
	h_free(&v);
}

/* CLIENT_MULTI_STATEMENTS: three result sets (SERVER_MORE_RESULTS_EXISTS) are one response. */
static void test_multi_results(void **state)
{
	struct h_conv v;
	static struct h_run r;
	h_load(&v, DATA "my_multi2.cap", 1);
	h_check_splits(MY, &v, &r);
	assert_string_equal(r.pairs.s, "SET | SET AUTOCOMMIT = ? => ok\n"
				       "SELECT | SELECT ?; SELECT ?, ?; INSERT INTO t VALUES (?) => ok\n"
				       "SELECT | SELECT name FROM t WHERE id = ? => ok\n");
	assert_int_equal(r.cnt.unparseable + r.cnt.unpaired, 0);
	h_free(&v);
}

/*
 * COM_STMT_PREPARE / EXECUTE / CLOSE: each execution reports its statement's
 * text (MariaDB resends no column definitions: its metadata cache flag).
 */
static void test_prepared(void **state)
{
	struct h_conv v;
	static struct h_run r;
	h_load(&v, DATA "my_prepared.cap", 1);
	h_check_splits(MY, &v, &r);
	assert_contains(r.pairs.s,
			"PREPARE | SELECT name FROM t WHERE id = ? AND name <> ? => ok\n"
			"SELECT | SELECT name FROM t WHERE id = ? AND name <> ? => ok\n"
			"SELECT | SELECT name FROM t WHERE id = ? AND name <> ? => ok\n"
			"PREPARE | INSERT INTO t VALUES (?) => ok\n"
			"INSERT | INSERT INTO t VALUES (?) => ok\n"
			"PREPARE | SELECT * FROM no_such_table WHERE id = ? => failed 1146\n");
	assert_int_equal(r.cnt.unparseable + r.cnt.unpaired + r.cnt.lost, 0);
	h_free(&v);
}

/*
 * --ssl: the client answers the greeting with a 32-byte SSL request; the
 * rest is TLS records, not parsed; the same state takes the plaintext (here
 * built: the rest of the auth exchange, a query).
 */
static void test_ssl(void **state)
{
	struct h_conv v;
	static struct h_run r;
	h_load(&v, DATA "my_ssl.cap", 1);
	size_t raw = v.n;
	uint8_t login[64] = { 0 };
	add_packet(&v, L7_DIR_REQUEST, 2, login, sizeof(login));
	add_packet(&v, L7_DIR_RESPONSE, 3, "\x00\x00\x00\x02\x00\x00\x00", 7);
	add_packet(&v, L7_DIR_REQUEST, 0, "\x03SELECT 1", 9);
	add_packet(&v, L7_DIR_RESPONSE, 1, "\x00\x00\x00\x02\x00\x00\x00", 7);
	for (size_t i = raw; i < v.n; i++)
		v.c[i].plaintext = true;
	h_check_splits(MY, &v, &r);
	assert_true(r.tls);
	assert_string_equal(r.pairs.s, "SELECT | SELECT ? => ok\n");
	assert_int_equal(r.cnt.unparseable + r.cnt.lost + r.cnt.unpaired, 0);
	h_free(&v);
	/* without the greeting seen (a connection in its middle), no switch */
	h_load(&v, DATA "my_query.cap", 1);
	h_run(MY, &v, &r);
	assert_false(r.tls);
	h_free(&v);
}

/*
 * Old servers' EOF after the column definitions (no CLIENT_DEPRECATE_EOF),
 * a prepare with parameters and columns, an error inside rows, an EXECUTE
 * of a statement prepared before the connection was seen, COM_PING.
 */
static void test_built(void **state)
{
	struct h_conv v = { 0 };
	static struct h_run r;
	static const uint8_t eof[] = { 0xfe, 0, 0, 0x02, 0 };
	static const uint8_t coldef[] = { 3, 'd', 'e', 'f', 0, 0, 0, 1, 'a', 0 };
	add_packet(&v, L7_DIR_REQUEST, 0, "\x03SELECT a FROM t", 16);
	/* one column, its definition, EOF, two rows, EOF */
	uint8_t buf[256];
	size_t n = 0;
	struct {
		uint8_t seq;
		const void *p;
		size_t n;
	} pk[] = { { 1, "\x01", 1 }, { 2, coldef, sizeof(coldef) }, { 3, eof, 5 },
		   { 4, "\x01\x31", 2 }, { 5, "\x01\x32", 2 }, { 6, eof, 5 } };
	for (size_t i = 0; i < 6; i++) {
		buf[n] = (uint8_t)pk[i].n;
		buf[n + 1] = buf[n + 2] = 0;
		buf[n + 3] = pk[i].seq;
		memcpy(buf + n + 4, pk[i].p, pk[i].n);
		n += 4 + pk[i].n;
	}
	h_add(&v, L7_DIR_RESPONSE, buf, n);
	/* an error in the middle of the rows */
	add_packet(&v, L7_DIR_REQUEST, 0, "\x03SELECT b FROM t", 16);
	add_packet(&v, L7_DIR_RESPONSE, 1, "\x01", 1);
	add_packet(&v, L7_DIR_RESPONSE, 2, coldef, sizeof(coldef));
	add_packet(&v, L7_DIR_RESPONSE, 3, eof, 5);
	add_packet(&v, L7_DIR_RESPONSE, 4, "\x01\x31", 2);
	add_packet(&v, L7_DIR_RESPONSE, 5, "\xff\x25\x05#70100Query execution was interrupted", 38);
	/* an unknown statement id */
	add_packet(&v, L7_DIR_REQUEST, 0, "\x17\x63\0\0\0\0\x01\0\0\0", 10);
	add_packet(&v, L7_DIR_RESPONSE, 1, "\x00\x01\x00\x02\x00\x00\x00", 7);
	add_packet(&v, L7_DIR_REQUEST, 0, "\x0e", 1);
	add_packet(&v, L7_DIR_RESPONSE, 1, "\x00\x00\x00\x02\x00\x00\x00", 7);
	/* a statement closed gets no answer; QUIT neither */
	add_packet(&v, L7_DIR_REQUEST, 0, "\x19\x63\0\0\0", 5);
	add_packet(&v, L7_DIR_REQUEST, 0, "\x01", 1);
	h_check_splits(MY, &v, &r);
	assert_string_equal(r.pairs.s, "SELECT | SELECT a FROM t => ok\n"
				       "SELECT | SELECT b FROM t => failed 1317\n"
				       "EXECUTE |  => ok\n"
				       "PING |  => ok\n");
	assert_int_equal(r.cnt.unparseable + r.cnt.unpaired, 0);
	h_free(&v);
}

/* A long query whose end was not captured: framed past, counted truncated. */
static void test_uncaptured(void **state)
{
	struct h_conv v = { 0 };
	static struct h_run r;
	char q[400];
	memset(q, ' ', sizeof(q));
	q[0] = 3;
	memcpy(q + 1, "INSERT INTO t VALUES ('secret", 29);
	add_packet(&v, L7_DIR_REQUEST, 0, q, sizeof(q));
	v.c[0].len = 32; /* up to "('secr" */
	add_packet(&v, L7_DIR_RESPONSE, 1, "\x00\x01\x00\x02\x00\x00\x00", 7);
	add_packet(&v, L7_DIR_REQUEST, 0, "\x03SELECT 1", 9);
	add_packet(&v, L7_DIR_RESPONSE, 1, "\xff\x15\x04#28000Access denied", 22);
	/* a response whose second packet's header was not captured: lost, then resynchronised */
	add_packet(&v, L7_DIR_REQUEST, 0, "\x03SELECT 2", 9);
	static const uint8_t two[] = { 1, 0, 0, 1, 1, 10, 0, 0, 2, 3, 'd', 'e', 'f' };
	h_add(&v, L7_DIR_RESPONSE, two, sizeof(two));
	v.c[v.n - 1].len = 6;
	v.c[v.n - 1].no_split = true;
	add_packet(&v, L7_DIR_REQUEST, 0, "\x03SELECT 3", 9);
	v.c[v.n - 1].no_split = true;
	add_packet(&v, L7_DIR_RESPONSE, 1, "\x00\x00\x00\x02\x00\x00\x00", 7);
	v.c[v.n - 1].no_split = true;
	h_check_splits(MY, &v, &r);
	assert_string_equal(r.pairs.s, "INSERT | INSERT INTO t VALUES (?... => ok\n"
				       "SELECT | SELECT ? => failed 1045\n"
				       "SELECT | SELECT ? => ok\n");
	assert_int_equal(r.cnt.truncated, 1);
	assert_int_equal(r.cnt.lost, 1);
	h_free(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_query),	 cmocka_unit_test(test_multi_results),
		cmocka_unit_test(test_prepared), cmocka_unit_test(test_ssl),
		cmocka_unit_test(test_built),	 cmocka_unit_test(test_uncaptured),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
