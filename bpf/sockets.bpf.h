/*
 * Tracked sockets by (tgid << 32 | fd), shared by the tcp programs (which
 * add them at connect and accept, and drop them at close) and the l7 ones
 * (which capture only their reads and writes). Defined weak in every object
 * that includes this; the static linker merges the identical definitions.
 */
#ifndef NODESCOPE_SOCKETS_BPF_H
#define NODESCOPE_SOCKETS_BPF_H

#include "common.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct ns_l7_sock);
} l7_socks SEC(".maps") __weak;

/* Per-CPU counts of state the BPF side could not keep, by enum ns_drop_reason. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NS_DROP_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} ns_drops SEC(".maps") __weak;

static __always_inline void ns_drop(__u32 reason)
{
	__u64 *n = bpf_map_lookup_elem(&ns_drops, &reason);
	if (n)
		(*n)++;
}

static __always_inline __u64 l7_key(__u32 tgid, __s32 fd)
{
	return ((__u64)tgid << 32) | (__u32)fd;
}

#endif
