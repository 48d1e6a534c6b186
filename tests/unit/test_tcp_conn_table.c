#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "tcp/conn_table.h"

static struct tcp_tuple tuple4(const char *src, uint16_t sport, const char *dst, uint16_t dport)
{
	struct tcp_tuple t;

	memset(&t, 0, sizeof(t));
	t.family = AF_INET;
	t.sport = sport;
	t.dport = dport;
	assert_int_equal(inet_pton(AF_INET, src, t.saddr), 1);
	assert_int_equal(inet_pton(AF_INET, dst, t.daddr), 1);
	return t;
}

static struct tcp_tuple tuple6(const char *src, uint16_t sport, const char *dst, uint16_t dport)
{
	struct tcp_tuple t;

	memset(&t, 0, sizeof(t));
	t.family = AF_INET6;
	t.sport = sport;
	t.dport = dport;
	assert_int_equal(inet_pton(AF_INET6, src, t.saddr), 1);
	assert_int_equal(inet_pton(AF_INET6, dst, t.daddr), 1);
	return t;
}

static void test_init_empty(void **state)
{
	struct tcp_conn_table t;
	struct tcp_tuple tu = tuple4("1.2.3.4", 1, "5.6.7.8", 2);

	assert_int_equal(tcp_conn_table_init(&t, 16), 0);
	assert_int_equal(tcp_conn_count(&t), 0);
	assert_int_equal(t.refused, 0);
	assert_null(tcp_conn_find(&t, 0x1000, 0));
	assert_null(tcp_conn_find(&t, 0, 0));
	assert_null(tcp_conn_find_tuple(&t, &tu));
	tcp_conn_table_destroy(&t);
}

static void test_add_find_remove(void **state)
{
	struct tcp_conn_table t;
	struct tcp_tuple tu = tuple4("10.0.0.2", 40000, "10.0.0.1", 5432);

	assert_int_equal(tcp_conn_table_init(&t, 16), 0);
	struct tcp_conn *c = tcp_conn_add(&t, 0xffff888012345000ull, 1000, &tu, TCP_CONN_OUTBOUND,
					  "/docker/abc");
	assert_non_null(c);
	assert_int_equal(tcp_conn_count(&t), 1);
	assert_int_equal(c->sock, 0xffff888012345000ull);
	assert_int_equal(c->start_ns, 1000);
	assert_int_equal(c->kind, TCP_CONN_OUTBOUND);
	assert_memory_equal(&c->tuple, &tu, sizeof(tu));
	/* defaults the caller fills in later */
	assert_int_equal(c->pid, 0);
	assert_int_equal(c->fd, -1);
	assert_false(c->metered);
	assert_string_equal(c->container, "/docker/abc");
	assert_string_equal(c->peer, "10.0.0.1:5432");

	assert_ptr_equal(tcp_conn_find(&t, 0xffff888012345000ull, 1000), c);
	assert_ptr_equal(tcp_conn_find(&t, 0xffff888012345000ull, 0), c);
	assert_null(tcp_conn_find(&t, 0xffff888012346000ull, 0));
	assert_null(tcp_conn_find(&t, 0xffff888012346000ull, 1000));
	/* a connection with a socket is not found by its tuple */
	assert_null(tcp_conn_find_tuple(&t, &tu));

	struct tcp_conn *d = tcp_conn_add(&t, 0xffff888012346000ull, 2000, &tu, TCP_CONN_INBOUND, "/");
	assert_non_null(d);
	assert_ptr_not_equal(c, d);
	assert_int_equal(tcp_conn_count(&t), 2);
	assert_ptr_equal(tcp_conn_find(&t, 0xffff888012346000ull, 2000), d);
	assert_ptr_equal(tcp_conn_find(&t, 0xffff888012345000ull, 1000), c);

	tcp_conn_remove(&t, c);
	assert_int_equal(tcp_conn_count(&t), 1);
	assert_null(tcp_conn_find(&t, 0xffff888012345000ull, 0));
	assert_ptr_equal(tcp_conn_find(&t, 0xffff888012346000ull, 0), d);
	tcp_conn_remove(&t, d);
	assert_int_equal(tcp_conn_count(&t), 0);
	assert_null(tcp_conn_find(&t, 0xffff888012346000ull, 0));
	tcp_conn_table_destroy(&t);
}

