/*
 * The Redis parser (src/l7/redis.c) on exchanges captured between
 * python3-redis or a raw RESP3 client and redis-server 7.0
 * (tests/unit/data/l7/redis_*.cap), whole and split at every offset.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "l7_harness.h"

#define RD (&l7_proto_redis)
#define DATA "tests/unit/data/l7/"

/* Commands, a failure, MULTI/EXEC and a pipeline: each its own reply. Values never show. */
static void test_commands(void **state)
{
	struct h_conv v;
	static struct h_run r;
	h_load(&v, DATA "redis_py.cap", 1);
	h_check_splits(RD, &v, &r);
	assert_string_equal(r.pairs.s, "SET | SET user:1 => ok\n"
				       "GET | GET user:1 => ok\n"
				       "GET | GET missing => ok\n"
				       "LPUSH | LPUSH user:1 => failed WRONGTYPE\n"
				       "MULTI | MULTI => ok\n"
				       "INCRBY | INCRBY n => ok\n"
				       "HSET | HSET h => ok\n"
				       "HGETALL | HGETALL h => ok\n"
				       "EXEC | EXEC => ok\n"
				       "GET | GET k0 => ok\n"
				       "GET | GET k1 => ok\n"
				       "GET | GET k2 => ok\n"
				       "GET | GET k3 => ok\n"
				       "GET | GET k4 => ok\n");
	assert_not_contains(r.msgs.s, "secret");
	assert_int_equal(r.cnt.unparseable + r.cnt.lost + r.cnt.unpaired, 0);
	assert_true(h_check_midstream(RD, &v) >= 5);
	h_free(&v);
}

/*
 * RESP3: maps, sets, big numbers, verbatim strings, doubles, nulls,
 * booleans, an attribute before its reply, a push before a reply and
 * invalidation pushes after one; inline commands.
 */
static void test_resp3(void **state)
{
	struct h_conv v;
	static struct h_run r;
	h_load(&v, DATA "redis_resp3.cap", 1);
	h_check_splits(RD, &v, &r);
	assert_string_equal(r.pairs.s, "HELLO | HELLO => ok\n"
				       "HSET | HSET h3 => ok\n"
				       "HGETALL | HGETALL h3 => ok\n"
				       "SMEMBERS | SMEMBERS s => ok\n"
				       "DEBUG | DEBUG PROTOCOL => ok\n"
				       "DEBUG | DEBUG PROTOCOL => ok\n"
				       "DEBUG | DEBUG PROTOCOL => ok\n"
				       "DEBUG | DEBUG PROTOCOL => ok\n"
				       "DEBUG | DEBUG PROTOCOL => ok\n"
				       "DEBUG | DEBUG PROTOCOL => ok\n"
				       "DEBUG | DEBUG PROTOCOL => ok\n"
				       "GET | GET nokey => ok\n"
				       "INCR | INCR h3 => failed WRONGTYPE\n"
				       "CLIENT | CLIENT TRACKING => ok\n"
				       "GET | GET tracked => ok\n"
				       "SET | SET tracked => ok\n"
				       "PING | PING => ok\n"
				       "GET | GET user:1 => ok\n");
	/* the two pushes are not replies */
	const char *p = strstr(r.msgs.s, "push");
	assert_non_null(p);
	assert_non_null(strstr(p + 1, "push"));
	assert_int_equal(r.cnt.unpaired + r.cnt.unparseable, 0);
	h_free(&v);
}

/* A subscribed connection: confirmations and messages are pushes, PING still a request. */
static void test_pubsub(void **state)
{
	struct h_conv v;
	static struct h_run r;
	h_load(&v, DATA "redis_pubsub.cap", 1);
	h_check_splits(RD, &v, &r);
	assert_string_equal(r.pairs.s, "SUBSCRIBE | SUBSCRIBE ch1 => noreply\n"
				       "PING | PING => ok\n"
				       "UNSUBSCRIBE | UNSUBSCRIBE => noreply\n");
	assert_int_equal(r.cnt.unpaired, 0);
	h_free(&v);
}

/*
 * The key form: the command and its first argument; secrets and scripts
 * (AUTH, EVAL) keep the command only, container commands their subcommand.
 * A value bigger than the capture is passed (its length is known).
 */
static void test_key_form_and_uncaptured(void **state)
{
	struct h_conv v = { 0 };
	static struct h_run r;
	h_adds(&v, L7_DIR_REQUEST, "*2\r\n$4\r\nAUTH\r\n$6\r\nhunter\r\n");
	h_adds(&v, L7_DIR_RESPONSE, "-WRONGPASS invalid username-password pair\r\n");
	h_adds(&v, L7_DIR_REQUEST, "*3\r\n$4\r\neval\r\n$8\r\nreturn 1\r\n$1\r\n0\r\n");
	h_adds(&v, L7_DIR_RESPONSE, ":1\r\n");
	h_adds(&v, L7_DIR_REQUEST, "*3\r\n$6\r\nCONFIG\r\n$3\r\nget\r\n$7\r\nmaxconn\r\n");
	h_adds(&v, L7_DIR_RESPONSE, "*0\r\n");
	char big[600];
	snprintf(big, sizeof(big), "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$500\r\n");
	size_t n = strlen(big);
	memset(big + n, 'v', 500);
	memcpy(big + n + 500, "\r\n", 2);
	h_add(&v, L7_DIR_REQUEST, big, n + 502);
	v.c[v.n - 1].len = n + 10; /* the value's end not captured */
	h_adds(&v, L7_DIR_RESPONSE, "+OK\r\n");
	h_adds(&v, L7_DIR_REQUEST, "PING\r\n");
	h_adds(&v, L7_DIR_RESPONSE, "+PONG\r\n");
	h_check_splits(RD, &v, &r);
	assert_string_equal(r.pairs.s, "AUTH | AUTH => failed WRONGPASS\n"
				       "EVAL | EVAL => ok\n"
				       "CONFIG | CONFIG GET => ok\n"
				       "SET | SET key => ok\n"
				       "PING | PING => ok\n");
	assert_not_contains(r.msgs.s, "hunter");
	assert_int_equal(r.cnt.truncated, 1);
	h_free(&v);
}

/* Garbage loses the framing; a chunk that starts with a value resynchronises. */
static void test_garbage(void **state)
{
	struct h_conv v = { 0 };
	static struct h_run r;
	h_adds(&v, L7_DIR_REQUEST, "*1\r\n$3\r\nGET\r\n");
	h_adds(&v, L7_DIR_RESPONSE, "$x\r\n");
	h_adds(&v, L7_DIR_RESPONSE, "garbage");
	h_adds(&v, L7_DIR_REQUEST, "*1\r\n$4\r\nINFO\r\n");
	h_adds(&v, L7_DIR_RESPONSE, "$2\r\nok\r\n");
	v.c[v.n - 1].no_split = true;
	h_check_splits(RD, &v, &r);
	/* GET's reply was lost: GET is forgotten, INFO pairs with its own reply */
	assert_int_equal(r.cnt.unparseable, 1);
	assert_string_equal(r.pairs.s, "INFO | INFO => ok\n");
	h_free(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_commands), cmocka_unit_test(test_resp3),
		cmocka_unit_test(test_pubsub),	 cmocka_unit_test(test_key_form_and_uncaptured),
		cmocka_unit_test(test_garbage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
