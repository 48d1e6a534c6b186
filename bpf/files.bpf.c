// SPDX-License-Identifier: GPL-2.0
/*
 * Stream files, what user space must act on at once: executable files mapped
 * for the first time since the agent started, so TLS libraries and binaries
 * are probed before the program calls into them; and the first exec in a set
 * of cgroups, so a new container is named while it exists. A file or set of
 * cgroups already reported costs a hash lookup; every other mapping
 * (anonymous, not executable) one branch.
 */
#include "common.bpf.h"
#include "cgroups.bpf.h"
#include "sockets.bpf.h"
#include "syscalls.bpf.h"

char LICENSE[] SEC("license") = "GPL";

NS_STREAM_DEFINE(files, sizeof(struct ns_cgroups_event))

#define NS_PROT_EXEC 0x4
#define NS_MAP_DENYWRITE 0x0800 /* ignored by the kernel since 5.14; glibc's loader still passes it */
#define NS_PAGE_MASK (~4095ul) /* an address found is page-aligned; an error (-ENOMEM) is not */

struct file_id {
	__u64 dev;
	__u64 ino;
};

/* Files already reported. User space deletes an entry it could not inspect. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct file_id);
	__type(value, struct ns_file_seen);
} files_seen SEC(".maps");

/* --hold-first-runs: files reported whose probing user space has not finished. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct file_id);
	__type(value, __u64);
} files_probing SEC(".maps");

/*
 * --hold-first-runs, in .bss so user space turns it on once its watchdog runs
 * (the watchdog continues whatever is held if the agent dies) and off when it
 * stops.
 */
volatile __u32 hold_first_runs;

#define NS_SIGSTOP 19

/* Processes stopped at a new file until user space has probed it: tgid -> when. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u64);
} held SEC(".maps");

/*
 * Stops the current process (it stops on its way back to user space, before
 * the new program's first instruction or the mapping's first use) and says
 * so. One hold per process at a time: a second new file mapped by another of
 * its threads before the stop lands is not held.
 */
static __always_inline bool files_hold(__u32 tgid, __u64 now)
{
	if (!hold_first_runs)
		return false;
	long err = bpf_map_update_elem(&held, &tgid, &now, BPF_NOEXIST);
	if (err) {
		if (err != -17 /* EEXIST */)
			ns_drop(NS_DROP_HOLDS_FULL);
		return false;
	}
	if (bpf_send_signal(NS_SIGSTOP)) {
		bpf_map_delete_elem(&held, &tgid);
		return false;
	}
	return true;
}

static __always_inline void files_report(void *ctx, struct file *f, __u32 type, __s32 fd, __u64 addr)
{
	struct file_id id = {
		.dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev),
		.ino = BPF_CORE_READ(f, f_inode, i_ino),
	};
	__u64 now = bpf_ktime_get_ns();
	__u32 gen = BPF_CORE_READ(f, f_inode, i_generation);
	struct ns_file_seen *seen = bpf_map_lookup_elem(&files_seen, &id);

	if (seen && seen->gen == gen) {
		seen->ts_ns = now;
		/* Reported, not probed yet: a second first run is held too. */
		if (!hold_first_runs || !bpf_map_lookup_elem(&files_probing, &id))
			return;
	} else {
		/* New, or a new file on the inode number of one gone. */
		struct ns_file_seen fresh = { .ts_ns = now, .gen = gen };
		if (bpf_map_update_elem(&files_seen, &id, &fresh, BPF_ANY))
			ns_drop(NS_DROP_FILES_SEEN_FULL);
		if (hold_first_runs)
			bpf_map_update_elem(&files_probing, &id, &now, BPF_ANY);
	}
	struct ns_file_event *e = files_reserve(sizeof(*e));
	if (!e) {
		/* Lost (and counted): its next mapping is reported instead. */
		bpf_map_delete_elem(&files_seen, &id);
		bpf_map_delete_elem(&files_probing, &id);
		return;
	}
	e->type = type;
	e->pid = ns_current_tgid();
	e->ts_ns = now;
	e->fd = fd;
	e->flags = files_hold(e->pid, now) ? NS_FILE_F_HELD : 0;
	e->addr = addr;
	e->dev = id.dev;
	e->ino = id.ino;
	e->gen = gen;
	e->pad = 0;
	files_submit(ctx, e, sizeof(*e));
}

/*
 * Where a path is put together: twice its length, so that a name copied at
 * any offset below NS_CGROUP_PATH_LEN stays inside (what the verifier can
 * prove of an offset masked to the path's length).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, char[2 * NS_CGROUP_PATH_LEN]);
} cgroup_path_buf SEC(".maps");

/*
 * The path of cgroup node kn below its hierarchy's root ("/" for the root,
 * "/docker/<id>"), into out (NS_CGROUP_PATH_LEN bytes); out[0] stays 0 when
 * kn is NULL, deeper than NS_CGROUP_DEPTH or the path longer than out.
 * The names are the kernel's own, read while the cgroup exists: the cgroup
 * may be gone by the time user space reads the record.
 */
