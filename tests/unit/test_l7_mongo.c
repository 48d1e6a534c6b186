/*
 * The MongoDB parser (src/l7/mongo.c). Debian 12 has no MongoDB server: the
 * requests are what Debian's python3-pymongo 3.11 wrote (monitor and
 * application connections), the replies a stand-in server made with
 * pymongo's bson (tests/unit/data/l7/mongo_pymongo.cap); whole and split at
 * every offset.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "l7_harness.h"

#define MG (&l7_proto_mongo)
#define DATA "tests/unit/data/l7/"

static void test_pymongo(void **state)
{
	struct h_conv v;
	static struct h_run r;
	/* the monitor: the legacy OP_QUERY isMaster and its OP_REPLY */
	h_load(&v, DATA "mongo_pymongo.cap", 1);
	h_check_splits(MG, &v, &r);
	assert_string_equal(r.pairs.s, "ismaster | ismaster admin => ok\n");
	h_free(&v);
	/* OP_MSG: find, insert (a document sequence), a failing drop, an unacknowledged insert */
	h_load(&v, DATA "mongo_pymongo.cap", 2);
	h_check_splits(MG, &v, &r);
	assert_string_equal(r.pairs.s, "ismaster | ismaster admin => ok\n"
				       "find | find db.users => ok\n"
				       "insert | insert db.users => ok\n"
				       "drop | drop db.missing => failed 26\n"
				       "insert | insert db.users => noreply\n"
				       "endSessions | endSessions admin => ok\n");
	assert_not_contains(r.msgs.s, "secret");
	assert_int_equal(r.cnt.unparseable + r.cnt.lost + r.cnt.unpaired, 0);
	assert_true(h_check_midstream(MG, &v) >= 4);
	h_free(&v);
}

static void le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* An OP_MSG with one kind 0 section holding doc (a BSON document's bytes). */
static size_t op_msg(uint8_t *out, uint32_t id, uint32_t to, uint32_t flags, const uint8_t *doc,
		     size_t dn)
{
	size_t n = 16 + 4 + 1 + dn;
	le32(out, (uint32_t)n);
	le32(out + 4, id);
	le32(out + 8, to);
	le32(out + 12, 2013);
	le32(out + 16, flags);
	out[20] = 0;
	memcpy(out + 21, doc, dn);
	return n;
}

/*
 * Replies out of order pair by id; a reply whose `ok` lies past the capture
 * is unknown; OP_COMPRESSED is "unknown"; exhaust replies after the first
 * answer no request.
 */
static void test_built(void **state)
{
	/* {ping: 1} and {ok: 1.0}, {ok: 0.0, code: 13} */
	static const uint8_t ping[] = { 0x0f, 0, 0, 0, 0x10, 'p', 'i', 'n', 'g', 0, 1, 0, 0, 0, 0 };
	static const uint8_t ok1[] = { 0x11, 0, 0, 0, 0x01, 'o', 'k', 0, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0 };
	static const uint8_t ok0[] = { 0x1c, 0, 0, 0, 0x01, 'o', 'k', 0, 0, 0, 0, 0, 0, 0, 0, 0,
				       0x10, 'c', 'o', 'd', 'e', 0, 13, 0, 0, 0, 0 };
	struct h_conv v = { 0 };
	static struct h_run r;
	uint8_t buf[256];
	size_t n = op_msg(buf, 1, 0, 0, ping, sizeof(ping));
	n += op_msg(buf + n, 2, 0, 0, ping, sizeof(ping));
	h_add(&v, L7_DIR_REQUEST, buf, n);
	h_add(&v, L7_DIR_RESPONSE, buf, op_msg(buf, 50, 2, 0, ok0, sizeof(ok0)));
	h_add(&v, L7_DIR_RESPONSE, buf, op_msg(buf, 51, 1, 0, ok1, sizeof(ok1)));
	/* a reply cut before its ok */
	h_add(&v, L7_DIR_REQUEST, buf, op_msg(buf, 3, 0, 0, ping, sizeof(ping)));
	h_add(&v, L7_DIR_RESPONSE, buf, op_msg(buf, 52, 3, 0, ok0, sizeof(ok0)));
	v.c[v.n - 1].len = 26;
	/* compressed */
	memcpy(buf, "\x1a\0\0\0\x04\0\0\0\0\0\0\0\xdc\x07\0\0\xdd\x07\0\0\x05\0\0\0\x01\0", 26);
	h_add(&v, L7_DIR_REQUEST, buf, 26);
	memcpy(buf, "\x1a\0\0\0\x35\0\0\0\x04\0\0\0\xdc\x07\0\0\xdd\x07\0\0\x05\0\0\0\x01\0", 26);
	h_add(&v, L7_DIR_RESPONSE, buf, 26);
	/* exhaust: two replies with moreToCome, then the last */
	h_add(&v, L7_DIR_REQUEST, buf, op_msg(buf, 5, 0, 0x10000, ping, sizeof(ping)));
	h_add(&v, L7_DIR_RESPONSE, buf, op_msg(buf, 60, 5, 2, ok1, sizeof(ok1)));
	h_add(&v, L7_DIR_RESPONSE, buf, op_msg(buf, 61, 60, 2, ok1, sizeof(ok1)));
	h_add(&v, L7_DIR_RESPONSE, buf, op_msg(buf, 62, 61, 0, ok1, sizeof(ok1)));
	h_check_splits(MG, &v, &r);
	assert_string_equal(r.pairs.s, "ping | ping => failed 13\n"
				       "ping | ping => ok\n"
				       "ping | ping => unknown\n"
				       "unknown | unknown => unknown\n"
				       "ping | ping => ok\n");
	assert_int_equal(r.cnt.unpaired, 0);
	assert_int_equal(r.cnt.truncated, 1);
	h_free(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pymongo),
		cmocka_unit_test(test_built),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
