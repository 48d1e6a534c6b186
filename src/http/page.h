/*
 * The web page's data: /api/map (containers and the families with a
 * destination, for the service map), /api/container/<id> (one container's
 * series, processes, recent exits and requests) and /api/events (the map
 * pushed as server-sent events every 2 s while a page has it open; with no
 * page open no timer is armed). The page itself is web/, embedded (assets.h).
 */
#ifndef NODESCOPE_HTTP_PAGE_H
#define NODESCOPE_HTTP_PAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "util/strbuf.h"

struct http_page;
struct http_request;
struct loop;
struct metric_registry;
struct proc_table;
struct trace_tap;

#define HTTP_PAGE_PUSH_NS (2 * 1000000000ull)

int http_page_new(struct loop *l, struct metric_registry *reg, struct proc_table *procs,
		  struct http_page **out);
/* After the HTTP server has stopped (its streams are gone). */
void http_page_free(struct http_page *p);
/* What the page learns from trace's events (recent exits, requests): set it as trace's tap. */
const struct trace_tap *http_page_tap(struct http_page *p);

/* /api/map's JSON (one line) at now_ns; cached: no collector runs (see families_json.h). */
void http_page_map_json(struct http_page *p, uint64_t now_ns, bool cached, struct strbuf *out);
/* /api/container/<id>'s JSON. */
void http_page_container_json(struct http_page *p, const char *id, uint64_t now_ns,
			      struct strbuf *out);
/* /api/events: makes req a stream of the map; returns HTTP_SSE (or 503 without memory). */
int http_page_events(struct http_page *p, struct http_request *req, struct strbuf *body);
/* Pages open now. */
unsigned http_page_streams(const struct http_page *p);

#endif
