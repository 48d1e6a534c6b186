#include "probes.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "exit_codes.h"
#include "loop/stream.h"
#include "wakeup.h"
#include "l7_filter.h" /* the skeleton's .bss holds struct ns_l7_filter */
#include "nodescope.skel.h"
#include "uprobe_multi.h"
#include "tls/plan.h"
#include "util/log.h"

#define PROBES_MAX_LINKS 64

struct probes {
	struct nodescope_bpf *skel;
	kernel_features_t features;
	uint32_t perf_cpu_bytes[NS_STREAM_COUNT]; /* kernels without ring buffers */
	bool tls_multi;
	char cgroup_v2_root[PATH_MAX]; /* the socket hooks' listen hook goes there */
	struct bpf_link *links[PROBES_MAX_LINKS];
	unsigned n_links;
};

static bool probes_verbose;

static int probes_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && !probes_verbose)
		return 0;
	if (level == LIBBPF_INFO && !probes_verbose)
		return 0;
	/* libbpf names itself in most of its messages, not in all: the log line names it. */
	if (!strncmp(fmt, "libbpf: ", 8))
		fmt += 8;
	log_vmsg(level == LIBBPF_WARN ? LOG_LEVEL_WARN : LOG_LEVEL_DEBUG, "libbpf", fmt, ap);
	return 0;
}

/* Per-stream BPF objects, by stream id. */
static struct bpf_map *ring_of(struct nodescope_bpf *k, enum ns_stream s)
{
	switch (s) {
	case NS_STREAM_PROC:
		return k->maps.rb_proc;
	case NS_STREAM_TCP:
		return k->maps.rb_tcp;
	case NS_STREAM_L7:
		return k->maps.rb_l7;
	case NS_STREAM_FILES:
		return k->maps.rb_files;
	default:
		return NULL;
	}
}

static struct bpf_map *bell_of(struct nodescope_bpf *k, enum ns_stream s)
{
	switch (s) {
	case NS_STREAM_PROC:
		return k->maps.bell_proc;
	case NS_STREAM_TCP:
		return k->maps.bell_tcp;
	case NS_STREAM_L7:
		return k->maps.bell_l7;
	case NS_STREAM_FILES:
		return k->maps.bell_files;
	default:
		return NULL;
	}
}

static struct bpf_map *bell_state_of(struct nodescope_bpf *k, enum ns_stream s)
{
	switch (s) {
	case NS_STREAM_PROC:
		return k->maps.bellst_proc;
	case NS_STREAM_TCP:
		return k->maps.bellst_tcp;
	case NS_STREAM_L7:
		return k->maps.bellst_l7;
	case NS_STREAM_FILES:
		return k->maps.bellst_files;
	default:
		return NULL;
	}
}

static struct bpf_map *lost_of(struct nodescope_bpf *k, enum ns_stream s)
{
	switch (s) {
	case NS_STREAM_PROC:
		return k->maps.lost_proc;
	case NS_STREAM_TCP:
		return k->maps.lost_tcp;
	case NS_STREAM_L7:
		return k->maps.lost_l7;
	case NS_STREAM_FILES:
		return k->maps.lost_files;
	default:
		return NULL;
	}
}

static volatile struct ns_stream_config *config_of(struct nodescope_bpf *k, enum ns_stream s)
{
	switch (s) {
	case NS_STREAM_PROC:
		return (volatile struct ns_stream_config *)&k->rodata->cfg_proc;
	case NS_STREAM_TCP:
		return (volatile struct ns_stream_config *)&k->rodata->cfg_tcp;
	case NS_STREAM_L7:
		return (volatile struct ns_stream_config *)&k->rodata->cfg_l7;
	case NS_STREAM_FILES:
		return (volatile struct ns_stream_config *)&k->rodata->cfg_files;
	default:
		return NULL;
	}
}

