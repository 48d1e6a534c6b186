/* cgroup ids and paths, as the BPF side names cgroups (the naming is src/containers/). */
#ifndef NODESCOPE_PROC_CGROUP_H
#define NODESCOPE_PROC_CGROUP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The kernel id and depth (0 = root) of a cgroup v2 directory, as BPF's
 * cgroup helpers see them. -ENOTDIR/-EINVAL when dir is not on cgroup2.
 */
int cgroup_v2_id(const char *dir, uint64_t *id, uint32_t *level);

/*
 * Where cgroup2 is mounted below root (--cgroupfs-root, "/sys/fs/cgroup"):
 * root itself (a pure v2 host) or root/unified (a hybrid one). 0 or -ENOENT.
 */
int cgroup_v2_mount(const char *root, char *out, size_t outlen);

/*
 * Where the v1 hierarchy of one controller ("cpu", "memory") is mounted
 * below root: root/controller (often a link to "cpu,cpuacct"). 0 or -ENOENT.
 */
int cgroup_v1_mount(const char *root, const char *controller, char *out, size_t outlen);

/*
 * The path below a cgroup mount ("/", "/system.slice/x.service") of the
 * cgroup with kernfs id `id` (what BPF reads: bpf_get_current_cgroup_id()
 * for v2, the css's kn->id for v1), opened by handle: works after its
 * processes are gone. mount_fd is an O_DIRECTORY fd of the mount. Needs
 * CAP_DAC_READ_SEARCH.
 */
int cgroup_path_of_id(int mount_fd, const char *mount_path, uint64_t id, char *out, size_t outlen);

#endif
