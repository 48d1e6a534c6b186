#define _GNU_SOURCE /* name_to_handle_at */
#include "cgroup.h"

#include "util/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <sys/vfs.h>
#include <unistd.h>

/* Preference order of hierarchies; index 0 is the unified (v2) one. */
static const char *const cgroup_prefs[] = { "", "cpu", "memory", "pids", "name=systemd" };
#define N_PREFS (sizeof(cgroup_prefs) / sizeof(cgroup_prefs[0]))

static int controllers_match(const char *list, size_t len, const char *want)
{
	size_t wl = strlen(want);
	if (!wl)
		return len == 0;
	/* list is comma-separated, e.g. "cpu,cpuacct" */
	for (const char *p = list; p < list + len;) {
		const char *comma = memchr(p, ',', list + len - p);
		size_t n = comma ? (size_t)(comma - p) : (size_t)(list + len - p);
		if (n == wl && !memcmp(p, want, n))
			return 1;
		p += n + 1;
	}
	return 0;
}

int cgroup_container_from_text(const char *text, char *out, size_t outlen)
{
	const char *best = NULL;
	size_t best_len = 0, best_rank = N_PREFS;
	int lines = 0;

	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n');
		const char *end = nl ? nl : line + strlen(line);
		/* hierarchy-id:controllers:path */
		const char *c1 = memchr(line, ':', end - line);
		const char *c2 = c1 ? memchr(c1 + 1, ':', end - c1 - 1) : NULL;
		if (c2) {
			lines++;
			const char *path = c2 + 1;
			size_t plen = end - path;
			int root = plen == 0 || (plen == 1 && path[0] == '/');
			for (size_t r = 0; !root && r < best_rank; r++) {
				if (controllers_match(c1 + 1, c2 - c1 - 1, cgroup_prefs[r])) {
					best = path;
					best_len = plen;
					best_rank = r;
					break;
				}
			}
		}
		line = nl ? nl + 1 : end;
	}
	if (!lines)
		return -EINVAL;
	if (!best) {
		best = "/";
		best_len = 1;
	}
	if (best_len >= outlen)
		best_len = outlen - 1;
	memcpy(out, best, best_len);
	out[best_len] = '\0';
	return 0;
}

int cgroup_read_container(pid_t pid, char *out, size_t outlen)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	ssize_t n = file_read_small(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	if (n == 0)
		return -ESRCH; /* a zombie: its cgroup is gone */
	return cgroup_container_from_text(buf, out, outlen);
}

static int on_cgroup2(const char *path)
{
	struct statfs st;
	return statfs(path, &st) == 0 && st.f_type == CGROUP2_SUPER_MAGIC;
}

int cgroup_v2_id(const char *dir, uint64_t *id, uint32_t *level)
{
	char path[PATH_MAX];
	struct {
		struct file_handle h;
		uint64_t id;
	} fh = { .h.handle_bytes = sizeof(uint64_t) };
	int mount_id;

	if (!realpath(dir, path))
		return -errno;
	if (!on_cgroup2(path))
		return -EINVAL;
	/* The handle of a cgroup2 directory is its 64-bit kernfs id. */
	if (name_to_handle_at(AT_FDCWD, path, &fh.h, &mount_id, 0) < 0)
		return -errno;
	if (fh.h.handle_bytes != sizeof(uint64_t))
		return -EINVAL;
	*id = fh.id;
	/* Depth: how many parents are still inside the cgroup2 mount. */
	*level = 0;
	for (char *slash = strrchr(path, '/'); slash && slash != path; slash = strrchr(path, '/')) {
		*slash = '\0';
		if (!on_cgroup2(path))
			break;
		(*level)++;
	}
	return 0;
}

int cgroup_v2_mount(char *out, size_t outlen)
{
	char line[1024];
	FILE *f = fopen("/proc/self/mounts", "re");
	if (!f)
		return -errno;
	int err = -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		char dev[256], mnt[512], type[64];
		if (sscanf(line, "%255s %511s %63s", dev, mnt, type) == 3 && !strcmp(type, "cgroup2")) {
			snprintf(out, outlen, "%s", mnt);
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

int cgroup_v2_path_of_id(int mount_fd, const char *mount_path, uint64_t id, char *out,
			 size_t outlen)
{
	struct {
		struct file_handle h;
		uint64_t id;
	} fh = { .h.handle_bytes = sizeof(uint64_t), .h.handle_type = 1 /* FILEID_INO32_GEN */,
		 .id = id };
	char link[64], path[PATH_MAX];

	int fd = open_by_handle_at(mount_fd, &fh.h, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	int err = -errno;
	close(fd);
	if (n < 0)
		return err;
	path[n] = '\0';
	size_t ml = strlen(mount_path);
	if (strncmp(path, mount_path, ml) || (path[ml] != '/' && path[ml] != '\0'))
		return -EINVAL;
	snprintf(out, outlen, "%s", path[ml] ? path + ml : "/");
	return 0;
}