/* A cgroup program goes on the root of cgroup v2, every other where its section says. */
static struct bpf_link *probes_attach_one(struct probes *p, struct bpf_program *prog)
{
	if (bpf_program__type(prog) != BPF_PROG_TYPE_SOCK_OPS)
		return bpf_program__attach(prog);
	int fd = open(p->cgroup_v2_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct bpf_link *link = bpf_program__attach_cgroup(prog, fd);
	int err = errno;
	close(fd);
	errno = err;
	return link;
}

static int probes_attach_all(struct probes *p)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, p->skel->obj) {
		/* Uprobes go on files as they are found (src/tls/). */
		if (!strncmp(bpf_program__section_name(prog), "uprobe", 6) ||
		    !bpf_program__autoload(prog))
			continue;
		struct bpf_link *link = probes_attach_one(p, prog);
		if (!link) {
			int err = errno;
			log_error("cannot attach probe %s (%s): %s", bpf_program__name(prog),
				  bpf_program__section_name(prog), strerror(err));
			if (err == ENOENT)
				log_error("this kernel has no such hook; "
					  "nodescope needs it for what it reports");
			return NS_EXIT_ATTACH;
		}
		if (p->n_links == PROBES_MAX_LINKS) {
			bpf_link__destroy(link);
			log_error("internal error: too many probes");
			return NS_EXIT_ATTACH;
		}
		p->links[p->n_links++] = link;
	}
	return 0;
}

/* Per-thread maps as LRU hashes by thread id where tracing programs have no task storage. */
static int probes_thread_slots_as_hash(struct bpf_map *m)
{
	if (bpf_map__set_type(m, BPF_MAP_TYPE_LRU_HASH) || bpf_map__set_map_flags(m, 0) ||
	    bpf_map__set_max_entries(m, KF_THREAD_SLOTS))
		return -1;
	return 0;
}

/*
 * Before 5.8 every stream's ring becomes a per-CPU perf event array (one fd
 * per CPU, put in by the reader), its bytes shared out over the CPUs.
 */
