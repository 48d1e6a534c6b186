// SPDX-License-Identifier: GPL-2.0
/*
 * bpf/tls.bpf.h's filter of processes inside a TLS library call, as a
 * program the tests run with BPF_PROG_TEST_RUN (test_tls_gate.c): each run is
 * one operation, on the calling thread's tls_calls slot, its arguments the
 * run's context.
 */
#include "tls.bpf.h"

char LICENSE[] SEC("license") = "GPL";

enum { OP_BEGIN, OP_END, OP_MAYBE, OP_COUNT };

/* args: op, then the stack pointer (OP_BEGIN) or the process (OP_MAYBE, OP_COUNT). */
SEC("raw_tp")
int tls_gate_op(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct tls_call *c;

	switch (ctx->args[0]) {
	case OP_BEGIN:
		c = ns_thread_slot(&tls_calls, true);
		if (!c)
			return -1;
		tls_call_begin(c, tgid, ctx->args[1]);
		return 0;
	case OP_END:
		c = ns_thread_slot(&tls_calls, false);
		if (!c)
			return -1;
		tls_call_end(c, tgid);
		return 0;
	case OP_MAYBE:
		return tls_call_maybe(ctx->args[1]);
	case OP_COUNT:
		return *tls_active_slot(ctx->args[1]);
	}
	return -1;
}
