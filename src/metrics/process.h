/*
 * The standard process_* families about the agent itself (the names and
 * meanings every Prometheus client library exports): CPU, memory, file
 * descriptors and start time, read from /proc/self at each exposition.
 */
#ifndef NODESCOPE_METRICS_PROCESS_H
#define NODESCOPE_METRICS_PROCESS_H

#include <stdint.h>

struct metric_registry;
struct process_metrics;

/* What /proc/self/stat says (pure parse, for tests). */
struct process_stat {
	uint64_t utime_ticks, stime_ticks; /* clock ticks (sysconf(_SC_CLK_TCK)) */
	uint64_t start_ticks;		   /* since boot, in clock ticks */
	uint64_t vsize_bytes;
	uint64_t rss_pages;
};

/* Parses the text of /proc/PID/stat. Returns 0 or -EINVAL. */
int process_stat_parse(const char *text, struct process_stat *out);

/* Registers the families and their collector. proc: "/proc" (tests may give another). */
int process_metrics_new(struct metric_registry *r, const char *proc,
			struct process_metrics **out);
void process_metrics_free(struct process_metrics *p);

#endif
