/*
 * The cgroups that name a task's container (struct ns_cgroup_ids): its v2
 * cgroup, and on a v1 or hybrid host its cgroups in the cpu and memory
 * hierarchies, so an exec is attributed without reading /proc. Used by the
 * proc stream's records and by the files stream's first exec in a set of
 * cgroups, which also carries their paths (files.bpf.c).
 */
#ifndef NODESCOPE_CGROUPS_BPF_H
#define NODESCOPE_CGROUPS_BPF_H

#include "common.bpf.h"

/*
 * The kernfs node of the task's cgroup in the hierarchy of one controller.
 * The controllers' numbers depend on the kernel's configuration, hence the
 * enum relocations; NULL when the kernel has no such controller.
 */
static __always_inline struct kernfs_node *ns_subsys_cgroup_kn(struct task_struct *task, int subsys)
{
	struct cgroup_subsys_state *css;
	struct css_set *cset = BPF_CORE_READ(task, cgroups);

	if (subsys < 0 || bpf_core_read(&css, sizeof(css), &cset->subsys[subsys & 31]) || !css)
		return NULL;
	return BPF_CORE_READ(css, cgroup, kn);
}

static __always_inline struct kernfs_node *ns_cpu_cgroup_kn(struct task_struct *task)
{
	if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, cpu_cgrp_id))
		return NULL;
	return ns_subsys_cgroup_kn(task, bpf_core_enum_value(enum cgroup_subsys_id, cpu_cgrp_id));
}

static __always_inline struct kernfs_node *ns_memory_cgroup_kn(struct task_struct *task)
{
	if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, memory_cgrp_id))
		return NULL;
	return ns_subsys_cgroup_kn(task, bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id));
}

static __always_inline __u64 ns_kn_id(struct kernfs_node *kn)
{
	return kn ? BPF_CORE_READ(kn, id) : 0;
}

/* The current task's cgroups (task: the current task, as bpf_get_current_task gives it). */
static __always_inline void ns_current_cgroup_ids(struct task_struct *task, struct ns_cgroup_ids *ids)
{
	ids->v2 = bpf_get_current_cgroup_id();
	ids->cpu = ns_kn_id(ns_cpu_cgroup_kn(task));
	ids->memory = ns_kn_id(ns_memory_cgroup_kn(task));
}

#endif
