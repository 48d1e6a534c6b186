#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>

#include "tcp/public_net.h"

/* An address as the tracker holds it: family and 16 bytes (IPv4 in the first 4). */
struct addr {
	uint16_t family;
	uint8_t a[16];
};

static struct addr A(const char *text)
{
	struct addr r = { strchr(text, ':') ? AF_INET6 : AF_INET };
	assert_int_equal(inet_pton(r.family, text, r.a), 1);
	return r;
}

static struct ns_cidrs nets(const char *list)
{
	struct ns_cidrs l = { 0 };
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, " ");
		assert_int_equal(cli_parse_cidr(p, n, &l.v[l.n++]), 0);
		p += n + (p[n] == ' ');
	}
	return l;
}

static bool skipped(struct tcp_public_net *f, const char *dst, const char *actual)
{
	struct addr d = A(dst), a = A(actual);
	return tcp_public_net_skip(f, d.family, d.a, a.family, a.a);
}

/* Coroot's default 0.0.0.0/0: every IPv4 destination kept, public IPv6 ones not. */
static void test_default(void **state)
{
	struct ns_cidrs given = nets("0.0.0.0/0");
	struct tcp_public_net f;

	assert_int_equal(tcp_public_net_init(&f, &given), 0);
	assert_false(skipped(&f, "8.8.8.8", "8.8.8.8"));
	assert_false(skipped(&f, "203.0.113.7", "203.0.113.7"));
	assert_false(skipped(&f, "10.1.2.3", "10.1.2.3"));
	assert_false(skipped(&f, "::1", "::1"));
	assert_false(skipped(&f, "fd00::4", "fd00::4"));	/* private IPv6 */
	assert_true(skipped(&f, "2001:db8::1", "2001:db8::1")); /* public IPv6 */
	assert_true(skipped(&f, "2606:4700::1111", "2606:4700::1111"));
	assert_false(skipped(&f, "::ffff:8.8.8.8", "::ffff:8.8.8.8")); /* IPv4-mapped: IPv4 */
	assert_true(skipped(&f, "169.254.169.254", "169.254.169.254")); /* link-local: never */
	assert_true(skipped(&f, "fe80::1", "fe80::1"));
	tcp_public_net_destroy(&f);
}

static void test_given_networks(void **state)
{
	struct ns_cidrs given = nets("198.51.100.0/24 2001:db8::/32");
	struct tcp_public_net f;

	assert_int_equal(tcp_public_net_init(&f, &given), 0);
	assert_false(skipped(&f, "198.51.100.9", "198.51.100.9"));
	assert_true(skipped(&f, "198.51.101.9", "198.51.101.9"));
	assert_true(skipped(&f, "203.0.113.7", "203.0.113.7"));
	assert_false(skipped(&f, "2001:db8::1", "2001:db8::1"));
	/* private networks stay whatever is given: RFC 1918, 100.64.0.0/10, loopback */
	assert_false(skipped(&f, "172.16.0.1", "172.16.0.1"));
	assert_false(skipped(&f, "192.168.1.1", "192.168.1.1"));
	assert_false(skipped(&f, "100.64.0.1", "100.64.0.1"));
	assert_false(skipped(&f, "127.0.0.1", "127.0.0.1"));
	assert_true(skipped(&f, "100.128.0.1", "100.128.0.1")); /* past 100.64.0.0/10 */
	/* NAT to a private address keeps the destination, and from then on */
	assert_false(skipped(&f, "203.0.113.8", "10.0.0.8"));
	assert_false(skipped(&f, "203.0.113.8", "203.0.113.8"));
	/* NAT to a kept public network too */
	assert_false(skipped(&f, "203.0.113.9", "198.51.100.1"));
	assert_true(skipped(&f, "203.0.113.10", "8.8.8.8"));
	/* the node's own public networks are kept */
	struct ns_cidrs node = nets("192.0.2.0/24");
	tcp_public_net_add_node(&f, &node.v[0]);
	assert_false(skipped(&f, "192.0.2.77", "192.0.2.77"));
	tcp_public_net_destroy(&f);
}

/* Coroot's "" (no network given): only private, loopback and the node's own are kept. */
static void test_none(void **state)
{
	struct ns_cidrs given = { 0 };
	struct tcp_public_net f;

	assert_int_equal(tcp_public_net_init(&f, &given), 0);
	assert_true(skipped(&f, "8.8.8.8", "8.8.8.8"));
	assert_false(skipped(&f, "10.0.0.1", "10.0.0.1"));
	tcp_public_net_destroy(&f);
}

static void test_contain(void **state)
{
	struct ns_cidrs l = nets("10.0.0.0/8 203.0.113.128/25 ::/0");
	struct addr a;

	a = A("10.255.0.1");
	assert_true(ns_cidrs_contain(&l, a.family, a.a));
	a = A("203.0.113.128");
	assert_true(ns_cidrs_contain(&l, a.family, a.a));
	a = A("203.0.113.127");
	assert_false(ns_cidrs_contain(&l, a.family, a.a));
	a = A("2001:db8::1");
	assert_true(ns_cidrs_contain(&l, a.family, a.a));
	assert_false(ns_cidrs_contain(NULL, a.family, a.a));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default),
		cmocka_unit_test(test_given_networks),
		cmocka_unit_test(test_none),
		cmocka_unit_test(test_contain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
