/*
 * Containers as the resource metrics see them: each with its processes in
 * start order, its restarts and what the scrape keeps between scrapes (its
 * cgroup directories, delay totals, application types). Pure: no I/O; the
 * process tracker's table tells it who joins and leaves (ctr_table_join /
 * ctr_table_leave), the collector (collector.h) reads the rest at scrapes.
 *
 * Restarts are Coroot's rule (containers/container.go onProcessStart): when
 * a process joins, the earliest start among the container's live processes
 * is compared with the container's start; if it moved forward (every process
 * of the earlier run is gone), that is a restart and the start moves there.
 * Kept in nanoseconds, where Coroot compares taskstats' whole seconds.
 */
#ifndef NODESCOPE_RESOURCES_CTR_TABLE_H
#define NODESCOPE_RESOURCES_CTR_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "resources/cgroup_parse.h"
#include "util/hmap.h"

struct ctr;
struct disk_volumes;

struct ctr_member {
	struct hmap_node node;		/* table->members, by pid */
	struct ctr_member *prev, *next; /* in its container, by start time */
	struct ctr *ctr;
	uint32_t pid;
	uint64_t start_ns;
	/* Scrape state: last taskstats totals of this process (Coroot sums the deltas). */
	uint64_t cpu_delay_ns, disk_delay_ns;
	/* Application types (apptype.h bits) of the program last typed, and which one it was. */
	uint64_t types;
	uint64_t typed_exe; /* hash of the exe typed; 0: not yet */
};

struct ctr {
	struct hmap_node node; /* table->ctrs, by name hash */
	struct ctr_member *head, *tail;
	size_t n_members;
	uint64_t started_at; /* earliest start of the current run, 0 before the first process */
	uint64_t since_ns;   /* its earliest start ever, or when first seen (--min-container-age) */
	uint64_t restarts;
	uint64_t empty_since; /* when the last process left (0 while it has some) */
	/* Scrape state. */
	struct cgroup_dirs *dirs;	 /* NULL until read from a member's /proc/PID/cgroup */
	struct disk_volumes *volumes;	 /* mounts it writes to (disk_read.h); NULL: none seen */
	uint64_t cpu_delay_ns, disk_delay_ns; /* sums of the members' deltas */
	uint64_t types_exported;	 /* application_type series set at the last scrape */
	bool exported;			 /* it has series */
	char name[];
};

struct ctr_table;

struct ctr_table *ctr_table_new(void);
void ctr_table_free(struct ctr_table *t);

/*
 * pid (started at start_ns, CLOCK_MONOTONIC) is now in container name: it
 * leaves the container it was in, if another (at now_ns). 0, or -ENOMEM (then pid is in
 * no container here).
 */
int ctr_table_join(struct ctr_table *t, uint32_t pid, uint64_t start_ns, const char *name,
		   uint64_t now_ns);
/* pid exited (now_ns: when, for the container's idle time). */
void ctr_table_leave(struct ctr_table *t, uint32_t pid, uint64_t now_ns);

struct ctr *ctr_table_find(struct ctr_table *t, const char *name);
struct ctr_member *ctr_table_member(struct ctr_table *t, uint32_t pid);
size_t ctr_table_count(const struct ctr_table *t);

/*
 * The containers in a stable array for a scrape to walk in slices (valid
 * until the next join, leave or reap): *n entries. NULL when out of memory.
 */
struct ctr **ctr_table_list(struct ctr_table *t, size_t *n);

/*
 * Forgets containers without processes since before now_ns - idle_ns (their
 * restarts with them: Coroot forgets a container 10 minutes after its last
 * process), calling gone(ctx, c) for each first.
 */
void ctr_table_reap(struct ctr_table *t, uint64_t now_ns, uint64_t idle_ns,
		    void (*gone)(void *ctx, struct ctr *c), void *ctx);

#endif
