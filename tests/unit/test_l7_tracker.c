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
#include <sys/socket.h>

#include "events.h"
#include "l7/tracker.h"
#include "metrics/registry.h"
#include "proc/table.h"

#define SEC 1000000000ull

struct fixture {
	struct metric_registry *r;
	struct proc_table *procs;
	struct l7_tracker *t;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	f->r = metric_registry_new();
	f->procs = proc_table_new(16);
	struct l7_tracker_opts o = { .registry = f->r, .procs = f->procs, .max_connections = 4,
				     .max_series = 100 };
	assert_int_equal(l7_tracker_new(&o, &f->t), 0);
	*state = f;
	return 0;
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

static void feed(struct l7_tracker *t, uint64_t sock, uint32_t op, const char *text, uint64_t ts)
{
	struct ns_l7_event *e = calloc(1, sizeof(*e));
	e->op = op;
	e->pid = 42;
	e->ts_ns = ts;
	e->fd = 4;
	e->total = e->captured = (uint32_t)strlen(text);
	e->conn.sock = sock;
	e->conn.start_ns = 7;
	e->conn.family = AF_INET;
	e->conn.flags = NS_L7_F_TLS;
	memcpy(e->data, text, e->captured);
	assert_int_equal(l7_tracker_on_record(t, e, NS_L7_HEADER_SIZE + e->captured), 0);
	free(e);
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
