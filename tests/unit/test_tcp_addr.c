#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "tcp/addr.h"
#include "tcp/listen_addrs.h"
#include <arpa/inet.h>
#include <stdlib.h>

/* addr[16] from text, in network byte order (IPv4 in the first 4 bytes). */
static void addr_of(uint16_t family, const char *text, uint8_t addr[16])
{
	memset(addr, 0xee, 16); /* the unused 12 bytes of IPv4 must not matter */
	assert_int_equal(inet_pton(family, text, addr), 1);
}

static void assert_addr(uint16_t family, const char *text, uint16_t port, const char *want)
{
	uint8_t a[16];
	char out[TCP_ADDR_STRLEN];

	addr_of(family, text, a);
	memset(out, 'X', sizeof(out));
	tcp_addr_format(family, a, port, out, sizeof(out));
	assert_string_equal(out, want);
}

static void assert_ip(uint16_t family, const char *text, const char *want)
{
	uint8_t a[16];
	char out[TCP_ADDR_STRLEN];

	addr_of(family, text, a);
	memset(out, 'X', sizeof(out));
	tcp_ip_format(family, a, out, sizeof(out));
	assert_string_equal(out, want);
}

static void test_ipv4(void **state)
{
	assert_addr(AF_INET, "1.2.3.4", 80, "1.2.3.4:80");
	assert_addr(AF_INET, "127.0.0.1", 9645, "127.0.0.1:9645");
	assert_addr(AF_INET, "0.0.0.0", 0, "0.0.0.0:0");
	assert_addr(AF_INET, "255.255.255.255", 65535, "255.255.255.255:65535");
	assert_addr(AF_INET, "10.0.0.1", 1, "10.0.0.1:1");
	assert_ip(AF_INET, "1.2.3.4", "1.2.3.4");
	assert_ip(AF_INET, "255.255.255.255", "255.255.255.255");

	/* the byte order is network order: first byte printed first */
	uint8_t a[16] = { 192, 168, 1, 2 };
	char out[TCP_ADDR_STRLEN];
	tcp_addr_format(AF_INET, a, 443, out, sizeof(out));
	assert_string_equal(out, "192.168.1.2:443");
}

static void test_ipv6(void **state)
{
	assert_addr(AF_INET6, "::1", 443, "[::1]:443");
	assert_addr(AF_INET6, "::", 0, "[::]:0");
	assert_addr(AF_INET6, "fe80::1:2", 9645, "[fe80::1:2]:9645");
	assert_addr(AF_INET6, "2001:db8::ff00:42:8329", 65535, "[2001:db8::ff00:42:8329]:65535");
	assert_ip(AF_INET6, "::1", "::1");
	assert_ip(AF_INET6, "2001:db8::1", "2001:db8::1");
	/* ::ffff:0:0/96's neighbours are not v4-mapped */
	assert_addr(AF_INET6, "::fffe:a00:1", 80, "[::fffe:a00:1]:80");
	assert_addr(AF_INET6, "1::ffff:a00:1", 80, "[1::ffff:a00:1]:80");
	assert_addr(AF_INET6, "0:0:0:0:1:ffff:a00:1", 80, "[::1:ffff:a00:1]:80");
}

