/*
 * The process table: pid -> what we know of the process, bounded. Container
 * names are interned and shared by the processes in them. Pure: no I/O.
 */
#ifndef NODESCOPE_PROC_TABLE_H
#define NODESCOPE_PROC_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "events.h"
#include "util/hmap.h"

struct proc_container {
	struct hmap_node node;
	unsigned refs;
	char name[]; /* container_id, "/" for the host */
};

struct proc_entry {
	uint32_t pid;
	uint32_t ppid;
	uint64_t start_ns; /* CLOCK_MONOTONIC, 0 if unknown */
	bool inspected;	   /* container known since the last exec (cgroup ids or /proc) */
	bool exited;	   /* its exit was read; it leaves when reaped (tracker.h) */
	/* Its network namespace's inode, 0 until asked (tcp/tracker.c); forgotten at exec. */
	uint64_t netns;
	bool start_counted;
	uint8_t optouts; /* Coroot's COROOT_* opt-outs (enum proc_optout, optouts.h) */
	bool optouts_read; /* optouts read from its environment (else inherited), optouts.h */
	char comm[NS_COMM_LEN + 1];
	char exe[NS_PATH_LEN + 1];
	struct proc_container *container;
	struct hmap_node node;
};

struct proc_table;

/* cap: most processes held at once (a new one past it is refused and counted). */
struct proc_table *proc_table_new(size_t cap);
void proc_table_free(struct proc_table *t);

struct proc_entry *proc_table_get(struct proc_table *t, uint32_t pid);
/* Finds or adds pid; *created tells which. NULL when full (counted) or out of memory. */
struct proc_entry *proc_table_upsert(struct proc_table *t, uint32_t pid, bool *created);
void proc_table_remove(struct proc_table *t, uint32_t pid);

/*
 * The container of a process whose container could not be named (its
 * cgroups and its /proc entry gone before they were read): no container,
 * rather than its parent's or the host's. Makes no series.
 */
#define PROC_CONTAINER_UNNAMED ""

/* Sets e's container to name (interned; "/" when name is NULL). */
int proc_table_set_container(struct proc_table *t, struct proc_entry *e, const char *name);
const char *proc_entry_container(const struct proc_entry *e);
/* Whether some process in the table (an exited one not reaped yet included) is in container name. */
bool proc_table_has_container(struct proc_table *t, const char *name);
/* Moves every process of container `from` to `to` (a container named after its first events). */
void proc_table_rename_container(struct proc_table *t, const char *from, const char *to);
/* The container of pid, "/" when the table does not know it. */
const char *proc_table_container_of(struct proc_table *t, uint32_t pid);
/* The opt-outs of pid (enum proc_optout), 0 when the table does not know it. */
uint8_t proc_table_optouts_of(struct proc_table *t, uint32_t pid);

size_t proc_table_count(const struct proc_table *t);
size_t proc_table_containers(const struct proc_table *t);
uint64_t proc_table_refused(const struct proc_table *t);

/*
 * Tells fn whenever an entry enters a container (container: its name) or
 * leaves the table (container NULL): the one hook the resource metrics keep
 * their container -> processes bookkeeping by. One observer; fn must not
 * modify the table.
 */
typedef void (*proc_table_observer_fn)(void *ctx, const struct proc_entry *e,
				       const char *container);
void proc_table_set_observer(struct proc_table *t, proc_table_observer_fn fn, void *ctx);

/* Calls fn for every entry, in no particular order; fn must not modify the table. */
void proc_table_foreach(struct proc_table *t, void (*fn)(void *ctx, const struct proc_entry *e),
			void *ctx);

#endif
