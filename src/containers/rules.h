/*
 * Container naming rules, step one (pure, no file reads): a cgroup path ->
 * the container's kind, the runtime's container id when the path holds one,
 * and the final container_id when no runtime metadata is needed. Coroot's
 * containerByCgroup() (cgroup/cgroup.go) as a table, plus rows of our own
 * where Coroot gives up (podman's cgroupfs layout, unknown paths).
 */
#ifndef NODESCOPE_CONTAINERS_RULES_H
#define NODESCOPE_CONTAINERS_RULES_H

#include "containers/cgroup_path.h"
#include "containers/kind.h"

#define CONTAINERS_RUNTIME_ID_LEN 64

struct containers_class {
	enum containers_kind kind;
	/* the cgroup path the rules ran on (Coroot's Cgroup.Id); "" = the root */
	char cgroup[CONTAINERS_PATH_MAX];
	/* docker/crio/containerd/podman: the 64-char id metadata is read by; else "" */
	char runtime_id[CONTAINERS_RUNTIME_ID_LEN + 1];
	/*
	 * The container_id when the kind needs no metadata: "/system.slice/x.service",
	 * "/talos/x", "/lxc/x", or for unknown/standalone/sandbox/conmon the
	 * cgroup path itself ("/" for the root). "" when metadata is needed.
	 */
	char id[CONTAINERS_PATH_MAX];
	const char *rule; /* which table row matched, for tests and debugging */
};

/*
 * Runs the rules on one cgroup path (as containers_cgroup_path() gives it, or
 * the cgroup v2 path of the process's cgroup id). 0, -EINVAL for a relative
 * path, -ENAMETOOLONG.
 */
int containers_classify_path(const char *cgroup_path, struct containers_class *out);

/*
 * /proc/PID/cgroup text -> class: containers_cgroup_path() then the rules.
 * Cheap enough for the exec path: no allocation, no file access.
 * Returns 0, -EINVAL (no cgroup line) or -ENAMETOOLONG.
 */
int containers_classify(const char *proc_cgroup_text, const char *base,
			struct containers_class *out);

/*
 * Whether a container_id (as the resolver gives it) names a container whose
 * series are exported by default: false for processes outside any container
 * ("/", user sessions, *.scope), pod sandboxes and runtime monitors, whose
 * ids are their cgroup paths and so classify as such again. Pure.
 */
bool containers_id_reported(const char *container_id);

/*
 * Whether a container_id is a name: false for a runtime's container known
 * only by its cgroup path (its metadata not found yet, or naming no
 * container Coroot makes: a pause container), whose series Coroot's agent
 * never shows. Pure.
 */
bool containers_id_named(const char *container_id);

#endif
