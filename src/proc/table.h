/*
 * The process table: pid -> what we know of the process, bounded. Containers
 * are records shared by the processes in them, kept after their last process
 * has gone (as Coroot keeps a dead container 10 minutes) until
 * proc_table_forget_gone(). No I/O.
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
	unsigned refs;	   /* processes in it; 0: gone */
	uint64_t since_ns; /* CLOCK_MONOTONIC: its earliest process start, or when first seen */
	uint64_t gone_ns;  /* when its last process left; 0 while it has one */
	char name[];	   /* container_id, "/" for the host */
};

struct proc_entry {
	uint32_t pid;
	uint32_t ppid;
	uint64_t start_ns; /* CLOCK_MONOTONIC, 0 if unknown */
	bool inspected;	   /* container read from /proc after the last exec */
	bool start_counted;
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

/* Sets e's container to name (interned; "/" when name is NULL or empty). */
int proc_table_set_container(struct proc_table *t, struct proc_entry *e, const char *name);
const char *proc_entry_container(const struct proc_entry *e);
/* The container of pid, "/" when the table does not know it. */
const char *proc_table_container_of(struct proc_table *t, uint32_t pid);

/* The record of a container, live or gone, or NULL. */
const struct proc_container *proc_table_find_container(struct proc_table *t, const char *name);
/* Frees the records of containers gone before before_ns. */
void proc_table_forget_gone(struct proc_table *t, uint64_t before_ns);

size_t proc_table_count(const struct proc_table *t);
/* Containers with a process in them. */
size_t proc_table_containers(const struct proc_table *t);
uint64_t proc_table_refused(const struct proc_table *t);

/* Calls fn for every entry, in no particular order; fn must not modify the table. */
void proc_table_foreach(struct proc_table *t, void (*fn)(void *ctx, const struct proc_entry *e),
			void *ctx);

#endif
