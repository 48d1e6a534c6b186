/* The web page's JSON builders: families selected from a registry, recent exits and requests. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "http/families_json.h"
#include "http/recent.h"
#include "metrics/registry.h"
#include "proc/event.h"
#include "trace/trace.h"

#define S 1000000000ull

static struct metric_registry *registry(void)
{
	static const char *const node[] = { "machine_id" };
	static const char *const node_v[] = { "m1" };
	static const char *const out_l[] = { "container_id", "destination", "actual_destination",
					     "status" };
	static const char *const hist_l[] = { "container_id", "destination", "actual_destination" };
	static const char *const listen_l[] = { "container_id", "listen_addr", "proxy" };
	static const char *const cpu_l[] = { "container_id" };
	static const double bounds[] = { 0.01, 0.1 };
	struct metric_registry *r = metric_registry_new();

	assert_int_equal(metric_registry_set_const_labels(r, NULL, 1, node, node_v), 0);
	/* A protocol family the page has never heard of: it is selected by its destination label. */
	struct metric *q = metric_register(r, "container_newproto_queries_total", "", METRIC_COUNTER,
					   0, 4, out_l);
	struct metric *h = metric_register_histogram(
		r, "container_newproto_queries_duration_seconds_total", "", 0, 3, hist_l, bounds, 2);
	struct metric *li = metric_register(r, "container_net_tcp_listen_info", "", METRIC_GAUGE, 0,
					    3, listen_l);
	struct metric *cpu = metric_register(r, "container_resources_cpu_usage_seconds_total", "",
					     METRIC_COUNTER, 0, 1, cpu_l);
	metric_add(q, (const char *const[]){ "/a", "10.0.0.1:5432", "10.0.0.1:5432", "ok" }, 3);
	metric_add(q, (const char *const[]){ "/<script>", "10.0.0.1:5432", "10.0.0.1:5432", "failed" }, 1);
	metric_observe(h, (const char *const[]){ "/a", "10.0.0.1:5432", "10.0.0.1:5432" }, 0.005);
	metric_observe(h, (const char *const[]){ "/a", "10.0.0.1:5432", "10.0.0.1:5432" }, 0.05);
	metric_observe(h, (const char *const[]){ "/b", "10.0.0.2:80", "10.0.0.2:80" }, 1);
	metric_set(li, (const char *const[]){ "/db", "10.0.0.1:5432", "false" }, 1);
	metric_add(cpu, (const char *const[]){ "/a" }, 1.5);
	return r;
}

static void test_map_selection(void **state)
{
	struct metric_registry *r = registry();
	static const char *const also[] = { "container_net_tcp_listen_info", NULL };
	struct families_select sel = { .prefix = "container_", .with_label = "destination", .also = also };
	struct strbuf out = STRBUF_INIT;

	families_json(r, 1, &sel, &out);
	assert_string_equal(
		strbuf_str(&out),
		"[{\"name\":\"container_newproto_queries_total\",\"type\":\"counter\","
		"\"labels\":[\"container_id\",\"destination\",\"actual_destination\",\"status\"],"
		"\"rows\":[[\"/a\",\"10.0.0.1:5432\",\"10.0.0.1:5432\",\"ok\",3],"
		"[\"/<script>\",\"10.0.0.1:5432\",\"10.0.0.1:5432\",\"failed\",1]]},"
		"{\"name\":\"container_newproto_queries_duration_seconds_total\",\"type\":\"histogram\","
		"\"labels\":[\"container_id\",\"destination\",\"actual_destination\"],"
		"\"rows\":[[\"/a\",\"10.0.0.1:5432\",\"10.0.0.1:5432\",[1,2,2],0.055],"
		"[\"/b\",\"10.0.0.2:80\",\"10.0.0.2:80\",[0,0,1],1]],"
		"\"bounds\":[\"0.01\",\"0.1\",\"+Inf\"]},"
		"{\"name\":\"container_net_tcp_listen_info\",\"type\":\"gauge\","
		"\"labels\":[\"container_id\",\"listen_addr\",\"proxy\"],"
		"\"rows\":[[\"/db\",\"10.0.0.1:5432\",\"false\",1]]}]");
	assert_null(strchr(strbuf_str(&out), '\n')); /* one server-sent event's data line */
	strbuf_free(&out);
	metric_registry_free(r);
}

static void test_container_selection(void **state)
{
	struct metric_registry *r = registry();
	struct families_select sel = { .prefix = "container_", .match_label = "container_id",
				       .match_value = "/b" };
	struct strbuf out = STRBUF_INIT;

	families_json(r, 1, &sel, &out);
	assert_string_equal(strbuf_str(&out),
			    "[{\"name\":\"container_newproto_queries_duration_seconds_total\","
			    "\"type\":\"histogram\",\"labels\":[\"container_id\",\"destination\","
			    "\"actual_destination\"],\"rows\":[[\"/b\",\"10.0.0.2:80\",\"10.0.0.2:80\","
			    "[0,0,1],1]],\"bounds\":[\"0.01\",\"0.1\",\"+Inf\"]}]");
	strbuf_reset(&out);
	sel.match_value = "/nobody";
	families_json(r, 1, &sel, &out);
	assert_string_equal(strbuf_str(&out), "[]");
	strbuf_free(&out);
	metric_registry_free(r);
}

