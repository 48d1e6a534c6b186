/*
 * Thin readers of the runtimes' state files (the files runtime_json.h parses),
 * for the metadata step of the naming, off the event path: one call reads a
 * few small files. No runtime API is asked.
 */
#ifndef NODESCOPE_CONTAINERS_RUNTIME_READ_H
#define NODESCOPE_CONTAINERS_RUNTIME_READ_H

#include "containers/kind.h"
#include "containers/meta.h"
#include "containers/runtime_roots.h"

/* Larger state files are refused (-EFBIG): Docker's config.v2.json is a few KiB. */
#define CONTAINERS_STATE_FILE_MAX (16u << 20)

/*
 * The metadata of the container `runtime_id` (64 [a-z0-9], as
 * containers_classify() found it) of a kind that needs metadata:
 *  - docker: <data root>/containers/<id>/config.v2.json, else the
 *    containerd task bundle (a kubepods path with a bare id is docker or
 *    containerd with the cgroupfs driver, as in Coroot);
 *  - cri-containerd: <state>/io.containerd.runtime.v2.task/<ns>/<id>/config.json,
 *    or v1's io.containerd.runtime.v1.linux/<ns>/<id>, any namespace;
 *  - crio: <storage>/overlay-containers/<id>/userdata/config.json, under
 *    /run/containers/storage then /var/lib/containers/storage;
 *  - podman: the same config.json (annotations, environment) plus the
 *    storage's containers.json index (name, image).
 * root: "" or where the host's / is mounted (an agent in a container).
 * roots: the runtimes' data roots and state dirs (runtime_roots.h), in the
 * host's terms; NULL: the defaults only.
 *
 * *out starts empty (CONTAINERS_META_INIT).
 * Returns 0 and fills *out (free it with containers_meta_free() either way);
 * -ENOENT when no state file exists (the container is gone, or its runtime
 * keeps state elsewhere, e.g. rootless podman); -EINVAL for a malformed id or
 * file; -EOPNOTSUPP for a kind without metadata; -EACCES, -EFBIG, -ENOMEM.
 * containers_read_last_error() says what failed and where.
 */
int containers_meta_read(enum containers_kind kind, const char *runtime_id, const char *root,
			 const struct containers_roots *roots, struct containers_meta *out);

const char *containers_read_last_error(void);

#endif
