/*
 * The resolver's policy for a container whose runtime state is not found:
 * its cgroup path meanwhile, asked again 1, 2, 4 ... 60 s apart (the caller's
 * timer follows containers_resolver_next_retry), named once the state is
 * there (the path handed to on_renamed), given up on after 10 tries; and a
 * Docker container named before its host port was picked, read again for it.
 * On a fake host root, with the monotonic clock given by the test.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "containers/meta.h"
#include "containers/resolver.h"
#include "data_file.h"

#define SEC 1000000000ull
#define ID "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9"
#define PATH "/docker/" ID

static char dir[256];

struct seen {
	char from[256], to[256];
	int renamed, ports;
	size_t n_ports;
};

static void renamed(void *ctx, const char *from, const char *to)
{
	struct seen *s = ctx;
	snprintf(s->from, sizeof(s->from), "%s", from);
	snprintf(s->to, sizeof(s->to), "%s", to);
	s->renamed++;
}

static void ports(void *ctx, const char *id, const struct containers_port *p, size_t n)
{
	struct seen *s = ctx;
	s->ports++;
	s->n_ports = n;
}

static void put(const char *rel, const char *text)
{
	char path[512];

	snprintf(path, sizeof(path), "%s%s", dir, rel);
	test_file_put(path, text);
}

static int setup(void **state)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/nodescope-resolver-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[sizeof(dir) + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_unnamed_then_named(void **state)
{
	struct containers_resolver *r;
	struct seen seen = { 0 };
	uint64_t t0 = 1000 * SEC;

	assert_int_equal(containers_resolver_new(dir, NULL, NULL, &r), 0);
	containers_resolver_on_renamed(r, renamed, &seen);
	assert_string_equal(containers_resolve(r, PATH, t0), PATH);
	const struct containers_resolver_stats *st = containers_resolver_stats(r);
	assert_int_equal(st->unnamed, 1);
	assert_int_equal(containers_resolver_next_retry(r), t0 + SEC);

	/* not yet: nothing is read */
	uint64_t missing = st->metadata_missing;
	containers_resolver_retry(r, t0 + SEC / 2);
	assert_int_equal(st->metadata_missing, missing);
	/* due, still missing: the next one twice as far */
	containers_resolver_retry(r, t0 + SEC);
	assert_int_equal(st->metadata_missing, missing + 1);
	assert_int_equal(containers_resolver_next_retry(r), t0 + 3 * SEC);
	/* an exec before that time reads nothing either */
	assert_string_equal(containers_resolve(r, PATH, t0 + 2 * SEC), PATH);
	assert_int_equal(st->metadata_missing, missing + 1);

	put("/var/lib/docker/containers/" ID "/config.v2.json",
	    "{\"Name\":\"/web\",\"Config\":{\"Image\":\"busybox\"}}");
	containers_resolver_retry(r, t0 + 3 * SEC);
	assert_int_equal(seen.renamed, 1);
	assert_string_equal(seen.from, PATH);
	assert_string_equal(seen.to, "/docker/web");
	assert_int_equal(st->unnamed, 0);
	assert_int_equal(st->named_late, 1);
	assert_int_equal(containers_resolver_next_retry(r), 0); /* no timer needed */
	assert_string_equal(containers_resolve(r, PATH, t0 + 4 * SEC), "/docker/web");
	containers_resolver_free(r);
}

