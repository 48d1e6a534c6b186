/*
 * The l7 tracker's connection life: a TCP close is not the end of a
 * connection's records (a reset socket's queued bytes are read after it, a
 * preempted producer holds records back), so the state outlives the close by
 * a grace period, and a full table makes room from closed connections first.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/socket.h>

#include "events.h"
#include "l7/tracker.h"
#include "metrics/registry.h"
#include "proc/table.h"
#include "cli.h"
#include "util/strbuf.h"

#define SEC 1000000000ull

struct fixture {
	struct metric_registry *r;
	struct proc_table *procs;
	struct l7_tracker *t;
};

/* A tracker with o's options (its registry, table and limits set here). */
static int setup_with(void **state, struct l7_tracker_opts o)
{
	struct fixture *f = calloc(1, sizeof(*f));
	f->r = metric_registry_new();
	f->procs = proc_table_new(16);
	o.registry = f->r;
	o.procs = f->procs;
	o.max_connections = 4;
	o.max_series = 100;
	assert_int_equal(l7_tracker_new(&o, &f->t), 0);
	*state = f;
	return 0;
}

static int setup(void **state)
{
	return setup_with(state, (struct l7_tracker_opts){ 0 });
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	l7_tracker_free(f->t);
	proc_table_free(f->procs);
	metric_registry_free(f->r);
	free(f);
	return 0;
}

static void feed_bytes(struct l7_tracker *t, uint64_t sock, uint32_t op, uint16_t flags,
		       const void *data, size_t n, uint64_t ts)
{
	struct ns_l7_event *e = calloc(1, sizeof(*e));
	e->op = op;
	e->pid = 42;
	e->ts_ns = ts;
	e->fd = 4;
	e->total = e->captured = (uint32_t)n;
	e->conn.sock = sock;
	e->conn.start_ns = 7;
	e->conn.family = AF_INET;
	e->conn.flags = flags;
	memcpy(e->data, data, n);
	assert_int_equal(l7_tracker_on_record(t, e, NS_L7_HEADER_SIZE + e->captured), 0);
	free(e);
}

static void feed(struct l7_tracker *t, uint64_t sock, uint32_t op, const char *text, uint64_t ts)
{
	feed_bytes(t, sock, op, NS_L7_F_TLS, text, strlen(text), ts);
}