static int probes_rings_as_perf_buffers(struct probes *p)
{
	int ncpu = libbpf_num_possible_cpus();
	struct rlimit nofile;

	if (ncpu <= 0)
		return -1;
	/* Two perf event fds per CPU and stream: 1024 is 128 CPUs' worth. */
	if (!getrlimit(RLIMIT_NOFILE, &nofile) && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
	for (int s = 0; s < NS_STREAM_COUNT; s++) {
		struct bpf_map *m = ring_of(p->skel, s);
		p->perf_cpu_bytes[s] = stream_perf_cpu_bytes(bpf_map__max_entries(m), ncpu);
		if (bpf_map__set_type(m, BPF_MAP_TYPE_PERF_EVENT_ARRAY) ||
		    bpf_map__set_key_size(m, sizeof(uint32_t)) ||
		    bpf_map__set_value_size(m, sizeof(uint32_t)) || bpf_map__set_max_entries(m, ncpu))
			return -1;
	}
	return 0;
}

/*
 * One of two sets of hooks sees the sockets' reads and writes: the socket
 * hooks (bpf/l7.bpf.c), which only sockets pass, or the syscall hooks
 * (bpf/syscalls.bpf.c), which every syscall on the node passes. The socket
 * hooks take the place of every use of the syscall hooks, so that none is
 * attached: one program left on sys_enter or sys_exit is the whole cost.
 * They are the default where the kernel has them (6.3+) and cgroup2 is
 * mounted (the listen hook is a cgroup program); a kernel without them says
 * so in its start-up line on features (features.c).
 */
static void probes_pick_hooks(struct probes *p, const struct probes_opts *o)
{
	struct nodescope_bpf *k = p->skel;
	bool tp_btf = kernel_has(p->features, KF_TP_BTF);
	/* (What they need of the others, in case those were pretended away.) */
	bool kernel = kernel_has(p->features, KF_SOCKET_HOOKS) && tp_btf &&
		      kernel_has(p->features, KF_CURRENT_TASK_BTF);
	bool sockets = !o->syscall_hooks && kernel && o->cgroup_v2_root;

	if (!o->syscall_hooks && kernel && !sockets)
		log_warn("no cgroup2 mount (--cgroupfs-root) for the socket hooks' listen hook: the "
			 "syscall hooks see the sockets, which every syscall on the node pays");
	if (sockets) {
		k->rodata->ns_kernel_features |= NS_FEAT_SOCKET_HOOKS;
		snprintf(p->cgroup_v2_root, sizeof(p->cgroup_v2_root), "%s", o->cgroup_v2_root);
	}
	bpf_program__set_autoload(k->progs.ns_sys_enter_btf, !sockets && tp_btf);
	bpf_program__set_autoload(k->progs.ns_sys_exit_btf, !sockets && tp_btf);
	bpf_program__set_autoload(k->progs.ns_sys_enter, !sockets && !tp_btf);
	bpf_program__set_autoload(k->progs.ns_sys_exit, !sockets && !tp_btf);
	bpf_program__set_autoload(k->progs.ns_sock_send, sockets && !o->no_l7);
	bpf_program__set_autoload(k->progs.ns_sock_recv, sockets && !o->no_l7);
	/* Without L7 no socket is tracked: nothing for the fork, exit and exec to carry over. */
	k->rodata->ns_l7_off = o->no_l7;
	bpf_program__set_autoload(k->progs.ns_l7_fork, !o->no_l7);
	bpf_program__set_autoload(k->progs.ns_l7_process_exit, !o->no_l7);
	bpf_program__set_autoload(k->progs.ns_l7_exec, !o->no_l7);
	bpf_program__set_autoload(k->progs.ns_tcp_sockops, sockets);
	bpf_program__set_autoload(k->progs.ns_files_unmapped_area, sockets);
}

/* Shapes the object to what the kernel has, before load (features.h says what each costs). */
static int probes_fit_kernel(struct probes *p, const struct probes_opts *o)
{
	kernel_features_t pretend_missing = o->pretend_missing;
	struct nodescope_bpf *k = p->skel;
	struct utsname u;

	p->features = kernel_features_probe(pretend_missing);
	uname(&u);
	kernel_features_report(p->features, u.release);
	if (!kernel_has(p->features, KF_RING_BUFFER) && probes_rings_as_perf_buffers(p)) {
		log_error("cannot set up perf buffers: %s", strerror(errno));
		return NS_EXIT_RUNTIME;
	}
	k->rodata->ns_kernel_features = kernel_features_bpf_bits(p->features);
	probes_pick_hooks(p, o);
	bool task_storage = kernel_has(p->features, KF_TASK_STORAGE);
	if (!task_storage && probes_thread_slots_as_hash(k->maps.tls_calls)) {
		log_error("cannot set up per-thread maps: %s", strerror(errno));
		return NS_EXIT_RUNTIME;
	}
	bpf_program__set_autoload(k->progs.ns_thread_exit, !task_storage);
	bool tls = probes_tls_possible(p);
	p->tls_multi = tls && kernel_has(p->features, KF_UPROBE_MULTI);
	for (unsigned i = 0; i < TLS_PROG_COUNT; i++) {
		struct bpf_program *prog = probes_tls_program(p, i);
		bpf_program__set_autoload(prog, tls);
		if (p->tls_multi)
			bpf_program__set_expected_attach_type(prog, NS_BPF_TRACE_UPROBE_MULTI);
	}
	return 0;
}

int probes_start(const struct probes_opts *o, struct probes **out)
{
	struct probes *p = calloc(1, sizeof(*p));
	int rc;

	if (!p)
		return NS_EXIT_RUNTIME;
	probes_verbose = o->verbose;
	libbpf_set_print(probes_libbpf_print);

	p->skel = nodescope_bpf__open();
	if (!p->skel) {
		log_error("cannot open BPF object: %s", strerror(errno));
		rc = NS_EXIT_KERNEL;
		goto fail;
	}
	for (int s = 0; s < NS_STREAM_COUNT; s++) {
		volatile struct ns_stream_config *cfg = config_of(p->skel, s);
		struct bpf_map *ring = ring_of(p->skel, s);
		uint32_t size = o->ring_size[s] ? o->ring_size[s] : stream_defs[s].ring_size;
		if (size && bpf_map__set_max_entries(ring, size)) {
			log_error("bad ring buffer size %u for stream %s", size,
				  stream_defs[s].name);
			rc = NS_EXIT_USAGE;
			goto fail;
		}
		cfg->policy = stream_defs[s].policy.kind;
		cfg->watermark = stream_watermark(&stream_defs[s], bpf_map__max_entries(ring));
		cfg->query_bytes = ns_query_bytes(cfg->watermark, (unsigned)libbpf_num_possible_cpus());
	}
	if ((rc = probes_fit_kernel(p, o)))
		goto fail;
	p->skel->rodata->filter_cgroup_id = o->cgroup_id;
	p->skel->rodata->filter_cgroup_level = o->cgroup_level;
	int err = nodescope_bpf__load(p->skel);
	if (err) {
		log_error("cannot load BPF programs: %s\n"
			  "(the verifier's log above, if any, names the program)",
			  strerror(-err));
		rc = err == -EPERM ? NS_EXIT_PRIVILEGE : NS_EXIT_ATTACH;
		goto fail;
	}
	*out = p;
	return 0;
fail:
	probes_stop(p);
	return rc;
}

int probes_attach(struct probes *p)
{
	return probes_attach_all(p);
}

void probes_detach(struct probes *p)
{
	for (unsigned i = 0; i < p->n_links; i++)
		bpf_link__destroy(p->links[i]);
	p->n_links = 0;
}

void probes_stop(struct probes *p)
{
	if (!p)
		return;
	probes_detach(p);
	nodescope_bpf__destroy(p->skel);
	free(p);
}

struct bpf_map *probes_ring(struct probes *p, enum ns_stream s)
{
	return ring_of(p->skel, s);
}

uint32_t probes_perf_cpu_bytes(const struct probes *p, enum ns_stream s)
{
	return p->perf_cpu_bytes[s];
}

struct bpf_map *probes_bell(struct probes *p, enum ns_stream s)
{
	return bell_of(p->skel, s);
}

struct bpf_map *probes_bell_state(struct probes *p, enum ns_stream s)
{
	return bell_state_of(p->skel, s);
}

struct bpf_map *probes_lost(struct probes *p, enum ns_stream s)
{
	return lost_of(p->skel, s);
}

struct bpf_map *probes_drops(struct probes *p)
{
	return p->skel->maps.ns_drops;
}

struct bpf_map *probes_l7_socks(struct probes *p)
{
	return p->skel->maps.l7_socks;
}

struct ns_l7_filter *probes_l7_filter(struct probes *p)
{
	return &p->skel->bss->ns_l7_filter;
}

void probes_foreach_misses(struct probes *p,
			   void (*fn)(void *ctx, const char *program, uint64_t misses), void *ctx)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, p->skel->obj) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) == 0)
			fn(ctx, bpf_program__name(prog), info.recursion_misses);
	}
}

