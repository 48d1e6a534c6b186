/*
 * What every stream's BPF code shares: the ring buffer, its loss counter and
 * its wakeup configuration, declared per stream so objects link without
 * sharing maps.
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

/*
 * NS_STREAM_DEFINE(proc) gives: ring buffer rb_proc (size set by user space),
 * per-CPU counter lost_proc[0] of failed reserves, and cfg_proc, the stream's
 * policy, filled in by user space before load.
 */
#define NS_STREAM_DEFINE(name)                                                  \
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
	const volatile struct ns_stream_config cfg_##name = {};                 \
	static __always_inline void *name##_reserve(__u64 size)                 \
	{                                                                       \
		void *rec = bpf_ringbuf_reserve(&rb_##name, size, 0);           \
		if (!rec) {                                                     \
			__u32 zero = 0;                                         \
			__u64 *n = bpf_map_lookup_elem(&lost_##name, &zero);    \
			if (n)                                                  \
				(*n)++;                                         \
		}                                                               \
		return rec;                                                     \
	}                                                                       \
	/* Copies a record of variable size (built elsewhere) into the ring. */ \
	static __always_inline void name##_output(void *data, __u64 size)      \
	{                                                                       \
		__u64 pending = bpf_ringbuf_query(&rb_##name, BPF_RB_AVAIL_DATA); \
		if (bpf_ringbuf_output(&rb_##name, data, size,                 \
				       ns_wakeup_flags(cfg_##name.policy, pending, \
						       cfg_##name.watermark))) { \
			__u32 zero = 0;                                         \
			__u64 *n = bpf_map_lookup_elem(&lost_##name, &zero);    \
			if (n)                                                  \
				(*n)++;                                         \
		}                                                               \
	}                                                                       \
	static __always_inline void name##_submit(void *rec)                    \
	{                                                                       \
		__u64 pending = bpf_ringbuf_query(&rb_##name, BPF_RB_AVAIL_DATA); \
		bpf_ringbuf_submit(rec, ns_wakeup_flags(cfg_##name.policy,      \
							pending,                \
							cfg_##name.watermark)); \
	}

static __always_inline __u32 ns_current_tgid(void)
{
	return bpf_get_current_pid_tgid() >> 32;
}

#endif
