/* What the HTTP server serves: /metrics, /healthz, /api/... and the web page (assets.h, page.h). */
#ifndef NODESCOPE_HTTP_ROUTES_H
#define NODESCOPE_HTTP_ROUTES_H

#include <stdbool.h>

#include "util/strbuf.h"

struct http_page;
struct http_request;
struct metric_registry;
struct proc_table;
struct resources;

struct http_routes {
	struct metric_registry *registry;
	struct proc_table *procs;
	struct resources *resources; /* NULL: /metrics is written at once */
	/*
	 * /healthz: whether the agent is ready (its programs loaded and its
	 * probes attached); when not, why in why. NULL: always ready.
	 */
	bool (*ready)(void *ctx, struct strbuf *why);
	void *ready_ctx;
	struct http_page *page; /* NULL: no /api/map, /api/container, /api/events */
};

/*
 * http_handler_fn over struct http_routes. /metrics waits for the container
 * resources to be read in slices (resources_scrape_begin), then is written.
 */
int http_routes_handle(void *ctx, const char *path, struct strbuf *body, const char **type,
		       struct http_request *req);

#endif
