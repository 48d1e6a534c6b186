// SPDX-License-Identifier: GPL-2.0
/* Stream proc: exec, exit, fork and OOM kill, from tracepoints only. */
#include "common.bpf.h"

char LICENSE[] SEC("license") = "GPL";

NS_STREAM_DEFINE(proc)

/* --cgroup: only processes in this cgroup v2 subtree (0: all). */
const volatile __u64 filter_cgroup_id = 0;
const volatile __u32 filter_cgroup_level = 0;

static __always_inline bool proc_wanted(void)
{
	return !filter_cgroup_id ||
	       bpf_get_current_ancestor_cgroup_id(filter_cgroup_level) == filter_cgroup_id;
}

SEC("tracepoint/sched/sched_process_exec")
int ns_proc_exec(struct trace_event_raw_sched_process_exec *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	if (!proc_wanted())
		return 0;
	struct ns_proc_exec *e = proc_reserve(sizeof(*e));
	if (!e)
		return 0;

	e->h.type = NS_PROC_EXEC;
	e->h.pid = ns_current_tgid();
	e->h.ts_ns = bpf_ktime_get_ns();
	e->ppid = BPF_CORE_READ(task, real_parent, tgid);
	e->uid = (__u32)bpf_get_current_uid_gid();
	e->cgroup_id = bpf_get_current_cgroup_id();
	bpf_get_current_comm(e->comm, sizeof(e->comm));

	unsigned int off = ctx->__data_loc_filename & 0xFFFF;
	long n = bpf_probe_read_kernel_str(e->filename, sizeof(e->filename), (void *)ctx + off);
	e->filename_len = n > 0 ? n - 1 : 0;

	/* At this tracepoint the new image is installed: its argv sits on its stack. */
	unsigned long arg_start = BPF_CORE_READ(task, mm, arg_start);
	unsigned long arg_end = BPF_CORE_READ(task, mm, arg_end);
	__u64 len = arg_end > arg_start ? arg_end - arg_start : 0;
	if (len > NS_ARGS_LEN)
		len = NS_ARGS_LEN;
	e->args_len = 0;
	if (len && bpf_probe_read_user(e->args, len, (void *)arg_start) == 0)
		e->args_len = len;

	proc_submit(e);
	return 0;
}

SEC("tracepoint/sched/sched_process_exit")
int ns_proc_exit(void *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	/* One event per process: only when its last thread leaves. */
	if (BPF_CORE_READ(task, signal, live.counter) != 0 || !proc_wanted())
		return 0;

	struct ns_proc_exit *e = proc_reserve(sizeof(*e));
	if (!e)
		return 0;
	__u32 status = BPF_CORE_READ(task, exit_code);
	__u64 now = bpf_ktime_get_ns();
	__u64 start = BPF_CORE_READ(task, group_leader, start_time);

	e->h.type = NS_PROC_EXIT;
	e->h.pid = ns_current_tgid();
	e->h.ts_ns = now;
	e->exit_code = (status >> 8) & 0xff;
	e->signal = status & 0x7f;
	e->duration_ns = now > start ? now - start : 0;
	e->cgroup_id = bpf_get_current_cgroup_id();
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	proc_submit(e);
	return 0;
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(ns_proc_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 tgid = BPF_CORE_READ(child, tgid);

	if (tgid != BPF_CORE_READ(child, pid) || !proc_wanted())
		return 0; /* a new thread, not a new process; or filtered out */

	struct ns_proc_fork *e = proc_reserve(sizeof(*e));
	if (!e)
		return 0;
	e->h.type = NS_PROC_FORK;
	e->h.pid = tgid;
	e->h.ts_ns = bpf_ktime_get_ns();
	e->ppid = BPF_CORE_READ(parent, tgid);
	e->cgroup_id = bpf_get_current_cgroup_id();
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	proc_submit(e);
	return 0;
}

SEC("tracepoint/oom/mark_victim")
int ns_proc_oom(struct trace_event_raw_mark_victim *ctx)
{
	struct ns_proc_oom *e = proc_reserve(sizeof(*e));
	if (!e)
		return 0;
	e->h.type = NS_PROC_OOM_KILL;
	e->h.pid = ctx->pid;
	e->h.ts_ns = bpf_ktime_get_ns();
	e->trigger_pid = ns_current_tgid();
	proc_submit(e);
	return 0;
}
