/*
 * Where the l7 stream builds a record before copying it into its ring
 * (l7.bpf.c): per-CPU scratch, as a record is too big for the BPF stack.
 * Included by l7.bpf.c and by the kernel tests (tests/bpf/l7_records.bpf.c).
 */
#ifndef NODESCOPE_L7_RECORDS_BPF_H
#define NODESCOPE_L7_RECORDS_BPF_H

#include "common.bpf.h"
#include "sockets.bpf.h"

/*
 * The record is built here: too big for the BPF stack. The slack lets a
 * copy at any offset below NS_L7_CAPTURE be up to 2 * NS_L7_CAPTURE - 1
 * bytes long as the verifier sees it (ns_l7_capture_iov_rest's masks); the bytes
 * past data[] are never written nor sent.
 */
struct l7_scratch_rec {
	struct ns_l7_event e;
	__u8 slack[2 * NS_L7_CAPTURE];
};
/*
 * A program can be preempted (preemptible kernels run BPF with migration
 * disabled, not preemption), and another task's l7 program run on its CPU
 * meanwhile: a TLS return probe while a syscall exit waits. So each run
 * takes a record of its own from L7_RECORDS per CPU, marks it held, and
 * gives it back (l7_rec_take, l7_rec_give); with one record per
 * CPU, the 7.2 kernel lost an HTTPS client's plaintext now and then, with
 * nothing counted.
 */
#define L7_RECORDS 4
_Static_assert((L7_RECORDS & (L7_RECORDS - 1)) == 0, "a power of two: a slot is masked for the verifier");
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, L7_RECORDS);
	__type(key, __u32);
	__type(value, struct l7_scratch_rec);
} l7_scratch SEC(".maps");

/*
 * Whether each of this CPU's records is held. Not by whom: no one asks,
 * and the thread's id would cost a helper call at every capture.
 */
struct l7_rec_holders {
	__u8 held[L7_RECORDS];
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct l7_rec_holders);
} l7_rec_held SEC(".maps");

/*
 * A free record of this CPU, its index in *slot; NULL when every one is
 * held (counted). Marked with plain stores: a program preempted between
 * finding a record free and marking it may share it with the one that ran
 * meanwhile only if that one was preempted too, inside its own record.
 */
static __always_inline struct ns_l7_event *l7_rec_take(__u32 *slot)
{
	__u32 zero = 0;
	struct l7_rec_holders *h = bpf_map_lookup_elem(&l7_rec_held, &zero);

	if (!h)
		return NULL;
	for (__u32 i = 0; i < L7_RECORDS; i++) {
		if (h->held[i])
			continue;
		h->held[i] = 1;
		*slot = i;
		struct ns_l7_event *e = bpf_map_lookup_elem(&l7_scratch, &i);
		if (!e)
			h->held[i & (L7_RECORDS - 1)] = 0;
		return e;
	}
	ns_drop(NS_DROP_L7_RECORDS_BUSY);
	return NULL;
}

static __always_inline void l7_rec_give(__u32 slot)
{
	__u32 zero = 0;
	struct l7_rec_holders *h = bpf_map_lookup_elem(&l7_rec_held, &zero);

	if (h)
		h->held[slot & (L7_RECORDS - 1)] = 0;
}

#endif
