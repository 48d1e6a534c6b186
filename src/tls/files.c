#include "files.h"

#include "proc/procfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

dev_t tls_dev_from_kernel(uint64_t kdev)
{
	return makedev((unsigned)(kdev >> 20), (unsigned)(kdev & 0xfffff));
}

/* Opens p and checks it is the file wanted. */
static int open_checked(const char *p, dev_t dev, ino_t ino)
{
	struct stat st;
	int fd = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_dev != dev || st.st_ino != ino) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/*
 * The path of the file open on our own fd: the process's fd or mapping link
 * it was opened through may be gone by now (ld.so closes the fd at once).
 */
static void opened_path(int fd, const char *link, char *path, size_t path_len)
{
	char self[64];
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(self, path, path_len - 1);
	path[n > 0 ? n : 0] = 0;
	if (n <= 0)
		snprintf(path, path_len, "%s", link);
}

static void scan_maps(uint32_t pid, bool exec_only, tls_candidate_fn fn, void *ctx);

struct entry_at {
	uint64_t addr;
	char *out;
	size_t out_len;
	bool found;
};

static void match_start(void *ctx, const struct tls_candidate *c)
{
	struct entry_at *a = ctx;
	if (c->start == a->addr && !a->found) {
		snprintf(a->out, a->out_len, "%s", c->open_path);
		a->found = true;
	}
}

/*
 * The /proc/PID/map_files entry of the mapping that starts at addr: the
 * executable segment the syscall hooks saw mapped, or, from the socket
 * hooks, the start of the loader's first mapping of the whole file, whose
 * first segment is read-only where the code has a segment of its own.
 */
static int map_files_entry(uint32_t pid, uint64_t addr, char *out, size_t out_len)
{
	struct entry_at a = { addr, out, out_len, false };
	scan_maps(pid, false, match_start, &a);
	return a.found ? 0 : -ENOENT;
}

int tls_open_event_file(uint32_t pid, int fd, uint64_t addr, dev_t dev, ino_t ino, char *path,
			size_t path_len)
{
	char p[96];
	int r;

	if (fd < 0) {
		snprintf(p, sizeof(p), "/proc/%" PRIu32 "/exe", pid);
	} else {
		snprintf(p, sizeof(p), "/proc/%" PRIu32 "/fd/%d", pid, fd);
		r = open_checked(p, dev, ino);
		if (r >= 0) {
			opened_path(r, p, path, path_len);
			return r;
		}
		/* ld.so closes the fd right after mapping: the mapping stays. */
		if ((r = map_files_entry(pid, addr, p, sizeof(p))))
			return r;
	}
	r = open_checked(p, dev, ino);
	if (r >= 0)
		opened_path(r, p, path, path_len);
	return r;
}

/* Debian's multiarch directory for the architecture the agent was built for. */
#if defined(__aarch64__)
#define LIB_TRIPLET "aarch64-linux-gnu"
#else
#define LIB_TRIPLET "x86_64-linux-gnu"
#endif
static const char *const lib_dirs[] = {
	"/lib/" LIB_TRIPLET, "/usr/lib/" LIB_TRIPLET, "/lib64", "/usr/lib64",
	"/usr/lib",	      "/usr/local/lib",
};
static const char *const lib_patterns[] = { "libssl*.so*", "libgnutls*.so*" };

void tls_scan_library_dirs(tls_candidate_fn fn, void *ctx)
{
	char p[512];

	for (size_t d = 0; d < sizeof(lib_dirs) / sizeof(lib_dirs[0]); d++) {
		DIR *dir = opendir(lib_dirs[d]);
		struct dirent *de;
		if (!dir)
			continue;
		while ((de = readdir(dir))) {
			bool match = false;
			for (size_t i = 0; i < sizeof(lib_patterns) / sizeof(lib_patterns[0]); i++)
				match |= !fnmatch(lib_patterns[i], de->d_name, 0);
			struct stat st;
			snprintf(p, sizeof(p), "%s/%s", lib_dirs[d], de->d_name);
			if (!match || stat(p, &st) || !S_ISREG(st.st_mode))
				continue;
			struct tls_candidate c = { 0, st.st_dev, st.st_ino, p, p, 0 };
			fn(ctx, &c);
		}
		closedir(dir);
	}
}

/* The file mappings of pid (only the executable ones if exec_only), each a candidate. */
static void scan_maps(uint32_t pid, bool exec_only, tls_candidate_fn fn, void *ctx)
{
	char p[64], line[4096], open_path[96];
	snprintf(p, sizeof(p), "/proc/%" PRIu32 "/maps", pid);
	FILE *f = fopen(p, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		uint64_t start, end, off;
		unsigned maj, min;
		unsigned long ino;
		char perms[8];
		int n = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %lu %n", &start, &end,
			   perms, &off, &maj, &min, &ino, &n) < 7 || (exec_only && perms[2] != 'x') || !ino ||
		    !n)
			continue;
		char *name = line + n;
		name[strcspn(name, "\n")] = 0;
		snprintf(open_path, sizeof(open_path),
			 "/proc/%" PRIu32 "/map_files/%" PRIx64 "-%" PRIx64, pid, start, end);
		struct tls_candidate c = { pid, makedev(maj, min), (ino_t)ino, open_path, name, start };
		fn(ctx, &c);
	}
	fclose(f);
}

struct scan_ctx {
	tls_candidate_fn fn;
	void *ctx;
};

static void scan_pid(void *ctx, pid_t pid)
{
	struct scan_ctx *sc = ctx;
	scan_maps((uint32_t)pid, true, sc->fn, sc->ctx);
}

void tls_scan_processes(tls_candidate_fn fn, void *ctx)
{
	struct scan_ctx sc = { fn, ctx };
	procfs_foreach_pid(scan_pid, &sc);
}
