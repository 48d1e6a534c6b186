/*
 * The AMQP 0-9-1 parser (src/l7/amqp.c) on what Debian's rabbitmq-server
 * 3.10 and python3-pika 1.2 exchanged (tests/unit/data/l7/amqp_pika.cap:
 * declarations, three publishes with and without properties and body, a
 * basic.get, two deliveries to a consumer with acks, a publish to a missing
 * exchange closing its channel, passive declarations); whole and split at
 * every offset. Messages are counted, never paired.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "l7_harness.h"

#define AM (&l7_proto_rabbitmq)
#define DATA "tests/unit/data/l7/"

static void test_pika(void **state)
{
	struct h_conv v;
	static struct h_run r;
	h_load(&v, DATA "amqp_pika.cap", 1);
	h_check_splits(AM, &v, &r);
	assert_string_equal(r.msgs.s, "noreply produce | orders order.new\n"
				      "noreply produce | jobs\n"
				      "noreply produce | orders order.paid\n"
				      "noreply consume | orders order.new\n"
				      "noreply consume | jobs\n"
				      "noreply consume | orders order.paid\n"
				      "noreply produce | no-such-exchange k\n");
	assert_not_contains(r.msgs.s, "secret");
	assert_int_equal(r.cnt.unparseable + r.cnt.lost + r.cnt.unpaired + r.cnt.truncated, 0);
	h_free(&v);
}

/* A frame: type, channel 1, the payload, the frame end. */
static size_t frame(uint8_t *out, uint8_t type, const void *payload, size_t n)
{
	out[0] = type;
	out[1] = 0;
	out[2] = 1;
	out[3] = (uint8_t)(n >> 24);
	out[4] = (uint8_t)(n >> 16);
	out[5] = (uint8_t)(n >> 8);
	out[6] = (uint8_t)n;
	memcpy(out + 7, payload, n);
	out[7 + n] = 0xce;
	return n + 8;
}

/* Basic.Publish to exchange "ex", routing key `key`. */
static size_t publish(uint8_t *out, const char *key)
{
	uint8_t p[64] = { 0, 60, 0, 40, 0, 0, 2, 'e', 'x' };
	size_t n = 9;
	p[n++] = (uint8_t)strlen(key);
	memcpy(p + n, key, strlen(key));
	n += strlen(key);
	p[n++] = 0;
	return frame(out, 1, p, n);
}

/*
 * A body frame is skipped by its size, captured or not; a frame head not
 * captured loses the framing until a chunk starts with a frame again.
 */
static void test_loss(void **state)
{
	struct h_conv v = { 0 };
	static struct h_run r;
	static uint8_t body[1000], buf[1100];
	size_t n = publish(buf, "a");
	h_add(&v, L7_DIR_REQUEST, buf, n);
	h_add(&v, L7_DIR_REQUEST, buf, frame(buf, 3, body, sizeof(body)));
	v.c[1].len = 20;
	h_add(&v, L7_DIR_REQUEST, buf, publish(buf, "b"));
	/* a head cut by the capture, then garbage, then a heartbeat resynchronises */
	n = publish(buf, "c");
	h_add(&v, L7_DIR_REQUEST, buf, n + publish(buf + n, "lost"));
	v.c[3].len = n + 3;
	v.c[3].no_split = true;
	h_adds(&v, L7_DIR_REQUEST, "garbage");
	v.c[4].no_split = true;
	h_add(&v, L7_DIR_REQUEST, "\x08\0\0\0\0\0\0\xce", 8);
	v.c[5].no_split = true;
	h_add(&v, L7_DIR_REQUEST, buf, publish(buf, "d"));
	h_check_splits(AM, &v, &r);
	assert_string_equal(r.msgs.s, "noreply produce | ex a\n"
				      "noreply produce | ex b\n"
				      "noreply produce | ex c\n"
				      "noreply produce | ex d\n");
	assert_int_equal(r.cnt.lost, 1);
	assert_int_equal(r.cnt.unparseable, 0);
	h_free(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pika),
		cmocka_unit_test(test_loss),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
