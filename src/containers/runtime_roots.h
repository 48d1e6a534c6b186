/*
 * Where each runtime keeps its state on this host: Docker's data roots and
 * containerd's state dirs, as configured, not only their defaults. Found
 * from what the runtimes are started with (the running dockerd's and
 * containerd's command lines: --data-root, --state, --config-file,
 * --config) and their config files (/etc/docker/daemon.json "data-root",
 * /etc/containerd/config.toml "state"), plus the defaults and the k3s, k0s
 * and microk8s layouts. Podman and CRI-O have no daemon that says where
 * their containers/storage is (podman --root, storage.conf's graphroot):
 * each container's monitor, conmon, is told its bundle, which lies there. The parsers are pure (bytes in, a path out); the
 * finder reads /proc and the files through the host's root.
 */
#ifndef NODESCOPE_CONTAINERS_RUNTIME_ROOTS_H
#define NODESCOPE_CONTAINERS_RUNTIME_ROOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum containers_runtime {
	CONTAINERS_RT_DOCKER,	  /* data roots: <root>/containers/<id>/config.v2.json */
	CONTAINERS_RT_CONTAINERD, /* state dirs: <state>/io.containerd.runtime.v{1.linux,2.task}/ */
	CONTAINERS_RT_STORAGE,	  /* containers/storage: <root>/<driver>-containers/<id>/userdata/ */
	CONTAINERS_RT_COUNT
};

#define CONTAINERS_ROOTS_MAX 8
#define CONTAINERS_ROOT_LEN 256

struct containers_roots {
	unsigned n[CONTAINERS_RT_COUNT];
	char dir[CONTAINERS_RT_COUNT][CONTAINERS_ROOTS_MAX][CONTAINERS_ROOT_LEN];
};

/*
 * The defaults only: /var/lib/docker; /run/containerd, k3s', k0s' and
 * microk8s' state dirs; /var/lib/containers/storage and /run/containers/storage.
 */
void containers_roots_defaults(struct containers_roots *out);

/*
 * The defaults plus what the running daemons and their config files say
 * (host_root: "" or where the host's / is mounted; paths are kept in the
 * host's terms). pids: the processes that may be daemons (the process
 * table's, by containers_roots_daemon()); NULL: every process of /proc is
 * looked at. Never fails: what cannot be read adds nothing.
 */
void containers_roots_find(const char *host_root, const uint32_t *pids, size_t n_pids,
			   struct containers_roots *out);

/* Whether a process named comm is a runtime daemon whose command line says where its state is. */
bool containers_roots_daemon(const char *comm);

/* Adds dir to rt's list unless there already (or full, or not absolute). 1 added, 0 not. */
int containers_roots_add(struct containers_roots *r, enum containers_runtime rt, const char *dir);

/*
 * The value of a flag in a /proc/PID/cmdline (NUL-separated args, len
 * bytes): "--name=value" or "--name value", the last one given wins; names
 * is a NULL-terminated list of spellings ("--data-root", "-g"). 0, or
 * -ENOENT when absent, -ENAMETOOLONG when it does not fit out.
 */
int containers_cmdline_flag(const char *cmdline, size_t len, const char *const *names, char *out,
			    size_t outlen);

/* daemon.json's "data-root" (or the older "graph"): 0, -ENOENT when unset, -EINVAL not JSON. */
int containers_parse_daemon_json(const char *buf, size_t len, char *out, size_t outlen);

/*
 * config.toml's top-level `state = "..."` (a basic or literal string, before
 * any [table]): 0, -ENOENT when unset, -EINVAL when malformed.
 */
int containers_parse_containerd_toml(const char *buf, size_t len, char *out, size_t outlen);

/*
 * The containers/storage root of a conmon bundle or pid file path
 * ("<root>/<driver>-containers/<id>/userdata[/...]"): 0, -EINVAL when the
 * path has no such part.
 */
int containers_storage_root_of(const char *path, char *out, size_t outlen);

const char *containers_roots_last_error(void);

#endif
