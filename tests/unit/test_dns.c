/* src/l7/dns.c: DNS messages, Coroot's type and status names, and its domain normalisation. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "l7/dns.h"

struct buf {
	uint8_t b[1024];
	size_t n;
};

static void put(struct buf *m, const void *p, size_t n)
{
	memcpy(m->b + m->n, p, n);
	m->n += n;
}

static void put16(struct buf *m, uint16_t v)
{
	uint8_t b[2] = { v >> 8, v & 0xff };
	put(m, b, 2);
}

static void put_name(struct buf *m, const char *name)
{
	while (*name) {
		const char *dot = strchr(name, '.');
		size_t l = dot ? (size_t)(dot - name) : strlen(name);
		uint8_t len = (uint8_t)l;
		put(m, &len, 1);
		put(m, name, l);
		name += l + (dot ? 1 : 0);
	}
	put(m, "", 1);
}

/* A header, then the question (name, type, class IN). */
static void message(struct buf *m, uint16_t id, uint16_t flags, uint16_t qd, uint16_t an,
		    const char *name, uint16_t type)
{
	m->n = 0;
	put16(m, id);
	put16(m, flags);
	put16(m, qd);
	put16(m, an);
	put16(m, 0);
	put16(m, 0);
	put_name(m, name);
	put16(m, type);
	put16(m, 1);
}

/* An answer whose name points at the question's (offset 12). */
static void answer(struct buf *m, uint16_t type, const void *rdata, uint16_t len)
{
	put16(m, 0xc00c);
	put16(m, type);
	put16(m, 1);
	put16(m, 0);
	put16(m, 60);
	put16(m, len);
	put(m, rdata, len);
}

static void test_question(void **state)
{
	struct buf m;
	struct dns_msg d;
	message(&m, 0x1234, 0x0100, 1, 0, "api.example.com", 1);
	assert_int_equal(dns_parse(m.b, m.n, &d), 0);
	assert_int_equal(d.id, 0x1234);
	assert_false(d.response);
	assert_int_equal(d.qtype, 1);
	assert_string_equal(d.name, "api.example.com");
	assert_int_equal(d.n_addrs, 0);
}

static void test_answer_with_addresses_through_pointers(void **state)
{
	struct buf m;
	struct dns_msg d;
	static const uint8_t a[4] = { 10, 1, 2, 3 }, aaaa[16] = { 0xfd, 0, [15] = 1 };
	static const char cname[] = { 3, 'w', 'w', 'w', (char)0xc0, 12 };
	message(&m, 7, 0x8180, 1, 3, "example.com", 1);
	answer(&m, 5, cname, sizeof(cname)); /* a CNAME: passed over */
	answer(&m, 1, a, 4);
	answer(&m, 28, aaaa, 16);
	assert_int_equal(dns_parse(m.b, m.n, &d), 0);
	assert_true(d.response);
	assert_int_equal(d.rcode, 0);
	assert_int_equal(d.n_addrs, 2);
	assert_int_equal(d.addrs[0].family, AF_INET);
	assert_memory_equal(d.addrs[0].addr, a, 4);
	assert_int_equal(d.addrs[1].family, AF_INET6);
	assert_memory_equal(d.addrs[1].addr, aaaa, 16);
	/* Cut inside the last answer: the ones before it stay. */
	assert_int_equal(dns_parse(m.b, m.n - 3, &d), 0);
	assert_int_equal(d.n_addrs, 1);
}

static void test_rejected(void **state)
{
	struct buf m;
	struct dns_msg d;
	message(&m, 1, 0x0100, 2, 0, "a.b", 1); /* two questions */
	assert_int_equal(dns_parse(m.b, m.n, &d), -EINVAL);
	message(&m, 1, 0x2800, 1, 0, "a.b", 1); /* opcode 5: an update */
	assert_int_equal(dns_parse(m.b, m.n, &d), -EINVAL);
	message(&m, 1, 0x0100, 1, 0, "a.b", 1);
	assert_int_equal(dns_parse(m.b, 11, &d), -EINVAL); /* no header */
	assert_int_equal(dns_parse(m.b, m.n - 3, &d), -EINVAL); /* question cut */
	assert_int_equal(dns_parse(NULL, 0, &d), -EINVAL);
	/* A name that points at itself. */
	m.n = 12;
	memcpy(m.b + 4, "\0\1", 2);
	put16(&m, 0xc00c);
	put16(&m, 1);
	put16(&m, 1);
	assert_int_equal(dns_parse(m.b, m.n, &d), -EINVAL);
	/* A label past the end. */
	m.n = 12;
	put(&m, "\077abc", 4);
	assert_int_equal(dns_parse(m.b, m.n, &d), -EINVAL);
}

static void test_names(void **state)
{
	char buf[8];
	assert_string_equal(dns_type_name(1, buf, sizeof(buf)), "TypeA");
	assert_string_equal(dns_type_name(28, buf, sizeof(buf)), "TypeAAAA");
	assert_string_equal(dns_type_name(12, buf, sizeof(buf)), "TypePTR");
	assert_string_equal(dns_type_name(65, buf, sizeof(buf)), "65");
	assert_string_equal(dns_status_name(0), "ok");
	assert_string_equal(dns_status_name(2), "servfail");
	assert_string_equal(dns_status_name(3), "nxdomain");
	assert_string_equal(dns_status_name(5), "refused");
	assert_null(dns_status_name(9));
}

static void test_normalize(void **state)
{
	static const struct {
		const char *in;
		uint16_t type;
		const char *out;
	} cases[] = {
		{ "3.2.1.10.in-addr.arpa", 12, "IP.in-addr.arpa" },
		{ "ip-10-1-2-3.ec2.internal", 1, "IP.ec2.internal" },
		{ "ip-10-1-2-3.eu-west-1.compute.internal", 1, "ip-10-1-2-3.eu-west-1.compute.internal" },
		{ "api.example.com.default.svc.cluster.local", 1, "api.example.com.search_path_suffix" },
		{ "s3.amazonaws.com", 1, "s3.amazonaws.com" },
		{ "com.example", 1, "com.example" },
		{ "svc.io.local", 28, "svc.io.search_path_suffix" },
		{ "", 1, "" },
	};
	char out[DNS_NAME_LEN];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		dns_normalize_fqdn(cases[i].in, cases[i].type, out, sizeof(out));
		assert_string_equal(out, cases[i].out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_question),
		cmocka_unit_test(test_answer_with_addresses_through_pointers),
		cmocka_unit_test(test_rejected),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_normalize),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
