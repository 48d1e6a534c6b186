// SPDX-License-Identifier: GPL-2.0
/*
 * bench/link-close's program, built by the Makefile into build/bench/link-close:
 * loads a no-op BPF program, makes the links on FILES new empty files of DIR,
 * closes them from THREADS threads and prints "LINKS SECONDS".
 */
#define _GNU_SOURCE
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct lc_multi {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, multi_flags, pid, pad;
};

static int *fds;
static int n_fds, per_link;
static atomic_int next_fd;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void *closer(void *arg)
{
	for (;;) {
		int i = atomic_fetch_add(&next_fd, per_link);
		if (i >= n_fds)
			return NULL;
		for (int j = 0; j < per_link; j++)
			close(fds[i + j]);
	}
}

/* usage: link-close multi|perf DIR FILES LINKS_PER_FILE THREADS */
int main(int argc, char **argv)
{
	if (argc != 6)
		return 2;
	int perf = !strcmp(argv[1], "perf"), files = atoi(argv[3]), per = atoi(argv[4]),
	    threads = atoi(argv[5]);
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = perf ? 0 : 48);
	int prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "ns_bench_close", "GPL", insns, 2, &o);
	if (prog < 0) {
		perror("bpf_prog_load");
		return 1;
	}
	int uprobe_type = 0;
	if (perf) {
		FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "r");
		if (!f || fscanf(f, "%d", &uprobe_type) != 1)
			return 1;
		fclose(f);
	}
	/* perf: a link fd and its perf event fd per uprobe, closed together. */
	per_link = perf ? 2 : 1;
	fds = calloc((size_t)files * per * 2, sizeof(int));
	for (int i = 0; i < files; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/f%d", argv[2], i);
		int fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0644);
		if (fd < 0 || ftruncate(fd, 1 << 16))
			return 1;
		close(fd);
		for (int j = 0; j < per; j++) {
			uint64_t offs[4] = { 0x1000 + 64 * j, 0x1010 + 64 * j, 0x1020 + 64 * j,
					     0x1030 + 64 * j };
			if (perf) {
				struct perf_event_attr a = { .size = sizeof(a), .type = uprobe_type };
				a.config1 = (uint64_t)(uintptr_t)path;
				a.config2 = offs[0];
				int pfd = syscall(__NR_perf_event_open, &a, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
				int lfd = pfd < 0 ? -1 : bpf_link_create(prog, pfd, BPF_PERF_EVENT, NULL);
				if (lfd < 0) {
					perror("perf uprobe");
					return 1;
				}
				fds[n_fds++] = lfd;
				fds[n_fds++] = pfd;
			} else {
				struct lc_multi a = { .prog_fd = prog, .attach_type = 48, .cnt = 4 };
				a.path = (uint64_t)(uintptr_t)path;
				a.offsets = (uint64_t)(uintptr_t)offs;
				long fd = syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
				if (fd < 0) {
					perror("uprobe_multi link");
					return 1;
				}
				fds[n_fds++] = (int)fd;
			}
		}
	}
	pthread_t *t = calloc(threads, sizeof(*t));
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	double t0 = now();
	for (int i = 0; i < threads; i++)
		if (pthread_create(&t[i], &attr, closer, NULL))
			return 1;
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	printf("%d %.6f\n", n_fds / per_link, now() - t0);
	return 0;
}
