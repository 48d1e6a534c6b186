/*
 * Kernel differences, each behind one helper that says which kernels need
 * which path and why. The bits come from user space (src/bpf/features.c),
 * which probed the running kernel before load; the rest of the BPF code
 * calls these helpers and never tests a version itself.
 */
#ifndef NODESCOPE_CORE_FIXES_BPF_H
#define NODESCOPE_CORE_FIXES_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "events.h"

/* enum ns_kernel_feature bits; read-only data, so a constant to the verifier. */
const volatile __u32 ns_kernel_features __weak = 0;

static __always_inline bool ns_kernel_has(__u32 feature)
{
	return ns_kernel_features & feature;
}

/*
 * The current task as a BTF pointer (5.11), whose fields are plain loads:
 * one helper call then gives what would be a call each (the process, the
 * thread's status). NULL before 5.11.
 */
static __always_inline struct task_struct *ns_current_task_btf(void)
{
	return ns_kernel_has(NS_FEAT_CURRENT_TASK_BTF) ? bpf_get_current_task_btf() : NULL;
}

/* The current process: from task (ns_current_task_btf) where there is one. */
static __always_inline __u32 ns_current_tgid_of(struct task_struct *task)
{
	if (task)
		return task->tgid;
	return bpf_get_current_pid_tgid() >> 32;
}

/*
 * thread_info.status of the current task (x86: TS_COMPAT for a 32-bit
 * syscall), from task (ns_current_task_btf) where there is one. Before 5.11
 * there is no BTF pointer to the task: copy it out.
 */
static __always_inline __u32 ns_current_thread_status_of(struct task_struct *task)
{
#if defined(__TARGET_ARCH_x86)
	if (task)
		return task->thread_info.status;
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	return BPF_CORE_READ(t, thread_info.status);
#else
	return 0;
#endif
}

/*
 * At sched_process_exit: whether every thread of the process is on its way
 * out. From 6.16 the tracepoint carries do_exit's own atomic_dec_and_test of
 * signal->live, true for one thread; before, the count is read here, long
 * after do_exit decremented it, and two threads leaving at once can both
 * see 0 (proc.bpf.c claims the process for exactly one of them).
 */
static __always_inline bool ns_process_dying(struct trace_event_raw_sched_process_exit *ctx,
					     struct task_struct *task)
{
	if (ns_kernel_has(NS_FEAT_EXIT_GROUP_DEAD) && bpf_core_field_exists(ctx->group_dead))
		return ctx->group_dead;
	return BPF_CORE_READ(task, signal, live.counter) == 0;
}

/* kernfs_node's parent before 6.15, when it became __parent (read under RCU). */
struct kernfs_node___parent {
	struct kernfs_node *parent;
} __attribute__((preserve_access_index));

/* The parent of a kernfs node (a cgroup's directory): NULL at its hierarchy's root. */
static __always_inline struct kernfs_node *ns_kn_parent(struct kernfs_node *kn)
{
	struct kernfs_node___parent *old = (void *)kn;

	if (bpf_core_field_exists(old->parent))
		return BPF_CORE_READ(old, parent);
	return BPF_CORE_READ(kn, __parent);
}

/*
 * The calling thread's entry in a per-thread map (tls_calls, l7_calls).
 * Tracing programs may use task storage from 5.13: the entry lives in the
 * task and goes with it. Before that, user space turned the map into an LRU
 * hash by thread id (src/bpf/probes.c), and ns_thread_exit
 * (threads.bpf.c) deletes a thread's entries when it exits.
 * NULL when there is none and create is false, or no room.
 */
const volatile char ns_zero_slot[256] __weak = {};

#define ns_thread_slot(map, create)                                                        \
	({                                                                                 \
		void *slot_;                                                               \
		_Static_assert(sizeof(*(map)->value) <= sizeof(ns_zero_slot),              \
			       "ns_zero_slot too small for " #map);                        \
		if (ns_kernel_has(NS_FEAT_TASK_STORAGE)) {                                 \
			slot_ = bpf_task_storage_get(map, bpf_get_current_task_btf(), 0,  \
						     (create) ? BPF_LOCAL_STORAGE_GET_F_CREATE \
							      : 0);                        \
		} else {                                                                   \
			__u32 tid_ = (__u32)bpf_get_current_pid_tgid();                    \
			slot_ = bpf_map_lookup_elem(map, &tid_);                           \
			if (!slot_ && (create)) {                                          \
				bpf_map_update_elem(map, &tid_, (void *)ns_zero_slot,      \
						    BPF_NOEXIST);                          \
				slot_ = bpf_map_lookup_elem(map, &tid_);                   \
			}                                                                  \
		}                                                                          \
		(typeof(*(map)->value) *)slot_;                                            \
	})

#endif
