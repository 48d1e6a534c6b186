/*
 * Metric registry: families with fixed label names, series keyed by label
 * values, a cap on series per family, and Prometheus text exposition 0.0.4.
 *
 * Pure: no I/O, no globals. Everything the agent exports goes through here,
 * so that the series cap and its drop counter hold for every metric.
 */
#ifndef NODESCOPE_METRICS_REGISTRY_H
#define NODESCOPE_METRICS_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../util/strbuf.h"

/* node_cloud_info, Coroot's widest family, has 10. */
#define METRIC_MAX_LABELS 12

enum metric_type {
	METRIC_COUNTER,
	METRIC_GAUGE,
	METRIC_HISTOGRAM,
};

#define METRIC_MAX_BUCKETS 16

struct metric_registry;
struct metric;
struct metric_series;

/* Called before every exposition so values kept elsewhere (BPF maps) are fresh. */
typedef void (*metric_collector_fn)(void *ctx);

struct metric_registry *metric_registry_new(void);
void metric_registry_free(struct metric_registry *r);

/*
 * Registers a family. label_names has n_labels entries (0..METRIC_MAX_LABELS).
 * max_series caps distinct label sets (0 = no cap). Names are copied.
 * Returns NULL on invalid name/labels or allocation failure.
 * Registering the same name twice returns the existing family if type and
 * labels match, NULL otherwise.
 */
struct metric *metric_register(struct metric_registry *r, const char *name, const char *help,
			       enum metric_type type, unsigned max_series, unsigned n_labels,
			       const char *const *label_names);

/*
 * Finds or creates the series for label_values (n_labels entries, copied).
 * Returns NULL when creating it would exceed the cap: the registry then counts
 * one drop in nodescope_metric_series_dropped_total{metric="<name>"}.
 */
struct metric_series *metric_series_get(struct metric *m, const char *const *label_values);
void metric_series_add(struct metric_series *s, double v); /* NULL-safe */
void metric_series_set(struct metric_series *s, double v); /* NULL-safe */
double metric_series_value(const struct metric_series *s); /* 0 for NULL */
/* Its i-th label value as stored (cut to --max-label-length). */
const char *metric_series_label(const struct metric_series *s, unsigned i);
/*
 * Series of m freed so far (removed, cleared, expired). A caller that keeps
 * a series handle across events keeps this with it: while it is unchanged,
 * the handle is valid.
 */
uint64_t metric_generation(const struct metric *m);

/* Shorthands: get + add / get + set. */
void metric_add(struct metric *m, const char *const *label_values, double v);
void metric_set(struct metric *m, const char *const *label_values, double v);
/* Removes one series (a gauge of something that is gone). No-op if absent. */
void metric_remove(struct metric *m, const char *const *label_values);
/*
 * Marks an existing series as in use for the idle expiry, as a change would
 * (a destination with an open connection keeps its counters). No-op if absent.
 */
void metric_touch(struct metric *m, const char *const *label_values);
/* Calls fn with each series' label values and value, in creation order; fn must not modify m. */
void metric_foreach_series(const struct metric *m,
			   void (*fn)(void *ctx, const char *const *values, double value), void *ctx);
/*
 * Removes every series of m (NULL-safe): a collector that rebuilds a family
 * from what exists at each scrape (devices, interfaces) starts from nothing,
 * so what is gone is gone from the exposition too.
 */
void metric_clear(struct metric *m);
/* Value of a series, 0 if it does not exist (does not create it). */
double metric_value(struct metric *m, const char *const *label_values);
size_t metric_series_count(const struct metric *m);
/* Drops counted for this family (series refused by the cap). */
unsigned long long metric_dropped(const struct metric *m);

/*
 * Registers a histogram family: bounds are the bucket upper bounds, strictly
 * increasing, n_bounds <= METRIC_MAX_BUCKETS (+Inf is implied). Exposed as
 * <name>_bucket{...,le="..."} (cumulative), <name>_sum and <name>_count.
 * metric_register() with METRIC_HISTOGRAM returns NULL: use this.
 */
