// SPDX-License-Identifier: GPL-2.0
/*
 * build/bench-floor: loads the programs of one or more sets from a BPF
 * object (build/bench/empty.bpf.o by default: empty programs), attaches
 * them, prints "ready" and holds them until SIGTERM or SIGINT. bench/ runs it
 * as a config beside nodescope: what the traced processes pay for a bare
 * program on the same hooks. SIGUSR1 detaches the programs and prints
 * "detached", SIGUSR2 attaches them again and prints "attached" (bench/db
 * --interleave, as nodescope's --debug-hook-signals).
 *
 *   bench-floor [--object FILE] [SET|PROGRAM]...
 *
 * A set is a name below; anything else is a program name in the object.
 * With none given, the set `nodescope`. An object with a ring buffer named
 * floor_ring (capture.bpf.o) has it drained by a thread every DRAIN_NS, as
 * an agent would (its programs wake nobody: the least a record can cost);
 * one with floor_rings, an array of ring buffers, gets one ring per CPU in
 * it, drained the same way; the records that found no room (floor_lost) are reported at the end.
 */
#include <errno.h>
#include <limits.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

struct floor_set {
	const char *name;
	const char *what;
	const char *progs[10];
};

/* Program names in bench/floor/empty.bpf.c and dispatch.bpf.c. */
static const struct floor_set sets[] = {
	{ "nodescope", "empty programs on every hook nodescope attaches (bpf/*.bpf.c)",
	  { "floor_sys_enter", "floor_sys_exit", "floor_exec", "floor_exit", "floor_fork",
	    "floor_oom", "floor_sock_state", "floor_retransmit" } },
	{ "raw-syscalls", "empty raw_tp sys_enter and sys_exit",
	  { "floor_sys_enter", "floor_sys_exit" } },
	{ "tp-syscalls", "empty tracepoints raw_syscalls:sys_enter and sys_exit",
	  { "tp_sys_enter", "tp_sys_exit" } },
	{ "per-syscall", "empty tracepoints syscalls:sys_{enter,exit}_{getpid,read,write}",
	  { "tp_enter_getpid", "tp_exit_getpid", "tp_enter_read", "tp_exit_read",
	    "tp_enter_write", "tp_exit_write" } },
	{ "btf-syscalls", "empty tp_btf sys_enter and sys_exit",
	  { "btf_sys_enter", "btf_sys_exit" } },
	{ "dispatch", "nodescope's dispatcher, handlers stubbed (raw_tp; dispatch.bpf.o)",
	  { "disp_enter", "disp_exit" } },
	{ "dispatch-exit-read", "raw_tp sys_exit reading the id only (dispatch.bpf.o)",
	  { "disp_exit_read_only" } },
	{ "dispatch-btf", "the dispatcher as tp_btf programs, handlers stubbed (dispatch.bpf.o)",
	  { "btf_disp_enter", "btf_disp_exit" } },
	{ "dispatch-l7", "the dispatcher and the l7 handlers' path for an untracked fd (dispatch.bpf.o)",
	  { "disp_l7_sys_enter", "disp_l7_sys_exit" } },
	{ "dispatch-l7-btf", "the same as tp_btf programs (dispatch.bpf.o)",
	  { "btf_l7_sys_enter", "btf_l7_sys_exit" } },
	{ "capture", "the least a capture of every tracked socket's reads and writes costs "
	  "(tp_btf; capture.bpf.o)",
	  { "cap_sys_enter", "cap_sys_exit", "cap_fork" } },
	{ "capture-cpu", "the capture with one ring per CPU (tp_btf; capture.bpf.o)",
	  { "cap_sys_enter", "cap_cpu_sys_exit", "cap_fork" } },
	{ "copy", "the capture's work without its records: bytes read onto the stack "
	  "(tp_btf; capture.bpf.o)",
	  { "cap_sys_enter", "copy_sys_exit", "cap_fork" } },
	{ "sock-capture", "the capture from the socket tracepoints sock_send_length and "
	  "sock_recv_length (6.4+) instead of the syscall hooks (tp_btf; capture.bpf.o)",
	  { "sk_cap_state", "sk_cap_send", "sk_cap_recv" } },
	{ "sock-hooks", "empty programs on the socket tracepoints (tp_btf; capture.bpf.o)",
	  { "sk_empty_send", "sk_empty_recv" } },
};

