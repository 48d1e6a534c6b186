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

int cgroup_v2_mount(const char *root, char *out, size_t outlen)
{
	char path[PATH_MAX];

	/* Coroot's two places: a pure v2 host mounts it at the root, a hybrid one below. */
	if (on_cgroup2(root)) {
		snprintf(out, outlen, "%s", root);
		return 0;
	}
	snprintf(path, sizeof(path), "%s/unified", root);
	if (on_cgroup2(path)) {
		snprintf(out, outlen, "%s", path);
		return 0;
	}
	return -ENOENT;
}

int cgroup_v1_mount(const char *root, const char *controller, char *out, size_t outlen)
{
	char path[PATH_MAX], real[PATH_MAX];
	struct statfs st;

	/* Resolved, so the paths read back from fds start with it. */
	snprintf(path, sizeof(path), "%s/%s", root, controller);
	if (!realpath(path, real) || statfs(real, &st) || st.f_type != CGROUP_SUPER_MAGIC)
		return -ENOENT;
	snprintf(out, outlen, "%s", real);
	return 0;
}

int cgroup_path_of_id(int mount_fd, const char *mount_path, uint64_t id, char *out, size_t outlen)
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
