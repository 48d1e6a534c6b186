#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <string.h>

#include "tcp/diag.h"

struct seen {
	int n;
	struct tcp_tuple t;
	uint64_t acked, received;
};

static void on_socket(void *ctx, const struct tcp_tuple *t, uint64_t acked, uint64_t received)
{
	struct seen *s = ctx;
	s->n++;
	s->t = *t;
	s->acked = acked;
	s->received = received;
}

/* One SOCK_DIAG_BY_FAMILY message for 10.0.0.1:40000 -> 10.0.0.2:5432, with tcp_info. */
static size_t one_socket(char *buf, size_t info_len)
{
	struct nlmsghdr *h = (void *)buf;
	struct inet_diag_msg *m = NLMSG_DATA(h);
	struct nlattr *a = (void *)((char *)m + NLMSG_ALIGN(sizeof(*m)));
	/* 4-byte aligned, as netlink attributes are: written as bytes, as the parser reads them */
	char *ti = (char *)a + sizeof(*a);
	uint64_t acked = 1234567, received = 7654321;

	memset(buf, 0, 4096);
	m->idiag_family = AF_INET;
	m->id.idiag_sport = htons(40000);
	m->id.idiag_dport = htons(5432);
	m->id.idiag_src[0] = htonl(0x0a000001);
	m->id.idiag_dst[0] = htonl(0x0a000002);
	a->nla_type = INET_DIAG_INFO;
	a->nla_len = sizeof(*a) + info_len;
	memcpy(ti + offsetof(struct tcp_info, tcpi_bytes_acked), &acked, sizeof(acked));
	memcpy(ti + offsetof(struct tcp_info, tcpi_bytes_received), &received, sizeof(received));
	h->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	h->nlmsg_len = NLMSG_LENGTH(NLMSG_ALIGN(sizeof(*m)) + NLA_ALIGN(a->nla_len));
	return h->nlmsg_len;
}

static void test_parse_socket_and_done(void **state)
{
	char buf[4096] __attribute__((aligned(8)));
	struct seen s = { 0 };
	size_t n = one_socket(buf, sizeof(struct tcp_info));

	assert_int_equal(tcp_diag_parse(buf, n, on_socket, &s), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.t.family, AF_INET);
	assert_int_equal(s.t.sport, 40000);
	assert_int_equal(s.t.dport, 5432);
	assert_memory_equal(s.t.daddr, "\x0a\x00\x00\x02", 4);
	assert_int_equal(s.t.daddr[4], 0);
	assert_int_equal(s.acked, 1234567);
	assert_int_equal(s.received, 7654321);

	struct nlmsghdr done = { .nlmsg_len = NLMSG_LENGTH(4), .nlmsg_type = NLMSG_DONE };
	char d[32] = { 0 };
	memcpy(d, &done, sizeof(done));
	assert_int_equal(tcp_diag_parse(d, done.nlmsg_len, on_socket, &s), 1);
}

static void test_parse_rejects_malformed(void **state)
{
	char buf[4096] __attribute__((aligned(8)));
	struct seen s = { 0 };
	size_t n = one_socket(buf, sizeof(struct tcp_info));

	/* cut inside the message, a header claiming more than there is, a short tcp_info */
	assert_int_equal(tcp_diag_parse(buf, n - 8, on_socket, &s), -EINVAL);
	((struct nlmsghdr *)buf)->nlmsg_len = 8;
	assert_int_equal(tcp_diag_parse(buf, n, on_socket, &s), -EINVAL);
	n = one_socket(buf, offsetof(struct tcp_info, tcpi_bytes_acked));
	assert_int_equal(tcp_diag_parse(buf, n, on_socket, &s), -EINVAL);
	assert_int_equal(s.n, 0);
}

static void test_parse_kernel_error(void **state)
{
	char buf[64] __attribute__((aligned(8))) = { 0 };
	struct nlmsghdr *h = (void *)buf;
	struct nlmsgerr *e = NLMSG_DATA(h);

	h->nlmsg_type = NLMSG_ERROR;
	h->nlmsg_len = NLMSG_LENGTH(sizeof(*e));
	e->error = -EPERM;
	assert_int_equal(tcp_diag_parse(buf, h->nlmsg_len, on_socket, NULL), -EPERM);
}

static void test_request(void **state)
{
	char buf[128];
	assert_int_equal(tcp_diag_build_request(AF_INET6, 7, buf, 8), 0);
	size_t n = tcp_diag_build_request(AF_INET6, 7, buf, sizeof(buf));
	const struct nlmsghdr *h = (const void *)buf;
	const struct inet_diag_req_v2 *r = NLMSG_DATA(h);
	assert_int_equal(n, h->nlmsg_len);
	assert_int_equal(h->nlmsg_type, SOCK_DIAG_BY_FAMILY);
	assert_int_equal(r->sdiag_family, AF_INET6);
	assert_int_equal(r->idiag_ext, 1u << (INET_DIAG_INFO - 1));
	assert_int_equal(r->idiag_states, 1u << 1); /* established only: no FIN in the counters */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_socket_and_done),
		cmocka_unit_test(test_parse_rejects_malformed),
		cmocka_unit_test(test_parse_kernel_error),
		cmocka_unit_test(test_request),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
