/*
 * Closes BPF links off the event loop. Closing a uprobe link waits in the
 * kernel for an RCU tasks-trace grace period and an SRCU one (about 50 ms
 * here, up to 100+), one close after the other when one thread closes them:
 * releasing 30 files held the loop 2.9 s, and an agent with ~450 probed files
 * took minutes to exit. Closes that wait at the same time share their grace
 * periods (uprobe_multi links: 2000 links close in 0.15 s from 2000 threads,
 * 0.6 s from 256, 100 s from one), so links handed over here are closed by
 * threads started on demand, one per link still open, at most max_threads.
 * A thread that finds the queue empty exits: none runs, waits or wakes up
 * while nothing is being released. Perf-event uprobes (kernels before 6.6)
 * are closed the same way, but the kernel detaches them one at a time (under
 * its event_mutex), so for them a few threads keep the loop free and more
 * would only wait (LINK_CLOSER_PERF_THREADS).
 */
#ifndef NODESCOPE_BPF_LINK_CLOSER_H
#define NODESCOPE_BPF_LINK_CLOSER_H

#include <stdint.h>

#define LINK_CLOSER_MAX_THREADS 256 /* uprobe_multi links: their grace periods overlap */
#define LINK_CLOSER_PERF_THREADS 4   /* perf-event links: the kernel serializes them */

struct bpf_link;
struct metric_registry;
struct link_closer;

/*
 * At most max_threads (>= 1) threads close links at once. registry may be
 * NULL; otherwise it gets nodescope_bpf_links_closing,
 * nodescope_bpf_links_closed_total and nodescope_bpf_link_closer_threads.
 * Starts no thread. Returns 0 or -errno.
 */
int link_closer_new(struct metric_registry *registry, unsigned max_threads,
		    struct link_closer **out);

/*
 * Hands over a link fd (or a libbpf link) to be closed soon; never waits for
 * the close. With a NULL closer, or when neither memory nor a thread can be
 * had, the link is closed here and now (correct, only slow).
 */
void link_closer_close_fd(struct link_closer *c, int fd);
void link_closer_destroy_link(struct link_closer *c, struct bpf_link *link);

/* Links handed over and not closed yet (for tests). */
uint64_t link_closer_pending(struct link_closer *c);

/*
 * Waits until every link handed over is closed (the kernel has detached it
 * and freed its id), then frees the closer. NULL-safe. Call it before exit:
 * a link the process still holds at exit is closed by exit() one at a time.
 */
void link_closer_free(struct link_closer *c);

#endif
