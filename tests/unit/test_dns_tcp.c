#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "l7/dns_tcp.h"

struct got {
	unsigned n;
	size_t len[8];
	uint8_t first[8];
	uint64_t ts[8];
};

static void on_msg(void *ctx, const uint8_t *msg, size_t len, uint64_t ts_ns)
{
	struct got *g = ctx;
	if (g->n < 8) {
		g->len[g->n] = len;
		g->first[g->n] = msg[0];
		g->ts[g->n] = ts_ns;
	}
	g->n++;
}

static struct dns_tcp_dir *dir(void)
{
	return calloc(1, sizeof(struct dns_tcp_dir));
}

/* Two messages, each with its length, in one write. */
static void test_whole_messages_in_one_chunk(void **state)
{
	(void)state;
	struct dns_tcp_dir *d = dir();
	struct got g = { 0 };
	const uint8_t b[] = { 0, 3, 'a', 'b', 'c', 0, 2, 'x', 'y' };
	assert_true(dns_tcp_feed(d, b, sizeof(b), sizeof(b), 7, on_msg, &g));
	assert_int_equal(g.n, 2);
	assert_int_equal(g.len[0], 3);
	assert_int_equal(g.first[0], 'a');
	assert_int_equal(g.len[1], 2);
	assert_int_equal(g.first[1], 'x');
	free(d);
}

/* A server that reads the length a byte at a time, then the message (dnsmasq): dated by its first byte. */
static void test_length_byte_by_byte(void **state)
{
	(void)state;
	struct dns_tcp_dir *d = dir();
	struct got g = { 0 };
	const uint8_t l0 = 0, l1 = 4, m[] = { 'q', 'r', 's', 't' };
	assert_true(dns_tcp_feed(d, &l0, 1, 1, 10, on_msg, &g));
	assert_true(dns_tcp_feed(d, &l1, 1, 1, 11, on_msg, &g));
	assert_int_equal(g.n, 0);
	assert_true(dns_tcp_feed(d, m, 2, 2, 12, on_msg, &g));
	assert_true(dns_tcp_feed(d, m + 2, 2, 2, 13, on_msg, &g));
	assert_int_equal(g.n, 1);
	assert_int_equal(g.len[0], 4);
	assert_int_equal(g.first[0], 'q');
	assert_int_equal(g.ts[0], 11);
	free(d);
}

/* The message's bytes not captured (a writev's second buffer): skipped and counted; the next one is read. */
static void test_message_not_captured(void **state)
{
	(void)state;
	struct dns_tcp_dir *d = dir();
	struct got g = { 0 };
	const uint8_t b[] = { 0, 3, 'a', 'b', 'c', 0, 1, 'z' };
	assert_true(dns_tcp_feed(d, b, 2, 5, 1, on_msg, &g));
	assert_int_equal(g.n, 0);
	assert_int_equal(d->truncated, 1);
	assert_true(dns_tcp_feed(d, b + 5, 3, 3, 2, on_msg, &g));
	assert_int_equal(g.n, 1);
	assert_int_equal(g.first[0], 'z');
	free(d);
}

/* A length among the bytes not captured: the framing is gone, nothing more comes out. */
static void test_length_not_captured(void **state)
{
	(void)state;
	struct dns_tcp_dir *d = dir();
	struct got g = { 0 };
	const uint8_t b[] = { 0, 1, 'a', 0, 1, 'b' };
	assert_false(dns_tcp_feed(d, b, 3, 6, 1, on_msg, &g));
	assert_int_equal(g.n, 1);
	assert_false(dns_tcp_feed(d, b, 3, 3, 2, on_msg, &g));
	assert_int_equal(g.n, 1);
	free(d);
}

/* Longer than the buffer: skipped whole, counted; captured > total is clamped. */
static void test_too_long_and_bad_sizes(void **state)
{
	(void)state;
	struct dns_tcp_dir *d = dir();
	struct got g = { 0 };
	uint8_t *big = calloc(1, DNS_TCP_MSG_MAX + 10);
	big[0] = (DNS_TCP_MSG_MAX + 1) >> 8;
	big[1] = (DNS_TCP_MSG_MAX + 1) & 0xff;
	assert_true(dns_tcp_feed(d, big, DNS_TCP_MSG_MAX + 3, DNS_TCP_MSG_MAX + 3, 1, on_msg, &g));
	assert_int_equal(g.n, 0);
	assert_int_equal(d->truncated, 1);
	const uint8_t b[] = { 0, 0, 0, 1, 'k' }; /* an empty message, then one byte */
	assert_true(dns_tcp_feed(d, b, 99, sizeof(b), 2, on_msg, &g));
	assert_int_equal(g.n, 1);
	assert_int_equal(g.first[0], 'k');
	free(big);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole_messages_in_one_chunk),
		cmocka_unit_test(test_length_byte_by_byte),
		cmocka_unit_test(test_message_not_captured),
		cmocka_unit_test(test_length_not_captured),
		cmocka_unit_test(test_too_long_and_bad_sizes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