struct metric *metric_register_histogram(struct metric_registry *r, const char *name,
					 const char *help, unsigned max_series, unsigned n_labels,
					 const char *const *label_names, const double *bounds,
					 unsigned n_bounds);
/* Records one observation (creates the series; capped like any other). */
void metric_observe(struct metric *m, const char *const *label_values, double v);
/* The same on a series of histogram m (metric_series_get); NULL-safe. */
void metric_series_observe(const struct metric *m, struct metric_series *s, double v);
/* Observations recorded in one series (0 if none); for tests. */
unsigned long long metric_histogram_count(struct metric *m, const char *const *label_values);

/*
 * Labels every series carries (prefixes NULL: the node's identity,
 * machine_id and system_uuid), or every series of the families whose name
 * starts with one of prefixes, a NULL-ended list (one such set: "container_"
 * and "ip_to_fqdn" get az and region), written before each series' own
 * labels. Names must be valid label names; values are copied and escaped
 * once here. Replaces the earlier set of the same kind. Returns 0, or
 * -EINVAL/-ENOMEM.
 */
int metric_registry_set_const_labels(struct metric_registry *r, const char *const *prefixes,
				     unsigned n, const char *const *names,
				     const char *const *values);

/*
 * A label written after the label `from` in every family that has it, its
 * value derived from from's at exposition (app_id from container_id, as
 * Coroot puts both on every container series): no series carries a copy.
 * One derived label per registry. Returns 0 or -EINVAL.
 */
typedef void (*metric_derive_fn)(const char *from_value, char *out, size_t outlen);
int metric_registry_derive_label(struct metric_registry *r, const char *from, const char *name,
				 metric_derive_fn fn);

/*
 * Which series of the families that have the label `label` exist and are
 * written (container_id: Coroot's rules on what is a container, and its
 * --min-container-age). admit(value) false: the series is never made, and
 * an update to it is a no-op counted in
 * nodescope_metric_updates_unreported_total; called when a series would be
 * created, so admit must answer the same for a value every time. show(value,
 * now) false: the series stays but is left out of this exposition. Either may
 * be NULL. One policy per registry. Returns 0 or -EINVAL/-ENOMEM.
 */
struct metric_label_policy {
	bool (*admit)(void *ctx, const char *value);
	bool (*show)(void *ctx, const char *value, uint64_t now_ns);
	void *ctx;
};
int metric_registry_set_label_policy(struct metric_registry *r, const char *label,
				     const struct metric_label_policy *p);

/*
 * The policy label's value `from` becomes `to` in every family that has the
 * label (a container named after its first events, which were kept under
 * its cgroup path): each series of from is merged into to's (values add
 * up: an open connection's gauge counted under from goes down under to) and removed,
 * and an update that still names from (a connection opened before) goes to
 * to's series from now on (the last 1024 renames are remembered). 0,
 * -EINVAL (no policy, or from == to), -ENOMEM.
 */
int metric_registry_rename(struct metric_registry *r, const char *from, const char *to);

/*
 * Label values longer than max bytes are cut to it (at a UTF-8 character
 * boundary) before they key a series, as Coroot's --max-label-length does.
 * 0: no limit (the default).
 */
void metric_registry_set_max_label_length(struct metric_registry *r, size_t max);

void metric_registry_add_collector(struct metric_registry *r, metric_collector_fn fn, void *ctx);

/*
 * A series without labels whose value is *src, read at every exposition: the
 * one way to export a plain counter a module keeps. *src must outlive the
 * registry's use. Returns 0, or -EINVAL/-ENOMEM.
 */
int metric_register_u64(struct metric_registry *r, const char *name, const char *help,
			enum metric_type type, const uint64_t *src);

/*
 * A module's families as data: one table, registered by one call. Each entry
 * says where its handle (struct metric *) or its value (a uint64_t exported
 * as it is at each exposition) lives in the module's own struct, by offset.
 */
