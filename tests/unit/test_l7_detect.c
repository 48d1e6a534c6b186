/*
 * Protocol detection from a message boundary (each parser's detect_request
 * and detect_response): each capture's chunks are recognised by their own
 * protocol (a connection is picked up from its middle) and by no other,
 * HTTP's included; HTTP, TLS and random bytes are recognised by none.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "l7/h2.h"
#include "l7/http.h"
#include "l7_harness.h"

#define DATA "tests/unit/data/l7/"

static const struct {
	const char *proto, *file;
	int conn;
	unsigned min_detected; /* chunks its own protocol must recognise, at least */
} captures[] = {
	{ "postgres", "pg_simple.cap", 1, 8 },	   { "postgres", "pg_extended.cap", 2, 8 },
	{ "postgres", "pg_pipeline.cap", 2, 8 },   { "mysql", "my_query.cap", 1, 3 },
	{ "mysql", "my_multi.cap", 1, 6 },	   { "mysql", "my_prepared.cap", 1, 10 },
	{ "mysql", "my_multi2.cap", 1, 4 },	   { "redis", "redis_py.cap", 1, 10 },
	{ "redis", "redis_resp3.cap", 1, 30 },	   { "redis", "redis_pubsub.cap", 1, 4 },
	{ "memcached", "mc_text.cap", 1, 15 },	   { "memcached", "mc_raw.cap", 1, 8 },
	{ "memcached", "mc_raw.cap", 2, 6 },	   { "mongo", "mongo_pymongo.cap", 2, 10 },
	{ "clickhouse", "clickhouse_select.cap", 1, 3 },
	{ "clickhouse", "clickhouse_error.cap", 1, 4 },
	/* Kafka: requests only (an answer cannot be told by its bytes, see kafka.c) */
	{ "kafka", "kafka_python.cap", 1, 3 },	   { "kafka", "kafka_python.cap", 2, 3 },
	{ "kafka", "kafka_python.cap", 4, 1 },	   { "kafka", "kafka_python.cap", 6, 3 },
	{ "zookeeper", "zk_cli.cap", 1, 16 },	   { "zookeeper", "zk_kazoo.cap", 1, 30 },
	{ "nats", "nats_raw.cap", 1, 9 },	   { "nats", "nats_raw.cap", 2, 5 },
	{ "rabbitmq", "amqp_pika.cap", 1, 30 },
	/* v5: the start-up only (segments cannot be told without their CRC) */
	{ "cassandra", "cql_v4.cap", 1, 22 },	   { "cassandra", "cql_v5.cap", 1, 4 },
};

static bool detects(const struct l7_proto *p, const struct h_chunk *c)
{
	return c->dir == L7_DIR_REQUEST ? p->detect_request(c->data, c->len) :
					  p->detect_response(c->data, c->len);
}

/*
 * Server replies that mean the same in two text protocols, byte for byte
 * (Redis's and NATS's "+OK"): a chunk of only these is not held against the
 * other. The tracker picks a protocol from the client's side only.
 */
static bool shared_reply(const struct h_chunk *c)
{
	static const char *const shared[] = { "+OK\r\n" };
	for (size_t i = 0; i < sizeof(shared) / sizeof(shared[0]); i++)
		if (c->dir == L7_DIR_RESPONSE && c->len == strlen(shared[i]) &&
		    !memcmp(c->data, shared[i], c->len))
			return true;
	return false;
}

static void test_captures(void **state)
{
	for (size_t k = 0; k < sizeof(captures) / sizeof(captures[0]); k++) {
		struct h_conv v;
		unsigned own = 0;
		const struct l7_proto *mine = l7_proto_by_name(captures[k].proto);
		char path[256];
		snprintf(path, sizeof(path), DATA "%s", captures[k].file);
		h_load(&v, path, captures[k].conn);
		for (size_t i = 0; i < v.n; i++) {
			own += detects(mine, &v.c[i]);
			for (size_t j = 0; j < l7_n_protos; j++) {
				if (l7_protos[j] == mine || !detects(l7_protos[j], &v.c[i]) ||
				    shared_reply(&v.c[i]))
					continue;
				fail_msg("%s chunk %zu of %s taken for %s", captures[k].file, i,
					 captures[k].proto, l7_protos[j]->name);
			}
			const struct h_chunk *c = &v.c[i];
			if (c->dir == L7_DIR_REQUEST ? http_looks_like_request((const char *)c->data, c->len) :
						       http_looks_like_response((const char *)c->data, c->len))
				fail_msg("%s chunk %zu taken for HTTP", captures[k].file, i);
		}
		if (own < captures[k].min_detected)
			fail_msg("%s: %u chunks recognised, expected %u at least", captures[k].file, own,
				 captures[k].min_detected);
		h_free(&v);
	}
}

/*
 * HTTP/2 is out of the table (it counts as HTTP) but is detected the same
 * way: its capture by it alone, the other captures never by it, and random
 * bytes rarely.
 */
