// SPDX-License-Identifier: GPL-2.0
/*
 * A batched stream's copy-out writer (NS_STREAM_DEFINE's *_output,
 * bpf/common.bpf.h), as a program the tests run with BPF_PROG_TEST_RUN
 * (test_stream_output.c): each run sends one 16-byte record.
 */
#include "common.bpf.h"

char LICENSE[] SEC("license") = "GPL";

NS_STREAM_DEFINE(tst, 64)

SEC("raw_tp")
int stream_output_one(struct bpf_raw_tracepoint_args *ctx)
{
	__u8 rec[16] = { 0xab };

	tst_output(ctx, rec, sizeof(rec));
	return 0;
}
