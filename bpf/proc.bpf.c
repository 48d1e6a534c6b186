// SPDX-License-Identifier: GPL-2.0
/* Stream proc: exec, exit, fork and OOM kill, from tracepoints only. */
#include "common.bpf.h"
#include "cgroups.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* The exec record is the biggest of the stream's. */
NS_STREAM_DEFINE(proc, sizeof(struct ns_proc_exec))

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
	ns_current_cgroup_ids(task, &e->cgroups);
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

	proc_submit(ctx, e, sizeof(*e));
	return 0;
}

/*
 * Exits already reported, by (tgid, start time): on kernels whose exit
 * tracepoint does not say which thread was last, several threads leaving at
 * once can each see the live count at 0; the first to claim the process
 * reports it. LRU: claims of processes long gone make room by themselves.
 */
struct exit_key {
	__u64 start_ns;
	__u32 tgid;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct exit_key);
	__type(value, __u8);
} exits_claimed SEC(".maps");

/* True for exactly one thread of an exiting process: the last one out. */
static __always_inline bool proc_last_thread(struct trace_event_raw_sched_process_exit *ctx,
					     struct task_struct *task)
{
	if (!ns_process_dying(ctx, task))
		return false;
	/* 6.16+: exactly one thread saw it. Before, two can: claim it once. */
	if (ns_kernel_has(NS_FEAT_EXIT_GROUP_DEAD) && bpf_core_field_exists(ctx->group_dead))
		return true;
	struct exit_key k = { .start_ns = BPF_CORE_READ(task, group_leader, start_time),
			      .tgid = BPF_CORE_READ(task, tgid) };
	__u8 one = 1;
	return bpf_map_update_elem(&exits_claimed, &k, &one, BPF_NOEXIST) == 0;
}

SEC("tracepoint/sched/sched_process_exit")
int ns_proc_exit(struct trace_event_raw_sched_process_exit *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	/* One event per process: only when its last thread leaves. */
	if (!proc_wanted() || !proc_last_thread(ctx, task))
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
	ns_current_cgroup_ids(task, &e->cgroups);
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	proc_submit(ctx, e, sizeof(*e));
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
	proc_submit(ctx, e, sizeof(*e));
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
	proc_submit(ctx, e, sizeof(*e));
	return 0;
}
