// SPDX-License-Identifier: GPL-2.0
/*
 * Before 5.13 the per-thread map tls_calls is a hash by thread id, not task
 * storage (core_fixes.bpf.h): a thread's entry goes when it exits, or a
 * later thread given the same id would find a call in flight.
 * User space loads this program only on such kernels.
 */
#include "common.bpf.h"
#include "tls.bpf.h"

char LICENSE[] SEC("license") = "GPL";

SEC("tracepoint/sched/sched_process_exit")
int ns_thread_exit(void *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	bpf_map_delete_elem(&tls_calls, &tid);
	return 0;
}
