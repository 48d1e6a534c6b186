#ifndef NODESCOPE_LOOP_NICE_H
#define NODESCOPE_LOOP_NICE_H

#include <stdbool.h>

/*
 * The agent's two priorities. Its own (--nice, -20 by default) is for
 * urgent work: woken by a new program's first mapping it runs before busy
 * work, so the program is probed before its first TLS call. But a thread
 * woken at -20 preempts whatever runs on its CPU, and under load the
 * batched streams wake the agent every period: reading a busy server's own
 * requests, it preempts the server. So, unless told not to (--batch-nice
 * not higher than --nice; measured with the hooks flipped within one run,
 * BENCHMARKS.md session 20, 0 kept more of nginx's and of pgbench
 * TPC-B's throughput than -20 in every round), while the l7
 * stream has a batch open (its timer will wake the agent) the loop's
 * thread sleeps and reads at the bulk priority (--batch-nice), and returns
 * to its own once the batch has closed; the urgent stream's reads run at
 * its own priority whatever is open (struct stream_def's bulk says why proc
 * and tcp do not count).
 *
 * Nice values are per thread on Linux: set is called from the loop's
 * thread and moves it alone.
 */
struct nice_switch {
	int urgent, bulk;
	bool on;	      /* the agent runs at urgent, and bulk is lower */
	int cur;	      /* what the thread was last set to */
	unsigned open;	      /* batches open */
	unsigned urgent_reads; /* urgent reads under way (nested) */
	int (*set)(int nice); /* 0, or -errno */
};

/* on when the agent runs at urgent (it could set it) and bulk is a lower priority. */
void nice_switch_init(struct nice_switch *n, int urgent, int bulk, bool at_urgent,
		      int (*set)(int nice));
/* A batched stream's batch opened or closed (its timer armed or disarmed). */
void nice_batch_opened(struct nice_switch *n);
void nice_batch_closed(struct nice_switch *n);
/* An urgent read begins or ends. */
void nice_urgent_enter(struct nice_switch *n);
void nice_urgent_leave(struct nice_switch *n);

/* set for the calling thread: setpriority(PRIO_PROCESS, 0, nice). */
int nice_set_thread(int nice);

#endif
