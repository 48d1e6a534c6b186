/* src/l7/pair.c: exact request/response pairing, in order and by id. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "l7_harness.h"

struct got {
	struct h_out o;
};

static void on_pair(void *ctx, const struct l7_pending *req, enum l7_status st, const char *code,
		    bool skipped)
{
	struct got *g = ctx;
	h_printf(&g->o, "%s@%llu=%s%s%s%s;", req->op, (unsigned long long)req->ts_ns,
		 l7_status_name(st), code[0] ? ":" : "", code, skipped ? "(skipped)" : "");
}

static void req(struct l7_pair *p, enum l7_msg_kind kind, const char *op, uint64_t id, uint64_t ts)
{
	struct l7_msg m = { .kind = kind, .has_id = true, .id = id };
	snprintf(m.op, sizeof(m.op), "%s", op);
	l7_pair_request(p, &m, ts);
}

static void resp(struct l7_pair *p, enum l7_msg_kind kind, enum l7_status st, const char *code,
		 uint64_t id, struct got *g)
{
	struct l7_msg m = { .kind = kind, .status = st, .has_id = true, .id = id };
	snprintf(m.code, sizeof(m.code), "%s", code);
	l7_pair_response(p, &m, on_pair, g);
}

/* Pipelined requests each get their own response, in order: their own latency and status. */
static void test_fifo_pipelined(void **state)
{
	struct l7_pair p;
	struct l7_counters c = { 0 };
	struct got g = { 0 };
	l7_pair_init(&p, L7_PAIR_FIFO, &c);
	req(&p, L7_MSG_REQUEST, "GET", 0, 10);
	req(&p, L7_MSG_REQUEST, "SET", 0, 11);
	req(&p, L7_MSG_REQUEST, "INCR", 0, 12);
	resp(&p, L7_MSG_RESPONSE, L7_STATUS_OK, "", 0, &g);
	resp(&p, L7_MSG_RESPONSE, L7_STATUS_FAILED, "ERR", 0, &g);
	resp(&p, L7_MSG_RESPONSE, L7_STATUS_OK, "", 0, &g);
	assert_string_equal(g.o.s, "GET@10=ok;SET@11=failed:ERR;INCR@12=ok;");
	resp(&p, L7_MSG_RESPONSE, L7_STATUS_OK, "", 0, &g);
	assert_int_equal(c.unpaired, 1);
	/* a request without reply and a push take no part */
	req(&p, L7_MSG_REQUEST_NOREPLY, "set", 0, 13);
	resp(&p, L7_MSG_PUSH, L7_STATUS_OK, "", 0, &g);
	assert_int_equal(l7_pair_waiting(&p), 0);
	assert_int_equal(c.unpaired, 1);
	l7_pair_free(&p);
}

/*
 * PostgreSQL's batch: Execute, Execute, Execute, Sync. The second fails: the
 * server skips the third up to Sync, and ReadyForQuery reports it skipped.
 */
static void test_fifo_sync_batch(void **state)
{
	struct l7_pair p;
	struct l7_counters c = { 0 };
	struct got g = { 0 };
	l7_pair_init(&p, L7_PAIR_FIFO, &c);
	req(&p, L7_MSG_REQUEST, "A", 0, 1);
	req(&p, L7_MSG_REQUEST, "B", 0, 2);
	req(&p, L7_MSG_REQUEST, "C", 0, 3);
	req(&p, L7_MSG_SYNC, "", 0, 4);
	req(&p, L7_MSG_REQUEST, "D", 0, 5);
	req(&p, L7_MSG_SYNC, "", 0, 6);
	resp(&p, L7_MSG_RESPONSE, L7_STATUS_OK, "", 0, &g);
	resp(&p, L7_MSG_RESPONSE, L7_STATUS_FAILED, "22012", 0, &g);
	resp(&p, L7_MSG_SYNC_REPLY, L7_STATUS_OK, "", 0, &g);
	assert_string_equal(g.o.s, "A@1=ok;B@2=failed:22012;C@3=failed(skipped);");
	/* the next batch is untouched */
	resp(&p, L7_MSG_RESPONSE, L7_STATUS_OK, "", 0, &g);
	resp(&p, L7_MSG_SYNC_REPLY, L7_STATUS_OK, "", 0, &g);
	assert_string_equal(g.o.s, "A@1=ok;B@2=failed:22012;C@3=failed(skipped);D@5=ok;");
	assert_int_equal(l7_pair_waiting(&p), 0);
	assert_int_equal(c.unpaired, 0);
	/* a reply to something untracked before a barrier (a Parse alone) does not take the barrier */
	req(&p, L7_MSG_SYNC, "", 0, 7);
	resp(&p, L7_MSG_RESPONSE, L7_STATUS_FAILED, "42601", 0, &g);
	assert_int_equal(l7_pair_waiting(&p), 1);
	resp(&p, L7_MSG_SYNC_REPLY, L7_STATUS_OK, "", 0, &g);
	assert_int_equal(l7_pair_waiting(&p), 0);
	l7_pair_free(&p);
}

/* A simple Query: its statements' replies fold into it, ReadyForQuery completes it. */
static void test_fifo_until_sync(void **state)
{
	struct l7_pair p;
	struct got g = { 0 };
	l7_pair_init(&p, L7_PAIR_FIFO, NULL);
	req(&p, L7_MSG_REQUEST_UNTIL_SYNC, "Q1", 0, 1);
	req(&p, L7_MSG_REQUEST_UNTIL_SYNC, "Q2", 0, 2);
	resp(&p, L7_MSG_RESPONSE, L7_STATUS_OK, "", 0, &g);
	resp(&p, L7_MSG_RESPONSE, L7_STATUS_FAILED, "42P01", 0, &g);
	resp(&p, L7_MSG_RESPONSE, L7_STATUS_FAILED, "XXXXX", 0, &g);
	assert_string_equal(g.o.s, "");
	resp(&p, L7_MSG_SYNC_REPLY, L7_STATUS_OK, "", 0, &g);
	resp(&p, L7_MSG_RESPONSE, L7_STATUS_OK, "", 0, &g);
	resp(&p, L7_MSG_SYNC_REPLY, L7_STATUS_OK, "", 0, &g);
	assert_string_equal(g.o.s, "Q1@1=failed:42P01;Q2@2=ok;");
	l7_pair_free(&p);
}