static const struct floor_set *set_named(const char *name)
{
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
		if (!strcmp(sets[i].name, name))
			return &sets[i];
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: bench-floor [--object FILE] [SET|PROGRAM]...\nsets:\n");
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
		fprintf(f, "  %-20s %s\n", sets[i].name, sets[i].what);
}

#define MAX_WANTED 64
static const char *wanted[MAX_WANTED];
static int n_wanted;

static int want(const char *prog)
{
	for (int i = 0; i < n_wanted; i++)
		if (!strcmp(wanted[i], prog))
			return 0;
	if (n_wanted == MAX_WANTED) {
		fprintf(stderr, "bench-floor: too many programs\n");
		return -1;
	}
	wanted[n_wanted++] = prog;
	return 0;
}

static int is_wanted(const char *prog)
{
	for (int i = 0; i < n_wanted; i++)
		if (!strcmp(wanted[i], prog))
			return 1;
	return 0;
}

/* build/bench/empty.bpf.o beside this executable (build/bench-floor). */
static char *default_object(void)
{
	static char path[PATH_MAX];
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0)
		return "build/bench/empty.bpf.o";
	exe[n] = 0;
	snprintf(path, sizeof(path), "%s/bench/empty.bpf.o", dirname(exe));
	return path;
}

static int drop_record(void *ctx, void *data, size_t size)
{
	return 0;
}

#define DRAIN_NS 5000000

static void *drain(void *rb)
{
	struct timespec t = { 0, DRAIN_NS };

	for (;;) {
		if (ring_buffer__consume(rb) < 0)
			return NULL;
		nanosleep(&t, NULL);
	}
}

/* The sum over CPUs of a per-CPU u64 array's first element. */
static unsigned long long percpu_sum(struct bpf_map *m)
{
	int n = libbpf_num_possible_cpus();
	unsigned long long sum = 0, v[n > 0 ? n : 1];
	__u32 zero = 0;

	if (n <= 0 || bpf_map__lookup_elem(m, &zero, sizeof(zero), v, sizeof(v), 0))
		return 0;
	for (int i = 0; i < n; i++)
		sum += v[i];
	return sum;
}

/* One ring per CPU into floor_rings (sized as its template), each drained with rb's. */
static int add_cpu_rings(struct ring_buffer *rb, struct bpf_map *rings, int ncpus)
{
	if (!rings)
		return 0;
	struct bpf_map *inner = bpf_map__inner_map(rings);
	__u32 size = inner ? bpf_map__max_entries(inner) : 4u << 20;
	for (__u32 cpu = 0; cpu < (__u32)ncpus; cpu++) {
		int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, NULL, 0, 0, size, NULL);
		if (fd < 0 || bpf_map__update_elem(rings, &cpu, sizeof(cpu), &fd, sizeof(fd), 0) ||
		    ring_buffer__add(rb, fd, drop_record, NULL))
			return -1;
	}
	return 0;
}

static int quiet_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_DEBUG ? 0 : vfprintf(stderr, fmt, ap);
}

static void detach_all(struct bpf_link **links, int n)
{
	for (int i = 0; i < n; i++)
		bpf_link__destroy(links[i]);
}

/* Attaches every program loaded; returns how many, or -1 (said why). */
static int attach_all(struct bpf_object *obj, struct bpf_link **links)
{
	struct bpf_program *prog;
	int n = 0;

	bpf_object__for_each_program(prog, obj) {
		if (!bpf_program__autoload(prog))
			continue;
		struct bpf_link *l = bpf_program__attach(prog);
		if (!l) {
			fprintf(stderr, "bench-floor: cannot attach %s (%s): %s\n",
				bpf_program__name(prog), bpf_program__section_name(prog),
				strerror(errno));
			detach_all(links, n);
			return -1;
		}
		links[n++] = l;
	}
	return n;
}

