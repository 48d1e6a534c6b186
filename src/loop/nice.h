#ifndef NODESCOPE_LOOP_NICE_H
#define NODESCOPE_LOOP_NICE_H

#include <stdbool.h>

/*
 * The agent's two priorities. Its own (--nice, -20 by default) is for
 * urgent work and for waiting: woken by a new program's first mapping it
 * runs before busy work, so the program is probed before its first TLS
 * call. The batched streams' records (execs and exits, connections,
 * requests) wait up to tens of ms anyway, and reading them at -20 preempts
 * the busy servers they come from: pgbench kept 0.75 of its untraced
 * throughput with every read at -20 and 0.85 with the batched ones at 0
 * (bench/db, BENCHMARKS.md). So those reads run at the bulk priority
 * (--batch-nice), and the agent returns to its own after each.
 *
 * Reads nest (one stream's hook drains another): only the outermost
 * switches. Nice values are per thread on Linux: set is called from the
 * loop's thread and moves it alone.
 */
struct nice_switch {
	int urgent, bulk;
	unsigned depth;
	bool on; /* the agent runs at urgent, and bulk is lower */
	int (*set)(int nice); /* 0, or -errno */
};

/* on when the agent runs at urgent (it could set it) and bulk is a lower priority. */
void nice_switch_init(struct nice_switch *n, int urgent, int bulk, bool at_urgent,
		      int (*set)(int nice));
void nice_bulk_enter(struct nice_switch *n);
void nice_bulk_leave(struct nice_switch *n);

/* set for the calling thread: setpriority(PRIO_PROCESS, 0, nice). */
int nice_set_thread(int nice);

#endif