struct bpf_program *probes_tls_program(struct probes *p, unsigned which)
{
	switch (which) {
	case TLS_PROG_ENTRY:
		return p->skel->progs.ns_tls_enter;
	case TLS_PROG_RET:
		return p->skel->progs.ns_tls_ret;
	case TLS_PROG_GO_ENTRY:
		return p->skel->progs.ns_tls_go_enter;
	case TLS_PROG_GO_RET:
		return p->skel->progs.ns_tls_go_ret;
	}
	return NULL;
}

kernel_features_t probes_features(const struct probes *p)
{
	return p->features;
}

bool probes_tls_possible(const struct probes *p)
{
	return kernel_has(p->features, KF_ATTACH_COOKIE);
}

bool probes_tls_multi(const struct probes *p)
{
	return p->tls_multi;
}

struct bpf_map *probes_files_seen(struct probes *p)
{
	return p->skel->maps.files_seen;
}

struct bpf_map *probes_held(struct probes *p)
{
	return p->skel->maps.held;
}

struct bpf_map *probes_files_probing(struct probes *p)
{
	return p->skel->maps.files_probing;
}

volatile uint32_t *probes_hold_switch(struct probes *p)
{
	return &p->skel->bss->hold_first_runs;
}

unsigned probes_attached(const struct probes *p)
{
	return p->n_links;
}