static void test_start_ns_matching(void **state)
{
	struct tcp_conn_table t;
	struct tcp_tuple tu = tuple4("10.0.0.2", 40000, "10.0.0.1", 80);
	const uint64_t sock = 0xffff888000001000ull;

	assert_int_equal(tcp_conn_table_init(&t, 16), 0);
	struct tcp_conn *c = tcp_conn_add(&t, sock, 5000, &tu, TCP_CONN_OUTBOUND, "/");
	assert_non_null(c);
	/* start_ns 0 in the query matches any */
	assert_ptr_equal(tcp_conn_find(&t, sock, 0), c);
	assert_ptr_equal(tcp_conn_find(&t, sock, 5000), c);
	/* a reused socket address is a different connection */
	assert_null(tcp_conn_find(&t, sock, 5001));
	assert_null(tcp_conn_find(&t, sock, 4999));
	assert_null(tcp_conn_find(&t, sock, UINT64_MAX));

	/* the same socket address reused later: both told apart by start_ns */
	struct tcp_conn *d = tcp_conn_add(&t, sock, 9000, &tu, TCP_CONN_OUTBOUND, "/");
	assert_non_null(d);
	assert_ptr_equal(tcp_conn_find(&t, sock, 5000), c);
	assert_ptr_equal(tcp_conn_find(&t, sock, 9000), d);
	assert_null(tcp_conn_find(&t, sock, 7000));
	struct tcp_conn *any = tcp_conn_find(&t, sock, 0);
	assert_true(any == c || any == d);
	tcp_conn_remove(&t, c);
	assert_null(tcp_conn_find(&t, sock, 5000));
	assert_ptr_equal(tcp_conn_find(&t, sock, 9000), d);
	assert_ptr_equal(tcp_conn_find(&t, sock, 0), d);
	tcp_conn_remove(&t, d);

	/* a stored start_ns of 0 is "unknown" (listeners): it matches any query */
	struct tcp_conn *l = tcp_conn_add(&t, sock, 0, &tu, TCP_CONN_LISTENER, "/");
	assert_non_null(l);
	assert_ptr_equal(tcp_conn_find(&t, sock, 0), l);
	assert_ptr_equal(tcp_conn_find(&t, sock, 123), l);
	assert_null(tcp_conn_find(&t, sock + 1, 123));
	tcp_conn_table_destroy(&t);
}

static void test_find_tuple_exact(void **state)
{
	struct tcp_conn_table t;
	struct tcp_tuple tu = tuple4("192.168.1.10", 51000, "93.184.216.34", 443);
	struct tcp_tuple v6 = tuple6("2001:db8::10", 51000, "2001:db8::1", 443);

	assert_int_equal(tcp_conn_table_init(&t, 64), 0);
	struct tcp_conn *c = tcp_conn_add(&t, 0, 0, &tu, TCP_CONN_OUTBOUND, "/");
	struct tcp_conn *c6 = tcp_conn_add(&t, 0, 0, &v6, TCP_CONN_INBOUND, "/");
	assert_non_null(c);
	assert_non_null(c6);
	assert_int_equal(tcp_conn_count(&t), 2);

	struct tcp_tuple q = tu; /* a distinct copy: compared by content */
	assert_ptr_equal(tcp_conn_find_tuple(&t, &q), c);
	q = v6;
	assert_ptr_equal(tcp_conn_find_tuple(&t, &q), c6);
	/* start-up connections have no socket: never found by sock */
	assert_null(tcp_conn_find(&t, 0, 0));

	/* every field must match */
	q = tu;
	q.family = AF_INET6;
	assert_null(tcp_conn_find_tuple(&t, &q));
	q = tu;
	q.sport++;
	assert_null(tcp_conn_find_tuple(&t, &q));
	q = tu;
	q.dport++;
	assert_null(tcp_conn_find_tuple(&t, &q));
	q = tu;
	q.saddr[3] ^= 1;
	assert_null(tcp_conn_find_tuple(&t, &q));
	q = tu;
	q.daddr[0] ^= 0x80;
	assert_null(tcp_conn_find_tuple(&t, &q));
	q = tu; /* swapped direction is another connection */
	memcpy(q.saddr, tu.daddr, 16);
	memcpy(q.daddr, tu.saddr, 16);
	q.sport = tu.dport;
	q.dport = tu.sport;
	assert_null(tcp_conn_find_tuple(&t, &q));
	q = tu; /* only ports swapped */
	q.sport = tu.dport;
	q.dport = tu.sport;
	assert_null(tcp_conn_find_tuple(&t, &q));
	q = v6;
	q.saddr[15] ^= 1;
	assert_null(tcp_conn_find_tuple(&t, &q));
	q = v6;
	q.daddr[8] ^= 1;
	assert_null(tcp_conn_find_tuple(&t, &q));
	q = v6;
	q.family = AF_INET;
	assert_null(tcp_conn_find_tuple(&t, &q));

	/* tuples that differ only in one field are told apart */
	struct tcp_tuple u = tu;
	u.sport = 51001;
	struct tcp_conn *e = tcp_conn_add(&t, 0, 0, &u, TCP_CONN_OUTBOUND, "/");
	assert_non_null(e);
	assert_ptr_equal(tcp_conn_find_tuple(&t, &tu), c);
	assert_ptr_equal(tcp_conn_find_tuple(&t, &u), e);

	tcp_conn_remove(&t, c);
	assert_null(tcp_conn_find_tuple(&t, &tu));
	assert_ptr_equal(tcp_conn_find_tuple(&t, &u), e);
	assert_ptr_equal(tcp_conn_find_tuple(&t, &v6), c6);
	assert_int_equal(tcp_conn_count(&t), 2);
	tcp_conn_table_destroy(&t); /* frees the rest (checked under ASan) */
}

