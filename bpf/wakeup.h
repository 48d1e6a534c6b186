// SPDX-License-Identifier: GPL-2.0-only OR Apache-2.0
/*
 * The BPF side of a stream's wakeup policy, kept apart so unit tests run the
 * same decision the kernel side makes.
 *
 * Flag 0 lets the kernel wake the reader only when it had consumed everything
 * before this record (the ring was empty from its point of view). That is
 * race-free and exactly what both policies want for the first pending record:
 * an immediate reader then drains at once; a batched reader instead arms its
 * flush timer and leaves the data there, so later records see a non-empty ring
 * and wake nobody, until the pending bytes pass the watermark.
 */
#ifndef NODESCOPE_WAKEUP_H
#define NODESCOPE_WAKEUP_H

#include "events.h"

#ifndef BPF_RB_FORCE_WAKEUP
#define BPF_RB_FORCE_WAKEUP (1ULL << 1)
#endif

/*
 * The watermark holds for immediate streams too: with flag 0 alone, a reader
 * that once missed its wakeup would never be woken again (new records never
 * land where it stopped), so past the watermark the kernel wakes it anyway.
 */
static inline __u64 ns_wakeup_flags(__u32 policy, __u64 pending_bytes, __u64 watermark)
{
	if (watermark && pending_bytes >= watermark)
		return BPF_RB_FORCE_WAKEUP;
	return 0;
}

#ifndef BPF_RB_NO_WAKEUP
#define BPF_RB_NO_WAKEUP (1ULL << 0)
#endif

/*
 * A record submitted in place (reserved, then filled): batch_open is the
 * reader's word, read after the reservation (struct ns_reader_state). While
 * the reader's batch is open its timer will read the record: no wakeup. A
 * record copied in (bpf_ringbuf_output) can only read the word before its
 * reservation, so its writer reads it again after the commit and wakes the
 * reader itself if the batch closed meanwhile (bpf/common.bpf.h).
 */
static inline __u64 ns_submit_flags(__u32 policy, __u64 pending_bytes, __u64 watermark,
				    __u32 batch_open)
{
	__u64 flags = ns_wakeup_flags(policy, pending_bytes, watermark);
	if (!flags && policy == NS_WAKEUP_BATCHED && batch_open)
		return BPF_RB_NO_WAKEUP;
	return flags;
}

/*
 * The watermark needs the ring's fill (bpf_ringbuf_query: the producer's and
 * the reader's positions, cache lines other CPUs write), but not at every
 * record: each CPU looks once per query_bytes it wrote (*since counts them),
 * and a record in between is sent as if the ring were below the watermark.
 * A wakeup past it comes at most query_bytes of each CPU's writing late.
 * query_bytes 0: every record looks.
 */
static inline bool ns_query_due(__u64 *since, __u64 size, __u32 query_bytes)
{
	*since += size;
	if (*since < query_bytes)
		return false;
	*since = 0;
	return true;
}

/*
 * User space's query_bytes for a stream: the CPUs together overshoot the
 * watermark by half of it at most, and a ring holds twice the watermark at
 * least (stream_watermark), so the forced wakeup still comes before the
 * ring fills.
 */
static inline __u32 ns_query_bytes(__u64 watermark, unsigned ncpus)
{
	__u64 q = watermark / 2 / (ncpus ? ncpus : 1);
	return q > 0xffffffffu ? 0xffffffffu : (__u32)q;
}

#endif
