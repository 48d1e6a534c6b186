/*
 * Reading a container's cgroup files (the parsing is cgroup_parse.h), from
 * the hierarchies Coroot would read: v1 under ROOT/<controller>/, v2 under
 * ROOT/unified on a hybrid host, else ROOT.
 *
 * Each read returns 0, -ENODATA when there is nothing to read (the hierarchy
 * is at its root, or its file does not exist while the cgroup does: a v2 tree
 * without that controller), or another -errno when the cgroup is gone or its
 * file is garbage (-EINVAL): the caller counts those.
 */
#ifndef NODESCOPE_RESOURCES_CGROUP_READ_H
#define NODESCOPE_RESOURCES_CGROUP_READ_H

#include "resources/cgroup_parse.h"

struct cgroup_roots {
	char v1[256]; /* ROOT: v1 hierarchies are ROOT/cpu, ROOT/memory, ... */
	char v2[256]; /* the cgroup2 mount */
};

/* Coroot's choice: ROOT/unified when cgroup2 is mounted there (hybrid), else ROOT (cgroup_v2_mount). */
void cgroup_roots_find(const char *root, struct cgroup_roots *out);

int cgroup_read_cpu(const struct cgroup_roots *r, const struct cgroup_dirs *d,
		    struct cgroup_cpu *out);
int cgroup_read_memory(const struct cgroup_roots *r, const struct cgroup_dirs *d,
		       struct cgroup_memory *out);
/* kind: "cpu", "memory" or "io" (v2 only). */
int cgroup_read_pressure(const struct cgroup_roots *r, const struct cgroup_dirs *d,
			 const char *kind, struct cgroup_pressure *out);

#endif