static void test_http2(void **state)
{
	for (int conn = 1; conn <= 3; conn++) {
		struct h_conv v;
		unsigned own = 0;
		h_load(&v, DATA "h2_nghttp.cap", conn);
		for (size_t i = 0; i < v.n; i++) {
			own += detects(&l7_proto_http2, &v.c[i]);
			for (size_t j = 0; j < l7_n_protos; j++)
				if (detects(l7_protos[j], &v.c[i]))
					fail_msg("h2_nghttp.cap %d chunk %zu taken for %s", conn, i,
						 l7_protos[j]->name);
		}
		assert_true(own >= v.n - 1);
		h_free(&v);
	}
	for (size_t k = 0; k < sizeof(captures) / sizeof(captures[0]); k++) {
		struct h_conv v;
		char path[256];
		snprintf(path, sizeof(path), DATA "%s", captures[k].file);
		h_load(&v, path, captures[k].conn);
		for (size_t i = 0; i < v.n; i++)
			if (detects(&l7_proto_http2, &v.c[i]))
				fail_msg("%s chunk %zu taken for http2", captures[k].file, i);
		h_free(&v);
	}
	uint64_t x = 0x2545f4914f6cdd1dull;
	unsigned fp = 0;
	uint8_t buf[96];
	for (unsigned k = 0; k < 200000; k++) {
		size_t n = 1 + k % sizeof(buf);
		for (size_t i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[i] = (uint8_t)(x >> 24);
		}
		fp += l7_proto_http2.detect_request(buf, n) + l7_proto_http2.detect_response(buf, n);
	}
	print_message("http2      random: %u false positives in 400000\n", fp);
	assert_true(fp <= 40);
}

static void test_http_and_tls(void **state)
{
	static const char *const texts[] = {
		"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST /api/v1/items HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}",
		"PUT /x HTTP/1.0\r\n\r\n",
		"DELETE /x HTTP/1.1\r\n\r\n",
		"HEAD / HTTP/1.1\r\n\r\n",
		"OPTIONS * HTTP/1.1\r\n\r\n",
		"PATCH /a HTTP/1.1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.0 404 Not Found\r\n\r\n",
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
		"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n",
		"220 mail.example.com ESMTP Postfix\r\n",
		"EHLO client\r\n",
	};
	static const uint8_t tls_hello[] = { 0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc,
					     0x03, 0x03, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66 };
	static const uint8_t tls_data[] = { 0x17, 0x03, 0x03, 0x00, 0x20, 0xde, 0xad, 0xbe, 0xef,
					    0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08 };
	for (size_t j = 0; j < l7_n_protos; j++) {
		const struct l7_proto *p = l7_protos[j];
		for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
			const uint8_t *t = (const uint8_t *)texts[i];
			if (p->detect_request(t, strlen(texts[i])) ||
			    p->detect_response(t, strlen(texts[i])))
				fail_msg("%s took \"%.20s\"", p->name, texts[i]);
		}
		assert_false(p->detect_request(tls_hello, sizeof(tls_hello)));
		assert_false(p->detect_response(tls_hello, sizeof(tls_hello)));
		assert_false(p->detect_request(tls_data, sizeof(tls_data)));
		assert_false(p->detect_response(tls_data, sizeof(tls_data)));
		assert_false(p->detect_request(NULL, 0));
		assert_false(p->detect_response(NULL, 0));
	}
}

/*
 * Random bytes, and random printable text: a deterministic sample, the
 * false positives counted per protocol and direction. The binary protocols
 * check lengths and types; text ones a command or reply word with CRLF.
 */
static void test_random(void **state)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	uint8_t buf[96];
	unsigned fp[16][2] = { { 0 } };
	const unsigned rounds = 200000;
	for (unsigned k = 0; k < rounds; k++) {
		size_t n = 1 + (k % sizeof(buf));
		for (size_t i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[i] = k & 1 ? (uint8_t)(0x20 + (x >> 24) % 0x5f) : (uint8_t)(x >> 24);
			if (k & 1 && (x >> 40) % 16 == 0)
				buf[i] = (x >> 44) & 1 ? '\r' : '\n';
		}
		for (size_t j = 0; j < l7_n_protos; j++) {
			fp[j][0] += l7_protos[j]->detect_request(buf, n);
			fp[j][1] += l7_protos[j]->detect_response(buf, n);
		}
	}
	for (size_t j = 0; j < l7_n_protos; j++) {
		print_message("%-10s random: %u request, %u response false positives in %u\n",
			      l7_protos[j]->name, fp[j][0], fp[j][1], rounds);
		/* at most one in 10000 */
		assert_true(fp[j][0] <= rounds / 10000);
		assert_true(fp[j][1] <= rounds / 10000);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_captures),
		cmocka_unit_test(test_http_and_tls),
		cmocka_unit_test(test_http2),
		cmocka_unit_test(test_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