static void test_cap_refuses(void **state)
{
	struct tcp_conn_table t;
	struct tcp_tuple tu = tuple4("1.1.1.1", 1, "2.2.2.2", 2);

	assert_int_equal(tcp_conn_table_init(&t, 3), 0);
	struct tcp_conn *a = tcp_conn_add(&t, 0x10, 1, &tu, TCP_CONN_OUTBOUND, "/");
	assert_non_null(a);
	assert_non_null(tcp_conn_add(&t, 0x20, 1, &tu, TCP_CONN_OUTBOUND, "/"));
	/* start-up connections count against the same cap */
	struct tcp_conn *s = tcp_conn_add(&t, 0, 0, &tu, TCP_CONN_OUTBOUND, "/");
	assert_non_null(s);
	assert_int_equal(tcp_conn_count(&t), 3);

	assert_null(tcp_conn_add(&t, 0x40, 1, &tu, TCP_CONN_OUTBOUND, "/"));
	assert_int_equal(t.refused, 1);
	struct tcp_tuple tu2 = tuple4("1.1.1.1", 3, "2.2.2.2", 2);
	assert_null(tcp_conn_add(&t, 0, 0, &tu2, TCP_CONN_INBOUND, "/"));
	assert_int_equal(t.refused, 2);
	assert_int_equal(tcp_conn_count(&t), 3);
	assert_null(tcp_conn_find(&t, 0x40, 0));
	assert_null(tcp_conn_find_tuple(&t, &tu2));

	/* room again after a remove, of either kind */
	tcp_conn_remove(&t, a);
	assert_non_null(tcp_conn_add(&t, 0x40, 1, &tu, TCP_CONN_OUTBOUND, "/"));
	tcp_conn_remove(&t, s);
	assert_non_null(tcp_conn_add(&t, 0, 0, &tu2, TCP_CONN_INBOUND, "/"));
	assert_int_equal(tcp_conn_count(&t), 3);
	assert_int_equal(t.refused, 2);
	assert_null(tcp_conn_add(&t, 0x50, 1, &tu, TCP_CONN_LISTENER, "/"));
	assert_int_equal(t.refused, 3);
	tcp_conn_table_destroy(&t);

	/* cap 0 holds nothing */
	assert_int_equal(tcp_conn_table_init(&t, 0), 0);
	assert_null(tcp_conn_add(&t, 0x10, 1, &tu, TCP_CONN_OUTBOUND, "/"));
	assert_null(tcp_conn_add(&t, 0, 0, &tu, TCP_CONN_OUTBOUND, "/"));
	assert_int_equal(t.refused, 2);
	assert_int_equal(tcp_conn_count(&t), 0);
	tcp_conn_table_destroy(&t);
}

