/* What the HTTP server serves: /metrics, /api/processes and the web page. */
#ifndef NODESCOPE_HTTP_ROUTES_H
#define NODESCOPE_HTTP_ROUTES_H

#include "util/strbuf.h"

struct metric_registry;
struct proc_table;

struct http_routes {
	struct metric_registry *registry;
	struct proc_table *procs;
};

/* http_handler_fn over struct http_routes. */
int http_routes_handle(void *ctx, const char *path, struct strbuf *body, const char **type);

#endif
