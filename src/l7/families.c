/* The L7 families, declared once as a template and instantiated per protocol. See families.h. */
#include "families.h"

#include <errno.h>
#include <stdio.h>

#include "metrics/registry.h"

/* Coroot's buckets. */
const double l7_duration_bounds[L7_DURATION_BOUNDS] = { 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
							 0.5,	1,    2.5,  5,    10 };

static const char *const family_noun[] = {
	[L7_FAMILY_QUERIES] = "queries",
	[L7_FAMILY_REQUESTS] = "requests",
	[L7_FAMILY_MESSAGES] = "messages",
};

#define F struct l7_families
/* %1$s: the protocol, %2$s: the noun. Inbound families have no destination (Coroot's set). */
static const struct metric_def family_template[] = {
	{ "container_%s_%s_total", "Outbound %s %s, by status.", METRIC_COUNTER,
	  METRIC_LABELS("container_id", "destination", "actual_destination", "status"),
	  .capped = true, .expires = true, METRIC_HANDLE(F, count) },
	{ "container_%s_%s_duration_seconds_total",
	  "Outbound %s %s latency: the request's first byte written to the response's first byte "
	  "read.",
	  METRIC_HISTOGRAM, METRIC_LABELS("container_id", "destination", "actual_destination"),
	  METRIC_BOUNDS(l7_duration_bounds), .capped = true, .expires = true, METRIC_HANDLE(F, duration) },
	{ "container_%s_inbound_%s_total", "%s %s the container served, by status.", METRIC_COUNTER,
	  METRIC_LABELS("container_id", "status"), .capped = true, .expires = true,
	  METRIC_HANDLE(F, in_count) },
	{ "container_%s_inbound_%s_duration_seconds_total",
	  "Served %s %s latency: the request's first byte read to the response's first byte "
	  "written.",
	  METRIC_HISTOGRAM, METRIC_LABELS("container_id"), METRIC_BOUNDS(l7_duration_bounds),
	  .capped = true, .expires = true, METRIC_HANDLE(F, in_duration) },
};
/* Messaging protocols: a count by method (produce, consume), nothing else (Coroot's set). */
static const struct metric_def messages_template[] = {
	{ "container_%s_%s_total", "%s %s published (produce) and delivered (consume).",
	  METRIC_COUNTER,
	  METRIC_LABELS("container_id", "destination", "actual_destination", "status", "method"),
	  .capped = true, .expires = true, METRIC_HANDLE(F, count) },
};
#undef F

int l7_families_register(struct metric_registry *r, const char *name, enum l7_family kind,
			 unsigned max_series, struct l7_families *out)
{
	const struct metric_def *tmpl = kind == L7_FAMILY_MESSAGES ? messages_template : family_template;
	size_t n = kind == L7_FAMILY_MESSAGES ? METRIC_DEFS_COUNT(messages_template)
					      : METRIC_DEFS_COUNT(family_template);
	char names[4][128], helps[4][256];
	struct metric_def defs[4];

	if ((unsigned)kind >= sizeof(family_noun) / sizeof(family_noun[0]))
		return -EINVAL;
	*out = (struct l7_families){ .kind = kind };
	for (size_t i = 0; i < n; i++) {
		defs[i] = tmpl[i];
		snprintf(names[i], sizeof(names[i]), tmpl[i].name, name, family_noun[kind]);
		snprintf(helps[i], sizeof(helps[i]), tmpl[i].help, name, family_noun[kind]);
		defs[i].name = names[i];
		defs[i].help = helps[i];
	}
	return metric_register_defs(r, defs, n, out, max_series);
}
