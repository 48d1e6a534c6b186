/*
 * Turns proc stream records into the process table, per-container metrics
 * and trace lines. Slow work (reading /proc) is queued and done in slices by
 * proc_tracker_work, never while a ring buffer is being read.
 */
#ifndef NODESCOPE_PROC_TRACKER_H
#define NODESCOPE_PROC_TRACKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "table.h"

struct metric_registry;
struct trace;
struct loop;
struct proc_tracker;

struct proc_tracker_opts {
	struct metric_registry *registry;
	struct trace *trace; /* may be NULL */
	struct loop *loop;   /* for the inspection worker */
	size_t max_processes;
	unsigned max_series;
	const char *cgroupfs_root; /* where the host's cgroup hierarchies are mounted */
};

int proc_tracker_new(const struct proc_tracker_opts *o, struct proc_tracker **out);
void proc_tracker_free(struct proc_tracker *t);

/* Learns the processes already running, from /proc. */
int proc_tracker_scan(struct proc_tracker *t);
/* stream_record_fn for the proc stream. */
int proc_tracker_on_record(void *ctx, const void *data, size_t len);

/*
 * The files stream's first exec in a set of cgroups (struct ns_cgroups_event):
 * names their container now, while its cgroups and its runtime's state
 * exist, for the exec's own record, which the batched proc stream may bring
 * after a short-lived container is gone. -EINVAL for another record.
 */
int proc_tracker_on_cgroups(struct proc_tracker *t, const void *data, size_t len);

struct proc_table *proc_tracker_table(struct proc_tracker *t);
/* The cgroup path -> container_id resolver (for its hooks: containers_resolver_on_ports). */
struct containers_resolver *proc_tracker_resolver(struct proc_tracker *t);
/* Container metadata cached from the runtimes is read again when next needed (SIGHUP). */
void proc_tracker_forget_names(struct proc_tracker *t);

/*
 * An exited process stays in the table until reaped, so records it made
 * before its exit that still wait in other streams are attributed when they
 * are read. The caller reads those streams, then reaps the first n exits
 * (the count taken before it read them).
 */
size_t proc_tracker_exited(const struct proc_tracker *t);
void proc_tracker_reap_exited(struct proc_tracker *t, size_t n);

#endif