/*
 * A full queue: the requests that found no room keep their place, so the
 * responses after them still pair with the right requests.
 */
static void count_pair(void *ctx, const struct l7_pending *req, enum l7_status st,
		       const char *code, bool skipped)
{
	struct got *g = ctx;
	g->o.n++;
	snprintf(g->o.s, sizeof(g->o.s), "%s@%llu=%s", req->op, (unsigned long long)req->ts_ns,
		 l7_status_name(st));
}

static void test_fifo_full(void **state)
{
	struct l7_pair p;
	struct l7_counters c = { 0 };
	struct got g = { 0 };
	char op[16], last[32];
	l7_pair_init(&p, L7_PAIR_FIFO, &c);
	for (unsigned i = 0; i < L7_PAIR_MAX + 3; i++) {
		snprintf(op, sizeof(op), "r%u", i);
		req(&p, L7_MSG_REQUEST, op, 0, i);
	}
	assert_int_equal(c.table_full, 3);
	assert_int_equal(l7_pair_waiting(&p), L7_PAIR_MAX);
	struct l7_msg ok = { .kind = L7_MSG_RESPONSE, .status = L7_STATUS_OK };
	for (unsigned i = 0; i < L7_PAIR_MAX + 3; i++)
		l7_pair_response(&p, &ok, count_pair, &g);
	assert_int_equal(c.unpaired, 0);
	assert_int_equal(g.o.n, L7_PAIR_MAX); /* the 3 ghosts' answers passed over */
	snprintf(last, sizeof(last), "r%u@%u=ok", L7_PAIR_MAX - 1, L7_PAIR_MAX - 1);
	assert_string_equal(g.o.s, last);
	/* the next request pairs with the next response, not with an older one */
	req(&p, L7_MSG_REQUEST, "next", 0, 99);
	struct l7_msg failed = { .kind = L7_MSG_RESPONSE, .status = L7_STATUS_FAILED };
	l7_pair_response(&p, &failed, count_pair, &g);
	assert_string_equal(g.o.s, "next@99=failed");
	l7_pair_free(&p);
}

/* Mongo: replies name their request, in any order. */
static void test_by_id(void **state)
{
	struct l7_pair p;
	struct l7_counters c = { 0 };
	struct got g = { 0 };
	l7_pair_init(&p, L7_PAIR_BY_ID, &c);
	req(&p, L7_MSG_REQUEST, "find", 7, 1);
	req(&p, L7_MSG_REQUEST, "insert", 8, 2);
	req(&p, L7_MSG_REQUEST, "drop", 9, 3);
	resp(&p, L7_MSG_RESPONSE, L7_STATUS_FAILED, "26", 9, &g);
	resp(&p, L7_MSG_RESPONSE, L7_STATUS_OK, "", 7, &g);
	resp(&p, L7_MSG_RESPONSE, L7_STATUS_OK, "", 42, &g);
	resp(&p, L7_MSG_RESPONSE, L7_STATUS_OK, "", 8, &g);
	assert_string_equal(g.o.s, "drop@3=failed:26;find@1=ok;insert@2=ok;");
	assert_int_equal(c.unpaired, 1);
	/* full: the oldest goes */
	for (unsigned i = 0; i < L7_PAIR_MAX + 1; i++)
		req(&p, L7_MSG_REQUEST, "x", 100 + i, i);
	assert_int_equal(c.table_full, 1);
	resp(&p, L7_MSG_RESPONSE, L7_STATUS_OK, "", 100, &g);
	assert_int_equal(c.unpaired, 2);
	resp(&p, L7_MSG_RESPONSE, L7_STATUS_OK, "", 100 + L7_PAIR_MAX, &g);
	assert_int_equal(c.unpaired, 2);
	l7_pair_free(&p);
}

/* The counters are data: every field is listed once, and summing adds each. */
static void test_counters(void **state)
{
	struct l7_counters a = { 1, 2, 3, 4, 5, 6 }, sum = { 0 };
	assert_int_equal(l7_n_counter_fields * sizeof(uint64_t), sizeof(struct l7_counters));
	l7_counters_add(&sum, &a);
	l7_counters_add(&sum, &a);
	assert_int_equal(sum.unpaired, 12);
	assert_int_equal(sum.messages, 2);
	assert_string_equal(l7_counter_fields[1].name, "unparseable");
	/* the table names each protocol once, with Coroot's infix */
	const char *names[] = { "postgres", "mysql", "mongo", "clickhouse", "redis", "memcached",
				"kafka", "zookeeper", "nats", "rabbitmq", "cassandra" };
	const size_t n = sizeof(names) / sizeof(names[0]);
	assert_int_equal(l7_n_protos, n);
	for (size_t i = 0; i < n; i++)
		assert_non_null(l7_proto_by_name(names[i]));
	assert_null(l7_proto_by_name("http"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo_pipelined), cmocka_unit_test(test_fifo_sync_batch),
		cmocka_unit_test(test_fifo_until_sync), cmocka_unit_test(test_fifo_full),
		cmocka_unit_test(test_by_id),		cmocka_unit_test(test_counters),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
