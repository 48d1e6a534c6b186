// SPDX-License-Identifier: GPL-2.0
/*
 * bpf/l7_records.bpf.h's per-CPU records, as a program the tests run with
 * BPF_PROG_TEST_RUN on one CPU (test_l7_records.c): each run is one
 * operation, its arguments the run's context.
 */
#include "l7_records.bpf.h"

char LICENSE[] SEC("license") = "GPL";

enum { OP_TAKE, OP_GIVE, OP_HELD };

/* args: op, then the slot (OP_GIVE, OP_HELD). OP_TAKE returns the slot taken or -1. */
SEC("raw_tp")
int l7_records_op(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 zero = 0, slot;
	struct l7_rec_holders *h;

	switch (ctx->args[0]) {
	case OP_TAKE:
		return l7_rec_take(&slot) ? (int)slot : -1;
	case OP_GIVE:
		l7_rec_give(ctx->args[1]);
		return 0;
	case OP_HELD:
		h = bpf_map_lookup_elem(&l7_rec_held, &zero);
		return h && h->held[ctx->args[1] & (L7_RECORDS - 1)];
	}
	return -1;
}