static void test_given_up(void **state)
{
	struct containers_resolver *r;
	uint64_t now = 1000 * SEC;
	static const uint64_t waits[] = { 1, 2, 4, 8, 16, 32, 60, 60, 60, 60 };

	assert_int_equal(containers_resolver_new(dir, NULL, NULL, &r), 0);
	const struct containers_resolver_stats *st = containers_resolver_stats(r);
	containers_resolve(r, PATH, now);
	for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++) {
		assert_int_equal(containers_resolver_next_retry(r), now + waits[i] * SEC);
		now += waits[i] * SEC;
		containers_resolver_retry(r, now);
	}
	assert_int_equal(st->gave_up, 1);
	assert_int_equal(st->unnamed, 1); /* still withheld */
	assert_int_equal(containers_resolver_next_retry(r), 0); /* no timer for it any more */
	/* an exec a minute later still asks, and names it once the state is there */
	put("/var/lib/docker/containers/" ID "/config.v2.json", "{\"Name\":\"/db\",\"Config\":{}}");
	assert_string_equal(containers_resolve(r, PATH, now + SEC), PATH);
	assert_string_equal(containers_resolve(r, PATH, now + 61 * SEC), "/docker/db");
	assert_int_equal(st->gave_up, 1);
	assert_int_equal(st->unnamed, 0);
	containers_resolver_free(r);
}

static void test_ports_picked_at_start(void **state)
{
	struct containers_resolver *r;
	struct seen seen = { 0 };
	uint64_t t0 = 1000 * SEC;

	assert_int_equal(containers_resolver_new(dir, NULL, NULL, &r), 0);
	containers_resolver_on_ports(r, ports, &seen);
	/* created, not started: Docker has not picked the host port of "-p 80" yet */
	put("/var/lib/docker/containers/" ID "/config.v2.json",
	    "{\"Name\":\"/web\",\"Config\":{},\"NetworkSettings\":{\"Ports\":null}}");
	put("/var/lib/docker/containers/" ID "/hostconfig.json",
	    "{\"PortBindings\":{\"80/tcp\":[{\"HostIp\":\"\",\"HostPort\":\"\"}],"
	    "\"81/tcp\":[{\"HostIp\":\"127.0.0.1\",\"HostPort\":\"8081\"}]}}");
	assert_string_equal(containers_resolve(r, PATH, t0), "/docker/web");
	assert_int_equal(seen.ports, 1);
	assert_int_equal(seen.n_ports, 1);
	assert_int_equal(containers_resolver_next_retry(r), t0 + SEC);
	/* running: its own bindings */
	put("/var/lib/docker/containers/" ID "/config.v2.json",
	    "{\"Name\":\"/web\",\"Config\":{},\"NetworkSettings\":{\"Ports\":{"
	    "\"80/tcp\":[{\"HostIp\":\"0.0.0.0\",\"HostPort\":\"49153\"},{\"HostIp\":\"::\",\"HostPort\":\"49153\"}],"
	    "\"81/tcp\":[{\"HostIp\":\"127.0.0.1\",\"HostPort\":\"8081\"}]}}}");
	containers_resolver_retry(r, t0 + SEC);
	assert_int_equal(seen.ports, 2);
	assert_int_equal(seen.n_ports, 3);
	assert_int_equal(containers_resolver_next_retry(r), 0);
	assert_int_equal(containers_resolver_stats(r)->named_late, 0);

	/* removed before its port was picked: it keeps its name, and is not read again */
	put("/var/lib/docker/containers/" ID "/config.v2.json",
	    "{\"Name\":\"/web\",\"Config\":{},\"NetworkSettings\":{\"Ports\":null}}");
	containers_resolver_forget(r);
	assert_string_equal(containers_resolve(r, PATH, t0 + 2 * SEC), "/docker/web");
	assert_int_equal(containers_resolver_next_retry(r), t0 + 3 * SEC);
	char cmd[sizeof(dir) + 64];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/var/lib/docker/containers'", dir);
	assert_int_equal(system(cmd), 0);
	containers_resolver_retry(r, t0 + 3 * SEC);
	assert_string_equal(containers_resolve(r, PATH, t0 + 4 * SEC), "/docker/web");
	assert_int_equal(containers_resolver_stats(r)->unnamed, 0);
	assert_int_equal(containers_resolver_next_retry(r), 0);
	containers_resolver_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_unnamed_then_named, setup, teardown),
		cmocka_unit_test_setup_teardown(test_given_up, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ports_picked_at_start, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
