// SPDX-License-Identifier: GPL-2.0
/*
 * bpf/sockets.bpf.h's l7_socks helpers as programs the tests run with
 * BPF_PROG_TEST_RUN (test_l7_filter.c): each run is one operation on the
 * table and its filter, its arguments the run's context.
 */
#include "l7_untracked.bpf.h"

char LICENSE[] SEC("license") = "GPL";

enum { OP_INSERT, OP_DELETE, OP_MAYBE, OP_LOOK };
enum { LOOK_NO_COUNT, LOOK_REMEMBERED, LOOK_MAYBE_TRACKED };

/*
 * args: op, key, flags (OP_INSERT), the entry's sock (OP_INSERT).
 * OP_LOOK: the syscall hooks' look at fd (the key's low half) of a thread
 * (args[2]) of the calling process, as enum look says.
 */
SEC("raw_tp")
int l7_filter_op(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 key = ctx->args[1];
	struct ns_l7_sock ls = { .sock = ctx->args[3] };

	switch (ctx->args[0]) {
	case OP_INSERT:
		return l7_socks_insert(key, &ls, ctx->args[2]);
	case OP_DELETE:
		l7_socks_delete(key);
		return 0;
	case OP_MAYBE:
		return l7_maybe_tracked(key >> 32, (__s32)key);
	case OP_LOOK: {
		struct task_struct *task;
		__u32 tgid;
		if (l7_maybe_tracked_by(ctx->args[2], (__s32)key, &tgid, &task))
			return LOOK_MAYBE_TRACKED;
		return tgid ? LOOK_NO_COUNT : LOOK_REMEMBERED;
	}
	}
	return -1;
}
