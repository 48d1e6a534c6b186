/*
 * cgroup path -> the container_id label, as Coroot names containers: the
 * rules (rules.h), then the runtime's metadata (runtime_read.h) for the
 * kinds whose name comes from it, read once per container from the
 * runtime's state files (where the runtimes' configuration says:
 * runtime_roots.h) and cached with the answer. A container whose state is
 * not found keeps its cgroup path as its id, which no series shows
 * (containers_id_named()), and is asked about again on a backoff
 * (containers_resolver_retry()) until named or given up on; named, its
 * cgroup path is handed over to on_renamed so what it did meanwhile is
 * attributed. A runtime's garbage is counted, never fatal.
 */
#ifndef NODESCOPE_CONTAINERS_RESOLVER_H
#define NODESCOPE_CONTAINERS_RESOLVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct containers_resolver;

struct containers_resolver_stats {
	uint64_t metadata_read;	   /* state files read and parsed */
	uint64_t metadata_missing; /* no state file (yet, or the runtime keeps it elsewhere) */
	uint64_t metadata_bad;	   /* unreadable or malformed state */
	uint64_t unnamed;	   /* containers whose metadata is not found (now) */
	uint64_t named_late;	   /* containers named after their first event */
	uint64_t gave_up;	   /* containers whose metadata was asked for in vain too long */
};

/*
 * Called once a container's metadata is known: its id, image ("" when
 * unknown), and for a systemd service its TriggeredBy and Type ("" else).
 */
typedef void (*containers_named_fn)(void *ctx, const char *id, const char *image,
				    const char *triggered_by, const char *type);

/* A container named with the TCP ports Docker publishes for it (n > 0). */
struct containers_port;
typedef void (*containers_ports_fn)(void *ctx, const char *id, const struct containers_port *ports,
				    size_t n);

/* Called when a container known by its cgroup path (from) is named (to). */
typedef void (*containers_renamed_fn)(void *ctx, const char *from, const char *to);

/*
 * root: where the host's / is ("" on the host; "/proc/1/root" reads it from
 * a container). on_named may be NULL.
 */
int containers_resolver_new(const char *root, containers_named_fn on_named, void *ctx,
			    struct containers_resolver **out);
void containers_resolver_free(struct containers_resolver *r);
void containers_resolver_on_renamed(struct containers_resolver *r, containers_renamed_fn fn,
				    void *ctx);
void containers_resolver_on_ports(struct containers_resolver *r, containers_ports_fn fn, void *ctx);
/*
 * Where the runtime daemons are looked for when a state file is missing:
 * fn fills pids (up to max) with the processes containers_roots_daemon()
 * names and returns how many. Without it, /proc is read whole.
 */
typedef size_t (*containers_daemons_fn)(void *ctx, uint32_t *pids, size_t max);
void containers_resolver_on_daemons(struct containers_resolver *r, containers_daemons_fn fn,
				    void *ctx);
/*
 * Looks for the runtimes' roots now (after the processes were first
 * learnt); a missing state file looks again, at most once a second. Whether
 * they changed.
 */
bool containers_resolver_find_roots(struct containers_resolver *r, uint64_t now_ns);

/*
 * The container_id of a cgroup path ("/" or "" for the root). Never NULL:
 * the path itself at worst. Valid until the next call. now_ns: a monotonic
 * clock, for retrying a container whose state was missing.
 */
const char *containers_resolve(struct containers_resolver *r, const char *cgroup_path,
			       uint64_t now_ns);

/* The same from /proc/PID/cgroup text (Coroot's choice of hierarchy). NULL: no cgroup line. */
const char *containers_resolve_proc(struct containers_resolver *r, const char *proc_cgroup_text,
				    uint64_t now_ns);

/*
 * Forgets every cached answer, so each container's runtime metadata is read
 * again at its next resolve (SIGHUP: after a runtime was reconfigured).
 */
void containers_resolver_forget(struct containers_resolver *r);

/*
 * When the next unnamed container is to be asked about again (the
 * monotonic clock), 0 when none is: the caller's timer is armed for it
 * only while some are.
 */
uint64_t containers_resolver_next_retry(const struct containers_resolver *r);
/* Asks again about the unnamed containers whose time has come. */
void containers_resolver_retry(struct containers_resolver *r, uint64_t now_ns);

const struct containers_resolver_stats *containers_resolver_stats(const struct containers_resolver *r);

#endif
