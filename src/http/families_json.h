/*
 * Metric families as JSON for the web page, read through the registry's
 * generic walk (the one behind every exposition): which families is data (a
 * selection), so a new family (container_<proto>_queries_total, ...) reaches
 * the page with no change here. Pure: no I/O.
 */
#ifndef NODESCOPE_HTTP_FAMILIES_JSON_H
#define NODESCOPE_HTTP_FAMILIES_JSON_H

#include <stdbool.h>
#include <stdint.h>

#include "util/strbuf.h"

struct metric_registry;

/*
 * Which families and series: a family whose name starts with prefix and
 * that has the label with_label (NULL: any), or is named in also (NULL-ended,
 * may be NULL); of those, the series whose label match_label is match_value
 * (match_label NULL: all).
 */
struct families_select {
	const char *prefix;
	const char *with_label;
	const char *const *also;
	const char *match_label;
	const char *match_value;
	bool cached; /* values as they are (metric_registry_visit_cached_at): no collector runs */
};

/*
 * Appends [{"name":N,"type":"counter"|"gauge"|"histogram","labels":[...],
 * "rows":[[v1,..,value],...]},...]: the node's identity labels (the same on
 * every series) left out; a histogram has "bounds":[le,...] (+Inf last, as
 * "+Inf") and each row ends with [cumulative bucket counts...] and the sum
 * instead of a value. Families with no selected series are left out. One
 * line: no newline is written (a server-sent event's data).
 */
void families_json(struct metric_registry *r, uint64_t now_ns, const struct families_select *sel,
		   struct strbuf *out);

/* A number as JSON: integers exact, NaN and infinities as null. */
void json_number(struct strbuf *out, double v);

#endif
