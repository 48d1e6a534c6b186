#include "features.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "events.h"
#include "uprobe_multi.h"
#include "util/log.h"

#define KF_STR_(x) #x
#define KF_STR(x) KF_STR_(x)

const struct kernel_feature_def kernel_feature_defs[KF_COUNT] = {
	[KF_RING_BUFFER] = { "ring_buffer", "5.8",
			     "every stream is a per-CPU perf buffer: records copied once more, "
			     "read in time order across CPUs, woken through a doorbell",
			     NS_FEAT_RING_BUFFER },
	[KF_CURRENT_TASK_BTF] = { "current_task_btf", "5.11",
				  "task fields are copied out with bpf_probe_read_kernel",
				  NS_FEAT_CURRENT_TASK_BTF },
	[KF_TASK_STORAGE] = { "task_storage", "5.13",
			      "per-thread call state lives in an LRU hash by thread id "
			      "(" KF_STR(KF_THREAD_SLOTS) " threads), freed at thread exit",
			      NS_FEAT_TASK_STORAGE },
	[KF_ATTACH_COOKIE] = { "attach_cookie", "5.15",
			       "no TLS plaintext: a uprobe cannot tell which function it is on",
			       NS_FEAT_ATTACH_COOKIE },
	[KF_UPROBE_MULTI] = { "uprobe_multi", "6.6",
			      "TLS uprobes are one perf event each: slower to attach and "
			      "detach, so first runs of new programs are caught less often",
			      0 },
	[KF_EXIT_GROUP_DEAD] = { "exit_group_dead", "6.16",
				 "the last thread out of a process is claimed in an LRU map",
				 NS_FEAT_EXIT_GROUP_DEAD },
	[KF_TP_BTF] = { "tp_btf", "5.5",
			"the syscall hooks are raw tracepoints that copy out each register "
			"they read: every syscall on the node costs a little more",
			0 },
	[KF_SOCKET_HOOKS] = { "socket_hooks", "6.3",
			      "reads and writes are seen from the hooks on every syscall "
			      "(sys_enter/sys_exit), which every syscall on the node pays",
			      0 /* NS_FEAT_SOCKET_HOOKS where they are picked: probes.c */ },
};

static bool has_helper(enum bpf_prog_type type, enum bpf_func_id id)
{
	return libbpf_probe_bpf_helper(type, id, NULL) == 1;
}

/* sched_process_exit carries do_exit's own "last thread out" (group_dead). */
static bool has_exit_group_dead(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool found = false;

	if (!btf)
		return false;
	int id = btf__find_by_name_kind(btf, "trace_event_raw_sched_process_exit", BTF_KIND_STRUCT);
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	for (unsigned i = 0; t && i < btf_vlen(t) && !found; i++)
		found = !strcmp(btf__name_by_offset(btf, btf_members(t)[i].name_off), "group_dead");
	btf__free(btf);
	return found;
}

/*
 * A BTF-typed raw tracepoint program on sys_exit loads: what the syscall
 * dispatcher needs (bpf/syscalls.bpf.c). Tried, not inferred from the
 * version: the program type also carries fentry, which some kernels refuse
 * where this works.
 */
static bool has_tp_btf_sys_exit(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	if (!btf)
		return false;
	int id = btf__find_by_name_kind(btf, "btf_trace_sys_exit", BTF_KIND_TYPEDEF);
	btf__free(btf);
	if (id <= 0)
		return false;
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_RAW_TP,
		    .attach_btf_id = id);
	int fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", insns, 2, &opts);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* The kernel's BTF names this tracepoint (a BTF-typed program can attach to it). */
bool kernel_has_tracepoint(const char *name)
{
	struct btf *btf = btf__load_vmlinux_btf();
	char type[128];

	if (!btf)
		return false;
	snprintf(type, sizeof(type), "btf_trace_%s", name);
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_TYPEDEF);
	btf__free(btf);
	return id > 0;
}

/*
 * The socket hooks (bpf/l7.bpf.c): the tracepoints in sock_sendmsg and
 * sock_recvmsg, and the caller's saved registers (bpf_task_pt_regs, 5.15)
 * from a BTF-typed program.
 */
static bool has_socket_hooks(void)
{
	return has_tp_btf_sys_exit() && has_helper(BPF_PROG_TYPE_RAW_TRACEPOINT, BPF_FUNC_task_pt_regs) &&
	       has_helper(BPF_PROG_TYPE_RAW_TRACEPOINT, BPF_FUNC_get_current_task_btf) &&
	       kernel_has_tracepoint("sock_send_length") && kernel_has_tracepoint("sock_recv_length");
}

static bool probe_one(enum kernel_feature k)
{
	switch (k) {
	case KF_RING_BUFFER:
		return libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1;
	case KF_CURRENT_TASK_BTF:
		return has_helper(BPF_PROG_TYPE_RAW_TRACEPOINT, BPF_FUNC_get_current_task_btf);
	case KF_TASK_STORAGE:
		/* The map type came in 5.11 for LSM programs only; tracing ones in 5.13. */
		return has_helper(BPF_PROG_TYPE_RAW_TRACEPOINT, BPF_FUNC_task_storage_get);
	case KF_ATTACH_COOKIE:
		return has_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_attach_cookie);
	case KF_UPROBE_MULTI:
		return uprobe_multi_supported();
	case KF_EXIT_GROUP_DEAD:
		return has_exit_group_dead();
	case KF_TP_BTF:
		return has_tp_btf_sys_exit();
	case KF_SOCKET_HOOKS:
		return has_socket_hooks();
	case KF_COUNT:
		break;
	}
	return false;
}

kernel_features_t kernel_features_probe(kernel_features_t pretend_missing)
{
	kernel_features_t f = 0;

	for (int k = 0; k < KF_COUNT; k++)
		if (!(pretend_missing & (1u << k)) && probe_one(k))
			f |= 1u << k;
	return f;
}

uint32_t kernel_features_bpf_bits(kernel_features_t f)
{
	uint32_t bits = 0;

	for (int k = 0; k < KF_COUNT; k++)
		if (kernel_has(f, k))
			bits |= kernel_feature_defs[k].bpf_bit;
	return bits;
}

int kernel_features_parse(const char *list, kernel_features_t *out, const char **bad)
{
	static char name[64];
	kernel_features_t f = 0;

	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		int k;
		for (k = 0; k < KF_COUNT; k++)
			if (strlen(kernel_feature_defs[k].name) == n &&
			    !strncmp(kernel_feature_defs[k].name, p, n))
				break;
		if (k == KF_COUNT) {
			snprintf(name, sizeof(name), "%.*s", (int)(n < 63 ? n : 63), p);
			*bad = name;
			return -1;
		}
		f |= 1u << k;
		p += n + (p[n] == ',');
	}
	*out = f;
	return 0;
}

void kernel_features_report(kernel_features_t f, const char *kernel_release)
{
	for (int k = 0; k < KF_COUNT; k++) {
		const struct kernel_feature_def *d = &kernel_feature_defs[k];
		if (kernel_has(f, k))
			continue;
		log_warn("kernel %s lacks %s (%s+)%s%s", kernel_release, d->name, d->since,
			 d->without ? ": " : "; nodescope cannot run without it",
			 d->without ? d->without : "");
	}
}
