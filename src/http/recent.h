/*
 * What the web page shows of a container that the metrics do not keep: its
 * recent exits and OOM kills (code, signal, duration), and its requests by
 * protocol, method and path or statement (query strings cut, statements as
 * the parsers strip them), each counted since start and per minute for the
 * last 5 minutes. Fed by the trace tap; bounded (a full table refuses new
 * requests, counted). Pure: no I/O, times given by the caller.
 */
#ifndef NODESCOPE_HTTP_RECENT_H
#define NODESCOPE_HTTP_RECENT_H

#include <stdint.h>

#include "util/strbuf.h"

struct proc_event;
struct trace_l7;
struct page_recent;

#define RECENT_EXITS 512      /* exits and OOM kills remembered, all containers together */
#define RECENT_REQUESTS 4096  /* request keys (container, protocol, side, method, path) */
#define RECENT_PATH_LEN 200   /* paths and statements are cut to this */

struct page_recent *page_recent_new(void);
void page_recent_free(struct page_recent *r);
/* trace_tap's functions (ctx: the struct page_recent). */
void page_recent_on_proc(void *ctx, const struct proc_event *e, const char *container);
void page_recent_on_l7(void *ctx, const struct trace_l7 *rq);
/* Requests not counted because the table was full. */
const uint64_t *page_recent_refused(const struct page_recent *r);

/*
 * Appends "exits":[...],"requests":[...] for container (no braces): the
 * container's remembered exits, newest first, with "ago" in seconds from
 * now_ns (CLOCK_MONOTONIC); its top requests by count since start (at most
 * max), each with "count","errors","seconds" (summed duration) since start and
 * "recent":[count,errors,seconds] over the last 5 minutes.
 */
void page_recent_json(struct page_recent *r, const char *container, uint64_t now_ns,
		      unsigned max, struct strbuf *out);

#endif