static const char req[] = "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n";
static const char resp[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";

static double requests(struct fixture *f)
{
	struct metric *m = metric_register(f->r, "container_http_requests_total", "", METRIC_COUNTER,
					   0, 4,
					   (const char *const[]){ "container_id", "destination",
								  "actual_destination", "status" });
	const char *labels[] = { "/", "0.0.0.0:0", "0.0.0.0:0", "2xx" };
	return metric_value(m, labels);
}

static void test_response_read_after_the_close_is_paired(void **state)
{
	struct fixture *f = *state;
	feed(f->t, 0x1000, NS_L7_WRITE, req, 1 * SEC);
	l7_tracker_conn_closed(f->t, 0x1000, 7, 1 * SEC);
	feed(f->t, 0x1000, NS_L7_READ, resp, 1 * SEC + 5);
	assert_true(requests(f) == 1);
}

static void test_records_before_any_state_find_the_closed_connection(void **state)
{
	struct fixture *f = *state;
	l7_tracker_conn_closed(f->t, 0x2000, 7, 1 * SEC);
	feed(f->t, 0x2000, NS_L7_WRITE, req, 1 * SEC);
	feed(f->t, 0x2000, NS_L7_READ, resp, 1 * SEC + 5);
	assert_true(requests(f) == 1);
}

static void test_reaped_after_the_grace_period(void **state)
{
	struct fixture *f = *state;
	feed(f->t, 0x3000, NS_L7_WRITE, req, 1 * SEC);
	l7_tracker_conn_closed(f->t, 0x3000, 7, 1 * SEC);
	l7_tracker_reap(f->t, 1 * SEC + 1);
	feed(f->t, 0x3000, NS_L7_READ, resp, 1 * SEC + 5); /* still there */
	assert_true(requests(f) == 1);
	feed(f->t, 0x3000, NS_L7_WRITE, req, 2 * SEC);
	l7_tracker_reap(f->t, 10 * SEC);
	/* Gone: a response now finds no request waiting. */
	feed(f->t, 0x3000, NS_L7_READ, resp, 10 * SEC);
	assert_true(requests(f) == 1);
}

static void test_full_table_makes_room_from_closed_connections(void **state)
{
	struct fixture *f = *state;
	for (uint64_t s = 1; s <= 4; s++) {
		feed(f->t, s, NS_L7_WRITE, req, 1 * SEC);
		l7_tracker_conn_closed(f->t, s, 7, 1 * SEC);
	}
	/* Table full (4) of closed connections: a new one still gets in. */
	feed(f->t, 0x5000, NS_L7_WRITE, req, 1 * SEC);
	feed(f->t, 0x5000, NS_L7_READ, resp, 1 * SEC + 5);
	assert_true(requests(f) == 1);
}

static void feed_unbound(struct l7_tracker *t, uint64_t session, const char *text, uint64_t ts)
{
	struct ns_l7_event *e = calloc(1, sizeof(*e));
	e->op = NS_L7_WRITE;
	e->pid = 42;
	e->ts_ns = ts;
	e->fd = -1;
	e->total = e->captured = (uint32_t)strlen(text);
	e->conn.sock = session;
	e->conn.flags = NS_L7_F_TLS | NS_L7_F_UNBOUND;
	memcpy(e->data, text, e->captured);
	assert_int_equal(l7_tracker_on_record(t, e, NS_L7_HEADER_SIZE + e->captured), 0);
	free(e);
}

static void bind_session(struct l7_tracker *t, uint64_t session, uint64_t sock, uint64_t ts)
{
	struct ns_l7_event *e = calloc(1, sizeof(*e));
	e->op = NS_L7_BIND;
	e->pid = 42;
	e->ts_ns = ts;
	e->fd = 4;
	e->total = e->captured = sizeof(session);
	e->conn.sock = sock;
	e->conn.start_ns = 7;
	e->conn.family = AF_INET;
	e->conn.flags = NS_L7_F_ENCRYPTED;
	memcpy(e->data, &session, sizeof(session));
	assert_int_equal(l7_tracker_on_record(t, e, NS_L7_HEADER_SIZE + sizeof(session)), 0);
	free(e);
}

static void test_unbound_write_waits_for_its_bind(void **state)
{
	struct fixture *f = *state;
	/* Two sessions' requests written before either socket is known, then bound crosswise. */
	feed_unbound(f->t, 0xaaa, req, 1 * SEC);
	feed_unbound(f->t, 0xbbb, req, 1 * SEC + 1);
	bind_session(f->t, 0xbbb, 0x6000, 1 * SEC + 2);
	feed(f->t, 0x6000, NS_L7_READ, resp, 1 * SEC + 3);
	assert_true(requests(f) == 1);
	/* 0xaaa is still waiting: a response on its socket before the bind pairs nothing. */
	feed(f->t, 0x7000, NS_L7_READ, resp, 1 * SEC + 4);
	assert_true(requests(f) == 1);
	bind_session(f->t, 0xaaa, 0x7000, 1 * SEC + 5);
	feed(f->t, 0x7000, NS_L7_READ, resp, 1 * SEC + 6);
	assert_true(requests(f) == 2);
}

static void test_unbound_never_bound_is_counted(void **state)
{
	struct fixture *f = *state;
	feed_unbound(f->t, 0xccc, req, 1 * SEC);
	/* Much later, another: the first has waited too long and is given up. */
	feed_unbound(f->t, 0xddd, req, 100 * SEC);
	bind_session(f->t, 0xccc, 0x8000, 100 * SEC);
	feed(f->t, 0x8000, NS_L7_READ, resp, 100 * SEC + 1);
	assert_true(requests(f) == 0);
	struct strbuf out = { 0 };
	metric_registry_write(f->r, &out);
	assert_non_null(strstr(out.buf, "\nnodescope_l7_tls_unbound_dropped_total 1\n"));
	strbuf_free(&out);
}

static void test_malformed_bind_is_refused(void **state)
{
	struct fixture *f = *state;
	struct ns_l7_event e = { .op = NS_L7_BIND, .total = 4, .captured = 4 };
	assert_int_equal(l7_tracker_on_record(f->t, &e, NS_L7_HEADER_SIZE + 4), -EINVAL);
}

/* A series' value in the exposition ("" labels: none), -1 when absent. */
static double exposed(struct fixture *f, const char *series)
{
	struct strbuf out = { 0 };
	double v = -1;
	metric_registry_write(f->r, &out);
	char key[256];
	snprintf(key, sizeof(key), "\n%s ", series);
	const char *p = strstr(out.buf, key);
	if (p)
		v = strtod(p + strlen(key), NULL);
	strbuf_free(&out);
	return v;
}

#define REDIS_OUT "container_redis_queries_total{container_id=\"/\",destination=\"0.0.0.0:0\"," \
		  "actual_destination=\"0.0.0.0:0\",status="

static void test_pipelined_redis_requests_each_paired(void **state)
{
	struct fixture *f = *state;
	static const char cmds[] = "*1\r\n$4\r\nPING\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"
				   "*2\r\n$4\r\nLPOP\r\n$1\r\nk\r\n";
	feed_bytes(f->t, 0x9000, NS_L7_WRITE, 0, cmds, strlen(cmds), 1 * SEC);
	/* The answers come in two reads; the third is an error. */
	feed_bytes(f->t, 0x9000, NS_L7_READ, 0, "+PONG\r\n+OK\r\n", 12, 1 * SEC + 1000);
	static const char err[] = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
	feed_bytes(f->t, 0x9000, NS_L7_READ, 0, err, strlen(err), 1 * SEC + 2000);
	assert_true(exposed(f, REDIS_OUT "\"ok\"}") == 2);
	assert_true(exposed(f, REDIS_OUT "\"failed\"}") == 1);
	/* One more answer than requests: unpaired, counted for redis. */
	feed_bytes(f->t, 0x9000, NS_L7_READ, 0, "+OK\r\n", 5, 1 * SEC + 3000);
	assert_true(exposed(f, "nodescope_l7_unpaired_total{proto=\"redis\"}") == 1);
	assert_true(exposed(f, "nodescope_l7_messages_total{proto=\"redis\"}") == 7);
	/* The counts outlive the connection. */
	l7_tracker_conn_closed(f->t, 0x9000, 7, 2 * SEC);
	l7_tracker_reap(f->t, 0);
	assert_true(exposed(f, "nodescope_l7_unpaired_total{proto=\"redis\"}") == 1);
}

/*
 * Ten pipelined HTTP requests, the queue of those awaiting an answer wrapped
 * and grown on the way: each answer pairs with its own request. A HEAD's
 * answer has no body although it says Content-Length: paired with any other
 * request, the parser would take the next answer's head for that body.
 */
static void test_pipelined_http_requests_each_paired(void **state)
{
	struct fixture *f = *state;
	static const char get[] = "GET /p HTTP/1.1\r\nHost: x\r\n\r\n";
	static const char head[] = "HEAD /p HTTP/1.1\r\nHost: x\r\n\r\n";
	static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
	static const char ok_head[] = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n";
	char answers[1024] = "";

	for (int i = 1; i <= 3; i++)
		feed_bytes(f->t, 0xd000, NS_L7_WRITE, 0, get, strlen(get), (uint64_t)i * SEC);
	feed_bytes(f->t, 0xd000, NS_L7_READ, 0, ok, strlen(ok), 4 * SEC);
	feed_bytes(f->t, 0xd000, NS_L7_READ, 0, ok, strlen(ok), 5 * SEC);
	for (int i = 4; i <= 10; i++) {
		const char *r = i == 7 ? head : get;
		feed_bytes(f->t, 0xd000, NS_L7_WRITE, 0, r, strlen(r), (uint64_t)(i + 2) * SEC);
	}
	for (int i = 3; i <= 10; i++)
		strcat(answers, i == 7 ? ok_head : ok);
	feed_bytes(f->t, 0xd000, NS_L7_READ, 0, answers, strlen(answers), 20 * SEC);
	assert_true(requests(f) == 10);
	assert_true(exposed(f, "nodescope_l7_unparseable_total{proto=\"http\"}") == 0);
	assert_true(exposed(f, "nodescope_l7_unpaired_total{proto=\"http\"}") == 0);
}

static void test_latency_runs_to_the_first_chunk_of_the_answer(void **state)
{
	struct fixture *f = *state;
	static const char get[] = "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n";
	char big[3000];
	feed_bytes(f->t, 0xc000, NS_L7_WRITE, 0, get, strlen(get), 1 * SEC);
	/* A 2000-byte value read in two parts, the second 900 ms later. */
	memcpy(big, "$2000\r\n", 7);
	memset(big + 7, 'x', sizeof(big) - 7);
	feed_bytes(f->t, 0xc000, NS_L7_READ, 0, big, 1007, 1 * SEC + 1000000);
	memcpy(big + 1000, "\r\n", 2);
	feed_bytes(f->t, 0xc000, NS_L7_READ, 0, big, 1002, 1 * SEC + 900000000);
	/* Then two pipelined answers, both in one later read, each from that read. */
	static const char two[] = "*2\r\n$3\r\nGET\r\n$1\r\na\r\n*2\r\n$3\r\nGET\r\n$1\r\nb\r\n";
	feed_bytes(f->t, 0xc000, NS_L7_WRITE, 0, two, strlen(two), 2 * SEC);
	feed_bytes(f->t, 0xc000, NS_L7_READ, 0, "$-1\r\n$-1\r\n", 10, 2 * SEC + 2000000);
	/* 1 ms + 2 ms + 2 ms, not 900 ms + ... */
	double sum = exposed(f, "container_redis_queries_duration_seconds_total_sum{container_id=\"/\","
				"destination=\"0.0.0.0:0\",actual_destination=\"0.0.0.0:0\"}");
	assert_true(sum > 0.0049 && sum < 0.0051);
}

/* A PostgreSQL message: type, length, body. */
static size_t pg(uint8_t *out, char type, const void *body, size_t n)
{
	uint32_t len = (uint32_t)n + 4;
	out[0] = (uint8_t)type;
	out[1] = len >> 24, out[2] = len >> 16, out[3] = len >> 8, out[4] = (uint8_t)len;
	memcpy(out + 5, body, n);
	return 5 + n;
}

static void test_postgres_server_side_with_its_error_code(void **state)
{
	struct fixture *f = *state;
	uint8_t b[512];
	size_t n;
	/* The server reads the client's queries (inbound), writes the answers. */
	n = pg(b, 'Q', "SELECT * FROM missing WHERE secret = 'hunter2'", 47);
	feed_bytes(f->t, 0xa000, NS_L7_READ, NS_L7_F_INBOUND, b, n, 1 * SEC);
	static const char fields[] = "SERROR\0C42P01\0Mrelation does not exist\0";
	n = pg(b, 'E', fields, sizeof(fields)); /* the last NUL ends the fields */
	n += pg(b + n, 'Z', "I", 1);
	feed_bytes(f->t, 0xa000, NS_L7_WRITE, NS_L7_F_INBOUND, b, n, 1 * SEC + 5000);
	n = pg(b, 'Q', "SELECT 1", 9);
	feed_bytes(f->t, 0xa000, NS_L7_READ, NS_L7_F_INBOUND, b, n, 2 * SEC);
	n = pg(b, 'C', "SELECT 1", 9);
	n += pg(b + n, 'Z', "I", 1);
	feed_bytes(f->t, 0xa000, NS_L7_WRITE, NS_L7_F_INBOUND, b, n, 2 * SEC + 5000);
	assert_true(exposed(f, "container_postgres_inbound_queries_total{container_id=\"/\","
			       "status=\"failed\"}") == 1);
	assert_true(exposed(f, "container_postgres_inbound_queries_total{container_id=\"/\","
			       "status=\"ok\"}") == 1);
	assert_true(exposed(f, "container_postgres_inbound_queries_duration_seconds_total_count{"
			       "container_id=\"/\"}") == 2);
}

static void test_first_query_is_dated_by_its_own_chunks_not_the_startup(void **state)
{
	struct fixture *f = *state;
	uint8_t b[512];
	size_t n;
	/* The startup message and its answer (no request, no reply) 4 ms apart... */
	static const uint8_t startup[] = { 0, 0, 0, 17, 0, 3, 0, 0, 'u', 's', 'e', 'r', 0, 'p', 0, 0, 0 };
	feed_bytes(f->t, 0xd000, NS_L7_WRITE, 0, startup, sizeof(startup), 1 * SEC);
	n = pg(b, 'R', "\0\0\0\0", 4);
	n += pg(b + n, 'Z', "I", 1);
	feed_bytes(f->t, 0xd000, NS_L7_READ, 0, b, n, 1 * SEC + 4000000);
	/* ...then a query answered in 1 ms: its latency is that 1 ms. */
	n = pg(b, 'Q', "SELECT 1", 9);
	feed_bytes(f->t, 0xd000, NS_L7_WRITE, 0, b, n, 2 * SEC);
	n = pg(b, 'C', "SELECT 1", 9);
	n += pg(b + n, 'Z', "I", 1);
	feed_bytes(f->t, 0xd000, NS_L7_READ, 0, b, n, 2 * SEC + 1000000);
	double sum = exposed(f, "container_postgres_queries_duration_seconds_total_sum{container_id=\"/\","
				"destination=\"0.0.0.0:0\",actual_destination=\"0.0.0.0:0\"}");
	assert_true(sum > 0.00099 && sum < 0.00101);
}

static void test_postgres_inside_tls_after_its_ssl_request(void **state)
{
	struct fixture *f = *state;
	uint8_t b[512];
	size_t n;
	/* SSLRequest and 'S' in the clear, then the handshake, then plaintext from the library. */
	static const uint8_t ssl_request[] = { 0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f };
	feed_bytes(f->t, 0xb000, NS_L7_WRITE, 0, ssl_request, sizeof(ssl_request), 1 * SEC);
	feed_bytes(f->t, 0xb000, NS_L7_READ, 0, "S", 1, 1 * SEC + 1);
	static const uint8_t startup[] = { 0, 0, 0, 17, 0, 3, 0, 0, 'u', 's', 'e', 'r', 0, 'p', 0, 0, 0 };
	feed_bytes(f->t, 0xb000, NS_L7_WRITE, NS_L7_F_TLS, startup, sizeof(startup), 1 * SEC + 2);
	n = pg(b, 'R', "\0\0\0\0", 4);
	n += pg(b + n, 'Z', "I", 1);
	feed_bytes(f->t, 0xb000, NS_L7_READ, NS_L7_F_TLS, b, n, 1 * SEC + 3);
	n = pg(b, 'Q', "SELECT 1", 9);
	feed_bytes(f->t, 0xb000, NS_L7_WRITE, NS_L7_F_TLS, b, n, 2 * SEC);
	n = pg(b, 'C', "SELECT 1", 9);
	n += pg(b + n, 'Z', "I", 1);
	feed_bytes(f->t, 0xb000, NS_L7_READ, NS_L7_F_TLS, b, n, 2 * SEC + 1);
	assert_true(exposed(f, "container_postgres_queries_total{container_id=\"/\","
			       "destination=\"0.0.0.0:0\",actual_destination=\"0.0.0.0:0\","
			       "status=\"ok\"}") == 1);
	assert_true(exposed(f, "nodescope_l7_unpaired_total{proto=\"postgres\"}") == 0);
}

static void test_header_read_apart_from_its_body(void **state)
{
	struct fixture *f = *state;
	/* A MySQL server reads a packet's 4-byte header, then its body; twice. */
	static const uint8_t head[] = { 9, 0, 0, 0 }, body[] = "\x03SELECT 1";
	static const uint8_t ok[] = { 7, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0 };
	for (int i = 0; i < 2; i++) {
		feed_bytes(f->t, 0xf000, NS_L7_READ, NS_L7_F_INBOUND, head, 4, (2 + i) * SEC);
		feed_bytes(f->t, 0xf000, NS_L7_READ, NS_L7_F_INBOUND, body, 9, (2 + i) * SEC + 10);
		feed_bytes(f->t, 0xf000, NS_L7_WRITE, NS_L7_F_INBOUND, ok, sizeof(ok), (2 + i) * SEC + 99);
	}
	assert_true(exposed(f, "container_mysql_inbound_queries_total{container_id=\"/\","
			       "status=\"ok\"}") == 2);
}

/* A DNS question for NAME (a length-prefixed label form) of type A, and its answer with addresses. */
static size_t dns_question(uint8_t *b, uint16_t id, const char *name)
{
	size_t n = strlen(name) + 1;
	uint8_t h[12] = { id >> 8, id & 0xff, 1, 0, 0, 1 };
	memcpy(b, h, 12);
	memcpy(b + 12, name, n);
	memcpy(b + 12 + n, "\0\1\0\1", 4);
	return 12 + n + 4;
}

static size_t dns_answer(uint8_t *b, uint16_t id, const char *name, const uint8_t (*ips)[4], unsigned k)
{
	size_t n = dns_question(b, id, name);
	b[2] = 0x81, b[3] = 0x80, b[7] = (uint8_t)k;
	for (unsigned i = 0; i < k; i++) {
		static const uint8_t rr[] = { 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4 };
		memcpy(b + n, rr, sizeof(rr));
		memcpy(b + n + sizeof(rr), ips[i], 4);
		n += sizeof(rr) + 4;
	}
	return n;
}

static void test_dns_counts_and_maps_addresses(void **state)
{
	struct fixture *f = *state;
	uint8_t b[512];
	size_t n;
	static const uint8_t one[][4] = { { 10, 1, 2, 3 } }, fanout[][4] = { { 93, 184, 216, 34 },
									  { 93, 184, 216, 35 } };
	n = dns_question(b, 0x101, "\1a\4test");
	feed_bytes(f->t, 0xd000, NS_L7_WRITE, NS_L7_F_DNS, b, n, 1 * SEC);
	n = dns_question(b, 0x202, "\1p\4test");
	feed_bytes(f->t, 0xd000, NS_L7_WRITE, NS_L7_F_DNS, b, n, 1 * SEC);
	/* Answered out of order, each by its id. */
	n = dns_answer(b, 0x202, "\1p\4test", fanout, 2);
	feed_bytes(f->t, 0xd000, NS_L7_READ, NS_L7_F_DNS, b, n, 1 * SEC + 2000);
	n = dns_answer(b, 0x101, "\1a\4test", one, 1);
	feed_bytes(f->t, 0xd000, NS_L7_READ, NS_L7_F_DNS, b, n, 1 * SEC + 1000);
	n = dns_answer(b, 0x303, "\1a\4test", one, 1); /* asked by nobody */
	feed_bytes(f->t, 0xd000, NS_L7_READ, NS_L7_F_DNS, b, n, 1 * SEC + 1000);
	assert_true(exposed(f, "container_dns_requests_total{container_id=\"/\",request_type=\"TypeA\","
			       "domain=\"a.test\",status=\"ok\"}") == 1);
	assert_true(exposed(f, "container_dns_requests_total{container_id=\"/\",request_type=\"TypeA\","
			       "domain=\"p.test\",status=\"ok\"}") == 1);
	assert_true(exposed(f, "ip_to_fqdn{ip=\"10.1.2.3\",fqdn=\"a.test\"}") == 1);
	/* A public domain's fan-out is not mapped address by address. */
	assert_true(exposed(f, "ip_to_fqdn{ip=\"93.184.216.34\",fqdn=\"p.test\"}") == -1);
	assert_true(exposed(f, "nodescope_l7_unpaired_total{proto=\"dns\"}") == 1);
	/* The server's side: it reads the question and writes the answer. */
	n = dns_question(b, 0x404, "\1a\4test");
	feed_bytes(f->t, 0xe000, NS_L7_READ, NS_L7_F_DNS | NS_L7_F_INBOUND, b, n, 2 * SEC);
	n = dns_answer(b, 0x404, "\1a\4test", one, 1);
	feed_bytes(f->t, 0xe000, NS_L7_WRITE, NS_L7_F_DNS | NS_L7_F_INBOUND, b, n, 2 * SEC + 500);
	assert_true(exposed(f, "container_dns_inbound_requests_total{container_id=\"/\","
			       "status=\"unknown\"}") == 1);
}

/* Coroot's --exclude-http-requests-by-path: outbound HTTP/1 requests by path, counted apart. */
static const char exclude_text[] = "/health* /{ready,live}z";
static const struct ns_globs exclude = { 2, { { exclude_text, 8 }, { exclude_text + 9, 14 } } };

static int setup_exclude(void **state)
{
	return setup_with(state, (struct l7_tracker_opts){ .http_exclude = &exclude });
}

static void test_http_requests_excluded_by_path(void **state)
{
	struct fixture *f = *state;
	struct l7_tracker *t = f->t;
	static const char *const paths[] = { "/healthz", "/livez", "/ok", "/health/deep?x=1",
					     "/api/healthz" };
	for (size_t i = 0; i < 5; i++) {
		char r[128];
		snprintf(r, sizeof(r), "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", paths[i]);
		feed(t, 0x9000, NS_L7_WRITE, r, (i + 1) * SEC);
		feed(t, 0x9000, NS_L7_READ, resp, (i + 1) * SEC + 5);
	}
	assert_true(requests(f) == 2); /* /ok and /api/healthz */
	struct strbuf out = STRBUF_INIT;
	metric_registry_write(f->r, &out);
	assert_non_null(strstr(strbuf_str(&out), "\nnodescope_l7_http_requests_excluded_total 3\n"));
	strbuf_free(&out);
}

/* A destination Coroot leaves out (tcp_tracker_destination says so): its requests are not counted. */
static bool leave_out(void *ctx, const struct ns_l7_sock *s, uint32_t pid, char *dest,
		      char *actual)
{
	snprintf(dest, 64, "203.0.113.7:80");
	snprintf(actual, 64, "203.0.113.7:80");
	return false;
}

static int setup_left_out(void **state)
{
	return setup_with(state, (struct l7_tracker_opts){ .destination = leave_out });
}

static void test_requests_to_a_destination_left_out_are_not_counted(void **state)
{
	struct fixture *f = *state;
	struct l7_tracker *t = f->t;
	feed(t, 0xa000, NS_L7_WRITE, req, 1 * SEC);
	feed(t, 0xa000, NS_L7_READ, resp, 1 * SEC + 5);
	struct strbuf out = STRBUF_INIT;
	metric_registry_write(f->r, &out);
	assert_null(strstr(strbuf_str(&out), "container_http_requests_total{"));
	strbuf_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_response_read_after_the_close_is_paired, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_records_before_any_state_find_the_closed_connection,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_reaped_after_the_grace_period, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_table_makes_room_from_closed_connections,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_unbound_write_waits_for_its_bind, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unbound_never_bound_is_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed_bind_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pipelined_http_requests_each_paired, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pipelined_redis_requests_each_paired, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_postgres_server_side_with_its_error_code, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_latency_runs_to_the_first_chunk_of_the_answer,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_dns_counts_and_maps_addresses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_requests_excluded_by_path, setup_exclude,
						teardown),
		cmocka_unit_test_setup_teardown(test_requests_to_a_destination_left_out_are_not_counted,
						setup_left_out, teardown),
		cmocka_unit_test_setup_teardown(test_header_read_apart_from_its_body, setup, teardown),
		cmocka_unit_test_setup_teardown(test_first_query_is_dated_by_its_own_chunks_not_the_startup, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_postgres_inside_tls_after_its_ssl_request, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
