/*
 * The NATS parser (src/l7/nats.c) on what Debian's nats-server 2.9 exchanged
 * with a client written for the capture (tests/unit/data/l7/nats_raw.cap:
 * PUB, HPUB with headers, a reply subject, an empty payload, pipelined
 * publishes, the deliveries back, verbose mode's +OK, an -ERR); whole and
 * split at every offset. Messages are counted, never paired.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "l7_harness.h"

#define NT (&l7_proto_nats)
#define DATA "tests/unit/data/l7/"

static void test_server(void **state)
{
	struct h_conv v;
	static struct h_run r;
	h_load(&v, DATA "nats_raw.cap", 1);
	h_check_splits(NT, &v, &r);
	assert_string_equal(r.msgs.s, "noreply produce | orders.new\n"
				      "noreply consume | orders.new\n"
				      "noreply produce | orders.paid\n"
				      "noreply consume | orders.paid\n"
				      "noreply produce | orders.ask\n"
				      "noreply produce | orders.a\n"
				      "noreply produce | orders.b\n"
				      "noreply consume | orders.ask\n"
				      "noreply consume | orders.a\n"
				      "noreply consume | orders.b\n"
				      "noreply produce | orders.gone\n");
	assert_not_contains(r.msgs.s, "secret");
	assert_int_equal(r.cnt.unparseable + r.cnt.lost + r.cnt.unpaired + r.cnt.truncated, 0);
	h_free(&v);
	/* verbose: +OK after each op; an invalid subject's -ERR */
	h_load(&v, DATA "nats_raw.cap", 2);
	h_check_splits(NT, &v, &r);
	assert_string_equal(r.msgs.s, "noreply produce | jobs\n"
				      "noreply consume | jobs\n"
				      "noreply produce | jobs.*\n");
	assert_int_equal(r.cnt.unparseable + r.cnt.lost + r.cnt.unpaired + r.cnt.truncated, 0);
	h_free(&v);
}

/*
 * A payload is skipped by its size, captured or not; a line not captured
 * loses the framing until a chunk starts with a NATS line; garbage too.
 */
static void test_loss(void **state)
{
	struct h_conv v = { 0 };
	static struct h_run r;
	char big[200];
	memset(big, 'p', sizeof(big));
	memcpy(big, "PUB a 100\r\n", 11);
	memcpy(big + 111, "\r\n", 2);
	h_add(&v, L7_DIR_REQUEST, big, 113);
	v.c[0].len = 15; /* the payload mostly uncaptured */
	h_adds(&v, L7_DIR_REQUEST, "PUB b 1\r\nx\r\n");
	/* a line cut by the capture: lost, then garbage is passed, then a PUB resynchronises */
	h_adds(&v, L7_DIR_REQUEST, "PUB c 1\r\nx\r\nPUB d 1\r\n");
	v.c[2].len = 14;
	v.c[2].no_split = true;
	h_adds(&v, L7_DIR_REQUEST, "x\r\n");
	v.c[3].no_split = true;
	h_adds(&v, L7_DIR_REQUEST, "PUB e 2\r\nee\r\n");
	v.c[4].no_split = true;
	h_adds(&v, L7_DIR_REQUEST, "GET / HTTP/1.1\r\n\r\n");
	v.c[5].no_split = true;
	h_adds(&v, L7_DIR_REQUEST, "PUB f 0\r\n\r\n");
	v.c[6].no_split = true;
	h_check_splits(NT, &v, &r);
	assert_string_equal(r.msgs.s, "noreply produce | a\n"
				      "noreply produce | b\n"
				      "noreply produce | c\n"
				      "noreply produce | e\n"
				      "noreply produce | f\n");
	assert_int_equal(r.cnt.lost, 1);
	assert_int_equal(r.cnt.unparseable, 1);
	h_free(&v);
}

/* The server requires TLS: the client's handshake record switches, the plaintext goes on. */
static void test_tls(void **state)
{
	struct h_conv v = { 0 };
	static struct h_run r;
	static const uint8_t hello[] = { 0x16, 0x03, 0x01, 0x00, 0x05, 1, 2, 3, 4, 5 };
	h_adds(&v, L7_DIR_RESPONSE, "INFO {\"server_id\":\"x\",\"tls_required\":true,\"max_payload\":1048576}\r\n");
	h_add(&v, L7_DIR_REQUEST, hello, sizeof(hello));
	h_add(&v, L7_DIR_RESPONSE, hello, sizeof(hello));
	h_adds(&v, L7_DIR_REQUEST, "CONNECT {\"tls_required\":true}\r\nPUB t 1\r\nx\r\n");
	v.c[v.n - 1].plaintext = true;
	h_adds(&v, L7_DIR_RESPONSE, "MSG t 1 1\r\nx\r\n");
	v.c[v.n - 1].plaintext = true;
	h_check_splits(NT, &v, &r);
	assert_true(r.tls);
	assert_string_equal(r.msgs.s, "noreply produce | t\nnoreply consume | t\n");
	assert_int_equal(r.cnt.unparseable + r.cnt.lost, 0);
	h_free(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_server),
		cmocka_unit_test(test_loss),
		cmocka_unit_test(test_tls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
