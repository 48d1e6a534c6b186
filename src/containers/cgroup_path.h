/*
 * The one cgroup path Coroot names a process by, picked from the text of
 * /proc/PID/cgroup (pure). Coroot's rules (cgroup/cgroup.go getId): a v1 cpu
 * or memory path under /kubepods wins (kubelet's hierarchy on hybrid hosts),
 * else the unified (v2) path, else v1 cpu, memory, name=systemd. "/" and
 * "/init.scope" count as unset; "/lxc.payload.X/..." is cut to
 * "/lxc.payload.X". Each path is first joined to `base` and cleaned like Go's
 * path.Join: see containers_cgroup_path().
 */
#ifndef NODESCOPE_CONTAINERS_CGROUP_PATH_H
#define NODESCOPE_CONTAINERS_CGROUP_PATH_H

#include <stddef.h>

/* Room for any path or id this module makes; longer ones are -ENAMETOOLONG. */
#define CONTAINERS_PATH_MAX 1024

/*
 * base: where the reader's cgroup namespace root sits in the host's
 * hierarchy, "" when the agent shares the host's cgroup namespace. An agent
 * in a container of its own sees paths like "/../../system.slice/x.scope"
 * (outside its namespace) or "/" (its own cgroup); joined to base and
 * cleaned they become host paths again. The caller finds base once, by
 * reading /proc/self/cgroup from inside the host's cgroup namespace (setns to
 * /proc/1/ns/cgroup) and passing that text here with base "" (Coroot's
 * baseCgroupPath in cgroup_linux.go).
 *
 * out gets "" when every hierarchy is at its root. Returns 0, -EINVAL when the
 * text has no "id:controllers:path" line or base is not absolute,
 * -ENAMETOOLONG when out is too small.
 */
int containers_cgroup_path(const char *text, const char *base, char *out, size_t outlen);

/* Go's path.Join(a, b) (empty parts skipped, then Clean), into out. */
int containers_path_join(const char *a, const char *b, char *out, size_t outlen);

#endif
