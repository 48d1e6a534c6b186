#include "page.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "families_json.h"
#include "http/server.h"
#include "loop/loop.h"
#include "metrics/registry.h"
#include "proc/table.h"
#include "recent.h"
#include "trace/json.h"
#include "trace/trace.h"
#include "util/clock.h"

#define PAGE_MAX_STREAMS 16 /* pages open at once; one more is refused (503) */
#define PAGE_TOP_REQUESTS 50

struct http_page {
	struct loop *loop;
	struct metric_registry *reg;
	struct proc_table *procs;
	struct page_recent *recent;
	struct trace_tap tap;
	struct loop_timer *timer; /* armed only while a stream is open */
	struct http_server *server;
	struct http_sse *streams[PAGE_MAX_STREAMS];
	unsigned n_streams;
	uint64_t start_mono_ns;
	int64_t mono_to_real_ns;
	uint64_t pushes;
};

/*
 * The map's edges: every container family with a destination (connections
 * and each protocol's requests and their histograms, whatever protocols the
 * L7 tracker counts), the inbound request families, and the listens that
 * tell which container a destination is.
 */
static const char *const map_also[] = { "container_net_tcp_listen_info", NULL };

/* Its containers and how many live processes each has. */
struct count_ctx {
	const char **names;
	unsigned *counts;
	unsigned n, cap;
};

static void count_proc(void *ctx, const struct proc_entry *e)
{
	struct count_ctx *c = ctx;
	const char *name = proc_entry_container(e);

	if (e->exited)
		return;
	for (unsigned i = 0; i < c->n; i++)
		if (c->names[i] == name || !strcmp(c->names[i], name)) {
			c->counts[i]++;
			return;
		}
	if (c->n == c->cap) {
		unsigned cap = c->cap ? c->cap * 2 : 64;
		const char **n = realloc(c->names, cap * sizeof(*n));
		if (n)
			c->names = n;
		unsigned *k = n ? realloc(c->counts, cap * sizeof(*k)) : NULL;
		if (!k)
			return; /* out of memory: the container is left off this once */
		c->counts = k;
		c->cap = cap;
	}
	c->names[c->n] = name;
	c->counts[c->n++] = 1;
}

static void containers_json(struct http_page *p, struct strbuf *out)
{
	struct count_ctx c = { 0 };

	proc_table_foreach(p->procs, count_proc, &c);
	strbuf_putc(out, '[');
	for (unsigned i = 0; i < c.n; i++) {
		strbuf_puts(out, i ? ",[" : "[");
		json_string(out, c.names[i]);
		strbuf_printf(out, ",%u]", c.counts[i]);
	}
	strbuf_putc(out, ']');
	free(c.names);
	free(c.counts);
}

static void times_json(struct http_page *p, uint64_t now_ns, struct strbuf *out)
{
	strbuf_printf(out, "\"now\":%llu,\"uptime\":",
		      (unsigned long long)((int64_t)now_ns + p->mono_to_real_ns) / 1000000ull);
	json_number(out, (now_ns - p->start_mono_ns) / 1e9);
}

void http_page_map_json(struct http_page *p, uint64_t now_ns, bool cached, struct strbuf *out)
{
	struct families_select sel = { .prefix = "container_", .with_label = "destination",
				       .also = map_also, .cached = cached };

	strbuf_putc(out, '{');
	times_json(p, now_ns, out);
	strbuf_puts(out, ",\"containers\":");
	containers_json(p, out);
	strbuf_puts(out, ",\"families\":");
	families_json(p->reg, now_ns, &sel, out);
	strbuf_putc(out, '}');
}

struct procs_of {
	const char *id;
	struct strbuf *out;
	unsigned n;
};

static void proc_of(void *ctx, const struct proc_entry *e)
{
	struct procs_of *c = ctx;

	if (e->exited || strcmp(proc_entry_container(e), c->id))
		return;
	strbuf_printf(c->out, "%s{\"pid\":%u,\"ppid\":%u,\"comm\":", c->n++ ? "," : "", e->pid,
		      e->ppid);
	json_string(c->out, e->comm);
	strbuf_puts(c->out, ",\"exe\":");
	json_string(c->out, e->exe);
	strbuf_putc(c->out, '}');
}

void http_page_container_json(struct http_page *p, const char *id, uint64_t now_ns,
			      struct strbuf *out)
{
	struct families_select sel = { .prefix = "container_", .match_label = "container_id",
				       .match_value = id };
	struct procs_of po = { id, out, 0 };

