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

static struct dns_tcp *conn(void)
{
	struct dns_tcp *d = calloc(1, sizeof(*d));
	dns_tcp_init(d);
	return d;
}

/* Two messages, each with its length, in one write. */
static void test_whole_messages_in_one_chunk(void **state)
{
	(void)state;
	struct dns_tcp *d = conn();
	struct l7_counters cnt = { 0 };
	struct got g = { 0 };
	const uint8_t b[] = { 0, 3, 'a', 'b', 'c', 0, 2, 'x', 'y' };
	dns_tcp_feed(d, true, b, sizeof(b), sizeof(b), 7, &cnt, on_msg, &g);
	assert_int_equal(g.n, 2);
	assert_int_equal(g.len[0], 3);
	assert_int_equal(g.first[0], 'a');
	assert_int_equal(g.len[1], 2);
	assert_int_equal(g.first[1], 'x');
	assert_int_equal(g.ts[1], 7);
	free(d);
}

/* A server that reads the length a byte at a time, then the message (dnsmasq): dated by its first byte. */
static void test_length_byte_by_byte(void **state)
{
	(void)state;
	struct dns_tcp *d = conn();
	struct l7_counters cnt = { 0 };
	struct got g = { 0 };
	const uint8_t l0 = 0, l1 = 4, m[] = { 'q', 'r', 's', 't' };
	dns_tcp_feed(d, true, &l0, 1, 1, 10, &cnt, on_msg, &g);
	dns_tcp_feed(d, true, &l1, 1, 1, 11, &cnt, on_msg, &g);
	assert_int_equal(g.n, 0);
	dns_tcp_feed(d, true, m, 2, 2, 12, &cnt, on_msg, &g);
	dns_tcp_feed(d, true, m + 2, 2, 2, 13, &cnt, on_msg, &g);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.len[0], 4);
	assert_int_equal(g.first[0], 'q');
	assert_int_equal(g.ts[0], 10);
	/* the other direction is framed apart */
	const uint8_t a[] = { 0, 1, 'z' };
	dns_tcp_feed(d, false, a, 3, 3, 14, &cnt, on_msg, &g);
	assert_int_equal(g.n, 2);
	assert_int_equal(g.first[1], 'z');
	free(d);
}

/* The message's bytes not captured (a writev's second buffer): skipped and counted; the next one is read. */
static void test_message_not_captured(void **state)
{
	(void)state;
	struct dns_tcp *d = conn();
	struct l7_counters cnt = { 0 };
	struct got g = { 0 };
	const uint8_t b[] = { 0, 3, 'a', 'b', 'c', 0, 1, 'z' };
	dns_tcp_feed(d, true, b, 2, 5, 1, &cnt, on_msg, &g);
	assert_int_equal(g.n, 0);
	assert_int_equal(cnt.truncated, 1);
	dns_tcp_feed(d, true, b + 5, 3, 3, 2, &cnt, on_msg, &g);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.first[0], 'z');
	free(d);
}

/* A length among the bytes not captured: framing lost until a chunk that is one whole message. */
static void test_length_not_captured(void **state)
{
	(void)state;
	struct dns_tcp *d = conn();
	struct l7_counters cnt = { 0 };
	struct got g = { 0 };
	const uint8_t b[] = { 0, 1, 'a', 0, 1, 'b' };
	dns_tcp_feed(d, true, b, 3, 6, 1, &cnt, on_msg, &g);
	assert_int_equal(g.n, 1);
	assert_int_equal(cnt.lost, 1);
	dns_tcp_feed(d, true, b + 1, 2, 2, 2, &cnt, on_msg, &g); /* no length of its own: still lost */
	assert_int_equal(g.n, 1);
	dns_tcp_feed(d, true, b + 3, 3, 3, 3, &cnt, on_msg, &g); /* one whole message: picked up */
	assert_int_equal(g.n, 2);
	assert_int_equal(g.first[1], 'b');
	assert_int_equal(g.ts[1], 3);
	free(d);
}

/* Longer than the reader keeps: its start is handed on; captured > total is clamped. */
static void test_long_message_and_bad_sizes(void **state)
{
	(void)state;
	struct dns_tcp *d = conn();
	struct l7_counters cnt = { 0 };
	struct got g = { 0 };
	size_t n = L7_READER_BUF + 100;
	uint8_t *big = calloc(1, n + 2);
	big[0] = (uint8_t)(n >> 8);
	big[1] = (uint8_t)n;
	big[2] = 'L';
	dns_tcp_feed(d, true, big, n + 2, n + 2, 1, &cnt, on_msg, &g);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.len[0], L7_READER_BUF);
	assert_int_equal(g.first[0], 'L');
	const uint8_t b[] = { 0, 1, 'k' };
	dns_tcp_feed(d, true, b, 99, sizeof(b), 2, &cnt, on_msg, &g);
	assert_int_equal(g.n, 2);
	assert_int_equal(g.first[1], 'k');
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
		cmocka_unit_test(test_long_message_and_bad_sizes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
