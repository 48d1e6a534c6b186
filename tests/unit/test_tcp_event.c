#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "tcp/event.h"

static struct ns_tcp_event good_event(void)
{
	struct ns_tcp_event e;

	memset(&e, 0, sizeof(e));
	e.type = NS_TCP_CONNECT;
	e.family = AF_INET;
	e.fd = -1;
	return e;
}

static void test_check(void **state)
{
	struct ns_tcp_event e = good_event();

	assert_int_equal(tcp_event_check(&e, sizeof(e)), 0);
	e.family = AF_INET6;
	assert_int_equal(tcp_event_check(&e, sizeof(e)), 0);
	for (uint32_t t = NS_TCP_CONNECT; t <= NS_TCP_RETRANSMIT; t++) {
		e.type = t;
		assert_int_equal(tcp_event_check(&e, sizeof(e)), 0);
	}
	/* a longer record (a newer BPF side appending fields) is accepted */
	unsigned char big[sizeof(e) + 16];
	memset(big, 0xab, sizeof(big));
	memcpy(big, &e, sizeof(e));
	assert_int_equal(tcp_event_check(big, sizeof(big)), 0);
}

static void test_check_short(void **state)
{
	struct ns_tcp_event e = good_event();

	assert_int_equal(tcp_event_check(&e, sizeof(e) - 1), -EINVAL);
	assert_int_equal(tcp_event_check(&e, 0), -EINVAL);
	assert_int_equal(tcp_event_check(&e, offsetof(struct ns_tcp_event, bytes_received)),
			 -EINVAL);
	/* a short record at the end of a heap block: must not be read past its length */
	for (size_t len = 0; len < sizeof(e); len++) {
		unsigned char *p = malloc(len ? len : 1);
		assert_non_null(p);
		memcpy(p, &e, len);
		assert_int_equal(tcp_event_check(p, len), -EINVAL);
		free(p);
	}
}

static void test_check_bad_type_family(void **state)
{
	struct ns_tcp_event e = good_event();

	e.type = 0;
	assert_int_equal(tcp_event_check(&e, sizeof(e)), -EINVAL);
	e.type = 8;
	assert_int_equal(tcp_event_check(&e, sizeof(e)), -EINVAL);
	e.type = UINT32_MAX;
	assert_int_equal(tcp_event_check(&e, sizeof(e)), -EINVAL);
	e.type = 0x80000001u; /* negative as an int */
	assert_int_equal(tcp_event_check(&e, sizeof(e)), -EINVAL);
	e.type = NS_PROC_EXEC + 100;
	assert_int_equal(tcp_event_check(&e, sizeof(e)), -EINVAL);

	e = good_event();
	static const uint16_t bad_family[] = { 0, AF_UNIX, AF_NETLINK, AF_PACKET, 0xffff,
					       AF_INET | 0x100, AF_INET6 | 0x100 };
	for (size_t i = 0; i < sizeof(bad_family) / sizeof(bad_family[0]); i++) {
		e.family = bad_family[i];
		assert_int_equal(tcp_event_check(&e, sizeof(e)), -EINVAL);
	}
}

static void test_type_name(void **state)
{
	assert_string_equal(tcp_event_type_name(NS_TCP_CONNECT), "connect");
	assert_string_equal(tcp_event_type_name(NS_TCP_CONNECT_ERROR), "connect_error");
	assert_string_equal(tcp_event_type_name(NS_TCP_ACCEPT), "accept");
	assert_string_equal(tcp_event_type_name(NS_TCP_CLOSE), "close");
	assert_string_equal(tcp_event_type_name(NS_TCP_LISTEN), "listen");
	assert_string_equal(tcp_event_type_name(NS_TCP_LISTEN_CLOSE), "listen_close");
	assert_string_equal(tcp_event_type_name(NS_TCP_RETRANSMIT), "retransmit");
	assert_string_equal(tcp_event_type_name((enum ns_tcp_event_type)0), "unknown");
	assert_string_equal(tcp_event_type_name((enum ns_tcp_event_type)8), "unknown");
	assert_string_equal(tcp_event_type_name((enum ns_tcp_event_type)12345), "unknown");
}

static void test_error_name(void **state)
{
	assert_string_equal(tcp_error_name(ECONNREFUSED), "refused");
	assert_string_equal(tcp_error_name(ETIMEDOUT), "timeout");
	assert_string_equal(tcp_error_name(EHOSTUNREACH), "host unreachable");
	assert_string_equal(tcp_error_name(ENETUNREACH), "network unreachable");
	assert_string_equal(tcp_error_name(ECONNRESET), "reset");
	assert_string_equal(tcp_error_name(ECONNABORTED), "aborted");
	assert_string_equal(tcp_error_name(EADDRNOTAVAIL), "address not available");
	assert_string_equal(tcp_error_name(EACCES), "not permitted");
	assert_string_equal(tcp_error_name(EPERM), "not permitted");
	/* anything else: the errno's name */
	assert_string_equal(tcp_error_name(EIO), "EIO");
	assert_string_equal(tcp_error_name(ENOBUFS), "ENOBUFS");
	assert_string_equal(tcp_error_name(EPIPE), "EPIPE");
	assert_string_equal(tcp_error_name(EPROTO), "EPROTO");
	assert_string_equal(tcp_error_name(EINVAL), "EINVAL");
	/* unknown numbers never give NULL */
	assert_non_null(tcp_error_name(0)); /* never sent: BPF turns 0 into ECONNABORTED */
	assert_string_equal(tcp_error_name(99999), "error");
	assert_string_equal(tcp_error_name(-1), "error");
	assert_non_null(tcp_error_name(4096));
}

