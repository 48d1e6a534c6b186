/*
 * A stream: one BPF ring buffer (or, on kernels without, per-CPU perf
 * buffers and a doorbell: perf_ring.h), read from the epoll loop under its
 * wakeup policy, with its received and lost events counted.
 */
#ifndef NODESCOPE_LOOP_STREAM_H
#define NODESCOPE_LOOP_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "events.h"
#include "loop.h"
#include "nice.h"
#include "policy.h"

struct bpf_map;
struct stream;

/* Returns 0, or a negative value to count the record as malformed. */
typedef int (*stream_record_fn)(void *ctx, const void *data, size_t len);

/* The streams nodescope knows, with their default policies. */
struct stream_def {
	const char *name;
	enum ns_stream id;
	struct stream_policy policy;
	uint32_t ring_size; /* default ring buffer bytes */
	/*
	 * Busy servers' records: while a batch is open the loop thread waits at
	 * its bulk priority (src/loop/nice.h). Not proc's and tcp's: a new
	 * program's exec opens a proc batch just before its first mapping,
	 * which must wake the agent at its own priority.
	 */
	bool bulk;
};
extern const struct stream_def stream_defs[NS_STREAM_COUNT];
/*
 * The watermark both sides use for a ring of ring_size bytes: the policy's,
 * but at most half the ring, so a small ring cannot fill before a wakeup.
 */
uint64_t stream_watermark(const struct stream_def *d, uint64_t ring_size);
/*
 * Bytes per CPU of a perf-buffer stream given ring_size bytes in all
 * (--ringbuf-size): shared out over the CPUs, a power of two, at least
 * STREAM_PERF_MIN_CPU_BYTES (a few of the biggest records).
 */
#define STREAM_PERF_MIN_CPU_BYTES (32u << 10)
uint32_t stream_perf_cpu_bytes(uint64_t ring_size, int ncpu);
/* Looks a stream up by name; NULL if unknown. */
const struct stream_def *stream_def_find(const char *name);

struct stream_params {
	const struct stream_def *def;
	struct bpf_map *ring;
	struct bpf_map *lost; /* per-CPU array, one u64 */
	/*
	 * > 0: ring is a perf event array of this many bytes per CPU (kernels
	 * before 5.8), bell the doorbell's and bell_state its struct
	 * ns_reader_state (common.bpf.h).
	 */
	uint32_t perf_cpu_bytes;
	struct bpf_map *bell;
	struct bpf_map *bell_state;
	stream_record_fn fn;
	void *ctx;
	uint64_t debug_poll_ns; /* > 0: ignore the policy, drain on a fixed period */
	uint64_t debug_batch_ns; /* > 0: a batched stream's max delay instead of its definition's */
	/* Called before each drain (the agent reads the immediate streams first). */
	void (*before_drain)(void *ctx);
	void *before_drain_ctx;
	/* Called after each drain. */
	void (*after_drain)(void *ctx);
	void *after_drain_ctx;
	/* The loop thread's priorities: a bulk stream's open batch holds it at the bulk one, an
	 * immediate stream's read at its own; NULL: no switch. */
	struct nice_switch *nice;
};

int stream_open(struct loop *l, const struct stream_params *p, struct stream **out);
void stream_close(struct stream *s);
/*
 * Consumes everything pending now. A drain of a stream that is already being
 * drained (from one of its own record callbacks, through hooks) does nothing.
 */
void stream_drain(struct stream *s);

const char *stream_name(const struct stream *s);
uint64_t stream_events(const struct stream *s);
uint64_t stream_malformed(const struct stream *s);
/* Failed reserves on the BPF side, summed over CPUs. */
uint64_t stream_lost(const struct stream *s);
uint64_t stream_wakeups(const struct stream *s);

#endif