static __always_inline void ns_cgroup_path(struct kernfs_node *kn, char *out)
{
	struct kernfs_node *chain[NS_CGROUP_DEPTH] = {};
	__u32 zero = 0, n = 0, off = 0;
	char *buf;

	out[0] = 0;
	if (!kn)
		return;
#pragma unroll
	for (int i = 0; i < NS_CGROUP_DEPTH; i++) {
		struct kernfs_node *parent = ns_kn_parent(kn);
		if (!parent)
			break; /* kn is the root, whose name is not part of the path */
		chain[i] = kn;
		n = i + 1;
		kn = parent;
	}
	if (ns_kn_parent(kn))
		return; /* deeper than NS_CGROUP_DEPTH */
	buf = bpf_map_lookup_elem(&cgroup_path_buf, &zero);
	if (!buf)
		return;
	buf[0] = '/';
	buf[1] = 0;
#pragma unroll
	for (int i = NS_CGROUP_DEPTH - 1; i >= 0; i--) {
		if ((__u32)i >= n)
			continue;
		const char *name = BPF_CORE_READ(chain[i], name);
		buf[off & (NS_CGROUP_PATH_LEN - 1)] = '/';
		off++;
		long len = bpf_probe_read_kernel_str(&buf[off & (NS_CGROUP_PATH_LEN - 1)],
						     NS_CGROUP_PATH_LEN, name);
		if (len <= 0)
			return;
		off += len - 1; /* onto its NUL, which the next '/' replaces */
		if (off >= NS_CGROUP_PATH_LEN)
			return; /* too long: out stays "" */
	}
	bpf_probe_read_kernel(out, NS_CGROUP_PATH_LEN, buf);
}

/*
 * Sets of cgroups an exec was seen in. LRU: a container long gone makes
 * room by itself; one evicted while alive is reported again, which costs
 * user space a cached look-up.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct ns_cgroup_ids);
	__type(value, __u8);
} cgroups_seen SEC(".maps");

/*
 * A container's name comes from its cgroups' paths and its runtime's state
 * files, both gone soon after its last process: `ctr run --rm` removes them
 * within tens of ms of a 1 ms process's exit, while the proc stream's exec
 * record may wait for its batch. So the first exec in a set of cgroups is
 * reported here, where the reader wakes at once, with the cgroups' paths as
 * they are now: a reader late all the same (a busy node) still has them.
 */
static __always_inline void files_report_cgroups(void *ctx, struct task_struct *task)
{
	struct ns_cgroup_ids ids;
	__u8 one = 1;

	ns_current_cgroup_ids(task, &ids);
	if (bpf_map_lookup_elem(&cgroups_seen, &ids))
		return;
	if (bpf_map_update_elem(&cgroups_seen, &ids, &one, BPF_NOEXIST))
		return; /* another CPU's exec in them got there first */
	struct ns_cgroups_event *e = files_reserve(sizeof(*e));
	if (!e) {
		/* Lost (and counted): the next exec in them is reported instead. */
		bpf_map_delete_elem(&cgroups_seen, &ids);
		return;
	}
	e->type = NS_FILE_CGROUPS;
	e->pid = ns_current_tgid();
	e->ts_ns = bpf_ktime_get_ns();
	e->ids = ids;
	ns_cgroup_path(BPF_CORE_READ(task, cgroups, dfl_cgrp, kn), e->paths[NS_CGROUP_V2]);
	ns_cgroup_path(ns_cpu_cgroup_kn(task), e->paths[NS_CGROUP_CPU]);
	ns_cgroup_path(ns_memory_cgroup_kn(task), e->paths[NS_CGROUP_MEMORY]);
	files_submit(ctx, e, sizeof(*e));
}

SEC("tracepoint/sched/sched_process_exec")
int ns_files_exec(void *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct file *exe = BPF_CORE_READ(task, mm, exe_file);

	files_report_cgroups(ctx, task);
	if (exe)
		files_report(ctx, exe, NS_FILE_EXEC, -1, 0);
	return 0;
}

/* fd's file, mapped at addr by the current task. */
static __always_inline int files_mapped(void *ctx, struct task_struct *task, __s32 fd, __u64 addr)
{
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	if (!fdt || (__u32)fd >= BPF_CORE_READ(fdt, max_fds))
		return 0;
	struct file **fds = BPF_CORE_READ(fdt, fd);
	struct file *f = NULL;
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f)
		return 0;
	files_report(ctx, f, NS_FILE_MMAP, fd, addr);
	return 0;
}

/* From the sys_exit dispatcher: mmap(addr, len, prot, flags, fd, off) returned ret. */
__hidden int ns_files_mmap(struct bpf_raw_tracepoint_args *ctx, __u64 prot, __u64 fd_arg, long ret)
{
	__s32 fd = (__s32)fd_arg;

	if (!(prot & NS_PROT_EXEC) || fd < 0 || (ret < 0 && ret > -4096))
		return 0;
	return files_mapped(ctx, (struct task_struct *)bpf_get_current_task(), fd, (__u64)ret);
}

/*
 * With the socket hooks, which leave the syscall hooks off, a mapping is
 * seen where the kernel finds room for it: in the mapping task, the mmap's
 * arguments in its saved registers, addr the mapping's start. A loader maps
 * a library whole there first, with its first segment's protection (read
 * only where the code is a segment of its own), then its segments over that
 * at fixed addresses, which find no room. So a mapping is reported when it
 * is executable or made by glibc's loader, which maps with MAP_DENYWRITE
 * (MAP_COPY): not every file a program maps (a Go build maps thousands of
 * archives). A loader that passes neither (musl's) has its libraries not
 * seen here.
 */
SEC("tp_btf/vm_unmapped_area")
int BPF_PROG(ns_files_unmapped_area, unsigned long addr)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	__s32 fd = (__s32)regs->NS_REG_ARG5;

	if (regs->NS_REG_NR != NS_NR_mmap || fd < 0 || (addr & ~NS_PAGE_MASK) ||
	    !((regs->NS_REG_ARG3 & NS_PROT_EXEC) || (regs->NS_REG_ARG4 & NS_MAP_DENYWRITE)) ||
	    ns_syscall_compat_of(regs, task))
		return 0;
	return files_mapped(ctx, task, fd, addr);
}
