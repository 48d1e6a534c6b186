/*
 * What kind of container a cgroup path names, as the Coroot node agent sorts
 * them (cgroup/cgroup.go), plus the kinds Coroot drops that nodescope keeps
 * apart so the caller can decide (standalone, runtime monitors, unknown).
 */
#ifndef NODESCOPE_CONTAINERS_KIND_H
#define NODESCOPE_CONTAINERS_KIND_H

#include <stdbool.h>

enum containers_kind {
	CONTAINERS_UNKNOWN,    /* no rule matched; Coroot drops it, we name it by its cgroup path */
	CONTAINERS_STANDALONE, /* "/", user.slice, init.scope, *.scope: Coroot ignores these */
	CONTAINERS_DOCKER,     /* dockerd, or a kubepods path with a bare 64-char id */
	CONTAINERS_CRIO,
	CONTAINERS_CONTAINERD, /* cri-containerd-<id> */
	CONTAINERS_PODMAN,     /* libpod-<id> */
	CONTAINERS_SANDBOX,    /* a kubepods path with no container id (a pod's own cgroup) */
	CONTAINERS_SYSTEMD,    /* a systemd service or slice under a system slice */
	CONTAINERS_TALOS,      /* Talos' own services */
	CONTAINERS_LXC,        /* detected, then ignored by Coroot */
	CONTAINERS_CONMON,     /* crio-conmon / libpod-conmon: a runtime's monitor, ignored */
	CONTAINERS_KIND_COUNT
};

/* What a kind means to the caller; one row per kind in kind.c. */
struct containers_kind_info {
	const char *name;     /* "docker", "cri-containerd", ... (Coroot's String() where it has one) */
	bool needs_metadata;  /* the final id comes from the runtime's metadata */
	bool coroot_ignores;  /* Coroot's agent makes no container of it */
	bool reported;	      /* its series are exported by default (--keep-standalone-processes: all) */
};

const struct containers_kind_info *containers_kind_info(enum containers_kind kind);

#endif