static void test_peer(void **state)
{
	struct tcp_conn_table t;
	struct tcp_tuple tu = tuple4("10.0.0.2", 40000, "10.0.0.1", 5432);
	struct tcp_tuple lis = tuple4("0.0.0.0", 8080, "0.0.0.0", 0);
	struct tcp_tuple v6 = tuple6("::1", 443, "::1", 50000);
	struct tcp_tuple mapped = tuple6("::ffff:10.0.0.2", 8443, "::ffff:10.0.0.9", 61000);

	assert_int_equal(tcp_conn_table_init(&t, 64), 0);
	struct tcp_conn *c = tcp_conn_add(&t, 1, 1, &tu, TCP_CONN_OUTBOUND, "/");
	assert_string_equal(c->peer, "10.0.0.1:5432");
	c = tcp_conn_add(&t, 2, 1, &tu, TCP_CONN_INBOUND, "/");
	assert_string_equal(c->peer, "10.0.0.1:5432");
	c = tcp_conn_add(&t, 3, 0, &lis, TCP_CONN_LISTENER, "/");
	assert_string_equal(c->peer, "0.0.0.0:8080");
	c = tcp_conn_add(&t, 4, 0, &tu, TCP_CONN_LISTENER, "/");
	assert_string_equal(c->peer, "10.0.0.2:40000");

	c = tcp_conn_add(&t, 5, 1, &v6, TCP_CONN_INBOUND, "/");
	assert_string_equal(c->peer, "[::1]:50000");
	c = tcp_conn_add(&t, 6, 0, &v6, TCP_CONN_LISTENER, "/");
	assert_string_equal(c->peer, "[::1]:443");
	c = tcp_conn_add(&t, 7, 1, &mapped, TCP_CONN_OUTBOUND, "/");
	assert_string_equal(c->peer, "10.0.0.9:61000");
	c = tcp_conn_add(&t, 8, 0, &mapped, TCP_CONN_LISTENER, "/");
	assert_string_equal(c->peer, "10.0.0.2:8443");

	/* start-up connections get the same peer */
	c = tcp_conn_add(&t, 0, 0, &tu, TCP_CONN_OUTBOUND, "/");
	assert_string_equal(c->peer, "10.0.0.1:5432");
	c = tcp_conn_add(&t, 0, 0, &lis, TCP_CONN_LISTENER, "/");
	assert_string_equal(c->peer, "0.0.0.0:8080");

	/* a full-length IPv6 peer fits */
	struct tcp_tuple big;
	memset(&big, 0xff, sizeof(big));
	big.family = AF_INET6;
	c = tcp_conn_add(&t, 9, 1, &big, TCP_CONN_OUTBOUND, "/");
	assert_string_equal(c->peer, "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535");
	tcp_conn_table_destroy(&t);
}

