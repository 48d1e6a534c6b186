/*
 * What every stream's BPF code shares: the ring buffer (or perf buffer), its
 * loss counter and its wakeup configuration, declared per stream so objects
 * link without sharing maps.
 */
#ifndef NODESCOPE_COMMON_BPF_H
#define NODESCOPE_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>

#include "events.h"
#include "wakeup.h"
#include "core_fixes.bpf.h"

/* Failed writes of a stream, counted per CPU (summed by user space). */
#define ns_stream_count_lost(lost)                                              \
	({                                                                      \
		__u32 zero_ = 0;                                                \
		__u64 *n_ = bpf_map_lookup_elem(lost, &zero_);                  \
		if (n_)                                                         \
			(*n_)++;                                                \
	})

/*
 * Records a perf-buffer stream builds in place before it writes them: a
 * per-CPU stack of slots, since a program can be interrupted on its CPU by
 * another that writes the same stream (a softirq's TCP state change inside a
 * connect, an NMI). Process, softirq, hardirq and NMI: 4 levels.
 */
#define NS_PERF_NEST 4

/* Rings the reader's doorbell if it is waiting (struct ns_reader_state). */
#define ns_stream_ring_bell(ctx, bellmap, bellstate)                            \
	({                                                                      \
		__u32 zero_ = 0;                                                \
		struct ns_reader_state *b_ = bpf_map_lookup_elem(bellstate, &zero_); \
		if (b_) {                                                       \
			/* A locked add: the record's head is visible before     \
			 * armed is read (the reader sets armed, then reads). */  \
			__sync_fetch_and_add(&b_->rings, 1);                    \
			if (b_->armed) {                                        \
				__u32 one_ = 1;                                 \
				b_->armed = 0;                                  \
				/* Not rung: the next record tries again. */     \
				if (bpf_perf_event_output(ctx, bellmap, BPF_F_CURRENT_CPU, \
							  &one_, sizeof(one_))) \
					b_->armed = 1;                          \
			}                                                       \
		}                                                               \
	})

/*
 * Whether the reader's batch is open (struct ns_reader_state). ordered (a
 * constant): a locked add first, so that a record reserved before is
 * visible to the reader before the word is read; a plain read otherwise.
 */
#define ns_stream_batch_open(statemap, ordered)                                 \
	({                                                                      \
		__u32 zero_ = 0, open_ = 0;                                     \
		struct ns_reader_state *st_ = bpf_map_lookup_elem(statemap, &zero_); \
		if (st_) {                                                      \
			if (ordered)                                            \
				__sync_fetch_and_add(&st_->rings, 1);           \
			open_ = *(volatile __u32 *)&st_->batch_open;            \
		}                                                               \
		open_;                                                          \
	})

/*
 * NS_STREAM_DEFINE(proc, max_record) gives the stream's writer, the one
 * emission API of every stream:
 *   proc_reserve(size)            room for a record of size bytes (NULL: lost, counted)
 *   proc_submit(ctx, rec, size)   send it (every reserve is submitted)
 *   proc_output(ctx, data, size)  copy a record built elsewhere (and, on a ring
 *                                 buffer, maybe an empty record after it: a
 *                                 wakeup, which readers skip)
 * ctx is the program's context, which perf buffers need. Kernels with ring
 * buffers (5.8+) write rb_proc, a BPF ring buffer, in place. Older ones, where
 * user space turned rb_proc into a per-CPU perf event array before load
 * (src/bpf/probes.c), build the record in a per-CPU slot (scratch_proc, up to
 * max_record bytes) and copy it out with bpf_perf_event_output, then ring the
 * reader's doorbell (bell_proc, bellst_proc) if it waits. Which one is the
 * read-only bit NS_FEAT_RING_BUFFER: the verifier drops the other path. Also:
 * lost_proc[0], per-CPU failed writes; cfg_proc, the wakeup policy;
 * bellst_proc[0], the reader's state (struct ns_reader_state: the doorbell's
 * arming, and on ring buffers whether a batched reader's batch is open).
 */