static void test_ipv6_full_length(void **state)
{
	const char *want = "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535";
	uint8_t a[16];
	char out[TCP_ADDR_STRLEN];

	memset(a, 0xff, sizeof(a));
	assert_true(strlen(want) < TCP_ADDR_STRLEN);
	tcp_addr_format(AF_INET6, a, 65535, out, sizeof(out));
	assert_string_equal(out, want);
	tcp_ip_format(AF_INET6, a, out, sizeof(out));
	assert_string_equal(out, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");

	/* no "::" shortening possible: every group printed */
	assert_addr(AF_INET6, "1234:5678:9abc:def0:1234:5678:9abc:def0", 65535,
		    "[1234:5678:9abc:def0:1234:5678:9abc:def0]:65535");

	/* the longest text inet_ntop can give (an embedded IPv4 form) fits too */
	uint8_t b[16] = { 0 };
	b[10] = b[11] = 0xff;
	b[12] = b[13] = b[14] = b[15] = 255;
	tcp_addr_format(AF_INET6, b, 65535, out, sizeof(out));
	assert_string_equal(out, "255.255.255.255:65535");
	memset(b, 0, 12);
	b[12] = b[13] = b[14] = b[15] = 255; /* ::255.255.255.255 (v4-compatible) */
	tcp_addr_format(AF_INET6, b, 65535, out, sizeof(out));
	assert_true(strlen(out) < TCP_ADDR_STRLEN);
	assert_int_equal(out[0], '[');
	assert_non_null(strstr(out, "]:65535"));
}

static void test_v4_mapped(void **state)
{
	assert_addr(AF_INET6, "::ffff:10.0.0.1", 8080, "10.0.0.1:8080");
	assert_addr(AF_INET6, "::ffff:127.0.0.1", 0, "127.0.0.1:0");
	assert_addr(AF_INET6, "::ffff:255.255.255.255", 65535, "255.255.255.255:65535");
	assert_ip(AF_INET6, "::ffff:10.0.0.1", "10.0.0.1");
	assert_ip(AF_INET6, "::ffff:0.0.0.0", "0.0.0.0");

	/* the same peer over IPv4 and v4-mapped IPv6 has one name */
	uint8_t v4[16], v6[16];
	char s4[TCP_ADDR_STRLEN], s6[TCP_ADDR_STRLEN];
	addr_of(AF_INET, "10.0.0.1", v4);
	addr_of(AF_INET6, "::ffff:10.0.0.1", v6);
	tcp_addr_format(AF_INET, v4, 5432, s4, sizeof(s4));
	tcp_addr_format(AF_INET6, v6, 5432, s6, sizeof(s6));
	assert_string_equal(s4, s6);
	tcp_ip_format(AF_INET, v4, s4, sizeof(s4));
	tcp_ip_format(AF_INET6, v6, s6, sizeof(s6));
	assert_string_equal(s4, s6);

	/* an AF_INET address whose first bytes look like the prefix is still IPv4 */
	uint8_t z[16] = { 0 };
	z[10] = z[11] = 0xff;
	tcp_addr_format(AF_INET, z, 1, s4, sizeof(s4));
	assert_string_equal(s4, "0.0.0.0:1");
}

static void test_ports(void **state)
{
	assert_addr(AF_INET, "1.1.1.1", 0, "1.1.1.1:0");
	assert_addr(AF_INET, "1.1.1.1", 65535, "1.1.1.1:65535");
	assert_addr(AF_INET6, "::1", 0, "[::1]:0");
	assert_addr(AF_INET6, "::1", 65535, "[::1]:65535");
	assert_addr(AF_INET6, "::ffff:1.1.1.1", 65535, "1.1.1.1:65535");
	/* the port is a host-order number, printed in decimal */
	assert_addr(AF_INET, "1.1.1.1", 0x1f90, "1.1.1.1:8080");
	assert_addr(AF_INET, "1.1.1.1", 256, "1.1.1.1:256");
}

/* Every out length from 0 up: NUL-terminated, a prefix of the full text, no overrun. */
static void check_truncation(const char *full, void (*fmt)(char *out, size_t len, void *ctx),
			     void *ctx)
{
	size_t n = strlen(full);

	for (size_t len = 0; len <= n + 2; len++) {
		char buf[TCP_ADDR_STRLEN + 16];
		memset(buf, 'Z', sizeof(buf));
		if (len == 0) {
			fmt(buf, 0, ctx);
			for (size_t i = 0; i < sizeof(buf); i++)
				assert_int_equal(buf[i], 'Z');
			continue;
		}
		fmt(buf, len, ctx);
		size_t got = strnlen(buf, len);
		assert_true(got < len); /* NUL inside the buffer */
		assert_int_equal(got, len - 1 < n ? len - 1 : n);
		assert_memory_equal(buf, full, got);
		for (size_t i = len; i < sizeof(buf); i++)
			assert_int_equal(buf[i], 'Z');
	}
}

struct fmt_ctx {
	uint16_t family;
	uint8_t addr[16];
	uint16_t port;
};

static void fmt_addr(char *out, size_t len, void *ctx)
{
	struct fmt_ctx *c = ctx;
	tcp_addr_format(c->family, c->addr, c->port, out, len);
}

static void fmt_ip(char *out, size_t len, void *ctx)
{
	struct fmt_ctx *c = ctx;
	tcp_ip_format(c->family, c->addr, out, len);
}

static void test_truncation(void **state)
{
	struct fmt_ctx c = { .family = AF_INET6, .port = 65535 };

	memset(c.addr, 0xff, sizeof(c.addr));
	check_truncation("[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535", fmt_addr, &c);
	check_truncation("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", fmt_ip, &c);

	c.family = AF_INET;
	addr_of(AF_INET, "192.168.100.200", c.addr);
	c.port = 443;
	check_truncation("192.168.100.200:443", fmt_addr, &c);
	check_truncation("192.168.100.200", fmt_ip, &c);

	c.family = AF_INET6;
	addr_of(AF_INET6, "::ffff:10.0.0.1", c.addr);
	c.port = 8080;
	check_truncation("10.0.0.1:8080", fmt_addr, &c);
	check_truncation("10.0.0.1", fmt_ip, &c);

	/* a one-byte buffer gets just the NUL */
	char one[2] = { 'A', 'B' };
	tcp_addr_format(AF_INET6, c.addr, 1, one, 1);
	assert_int_equal(one[0], '\0');
	assert_int_equal(one[1], 'B');
}

static void test_unknown_family(void **state)
{
	/* anything that is not AF_INET6 prints as IPv4: never garbage, never a crash */
	uint8_t a[16] = { 1, 2, 3, 4 };
	char out[TCP_ADDR_STRLEN];

	tcp_addr_format(0, a, 7, out, sizeof(out));
	assert_string_equal(out, "1.2.3.4:7");
	tcp_ip_format(AF_UNIX, a, out, sizeof(out));
	assert_string_equal(out, "1.2.3.4");
}

static void test_loopback_and_link_local(void **state)
{
	uint8_t a[16] = { 127, 0, 0, 5 };
	assert_true(tcp_addr_loopback(AF_INET, a));
	assert_false(tcp_addr_link_local(AF_INET, a));
	uint8_t b[16] = { 169, 254, 1, 2 };
	assert_true(tcp_addr_link_local(AF_INET, b));
	assert_false(tcp_addr_loopback(AF_INET, b));
	uint8_t c[16] = { 10, 0, 0, 1 };
	assert_false(tcp_addr_loopback(AF_INET, c) || tcp_addr_link_local(AF_INET, c));
	uint8_t one[16] = { [15] = 1 };
	assert_true(tcp_addr_loopback(AF_INET6, one));
	uint8_t fe80[16] = { 0xfe, 0x80, [15] = 9 }, febf[16] = { 0xfe, 0xbf }, fec0[16] = { 0xfe, 0xc0 };
	assert_true(tcp_addr_link_local(AF_INET6, fe80) && tcp_addr_link_local(AF_INET6, febf));
	assert_false(tcp_addr_link_local(AF_INET6, fec0));
	uint8_t mapped[16] = { [10] = 0xff, [11] = 0xff, [12] = 127, [15] = 1 };
	assert_true(tcp_addr_loopback(AF_INET6, mapped));
	mapped[12] = 169, mapped[13] = 254;
	assert_true(tcp_addr_link_local(AF_INET6, mapped));
}

static void test_external(void **state)
{
	static const struct {
		uint8_t v4[4];
		bool external;
	} cases[] = {
		{ { 127, 0, 0, 1 }, false },	 { { 10, 1, 2, 3 }, false },	 { { 172, 16, 0, 1 }, false },
		{ { 172, 31, 255, 255 }, false }, { { 192, 168, 1, 1 }, false }, { { 100, 64, 0, 1 }, false },
		{ { 100, 127, 255, 255 }, false }, { { 8, 8, 8, 8 }, true },	 { { 172, 15, 0, 1 }, true },
		{ { 172, 32, 0, 1 }, true },	 { { 192, 169, 0, 1 }, true },	 { { 100, 63, 0, 1 }, true },
		{ { 100, 128, 0, 1 }, true },	 { { 198, 51, 100, 9 }, true },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t a[16] = { 0 }, m[16] = { [10] = 0xff, [11] = 0xff };
		memcpy(a, cases[i].v4, 4);
		memcpy(m + 12, cases[i].v4, 4); /* the same address IPv4-mapped */
		assert_int_equal(tcp_addr_external(AF_INET, a), cases[i].external);
		assert_int_equal(tcp_addr_external(AF_INET6, m), cases[i].external);
	}
	uint8_t one[16] = { [15] = 1 }, ula[16] = { 0xfd, 0x12 }, fc[16] = { 0xfc }, global[16] = { 0x20, 0x01, 0x0d, 0xb8 };
	assert_false(tcp_addr_external(AF_INET6, one));
	assert_false(tcp_addr_external(AF_INET6, ula) || tcp_addr_external(AF_INET6, fc));
	assert_true(tcp_addr_external(AF_INET6, global));
}

static void test_port_ephemeral(void **state)
{
	const struct ns_port_ranges one = { 1, { { 32768, 60999 } } };
	const struct ns_port_ranges two = { 2, { { 1024, 23768 }, { 30000, 65535 } } };
	const struct ns_port_ranges none = { 0 };

	assert_true(tcp_port_ephemeral(32768, &one));
	assert_true(tcp_port_ephemeral(60999, &one));
	assert_false(tcp_port_ephemeral(32767, &one));
	assert_false(tcp_port_ephemeral(61000, &one));
	assert_false(tcp_port_ephemeral(50051, &one)); /* gRPC's port stays */
	assert_false(tcp_port_ephemeral(40000, &none));
	assert_false(tcp_port_ephemeral(40000, NULL));
	/* several ranges: either one, and the gap between them is not */
	assert_true(tcp_port_ephemeral(1024, &two));
	assert_true(tcp_port_ephemeral(23768, &two));
	assert_false(tcp_port_ephemeral(23769, &two));
	assert_false(tcp_port_ephemeral(29999, &two));
	assert_true(tcp_port_ephemeral(30000, &two));
	assert_true(tcp_port_ephemeral(65535, &two));
	assert_false(tcp_port_ephemeral(80, &two));
}

static void add_addr(struct tcp_ns_addrs *ns, int ifindex, uint16_t family, const char *text)
{
	struct tcp_ns_addr *a = &ns->addrs[ns->n_addrs++];
	memset(a, 0, sizeof(*a));
	a->ifindex = ifindex;
	a->family = family;
	assert_int_equal(inet_pton(family, text, a->ip), 1);
}

/* The expansion of a wildcard listen: which addresses of a namespace stand for it. */
static void test_listen_expand(void **state)
{
	struct tcp_ns_addrs ns = { .down = { 3 }, .n_down = 1 };
	add_addr(&ns, 1, AF_INET, "127.0.0.1");
	add_addr(&ns, 2, AF_INET, "10.0.0.5");
	add_addr(&ns, 2, AF_INET, "169.254.1.1"); /* link-local */
	add_addr(&ns, 2, AF_INET6, "fd00::5");
	add_addr(&ns, 2, AF_INET6, "fe80::1");	 /* link-local */
	add_addr(&ns, 3, AF_INET, "10.9.9.9");	 /* its interface is down */
	add_addr(&ns, 1, AF_INET6, "::1");

	char *v4 = tcp_listen_expand(&ns, AF_INET, 80, false);
	assert_non_null(v4);
	assert_string_equal(v4, "10.0.0.5:80");
	assert_string_equal(v4 + strlen(v4) + 1, "");
	free(v4);

	char *v6 = tcp_listen_expand(&ns, AF_INET6, 443, true); /* the host's namespace */
	const char *want[] = { "127.0.0.1:443", "10.0.0.5:443", "[fd00::5]:443", "[::1]:443", "" };
	const char *p = v6;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++, p += strlen(p) + 1)
		assert_string_equal(p, want[i]);
	free(v6);

	struct tcp_ns_addrs only_lo = { 0 };
	add_addr(&only_lo, 1, AF_INET, "127.0.0.1");
	assert_null(tcp_listen_expand(&only_lo, AF_INET, 80, false)); /* the caller keeps 0.0.0.0 */

	uint8_t any[16] = { 0 };
	assert_true(tcp_addr_unspecified(AF_INET, any));
	assert_true(tcp_addr_unspecified(AF_INET6, any));
	any[15] = 1;
	assert_true(tcp_addr_unspecified(AF_INET, any)); /* only the first 4 bytes are IPv4's */
	assert_false(tcp_addr_unspecified(AF_INET6, any));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_port_ephemeral),
		cmocka_unit_test(test_listen_expand),
		cmocka_unit_test(test_loopback_and_link_local),
		cmocka_unit_test(test_external),
		cmocka_unit_test(test_ipv4),
		cmocka_unit_test(test_ipv6),
		cmocka_unit_test(test_ipv6_full_length),
		cmocka_unit_test(test_v4_mapped),
		cmocka_unit_test(test_ports),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_unknown_family),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
