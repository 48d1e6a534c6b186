/*
 * One stream's per-CPU perf event buffers (BPF_MAP_TYPE_PERF_EVENT_ARRAY),
 * the stand-in for a BPF ring buffer on kernels before 5.8: a BPF output
 * event per CPU, mapped read-only but for the tail, and one epoll fd that is
 * readable when any CPU's buffer woke its reader. Records of all CPUs are
 * handed out in the order they were written (their perf timestamps,
 * CLOCK_MONOTONIC), as a ring buffer hands them out, so a fork is read before
 * its child's exec and a connect before its close.
 */
#ifndef NODESCOPE_LOOP_PERF_RING_H
#define NODESCOPE_LOOP_PERF_RING_H

#include <stddef.h>
#include <stdint.h>

struct perf_ring;

/* Returns 0; the return value is not used. */
typedef int (*perf_ring_record_fn)(void *ctx, void *data, size_t len);

struct perf_ring_opts {
	int map_fd;		 /* the perf event array: an fd per CPU goes in at the CPU's index */
	uint32_t cpu_bytes;	 /* data bytes per CPU: a power of two of pages */
	uint64_t wake_bytes;	 /* wake the reader once this many bytes are pending on a CPU; */
	uint32_t wake_records;	 /* ... or else every this many records (1: each) */
	int timestamps;		 /* records carry their time: read in time order */
};

int perf_ring_open(const struct perf_ring_opts *o, struct perf_ring **out);
void perf_ring_free(struct perf_ring *r);

/* Readable (edge: once per kernel wakeup) when a CPU's buffer woke the reader. */
int perf_ring_fd(const struct perf_ring *r);

/*
 * Hands every record pending now to fn, oldest first across CPUs, then
 * frees their room. Returns how many. Not re-entrant for one ring.
 */
uint64_t perf_ring_consume(struct perf_ring *r, perf_ring_record_fn fn, void *ctx);

/* Frees the room of everything pending without reading it. */
void perf_ring_discard(struct perf_ring *r);

#endif
