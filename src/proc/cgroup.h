/* Which container a process is in: its cgroup path, from /proc/PID/cgroup. */
#ifndef NODESCOPE_PROC_CGROUP_H
#define NODESCOPE_PROC_CGROUP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Picks the container path from the text of /proc/PID/cgroup (pure): the
 * unified (v2) path when it is not the root, else the first non-root path of
 * the v1 hierarchies cpu, memory, pids, name=systemd (in that order), else "/".
 * Returns 0, or -EINVAL when the text has no cgroup line at all.
 */
int cgroup_container_from_text(const char *text, char *out, size_t outlen);

/*
 * The kernel id and depth (0 = root) of a cgroup v2 directory, as BPF's
 * cgroup helpers see them. -ENOTDIR/-EINVAL when dir is not on cgroup2.
 */
int cgroup_v2_id(const char *dir, uint64_t *id, uint32_t *level);

/* Where cgroup2 is mounted ("/sys/fs/cgroup/unified", ...): 0 or -ENOENT. */
int cgroup_v2_mount(char *out, size_t outlen);

/*
 * The path below the cgroup2 mount ("/", "/system.slice/x.service") of the
 * cgroup with BPF id `id`, opened by handle: works after its processes are
 * gone. mount_fd is an O_DIRECTORY fd of the mount. Needs CAP_DAC_READ_SEARCH.
 */
int cgroup_v2_path_of_id(int mount_fd, const char *mount_path, uint64_t id, char *out,
			 size_t outlen);

/* Reads /proc/PID/cgroup; -ENOENT/-ESRCH when the process is gone. */
int cgroup_read_container(pid_t pid, char *out, size_t outlen);

#endif
