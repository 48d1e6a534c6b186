/*
 * The cgroups that name a task's container (struct ns_cgroup_ids): its v2
 * cgroup, and on a v1 or hybrid host its cgroups in the cpu and memory
 * hierarchies, so an exec is attributed without reading /proc. Used by the
 * proc stream's records and by the files stream's first exec in a set of
 * cgroups.
 */
#ifndef NODESCOPE_CGROUPS_BPF_H
#define NODESCOPE_CGROUPS_BPF_H

#include "common.bpf.h"

/*
 * The kernfs id of the task's cgroup in the hierarchy of one controller.
 * The controllers' numbers depend on the kernel's configuration, hence the
 * enum relocations; 0 when the kernel has no such controller.
 */
static __always_inline __u64 ns_subsys_cgroup_id(struct task_struct *task, int subsys)
{
	struct cgroup_subsys_state *css;
	struct css_set *cset = BPF_CORE_READ(task, cgroups);

	if (subsys < 0 || bpf_core_read(&css, sizeof(css), &cset->subsys[subsys & 31]) || !css)
		return 0;
	return BPF_CORE_READ(css, cgroup, kn, id);
}

static __always_inline __u64 ns_cpu_cgroup_id(struct task_struct *task)
{
	if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, cpu_cgrp_id))
		return 0;
	return ns_subsys_cgroup_id(task, bpf_core_enum_value(enum cgroup_subsys_id, cpu_cgrp_id));
}

static __always_inline __u64 ns_memory_cgroup_id(struct task_struct *task)
{
	if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, memory_cgrp_id))
		return 0;
	return ns_subsys_cgroup_id(task, bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id));
}

/* The current task's cgroups (task: the current task, as bpf_get_current_task gives it). */
static __always_inline void ns_current_cgroup_ids(struct task_struct *task, struct ns_cgroup_ids *ids)
{
	ids->v2 = bpf_get_current_cgroup_id();
	ids->cpu = ns_cpu_cgroup_id(task);
	ids->memory = ns_memory_cgroup_id(task);
}

#endif