static void test_json_number(void **state)
{
	struct strbuf out = STRBUF_INIT;
	json_number(&out, 12);
	strbuf_putc(&out, ' ');
	json_number(&out, 0.25);
	strbuf_putc(&out, ' ');
	json_number(&out, 1.0 / 0.0);
	strbuf_putc(&out, ' ');
	json_number(&out, 0.0 / 0.0);
	assert_string_equal(strbuf_str(&out), "12 0.25 null null");
	strbuf_free(&out);
}

static void exit_of(struct page_recent *r, const char *container, uint32_t pid, uint32_t code,
		    uint32_t sig, uint64_t ts)
{
	struct proc_event e = { .type = NS_PROC_EXIT, .pid = pid, .exit_code = code, .signal = sig,
				.ts_ns = ts, .duration_ns = S / 2 };
	strcpy(e.comm, "<b>x</b>");
	page_recent_on_proc(r, &e, container);
}

static void test_recent_exits(void **state)
{
	struct page_recent *r = page_recent_new();
	struct strbuf out = STRBUF_INIT;

	exit_of(r, "/a", 10, 3, 0, 1 * S);
	exit_of(r, "/b", 11, 0, 9, 2 * S);
	struct proc_event oom = { .type = NS_PROC_OOM_KILL, .pid = 12, .ts_ns = 3 * S };
	strcpy(oom.comm, "hog");
	page_recent_on_proc(r, &oom, "/a");
	struct proc_event exec = { .type = NS_PROC_EXEC, .pid = 13, .ts_ns = 3 * S };
	page_recent_on_proc(r, &exec, "/a"); /* not an exit: not kept */

	page_recent_json(r, "/a", 5 * S, 10, &out);
	assert_string_equal(strbuf_str(&out),
			    "\"exits\":[{\"pid\":12,\"comm\":\"hog\",\"oom\":true,\"code\":0,"
			    "\"signal\":0,\"duration\":0,\"ago\":2},"
			    "{\"pid\":10,\"comm\":\"<b>x</b>\",\"oom\":false,\"code\":3,\"signal\":0,"
			    "\"duration\":0.5,\"ago\":4}],\"requests\":[]");
	/* The ring keeps the newest RECENT_EXITS. */
	for (uint32_t i = 0; i < RECENT_EXITS + 5; i++)
		exit_of(r, "/c", 1000 + i, 0, 0, 10 * S);
	strbuf_reset(&out);
	page_recent_json(r, "/a", 10 * S, 10, &out);
	assert_string_equal(strbuf_str(&out), "\"exits\":[],\"requests\":[]");
	strbuf_reset(&out);
	page_recent_json(r, "/c", 10 * S, 10, &out);
	assert_non_null(strstr(strbuf_str(&out), "{\"pid\":1516,"));
	assert_null(strstr(strbuf_str(&out), "{\"pid\":1004,"));
	assert_non_null(strstr(strbuf_str(&out), "{\"pid\":1005,"));
	strbuf_free(&out);
	page_recent_free(r);
}

static void request(struct page_recent *r, const char *container, const char *path, int status,
		    uint64_t ts)
{
	struct trace_l7 rq = { .proto = "http", .method = "GET", .path = path, .status = status,
			       .ts_ns = ts, .duration_ns = S / 100, .container = container };
	page_recent_on_l7(r, &rq);
}

