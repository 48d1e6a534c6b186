/*
 * The per-container resource metrics, read when /metrics is scraped and at
 * no other time (no timer, no thread): CPU, memory and pressure from each
 * container's cgroups (cgroup_read.h), CPU and disk delays from taskstats
 * summed over its processes (taskstats.h), its restarts (ctr_table.h) and
 * application types (apptype.h), under Coroot's family names.
 *
 * Which processes are in which container comes from the process table's
 * observer; a container's cgroup directories from one of its processes'
 * /proc/PID/cgroup, read once. A scrape walks the containers in slices
 * (resources_scrape_begin) run as loop work between ring-buffer reads, so a
 * node with many containers does not hold up the event streams; a
 * registry exposition not preceded by one reads everything at once.
 */
#ifndef NODESCOPE_RESOURCES_COLLECTOR_H
#define NODESCOPE_RESOURCES_COLLECTOR_H

#include <stdbool.h>
#include <stdint.h>

struct loop;
struct metric_registry;
struct proc_table;
struct resources;
struct containers_filter;

struct resources_opts {
	struct metric_registry *registry;
	struct proc_table *procs;
	struct loop *loop;
	const char *cgroupfs_root; /* where the cgroup hierarchies are mounted */
	bool keep_standalone;	   /* --keep-standalone-processes: read those containers too */
	const struct containers_filter *filter; /* containers left out whatever their kind; may be NULL */
	unsigned max_series;
	uint64_t gone_after_ns;	   /* a container without processes is forgotten after this */
	uint64_t min_container_age_ns; /* --min-container-age: younger containers' series not written */
};

/*
 * Also sets the registry's container_id policy (metric_registry_set_label_policy):
 * what Coroot makes no container of makes no series (unless keep_standalone),
 * nor what filter leaves out,
 * and a container that lives or lived less than min_container_age_ns is not
 * written, judged from its record here, kept gone_after_ns after its last process.
 */
int resources_new(const struct resources_opts *o, struct resources **out);
void resources_free(struct resources *r);

/*
 * Starts reading every container in slices; done(ctx) is called from the
 * loop once all are read (then the registry's exposition uses what was read
 * and reads nothing itself). A scrape already under way gets done called
 * when it ends too. Returns 0 or -ENOMEM (then nothing is called: expose at
 * once and the exposition reads everything).
 */
int resources_scrape_begin(struct resources *r, void (*done)(void *ctx), void *ctx);

#endif
