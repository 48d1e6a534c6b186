#include "routes.h"

#include <string.h>

#include "metrics/registry.h"
#include "page.h"
#include "http/server.h"
#include "resources/collector.h"
#include "proc/table.h"
#include "trace/json.h"

struct procs_json {
	struct strbuf *sb;
	int n;
};

static void proc_to_json(void *ctx, const struct proc_entry *e)
{
	struct procs_json *pj = ctx;
	struct strbuf *sb = pj->sb;

	strbuf_puts(sb, pj->n++ ? ",\n" : "\n");
	strbuf_printf(sb, "{\"pid\":%u,\"ppid\":%u,\"comm\":", e->pid, e->ppid);
	json_string(sb, e->comm);
	strbuf_puts(sb, ",\"exe\":");
	json_string(sb, e->exe);
	strbuf_puts(sb, ",\"container\":");
	json_string(sb, proc_entry_container(e));
	strbuf_putc(sb, '}');
}

#define METRICS_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* The containers' resources are read: write the exposition and answer. */
static void metrics_ready(void *ctx)
{
	struct http_request *req = ctx;
	struct http_routes *r = http_request_handler_ctx(req);
	struct strbuf body = STRBUF_INIT;

	metric_registry_write(r->registry, &body);
	http_request_answer(req, 200, &body, METRICS_TYPE);
}

int http_routes_handle(void *ctx, const char *path, struct strbuf *body, const char **type,
		       struct http_request *req)
{
	struct http_routes *r = ctx;

	if (!strcmp(path, "/metrics")) {
		if (r->resources && resources_scrape_begin(r->resources, metrics_ready, req) == 0)
			return HTTP_LATER;
		metric_registry_write(r->registry, body);
		*type = METRICS_TYPE;
		return 200;
	}
	if (!strcmp(path, "/healthz")) {
		struct strbuf why = STRBUF_INIT;
		bool ok = !r->ready || r->ready(r->ready_ctx, &why);
		if (ok)
			strbuf_puts(body, "ok\n");
		else
			strbuf_printf(body, "not ready: %s\n", strbuf_str(&why));
		strbuf_free(&why);
		return ok ? 200 : 503;
	}
	if (!strcmp(path, "/api/processes")) {
		struct procs_json pj = { body, 0 };
		strbuf_putc(body, '[');
		proc_table_foreach(r->procs, proc_to_json, &pj);
		strbuf_puts(body, "\n]\n");
		*type = "application/json";
		return 200;
	}
	if (!strcmp(path, "/")) {
		strbuf_puts(body, http_page_html);
		*type = "text/html; charset=utf-8";
		return 200;
	}
	strbuf_puts(body, "not found: try /, /metrics or /healthz\n");
	return 404;
}