/* A row found again (tried before the table) is the same row only when every field is. */
static void test_recent_rows_found_again(void **state)
{
	struct page_recent *r = page_recent_new();
	struct strbuf out = STRBUF_INIT;
	struct trace_l7 rq = { .proto = "http", .method = "GET", .path = "/a", .status = 200,
			       .ts_ns = 60 * S, .duration_ns = S / 100, .container = "/c" };

	for (int i = 0; i < 6; i++) {
		rq.inbound = i % 2;	      /* a connection's two ends, in turn */
		rq.path = i < 4 ? "/a" : "/b"; /* then another path, same everything else */
		page_recent_on_l7(r, &rq);
	}
	/* Then one field differs at a time, after the row it differs from was found. */
	rq.inbound = false;
	rq.path = "/a";
	struct trace_l7 other_method = rq, other_proto = rq, other_container = rq, prefix = rq;
	other_method.method = "POST";
	other_proto.proto = "h2";
	other_container.container = "/d";
	prefix.path = "/ab";
	const struct trace_l7 *variants[] = { &other_method, &other_proto, &other_container, &prefix };
	for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
		page_recent_on_l7(r, &rq);
		page_recent_on_l7(r, variants[i]);
	}
	page_recent_json(r, "/c", 61 * S, 10, &out);
	assert_non_null(strstr(strbuf_str(&out), "\"proto\":\"http\",\"inbound\":false,\"method\":\"GET\",\"path\":\"/a\",\"count\":6,"));
	assert_non_null(strstr(strbuf_str(&out), "\"inbound\":false,\"method\":\"POST\",\"path\":\"/a\",\"count\":1,"));
	assert_non_null(strstr(strbuf_str(&out), "\"proto\":\"h2\",\"inbound\":false,\"method\":\"GET\",\"path\":\"/a\",\"count\":1,"));
	assert_non_null(strstr(strbuf_str(&out), "\"inbound\":false,\"method\":\"GET\",\"path\":\"/ab\",\"count\":1,"));
	strbuf_reset(&out);
	page_recent_json(r, "/d", 61 * S, 10, &out);
	assert_non_null(strstr(strbuf_str(&out), "\"inbound\":false,\"method\":\"GET\",\"path\":\"/a\",\"count\":1,"));
	strbuf_reset(&out);
	page_recent_json(r, "/c", 61 * S, 10, &out);
	assert_non_null(strstr(strbuf_str(&out), "\"inbound\":false,\"method\":\"GET\",\"path\":\"/a\",\"count\":6,"));
	assert_non_null(strstr(strbuf_str(&out), "\"inbound\":true,\"method\":\"GET\",\"path\":\"/a\",\"count\":2,"));
	assert_non_null(strstr(strbuf_str(&out), "\"inbound\":false,\"method\":\"GET\",\"path\":\"/b\",\"count\":1,"));
	assert_non_null(strstr(strbuf_str(&out), "\"inbound\":true,\"method\":\"GET\",\"path\":\"/b\",\"count\":1,"));
	strbuf_free(&out);
	page_recent_free(r);
}

static void test_recent_requests(void **state)
{
	struct page_recent *r = page_recent_new();
	struct strbuf out = STRBUF_INIT;

	/* Query strings are cut: /a?x=1 and /a?x=2 are one request. */
	request(r, "/c", "/a?x=1", 200, 60 * S);
	request(r, "/c", "/a?x=2", 500, 600 * S);
	request(r, "/c", "/a", 200, 601 * S);
	request(r, "/c", "/<script>", 404, 602 * S);
	request(r, "/other", "/a", 200, 602 * S);
	page_recent_json(r, "/c", 603 * S, 10, &out);
	assert_string_equal(strbuf_str(&out),
			    "\"exits\":[],\"requests\":["
			    /* 3 since start, 2 in the last 5 minutes (the one at 60 s is older) */
			    "{\"proto\":\"http\",\"inbound\":false,\"method\":\"GET\",\"path\":\"/a\","
			    "\"count\":3,\"errors\":1,\"seconds\":0.03,"
			    "\"recent\":[2,1,0.02]},"
			    "{\"proto\":\"http\",\"inbound\":false,\"method\":\"GET\","
			    "\"path\":\"/<script>\",\"count\":1,\"errors\":0,\"seconds\":0.01,"
			    "\"recent\":[1,0,0.01]}]");
	/* Another protocol: its operation and stripped statement, failed as its parser says. */
	struct trace_l7 pg = { .proto = "postgres", .op = "query", .statement = "SELECT $1 WHERE a = ?",
			       .status_name = "failed", .ts_ns = 602 * S, .duration_ns = S,
			       .container = "/pg", .inbound = true };
	page_recent_on_l7(r, &pg);
	pg.status_name = "ok";
	page_recent_on_l7(r, &pg);
	strbuf_reset(&out);
	page_recent_json(r, "/pg", 603 * S, 10, &out);
	assert_string_equal(strbuf_str(&out),
			    "\"exits\":[],\"requests\":[{\"proto\":\"postgres\",\"inbound\":true,"
			    "\"method\":\"query\",\"path\":\"SELECT $1 WHERE a = ?\",\"count\":2,"
			    "\"errors\":1,\"seconds\":2,\"recent\":[2,1,2]}]");
	/* At most max, the largest counts. */
	strbuf_reset(&out);
	page_recent_json(r, "/c", 603 * S, 1, &out);
	assert_non_null(strstr(strbuf_str(&out), "\"path\":\"/a\""));
	assert_null(strstr(strbuf_str(&out), "script"));
	/* Full: a new key is refused and counted, known keys still count. */
	char path[32];
	for (int i = 0; i < RECENT_REQUESTS + 3; i++) {
		snprintf(path, sizeof(path), "/p%d", i);
		request(r, "/d", path, 200, 700 * S);
	}
	assert_int_equal(*page_recent_refused(r), 3 + 4); /* /c, /other and /pg hold 4 keys */
	request(r, "/c", "/a", 200, 700 * S);
	strbuf_reset(&out);
	page_recent_json(r, "/c", 700 * S, 1, &out);
	assert_non_null(strstr(strbuf_str(&out), "\"count\":4,"));
	strbuf_free(&out);
	page_recent_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map_selection),
		cmocka_unit_test(test_container_selection),
		cmocka_unit_test(test_json_number),
		cmocka_unit_test(test_recent_exits),
		cmocka_unit_test(test_recent_requests),
		cmocka_unit_test(test_recent_rows_found_again),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
