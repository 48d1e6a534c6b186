#include "routes.h"

#include <stdlib.h>
#include <string.h>

#include "assets.h"
#include "metrics/registry.h"
#include "page.h"
#include "util/clock.h"
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

#define JSON_TYPE "application/json"
#define CONTAINER_PREFIX "/api/container"

/* A container's details wait for its resources to be read, as /metrics does. */
struct container_later {
	struct http_request *req;
	char id[];
};

static void container_ready(void *ctx)
{
	struct container_later *c = ctx;
	struct http_routes *r = http_request_handler_ctx(c->req);
	struct strbuf body = STRBUF_INIT;

	http_page_container_json(r->page, c->id, clock_mono_ns(), &body);
	http_request_answer(c->req, 200, &body, JSON_TYPE);
	free(c);
}

static int container_route(struct http_routes *r, const char *id, struct strbuf *body,
			   const char **type, struct http_request *req)
{
	*type = JSON_TYPE;
	struct container_later *c = r->resources ? malloc(sizeof(*c) + strlen(id) + 1) : NULL;
	if (c) {
		c->req = req;
		strcpy(c->id, id);
		if (resources_scrape_begin(r->resources, container_ready, c) == 0)
			return HTTP_LATER;
		free(c);
	}
	http_page_container_json(r->page, id, clock_mono_ns(), body);
	return 200;
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
	if (r->page && !strcmp(path, "/api/map")) {
		http_page_map_json(r->page, clock_mono_ns(), true, body);
		strbuf_putc(body, '\n');
		*type = JSON_TYPE;
		return 200;
	}
	if (r->page && !strcmp(path, "/api/events")) {
		*type = "text/event-stream; charset=utf-8";
		return http_page_events(r->page, req, body);
	}
	if (r->page && !strncmp(path, CONTAINER_PREFIX "/", strlen(CONTAINER_PREFIX "/")))
		return container_route(r, path + strlen(CONTAINER_PREFIX "/"), body, type, req);
	const struct http_asset *a = http_asset_find(path);
	if (a) {
		strbuf_append(body, a->data, a->len);
		*type = a->type;
		return 200;
	}
	strbuf_puts(body, "not found: try /, /metrics, /healthz, /api/processes, /api/map, "
			  "/api/container/<id> or /api/events\n");
	return 404;
}