static void test_tuple(void **state)
{
	struct ns_tcp_event e = good_event();
	struct tcp_tuple t;

	e.family = AF_INET6;
	e.sport = 443;
	e.dport = 51000;
	for (int i = 0; i < 16; i++) {
		e.saddr[i] = (uint8_t)i;
		e.daddr[i] = (uint8_t)(0xf0 + i);
	}
	memset(&t, 0x5a, sizeof(t));
	tcp_event_tuple(&e, &t);
	assert_int_equal(t.family, AF_INET6);
	assert_int_equal(t.sport, 443);
	assert_int_equal(t.dport, 51000);
	assert_memory_equal(t.saddr, e.saddr, 16);
	assert_memory_equal(t.daddr, e.daddr, 16);
}

static struct ns_tcp_event close_event(uint64_t sent, uint64_t received, uint16_t flags)
{
	struct ns_tcp_event e = good_event();

	e.type = NS_TCP_CLOSE;
	e.bytes_sent = sent;
	e.bytes_received = received;
	e.flags = flags;
	return e;
}

#define ASSERT_PAYLOAD(sent_, recv_, flags_, outbound_, want_sent_, want_recv_)          \
	do {                                                                                  \
		struct ns_tcp_event ev_ = close_event((sent_), (recv_), (flags_));          \
		tcp_event_payload_bytes(&ev_, (outbound_));                                   \
		assert_int_equal(ev_.bytes_sent, (want_sent_));                               \
		assert_int_equal(ev_.bytes_received, (want_recv_));                           \
		assert_int_equal(ev_.flags, (flags_)); /* flags untouched */                  \
	} while (0)

static void test_payload_outbound(void **state)
{
	const uint16_t both = NS_TCP_F_FIN_ACKED | NS_TCP_F_FIN_RECEIVED;

	/* the SYN that connected is in bytes_acked */
	ASSERT_PAYLOAD(101, 50, 0, true, 100, 50);
	/* each FIN takes one more from its side */
	ASSERT_PAYLOAD(102, 50, NS_TCP_F_FIN_ACKED, true, 100, 50);
	ASSERT_PAYLOAD(101, 51, NS_TCP_F_FIN_RECEIVED, true, 100, 50);
	ASSERT_PAYLOAD(102, 51, both, true, 100, 50);
	/* other flags do not count */
	ASSERT_PAYLOAD(102, 51, both | NS_TCP_F_KNOWN, true, 100, 50);
	/* a connection that sent and received nothing but SYN and FINs */
	ASSERT_PAYLOAD(2, 1, both, true, 0, 0);
	ASSERT_PAYLOAD(1, 0, 0, true, 0, 0);
	/* big counters */
	ASSERT_PAYLOAD(UINT64_MAX, UINT64_MAX, both, true, UINT64_MAX - 2, UINT64_MAX - 1);
}

static void test_payload_inbound(void **state)
{
	const uint16_t both = NS_TCP_F_FIN_ACKED | NS_TCP_F_FIN_RECEIVED;
	const uint16_t in = NS_TCP_F_INBOUND;

	/* the accepting side's counters start after the handshake: no SYN to subtract */
	ASSERT_PAYLOAD(100, 50, in, false, 100, 50);
	ASSERT_PAYLOAD(100, 50, 0, false, 100, 50);
	ASSERT_PAYLOAD(101, 50, in | NS_TCP_F_FIN_ACKED, false, 100, 50);
	ASSERT_PAYLOAD(100, 51, in | NS_TCP_F_FIN_RECEIVED, false, 100, 50);
	ASSERT_PAYLOAD(101, 51, in | both, false, 100, 50);
	ASSERT_PAYLOAD(1, 1, in | both, false, 0, 0);
	ASSERT_PAYLOAD(0, 0, in, false, 0, 0);
}

static void test_payload_no_underflow(void **state)
{
	const uint16_t both = NS_TCP_F_FIN_ACKED | NS_TCP_F_FIN_RECEIVED;

	/* counters smaller than what is subtracted (a reset, a lost SYN-ACK) stay at 0 */
	ASSERT_PAYLOAD(0, 0, 0, true, 0, 0);
	ASSERT_PAYLOAD(0, 0, both, true, 0, 0);
	ASSERT_PAYLOAD(1, 0, both, true, 0, 0);
	ASSERT_PAYLOAD(0, 0, both, false, 0, 0);
	ASSERT_PAYLOAD(0, 5, NS_TCP_F_FIN_ACKED, true, 0, 5);
	ASSERT_PAYLOAD(5, 0, NS_TCP_F_FIN_RECEIVED, false, 5, 0);

	/* the conversion is done once per close: applying it again subtracts again */
	struct ns_tcp_event e = close_event(3, 2, both);
	tcp_event_payload_bytes(&e, true);
	assert_int_equal(e.bytes_sent, 1);
	assert_int_equal(e.bytes_received, 1);
	tcp_event_payload_bytes(&e, true);
	assert_int_equal(e.bytes_sent, 0);
	assert_int_equal(e.bytes_received, 0);
	tcp_event_payload_bytes(&e, true);
	assert_int_equal(e.bytes_sent, 0);
	assert_int_equal(e.bytes_received, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_check_short),
		cmocka_unit_test(test_check_bad_type_family),
		cmocka_unit_test(test_type_name),
		cmocka_unit_test(test_error_name),
		cmocka_unit_test(test_tuple),
		cmocka_unit_test(test_payload_outbound),
		cmocka_unit_test(test_payload_inbound),
		cmocka_unit_test(test_payload_no_underflow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
