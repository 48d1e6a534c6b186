/*
 * The Cassandra parser (src/l7/cassandra.c). Debian 12 has no Cassandra
 * server: the requests are what Debian's python3-cassandra 3.25 connection
 * wrote in protocol versions 4 and 5 (v5 in segments after the start-up),
 * the answers a stand-in node made from the specification, v5's segments
 * with the driver's own segment codec (tests/unit/data/l7/cql_v*.cap,
 * tests/e2e/srv_cassandra.py); whole and split at every offset.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "l7_harness.h"

#define CQ (&l7_proto_cassandra)
#define DATA "tests/unit/data/l7/"

static const char *const expected =
	"USE | USE shop => ok\n"
	"SELECT | SELECT name FROM users WHERE id = ? AND age IN (?) => ok\n"
	"INSERT | INSERT INTO users (id, name) VALUES (?) => ok\n"
	"PREPARE | SELECT name FROM users WHERE id = ? => ok\n"
	"SELECT | SELECT name FROM users WHERE id = ? => ok\n"
	"BATCH | BATCH(2) INSERT INTO users (id, name) VALUES (?) => ok\n"
	"SELECT | SELECT name FROM users WHERE id = ? => ok\n"
	"SELECT | SELECT name FROM users WHERE id = ? => ok\n"
	"SELECT | SELECT name FROM users WHERE id = ? => ok\n"
	"SELECT | SELECT * FROM no_such_table => failed 0x2200\n";

static void check(const char *file)
{
	struct h_conv v;
	static struct h_run r;
	h_load(&v, file, 1);
	h_check_splits(CQ, &v, &r);
	assert_string_equal(r.pairs.s, expected);
	assert_not_contains(r.msgs.s, "secret");
	assert_int_equal(r.cnt.unparseable + r.cnt.lost + r.cnt.unpaired + r.cnt.truncated, 0);
	h_free(&v);
}

/*
 * Picked up from the middle, at the EXECUTE: its PREPARE was not seen, so
 * its statement is unknown; the rest is as from the start.
 */
static void test_v4(void **state)
{
	static struct h_run r;
	struct h_conv v;
	check(DATA "cql_v4.cap");
	h_load(&v, DATA "cql_v4.cap", 1);
	assert_true(CQ->detect_request(v.c[12].data, v.c[12].len));
	h_run_from(CQ, &v, 12, SIZE_MAX, 0, &r);
	assert_string_equal(r.pairs.s, "EXECUTE | EXECUTE => ok\n"
				       "BATCH | BATCH(2) INSERT INTO users (id, name) VALUES (?) => ok\n"
				       "SELECT | SELECT name FROM users WHERE id = ? => ok\n"
				       "SELECT | SELECT name FROM users WHERE id = ? => ok\n"
				       "SELECT | SELECT name FROM users WHERE id = ? => ok\n"
				       "SELECT | SELECT * FROM no_such_table => failed 0x2200\n");
	h_free(&v);
}

static void test_v5(void **state)
{
	check(DATA "cql_v5.cap");
}

static size_t envelope(uint8_t *out, uint8_t version, uint8_t flags, int16_t stream, uint8_t op,
		       const void *body, size_t n)
{
	out[0] = version;
	out[1] = flags;
	out[2] = (uint8_t)((uint16_t)stream >> 8);
	out[3] = (uint8_t)stream;
	out[4] = op;
	out[5] = out[6] = 0;
	out[7] = (uint8_t)(n >> 8);
	out[8] = (uint8_t)n;
	memcpy(out + 9, body, n);
	return n + 9;
}

/*
 * A compressed body keeps its opcode's operation and status; an error with
 * a tracing id and warnings before its code; an EVENT is a push; a header
 * not captured loses the framing until a chunk starts an envelope.
 */
static void test_built(void **state)
{
	struct h_conv v = { 0 };
	static struct h_run r;
	uint8_t b[256];
	static const uint8_t query[] = { 0, 0, 0, 8, 'S', 'E', 'L', 'E', 'C', 'T', ' ', '1', 0, 1, 0 };
	/* error 0x1200 (read timeout) after a tracing id and one warning */
	static const uint8_t err[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
				       0, 1, 0, 2, 'w', '!', 0, 0, 0x12, 0, 0, 1, 'x' };
	static const uint8_t event[] = { 0, 13, 'S', 'T', 'A', 'T', 'U', 'S', '_', 'C', 'H', 'A', 'N', 'G', 'E' };
	static const uint8_t opaque[] = { 0xde, 0xad, 0xbe, 0xef };
	static const uint8_t result_void[] = { 0, 0, 0, 1 };
	h_add(&v, L7_DIR_REQUEST, b, envelope(b, 4, 0, 1, 0x07, query, sizeof(query)));
	h_add(&v, L7_DIR_REQUEST, b, envelope(b, 4, 1, 2, 0x07, opaque, sizeof(opaque)));
	h_add(&v, L7_DIR_RESPONSE, b, envelope(b, 0x84, 1, 2, 0x00, opaque, sizeof(opaque)));
	h_add(&v, L7_DIR_RESPONSE, b, envelope(b, 0x84, 0, -1, 0x0c, event, sizeof(event)));
	h_add(&v, L7_DIR_RESPONSE, b, envelope(b, 0x84, 0x0a, 1, 0x00, err, sizeof(err)));
	/* an answer whose header is cut, then garbage, then an envelope */
	h_add(&v, L7_DIR_REQUEST, b, envelope(b, 4, 0, 3, 0x07, query, sizeof(query)));
	h_add(&v, L7_DIR_RESPONSE, b, envelope(b, 0x84, 0, 3, 0x08, result_void, 4));
	v.c[v.n - 1].len = 5;
	v.c[v.n - 1].no_split = true;
	h_adds(&v, L7_DIR_RESPONSE, "garbage");
	v.c[v.n - 1].no_split = true;
	h_add(&v, L7_DIR_REQUEST, b, envelope(b, 4, 0, 4, 0x07, query, sizeof(query)));
	h_add(&v, L7_DIR_RESPONSE, b, envelope(b, 0x84, 0, 4, 0x08, result_void, 4));
	v.c[v.n - 1].no_split = true;
	h_check_splits(CQ, &v, &r);
	assert_string_equal(r.pairs.s, "QUERY | QUERY => failed\n"
				       "SELECT | SELECT ? => failed 0x1200\n"
				       "SELECT | SELECT ? => ok\n");
	assert_contains(r.msgs.s, "push #65535\n");
	assert_int_equal(r.cnt.lost, 1);
	assert_int_equal(r.cnt.unpaired, 0);
	h_free(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v4),
		cmocka_unit_test(test_v5),
		cmocka_unit_test(test_built),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