#define NS_STREAM_DEFINE(name, max_record)                                      \
	struct {                                                                \
		__uint(type, BPF_MAP_TYPE_RINGBUF);                             \
		__uint(max_entries, 256 * 1024);                                \
	} rb_##name SEC(".maps");                                               \
	struct {                                                                \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);                        \
		__uint(max_entries, 1);                                         \
		__type(key, __u32);                                             \
		__type(value, __u64);                                           \
	} lost_##name SEC(".maps");                                             \
	struct name##_scratch {                                                 \
		__u32 depth;                                                    \
		__u32 pad;                                                      \
		__u8 slot[NS_PERF_NEST][((max_record) + 7) & ~7];               \
	};                                                                      \
	struct {                                                                \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);                        \
		__uint(max_entries, 1);                                         \
		__type(key, __u32);                                             \
		__type(value, struct name##_scratch);                           \
	} scratch_##name SEC(".maps");                                          \
	struct {                                                                \
		__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);                    \
		__uint(key_size, sizeof(__u32));                                \
		__uint(value_size, sizeof(__u32));                              \
	} bell_##name SEC(".maps");                                             \
	struct {                                                                \
		__uint(type, BPF_MAP_TYPE_ARRAY);                               \
		__uint(max_entries, 1);                                         \
		__uint(map_flags, BPF_F_MMAPABLE); /* re-armed with a store */  \
		__type(key, __u32);                                             \
		__type(value, struct ns_reader_state);                             \
	} bellst_##name SEC(".maps");                                           \
	const volatile struct ns_stream_config cfg_##name = {};                 \
	struct {                                                                \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);                        \
		__uint(max_entries, 1);                                         \
		__type(key, __u32);                                             \
		__type(value, __u64);                                           \
	} wrote_##name SEC(".maps");                                            \
	/* The ring's fill when this CPU is due to look (ns_query_due), else 0. */ \
	static __always_inline __u64 name##_pending(__u64 size)                 \
	{                                                                       \
		__u32 zero = 0;                                                 \
		__u64 *since = bpf_map_lookup_elem(&wrote_##name, &zero);       \
		if (since && !ns_query_due(since, size, cfg_##name.query_bytes)) \
			return 0;                                               \
		return bpf_ringbuf_query(&rb_##name, BPF_RB_AVAIL_DATA);        \
	}                                                                       \
	static __always_inline void *name##_reserve(__u64 size)                 \
	{                                                                       \
		void *rec = NULL;                                               \
		if (ns_kernel_has(NS_FEAT_RING_BUFFER)) {                       \
			rec = bpf_ringbuf_reserve(&rb_##name, size, 0);         \
		} else {                                                        \
			__u32 zero = 0;                                         \
			struct name##_scratch *s = bpf_map_lookup_elem(&scratch_##name, &zero); \
			if (s && s->depth < NS_PERF_NEST && size <= sizeof(s->slot[0])) { \
				rec = s->slot[s->depth & (NS_PERF_NEST - 1)];   \
				s->depth++;                                     \
			}                                                       \
		}                                                               \
		if (!rec)                                                       \
			ns_stream_count_lost(&lost_##name);                     \
		return rec;                                                     \
	}                                                                       \
	/* Perf buffers: copy out and wake the reader if it waits. */          \
	static __always_inline void name##_perf_write(void *ctx, void *data, __u64 size) \
	{                                                                       \
		/* -ENOSPC (buffer full) included: the kernel's own count of it  \
		 * reaches the reader only with the CPU's next record. */         \
		if (bpf_perf_event_output(ctx, &rb_##name, BPF_F_CURRENT_CPU, data, size)) \
			ns_stream_count_lost(&lost_##name);                     \
		else                                                            \
			ns_stream_ring_bell(ctx, &bell_##name, &bellst_##name); \
	}                                                                       \
	static __always_inline void name##_output(void *ctx, void *data, __u64 size) \
	{                                                                       \
		if (!ns_kernel_has(NS_FEAT_RING_BUFFER)) {                      \
			name##_perf_write(ctx, data, size);                     \
			return;                                                 \
		}                                                               \
		__u64 pending = name##_pending(size);                           \
		__u32 open = 0;                                                 \
		if (cfg_##name.policy == NS_WAKEUP_BATCHED)                     \
			open = ns_stream_batch_open(&bellst_##name, false);     \
		__u64 flags = ns_submit_flags(cfg_##name.policy, pending,      \
					      cfg_##name.watermark, open);      \
		if (bpf_ringbuf_output(&rb_##name, data, size, flags)) {       \
			ns_stream_count_lost(&lost_##name);                     \
			return;                                                 \
		}                                                               \
		/* open was read before the record's reservation: the reader   \
		 * may have closed the batch since and seen the ring empty.    \
		 * Read again after the commit (a full barrier): if closed,    \
		 * an empty record wakes the reader (readers skip it). */       \
		if ((flags & BPF_RB_NO_WAKEUP) &&                               \
		    !ns_stream_batch_open(&bellst_##name, false))               \
			bpf_ringbuf_output(&rb_##name, data, 0, BPF_RB_FORCE_WAKEUP); \
	}                                                                       \
	static __always_inline void name##_submit(void *ctx, void *rec, __u64 size) \
	{                                                                       \
		if (!ns_kernel_has(NS_FEAT_RING_BUFFER)) {                      \
			__u32 zero = 0;                                         \
			struct name##_scratch *s = bpf_map_lookup_elem(&scratch_##name, &zero); \
			name##_perf_write(ctx, rec, size);                      \
			if (s && s->depth)                                      \
				s->depth--;                                     \
			return;                                                 \
		}                                                               \
		__u64 pending = name##_pending(size);                           \
		__u32 open = 0;                                                 \
		if (cfg_##name.policy == NS_WAKEUP_BATCHED)                     \
			open = ns_stream_batch_open(&bellst_##name, true);      \
		bpf_ringbuf_submit(rec, ns_submit_flags(cfg_##name.policy, pending, \
							cfg_##name.watermark, open)); \
	}

static __always_inline __u32 ns_current_tgid(void)
{
	return bpf_get_current_pid_tgid() >> 32;
}

#endif