	strbuf_puts(out, "{\"id\":");
	json_string(out, id);
	strbuf_putc(out, ',');
	times_json(p, now_ns, out);
	strbuf_puts(out, ",\"processes\":[");
	proc_table_foreach(p->procs, proc_of, &po);
	strbuf_puts(out, "],");
	page_recent_json(p->recent, id, now_ns, PAGE_TOP_REQUESTS, out);
	strbuf_puts(out, ",\"families\":");
	families_json(p->reg, now_ns, &sel, out);
	strbuf_puts(out, "}\n");
}

/* One server-sent event: "event: map", its data on one line. */
static void map_event(struct http_page *p, struct strbuf *ev)
{
	strbuf_puts(ev, "event: map\ndata: ");
	http_page_map_json(p, clock_mono_ns(), true, ev);
	strbuf_puts(ev, "\n\n");
}

static void page_push(void *ctx)
{
	struct http_page *p = ctx;
	struct strbuf ev = STRBUF_INIT;

	map_event(p, &ev);
	p->pushes++;
	for (unsigned i = 0; i < p->n_streams; i++)
		http_sse_send(p->streams[i], ev.buf, ev.len); /* a full one: dropped, counted */
	strbuf_free(&ev);
	if (p->server)
		http_server_run(p->server); /* may close streams: page_stream_closed */
}

static void page_stream_closed(void *ctx, struct http_sse *st)
{
	struct http_page *p = ctx;

	for (unsigned i = 0; i < p->n_streams; i++)
		if (p->streams[i] == st) {
			p->streams[i] = p->streams[--p->n_streams];
			break;
		}
	if (!p->n_streams)
		loop_timer_disarm(p->timer); /* no page open: nothing wakes the agent */
}

int http_page_events(struct http_page *p, struct http_request *req, struct strbuf *body)
{
	struct http_sse *st = NULL;

	if (p->n_streams < PAGE_MAX_STREAMS)
		st = http_request_sse(req, page_stream_closed, p);
	if (!st) {
		strbuf_puts(body, "too many pages open\n");
		return 503;
	}
	p->server = http_request_server(req);
	p->streams[p->n_streams++] = st;
	if (!loop_timer_armed(p->timer))
		loop_timer_arm_every(p->timer, HTTP_PAGE_PUSH_NS);
	/* The first map at once: the page draws from it. */
	struct strbuf ev = STRBUF_INIT;
	strbuf_puts(&ev, "retry: 3000\n");
	map_event(p, &ev);
	http_sse_send(st, ev.buf, ev.len);
	strbuf_free(&ev);
	return HTTP_SSE;
}

unsigned http_page_streams(const struct http_page *p)
{
	return p->n_streams;
}

#define T struct http_page
static const struct metric_def page_metrics[] = {
	{ "nodescope_page_updates_total",
	  "Service map updates built for the open web pages (every 2 s while one is open).",
	  METRIC_COUNTER, METRIC_VALUE(T, pushes) },
};
#undef T

int http_page_new(struct loop *l, struct metric_registry *reg, struct proc_table *procs,
		  struct http_page **out)
{
	struct http_page *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->loop = l;
	p->reg = reg;
	p->procs = procs;
	p->start_mono_ns = clock_mono_ns();
	p->mono_to_real_ns = (int64_t)(clock_ns(CLOCK_REALTIME) - p->start_mono_ns);
	p->recent = page_recent_new();
	int err = p->recent ? 0 : -ENOMEM;
	if (!err && l)
		err = loop_timer_new(l, page_push, p, &p->timer);
	if (!err)
		err = metric_register_defs(reg, page_metrics, METRIC_DEFS_COUNT(page_metrics), p, 0);
	if (!err)
		err = metric_register_u64(reg, "nodescope_page_requests_unrecorded_total",
					  "Requests the web page's top-requests table did not count: "
					  "it holds 4096 (container, protocol, method, path) keys.",
					  METRIC_COUNTER, page_recent_refused(p->recent));
	if (err) {
		page_recent_free(p->recent);
		free(p);
		return err;
	}
	p->tap = (struct trace_tap){ page_recent_on_proc, page_recent_on_l7, p->recent };
	*out = p;
	return 0;
}

void http_page_free(struct http_page *p)
{
	if (!p)
		return;
	page_recent_free(p->recent);
	free(p);
}

const struct trace_tap *http_page_tap(struct http_page *p)
{
	return &p->tap;
}