int main(int argc, char **argv)
{
	const char *object = NULL;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--object") && i + 1 < argc) {
			object = argv[++i];
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (argv[i][0] == '-') {
			usage(stderr);
			return 2;
		} else {
			const struct floor_set *s = set_named(argv[i]);
			if (!s) {
				if (want(argv[i]))
					return 2;
				continue;
			}
			for (int j = 0; j < 10 && s->progs[j]; j++)
				if (want(s->progs[j]))
					return 2;
		}
	}
	if (!n_wanted)
		for (int j = 0; j < 10 && sets[0].progs[j]; j++)
			want(sets[0].progs[j]);
	if (!object)
		object = default_object();

	libbpf_set_print(quiet_libbpf);
	struct bpf_object *obj = bpf_object__open_file(object, NULL);
	if (!obj) {
		fprintf(stderr, "bench-floor: cannot open %s: %s\n", object, strerror(errno));
		return 1;
	}
	struct bpf_program *prog;
	int found = 0;
	bpf_object__for_each_program(prog, obj) {
		int w = is_wanted(bpf_program__name(prog));
		bpf_program__set_autoload(prog, w);
		found += w;
	}
	if (found != n_wanted) {
		for (i = 0; i < n_wanted; i++)
			if (!bpf_object__find_program_by_name(obj, wanted[i]))
				fprintf(stderr, "bench-floor: no program %s in %s\n", wanted[i], object);
		return 2;
	}
	struct bpf_map *rings = bpf_object__find_map_by_name(obj, "floor_rings");
	int ncpus = libbpf_num_possible_cpus();
	if (rings && (ncpus <= 0 || bpf_map__set_max_entries(rings, ncpus))) {
		fprintf(stderr, "bench-floor: cannot size floor_rings\n");
		return 1;
	}
	if (bpf_object__load(obj)) {
		fprintf(stderr, "bench-floor: cannot load %s: %s\n", object, strerror(errno));
		return 1;
	}

	/* Signals are taken by sigwait, after the programs are attached. */
	sigset_t term;
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigaddset(&term, SIGINT);
	sigaddset(&term, SIGUSR1);
	sigaddset(&term, SIGUSR2);
	sigprocmask(SIG_BLOCK, &term, NULL);

	struct bpf_link *links[MAX_WANTED];
	int n_links = attach_all(obj, links);
	if (n_links < 0)
		return 1;
	struct bpf_map *ring = bpf_object__find_map_by_name(obj, "floor_ring");
	if (ring) {
		struct ring_buffer *rb = ring_buffer__new(bpf_map__fd(ring), drop_record, NULL, NULL);
		pthread_t t;
		if (!rb || add_cpu_rings(rb, rings, ncpus) || pthread_create(&t, NULL, drain, rb)) {
			fprintf(stderr, "bench-floor: cannot read floor_ring: %s\n", strerror(errno));
			return 1;
		}
	}
	printf("ready\n");
	fflush(stdout);
	fprintf(stderr, "bench-floor: ready: %d programs attached\n", n_links);

	int sig;
	for (;;) {
		sigwait(&term, &sig);
		if (sig == SIGUSR1 && n_links) {
			detach_all(links, n_links);
			n_links = 0;
			printf("detached\n");
		} else if (sig == SIGUSR2 && !n_links) {
			if ((n_links = attach_all(obj, links)) < 0)
				return 1;
			printf("attached\n");
		} else if (sig == SIGTERM || sig == SIGINT) {
			break;
		}
		fflush(stdout);
	}
	struct bpf_map *lost = bpf_object__find_map_by_name(obj, "floor_lost");
	if (lost)
		fprintf(stderr, "bench-floor: %llu records lost\n", percpu_sum(lost));
	detach_all(links, n_links);
	bpf_object__close(obj);
	return 0;
}
