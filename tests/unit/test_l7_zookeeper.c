/*
 * The ZooKeeper parser (src/l7/zookeeper.c) on what Debian's zookeeperd 3.8
 * and its clients exchanged: zkCli.sh (create, get, set, ls, a missing node,
 * a node that exists, delete, close) and python3-kazoo (auth, a watch and
 * its event, two multi transactions, one failing inside, pings, a
 * recursive delete) in tests/unit/data/l7/zk_*.cap; whole and split at every
 * offset, and picked up from the middle.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "l7_harness.h"

#define ZK (&l7_proto_zookeeper)
#define DATA "tests/unit/data/l7/"

static void test_cli(void **state)
{
	struct h_conv v;
	static struct h_run r;
	h_load(&v, DATA "zk_cli.cap", 1);
	h_check_splits(ZK, &v, &r);
	assert_string_equal(r.pairs.s, "connect | connect => ok\n"
				       "create | create /app => ok\n"
				       "getData | getData /app => ok\n"
				       "setData | setData /app => ok\n"
				       "getChildren2 | getChildren2 / => ok\n"
				       "exists | exists /missing => failed -101\n"
				       "create | create /app => failed -110\n"
				       "delete | delete /app => ok\n"
				       "closeSession | closeSession => ok\n");
	assert_not_contains(r.msgs.s, "secret");
	assert_int_equal(r.cnt.unparseable + r.cnt.lost + r.cnt.unpaired + r.cnt.truncated, 0);
	assert_true(h_check_midstream(ZK, &v) >= 7);
	h_free(&v);
}

static void test_kazoo(void **state)
{
	struct h_conv v;
	static struct h_run r;
	h_load(&v, DATA "zk_kazoo.cap", 1);
	h_check_splits(ZK, &v, &r);
	assert_string_equal(r.pairs.s,
			    "connect | connect => ok\n"
			    "auth | auth => ok\n"
			    "exists | exists /svc => failed -101\n"
			    "exists | exists / => ok\n"
			    "create | create /svc => ok\n"
			    "getChildren | getChildren /svc => ok\n"
			    "multi | multi(create /svc/a, setData /svc/n1, delete /svc/a) => ok\n"
			    "multi | multi(check /svc/n1, delete /svc/n1) => failed -103\n"
			    "getData | getData /nowhere => failed -101\n"
			    "getChildren | getChildren /svc => ok\n"
			    "getChildren | getChildren /svc/n1 => ok\n"
			    "delete | delete /svc/n1 => ok\n"
			    "delete | delete /svc => ok\n"
			    "closeSession | closeSession => ok\n");
	/* the watch event is a push; pings are not reported */
	assert_contains(r.msgs.s, "push #4294967295\n");
	assert_not_contains(r.msgs.s, "ping");
	assert_not_contains(r.msgs.s, "secret");
	assert_int_equal(r.cnt.unparseable + r.cnt.lost + r.cnt.unpaired + r.cnt.truncated, 0);
	assert_true(h_check_midstream(ZK, &v) >= 10);
	h_free(&v);
}

/* A length not captured loses the framing until a chunk starts a message again. */
static void test_loss(void **state)
{
	struct h_conv v;
	static struct h_run r;
	h_load(&v, DATA "zk_cli.cap", 1);
	/* the create's answer: only 2 bytes of it captured */
	for (size_t i = 0; i < v.n; i++) {
		if (v.c[i].dir == L7_DIR_RESPONSE && i == 3) {
			v.c[i].len = 2;
			v.c[i].no_split = true;
		}
	}
	h_run(ZK, &v, &r);
	assert_int_equal(r.cnt.lost, 1);
	assert_not_contains(r.pairs.s, "create | create /app => ok");
	assert_contains(r.pairs.s, "getData | getData /app => ok\n");
	h_free(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cli),
		cmocka_unit_test(test_kazoo),
		cmocka_unit_test(test_loss),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
