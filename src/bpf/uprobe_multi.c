#include "uprobe_multi.h"

#include <errno.h>
#include <linux/bpf.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>

/* The link_create part of union bpf_attr for uprobe_multi (linux/bpf.h, 6.6). */
struct link_create_uprobe_multi {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t multi_flags;
	uint32_t pid;
	uint32_t pad;
};

static int link_create(int prog_fd, const char *path, const uint64_t *offsets,
		       const uint64_t *cookies, size_t n)
{
	struct link_create_uprobe_multi a;

	memset(&a, 0, sizeof(a));
	a.prog_fd = (uint32_t)prog_fd;
	a.attach_type = NS_BPF_TRACE_UPROBE_MULTI;
	a.path = (uint64_t)(uintptr_t)path;
	a.offsets = (uint64_t)(uintptr_t)offsets;
	a.cookies = (uint64_t)(uintptr_t)cookies;
	a.cnt = (uint32_t)n;
	long fd = syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : (int)fd;
}

int uprobe_multi_supported(void)
{
	static int known = -1;
	if (known >= 0)
		return known;
	/* r0 = 0; exit */
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = NS_BPF_TRACE_UPROBE_MULTI);
	int prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "ns_probe_um", "GPL", insns, 2, &o);
	if (prog < 0)
		return known = 0;
	/* A directory is no file to probe: a kernel that knows the link type says EBADF. */
	uint64_t off = 0;
	int fd = link_create(prog, "/", &off, NULL, 1);
	known = fd == -EBADF;
	if (fd >= 0)
		close(fd);
	close(prog);
	return known;
}

int uprobe_multi_attach(int prog_fd, const char *path, const uint64_t *offsets,
			const uint64_t *cookies, size_t n)
{
	return link_create(prog_fd, path, offsets, cookies, n);
}