static void test_container_copied(void **state)
{
	struct tcp_conn_table t;
	struct tcp_tuple tu = tuple4("10.0.0.2", 40000, "10.0.0.1", 80);
	char name[64];
	char longname[4097];

	assert_int_equal(tcp_conn_table_init(&t, 16), 0);
	strcpy(name, "/kubepods/pod1/ctr");
	struct tcp_conn *a = tcp_conn_add(&t, 1, 1, &tu, TCP_CONN_OUTBOUND, name);
	assert_ptr_not_equal(a->container, name);
	memset(name, 'X', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	assert_string_equal(a->container, "/kubepods/pod1/ctr");

	struct tcp_conn *b = tcp_conn_add(&t, 2, 1, &tu, TCP_CONN_OUTBOUND, "");
	assert_string_equal(b->container, "");

	memset(longname, 'c', sizeof(longname) - 1);
	longname[0] = '/';
	longname[sizeof(longname) - 1] = '\0';
	struct tcp_conn *c = tcp_conn_add(&t, 0, 0, &tu, TCP_CONN_INBOUND, longname);
	assert_non_null(c);
	assert_int_equal(strlen(c->container), sizeof(longname) - 1);
	assert_string_equal(c->container, longname);
	longname[1] = 'Q';
	assert_int_equal(c->container[1], 'c');
	/* the other fields are intact after the flexible array */
	assert_string_equal(c->peer, "10.0.0.1:80");
	assert_int_equal(c->fd, -1);
	tcp_conn_table_destroy(&t);
}

static uint64_t sock_of(uint32_t i)
{
	/* kernel-like addresses: same high bits, 64-byte aligned */
	return 0xffff888000000000ull + (uint64_t)i * 0x940;
}

static struct tcp_tuple tuple_of(uint32_t i)
{
	struct tcp_tuple t;

	memset(&t, 0, sizeof(t));
	t.family = (i & 1) ? AF_INET6 : AF_INET;
	t.sport = (uint16_t)(i % 28000 + 32768);
	t.dport = (uint16_t)(80 + i / 28000);
	t.saddr[0] = 10;
	t.saddr[3] = 2;
	t.daddr[0] = 10;
	t.daddr[2] = (uint8_t)(i >> 8);
	t.daddr[3] = (uint8_t)i;
	return t;
}

static void test_many(void **state)
{
	enum { N = 100000, S = N / 2 };
	struct tcp_conn_table t;
	char name[32];

	assert_int_equal(tcp_conn_table_init(&t, N), 0);
	/* half with sockets, half found at start-up */
	for (uint32_t i = 0; i < N; i++) {
		struct tcp_tuple tu = tuple_of(i);
		snprintf(name, sizeof(name), "/c/%u", i % 97);
		struct tcp_conn *c = i < S ? tcp_conn_add(&t, sock_of(i), 1000 + i, &tu,
							  TCP_CONN_OUTBOUND, name)
					   : tcp_conn_add(&t, 0, 0, &tu, TCP_CONN_INBOUND, name);
		assert_non_null(c);
		c->pid = i;
	}
	assert_int_equal(tcp_conn_count(&t), N);
	struct tcp_tuple extra = tuple_of(N);
	assert_null(tcp_conn_add(&t, sock_of(N), 1, &extra, TCP_CONN_OUTBOUND, "/"));
	assert_int_equal(t.refused, 1);

	for (uint32_t i = 0; i < N; i++) {
		struct tcp_tuple tu = tuple_of(i);
		struct tcp_conn *c = i < S ? tcp_conn_find(&t, sock_of(i), 1000 + i)
					   : tcp_conn_find_tuple(&t, &tu);
		assert_non_null(c);
		assert_int_equal(c->pid, i);
		snprintf(name, sizeof(name), "/c/%u", i % 97);
		assert_string_equal(c->container, name);
		if (i < S)
			assert_null(tcp_conn_find(&t, sock_of(i), 999 + i));
	}
	/* remove every other */
	for (uint32_t i = 0; i < N; i += 2) {
		struct tcp_tuple tu = tuple_of(i);
		struct tcp_conn *c = i < S ? tcp_conn_find(&t, sock_of(i), 0)
					   : tcp_conn_find_tuple(&t, &tu);
		assert_non_null(c);
		tcp_conn_remove(&t, c);
	}
	assert_int_equal(tcp_conn_count(&t), N / 2);
	for (uint32_t i = 0; i < N; i++) {
		struct tcp_tuple tu = tuple_of(i);
		struct tcp_conn *c = i < S ? tcp_conn_find(&t, sock_of(i), 0)
					   : tcp_conn_find_tuple(&t, &tu);
		if (i % 2 == 0) {
			assert_null(c);
		} else {
			assert_non_null(c);
			assert_int_equal(c->pid, i);
		}
	}
	/* refill, then empty completely */
	for (uint32_t i = 0; i < N; i += 2)
		assert_non_null(tcp_conn_add(&t, sock_of(N + i), 7, &extra, TCP_CONN_OUTBOUND, "/"));
	assert_int_equal(tcp_conn_count(&t), N);
	for (uint32_t i = 0; i < N; i++) {
		struct tcp_tuple tu = tuple_of(i);
		struct tcp_conn *c;
		if (i % 2 == 0)
			c = tcp_conn_find(&t, sock_of(N + i), 7);
		else
			c = i < S ? tcp_conn_find(&t, sock_of(i), 1000 + i)
				  : tcp_conn_find_tuple(&t, &tu);
		assert_non_null(c);
		tcp_conn_remove(&t, c);
	}
	assert_int_equal(tcp_conn_count(&t), 0);
	assert_int_equal(t.refused, 1);
	tcp_conn_table_destroy(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_empty),
		cmocka_unit_test(test_add_find_remove),
		cmocka_unit_test(test_start_ns_matching),
		cmocka_unit_test(test_find_tuple_exact),
		cmocka_unit_test(test_cap_refuses),
		cmocka_unit_test(test_peer),
		cmocka_unit_test(test_container_copied),
		cmocka_unit_test(test_many),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