struct metric_def {
	const char *name;
	const char *help;
	enum metric_type type;
	unsigned n_labels;
	const char *const *labels;
	const double *bounds; /* histograms: bucket upper bounds */
	unsigned n_bounds;
	bool capped;	      /* the registry-wide series cap applies (per-container families) */
	bool expires;	      /* its series go when idle (metric_registry_set_idle_expiry) */
	long handle;	      /* offset of the struct metric * to fill in, or -1 */
	long value;	      /* offset of a uint64_t exported as it is (no labels), or -1 */
};

#define METRIC_LABELS(...)                                                                   \
	.labels = (const char *const[]){ __VA_ARGS__ },                                        \
	.n_labels = sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(const char *)
#define METRIC_BOUNDS(arr) .bounds = (arr), .n_bounds = sizeof(arr) / sizeof((arr)[0])
/* A family whose series the module sets: handle in field of type T. */
#define METRIC_HANDLE(T, field) .handle = offsetof(T, field), .value = -1
/* A plain counter or gauge the module keeps in field (a uint64_t) of type T. */
#define METRIC_VALUE(T, field) .handle = -1, .value = offsetof(T, field)

/*
 * Registers every entry of defs for owner (the struct the offsets are in);
 * capped entries get max_series. Returns 0, or -EINVAL naming nothing: a
 * table is code, and its test registers it.
 */
int metric_register_defs(struct metric_registry *r, const struct metric_def *defs, size_t n,
			 void *owner, unsigned max_series);
#define METRIC_DEFS_COUNT(defs) (sizeof(defs) / sizeof((defs)[0]))

/*
 * Appends the whole registry in text exposition format 0.0.4: for each family
 * (in registration order) "# HELP", "# TYPE", then its series (in creation
 * order); label values escaped (\\, \", \n); values printed so integers are
 * exact (e.g. "3", not "3.000000") and NaN/+Inf/-Inf as Prometheus spells them.
 * Families without series print HELP/TYPE only. Runs collectors first.
 */
void metric_registry_write(struct metric_registry *r, struct strbuf *out);
/* The same at a given CLOCK_MONOTONIC time (for the idle expiry; tests). */
void metric_registry_write_at(struct metric_registry *r, struct strbuf *out, uint64_t now_ns);

/*
 * The walk behind every exposition, for writers of other formats (remote
 * write): collectors run, idle series expire and the label policy applies
 * as for the text, then family() is called for each family (in registration
 * order; may be NULL) and sample() for each of its samples (a histogram
 * gives its _bucket samples, le last, then _sum and _count). The sample's
 * strings are valid during the call only.
 */
#define METRIC_SAMPLE_MAX_LABELS (3 * METRIC_MAX_LABELS + 2)
struct metric_sample {
	const char *name;   /* the family's */
	const char *suffix; /* "", or _bucket, _sum, _count for a histogram */
	unsigned n_labels;  /* in exposition order: constant labels first, le last */
	const char *label_names[METRIC_SAMPLE_MAX_LABELS];
	const char *label_values[METRIC_SAMPLE_MAX_LABELS];
	double value;
};
struct metric_visitor {
	void (*family)(void *ctx, const char *name, const char *help, enum metric_type type);
	void (*sample)(void *ctx, const struct metric_sample *s);
	void *ctx;
};
void metric_registry_visit_at(struct metric_registry *r, uint64_t now_ns,
			      const struct metric_visitor *v);
/*
 * The same walk over the values as they are: no collector runs and nothing
 * expires (the web page's map, pushed every few seconds, reads no cgroup).
 */
void metric_registry_visit_cached_at(const struct metric_registry *r, uint64_t now_ns,
				     const struct metric_visitor *v);

/*
 * Series of the families declared .expires that have not changed for
 * idle_ns are removed at an exposition (Coroot: a destination idle 10 min,
 * a container 10 min after its last process). A gauge that is not 0 stays.
 * 0: never (the default).
 */
void metric_registry_set_idle_expiry(struct metric_registry *r, uint64_t idle_ns);

#endif
