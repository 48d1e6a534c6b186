#include "tracker.h"

#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "containers/cgroup_path.h"
#include "containers/resolver.h"
#include "containers/runtime_roots.h"
#include "util/clock.h"
#include "util/file.h"
#include "event.h"
#include "loop/loop.h"
#include "metrics/registry.h"
#include "optouts.h"
#include "procfs.h"
#include "trace/trace.h"
#include "util/log.h"

#define INSPECT_QUEUE 8192 /* power of two */
#define ID_CACHE 4096	   /* cgroup ids -> paths remembered */

/* The hierarchies the kernel's cgroup ids come from, in /proc/PID/cgroup's terms. */
enum { CG_V2 = NS_CGROUP_V2, CG_CPU = NS_CGROUP_CPU, CG_MEMORY = NS_CGROUP_MEMORY, CG_COUNT };
_Static_assert((int)CG_COUNT == (int)NS_CGROUP_HIERARCHIES, "the records' hierarchies, in their order");
static const char *const cg_controller[CG_COUNT] = { "", "cpu", "memory" };
#define INSPECT_SLICE 64

struct proc_tracker {
	struct proc_tracker_opts o;
	struct proc_table *table;
	int worker;
	uint32_t queue[INSPECT_QUEUE];
	uint32_t q_head, q_tail;

	/*
	 * The hierarchies whose cgroup ids every exec and exit carries (v2, v1
	 * cpu, v1 memory): their mounts, and ids -> paths remembered, so a
	 * process is named without reading /proc.
	 */
	struct {
		int fd;
		char path[256];
	} mounts[CG_COUNT];
	struct hmap id_paths;
	struct hmap picks; /* the three ids of a record -> the path Coroot names it by */

	/* cgroup paths -> Coroot's container ids (runtime metadata read once per container). */
	struct containers_resolver *names;


	/* Pids whose exit was read, oldest first, waiting to be reaped. */
	uint32_t *exited;
	size_t n_exited, cap_exited;

	struct metric *starts, *exits, *oom_kills, *m_metadata, *info;
	struct metric *m_unnamed, *m_named_late, *m_gave_up;
	/* Armed only while a container's metadata is still looked for. */
	struct loop_timer *retry;
	uint64_t retry_at_ns;
	struct metric *table_size, *table_refused;
	uint64_t n_missed, n_dropped, n_untracked, n_proc_reads, n_cgroups_new, n_unnamed;
};


static void tracker_collect(void *ctx)
{
	struct proc_tracker *t = ctx;
	metric_set(t->table_size, NULL, (double)proc_table_count(t->table));
	metric_set(t->table_refused, NULL, (double)proc_table_refused(t->table));
	const struct containers_resolver_stats *st = containers_resolver_stats(t->names);
	static const char *const ok = "ok", *const missing = "missing", *const bad = "bad";
	metric_set(t->m_metadata, &ok, (double)st->metadata_read);
	metric_set(t->m_metadata, &missing, (double)st->metadata_missing);
	metric_set(t->m_metadata, &bad, (double)st->metadata_bad);
	metric_set(t->m_unnamed, NULL, (double)st->unnamed);
	metric_set(t->m_named_late, NULL, (double)st->named_late);
	metric_set(t->m_gave_up, NULL, (double)st->gave_up);
}

/* The retry timer set for the resolver's next retry, if it has one and it is sooner. */
static void retry_arm(struct proc_tracker *t)
{
	uint64_t next = containers_resolver_next_retry(t->names), now;

	if (!next || !t->retry || (t->retry_at_ns && t->retry_at_ns <= next))
		return;
	now = clock_mono_ns();
	if (!loop_timer_arm(t->retry, next > now ? next - now : 1))
		t->retry_at_ns = next;
}

static void retry_due(void *ctx)
{
	struct proc_tracker *t = ctx;

	t->retry_at_ns = 0;
	containers_resolver_retry(t->names, clock_mono_ns());
	retry_arm(t);
}

struct daemons {
	uint32_t *pids;
	size_t n, max;
};

static void daemon_of(void *ctx, const struct proc_entry *e)
{
	struct daemons *d = ctx;
	if (d->n < d->max && !e->exited && containers_roots_daemon(e->comm))
		d->pids[d->n++] = e->pid;
}

/* The runtime daemons among the processes: from the table, not a read of all of /proc. */
static size_t runtime_daemons(void *ctx, uint32_t *pids, size_t max)
{
	struct proc_tracker *t = ctx;
	struct daemons d = { pids, 0, max };
	proc_table_foreach(t->table, daemon_of, &d);
	return d.n;
}

/*
 * A container named after its first events: its processes move to its name,
 * and its series (withheld under its cgroup path until now) become its own.
 */
static void container_renamed(void *ctx, const char *from, const char *to)
{
	struct proc_tracker *t = ctx;

	proc_table_rename_container(t->table, from, to);
	metric_registry_rename(t->o.registry, from, to);
}

struct id_path {
	struct hmap_node node;
	char path[];
};

struct pick {
	struct hmap_node node;
	uint64_t ids[CG_COUNT];
	char path[]; /* "" when every hierarchy is at its root */
};

static void id_cache_clear(struct proc_tracker *t)
{
	struct hmap_node *n;
	while ((n = hmap_pop(&t->id_paths)))
		free(hmap_entry(n, struct id_path, node));
	while ((n = hmap_pop(&t->picks)))
		free(hmap_entry(n, struct pick, node));
}

static uint64_t id_key(int h, uint64_t id)
{
	return id << 2 | (uint64_t)h; /* ids are per hierarchy */
}

/* Remembers that cgroup `id` of hierarchy h is at path. */
static const char *id_path_put(struct proc_tracker *t, int h, uint64_t id, const char *path)
{
	uint64_t key = id_key(h, id);

	if (t->id_paths.count >= ID_CACHE)
		id_cache_clear(t);
	size_t len = strlen(path);
	struct id_path *p = malloc(sizeof(*p) + len + 1);
	if (!p)
		return NULL;
	memcpy(p->path, path, len + 1);
	hmap_insert(&t->id_paths, &p->node, key);
	return p->path;
}

/* The path of cgroup `id` in hierarchy h, or NULL (gone, or not readable). */
static const char *id_path(struct proc_tracker *t, int h, uint64_t id)
{
	char path[CONTAINERS_PATH_MAX];
	struct hmap_node *n = hmap_get(&t->id_paths, id_key(h, id));

	if (n)
		return hmap_entry(n, struct id_path, node)->path;
	if (cgroup_path_of_id(t->mounts[h].fd, t->mounts[h].path, id, path, sizeof(path)))
		return NULL;
	return id_path_put(t, h, id, path);
}

/* What the cgroup ids of a record say (ids_container). */
enum ids_answer {
	IDS_NAMED,   /* the container */
	IDS_AT_ROOT, /* every hierarchy they cover at its root (or none covered) */
	IDS_GONE,    /* a cgroup not found by id: gone (it was empty), or unreadable */
};

/*
 * The container the cgroup ids of an exec or exit name, as /proc/PID/cgroup
 * would (the same text, made from the ids' paths, goes through the same
 * rules), into *out when IDS_NAMED. At the root, the name=systemd hierarchy,
 * which no id covers, may still name it: /proc is read then. A cgroup not
 * found can only be one its processes left: named by the path the files
 * stream brought for it if any (cached by proc_tracker_on_cgroups).
 */
static enum ids_answer ids_container(struct proc_tracker *t, const struct ns_cgroup_ids *cg,
				     const char **out)
{
	const uint64_t ids[CG_COUNT] = { cg->v2, cg->cpu, cg->memory };
	char text[CG_COUNT * (CONTAINERS_PATH_MAX + 16)], pick[CONTAINERS_PATH_MAX];
	uint64_t key = hmap_hash_bytes(ids, sizeof(ids));
	size_t n = 0;

	/* The same cgroups again (a fork-exec storm in one container): one look-up. */
	for (struct hmap_node *h = hmap_get(&t->picks, key); h; h = hmap_next_same(h)) {
		struct pick *p = hmap_entry(h, struct pick, node);
		if (!memcmp(p->ids, ids, sizeof(ids))) {
			if (!p->path[0])
				return IDS_AT_ROOT;
			*out = containers_resolve(t->names, p->path, clock_mono_ns());
			return IDS_NAMED;
		}
	}
	for (int h = 0; h < CG_COUNT; h++) {
		if (t->mounts[h].fd < 0 || !ids[h])
			continue; /* no such hierarchy here: no such line in /proc either */
		const char *p = id_path(t, h, ids[h]);
		if (!p)
			return IDS_GONE;
		n += snprintf(text + n, sizeof(text) - n, "%d:%s:%s\n", h, cg_controller[h], p);
	}
	if (!n || containers_cgroup_path(text, "", pick, sizeof(pick)))
		return IDS_AT_ROOT;
	if (t->picks.count >= ID_CACHE)
		id_cache_clear(t);
	size_t len = strlen(pick);
	struct pick *p = malloc(sizeof(*p) + len + 1);
	if (p) {
		memcpy(p->ids, ids, sizeof(ids));
		memcpy(p->path, pick, len + 1);
		hmap_insert(&t->picks, &p->node, key);
	}
	if (!pick[0])
		return IDS_AT_ROOT;
	*out = containers_resolve(t->names, pick, clock_mono_ns());
	return IDS_NAMED;
}

/* A process's container from /proc/PID/cgroup (hierarchies chosen as Coroot does). */
static int read_container(struct proc_tracker *t, pid_t pid, const char **out)
{
	char path[64], text[4096];

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	ssize_t n = file_read_small(path, text, sizeof(text));
	if (n <= 0)
		return n < 0 ? (int)n : -ESRCH; /* empty: a zombie, its cgroup gone */
	*out = containers_resolve_proc(t->names, text, clock_mono_ns());
	return *out ? 0 : -EINVAL;
}

/* container_info{image}: Coroot's, once the runtime's metadata named the container. */
static void container_named(void *ctx, const char *id, const char *image,
			    const char *triggered_by, const char *type)
{
	struct proc_tracker *t = ctx;
	const char *labels[] = { id, image, triggered_by, type };
	metric_set(t->info, labels, 1);
}

static void queue_inspect(struct proc_tracker *t, uint32_t pid)
{
	if (t->q_tail - t->q_head == INSPECT_QUEUE) {
		t->n_dropped++; /* the process keeps what its exec's cgroup ids said */
		return;
	}
	t->queue[t->q_tail++ & (INSPECT_QUEUE - 1)] = pid;
	loop_work_pending(t->o.loop, t->worker);
}

static void inspect(struct proc_tracker *t, struct proc_entry *e)
{
	const char *container;

	t->n_proc_reads++;
	if (read_container(t, e->pid, &container) < 0) {
		t->n_missed++; /* gone already: it keeps what its exec's cgroup ids said */
		return;
	}
	proc_table_set_container(t->table, e, container);
	e->inspected = true;
}

static bool tracker_work(void *ctx)
{
	struct proc_tracker *t = ctx;

	for (int i = 0; i < INSPECT_SLICE && t->q_head != t->q_tail; i++) {
		uint32_t pid = t->queue[t->q_head++ & (INSPECT_QUEUE - 1)];
		struct proc_entry *e = proc_table_get(t->table, pid);
		if (e && !e->inspected)
			inspect(t, e);
	}
	retry_arm(t);
	return t->q_head != t->q_tail;
}

static const struct metric_def proc_metrics[] = {
	{ "container_process_starts_total", "Processes started (forked) in the container.",
	  METRIC_COUNTER, METRIC_LABELS("container_id"), .capped = true, .expires = true,
	  METRIC_HANDLE(struct proc_tracker, starts) },
	{ "container_process_exits_total",
	  "Processes that exited, by status: success, failure (non-zero exit code) or signal.",
	  METRIC_COUNTER, METRIC_LABELS("container_id", "status"), .capped = true, .expires = true,
	  METRIC_HANDLE(struct proc_tracker, exits) },
	{ "container_oom_kills_total", "Processes of the container killed by the OOM killer.",
	  METRIC_COUNTER, METRIC_LABELS("container_id"), .capped = true, .expires = true,
	  METRIC_HANDLE(struct proc_tracker, oom_kills) },
	{ "container_info", "Containers the runtime's metadata named, with their image.",
	  METRIC_GAUGE,
	  METRIC_LABELS("container_id", "image", "systemd_triggered_by", "systemd_type"),
	  .capped = true, METRIC_HANDLE(struct proc_tracker, info) },
	{ "nodescope_container_metadata_reads_total",
	  "Container runtime state files read for container names: ok, missing (not written "
	  "yet, or kept where nodescope does not look) or bad (unreadable or malformed).",
	  METRIC_COUNTER, METRIC_LABELS("result"), METRIC_HANDLE(struct proc_tracker, m_metadata) },
	{ "nodescope_containers_unnamed",
	  "Containers of a runtime whose metadata is not found (not written yet, or kept where "
	  "nodescope does not look): as Coroot does, no series shows them until they are named; "
	  "then what they did meanwhile is theirs.",
	  METRIC_GAUGE, METRIC_HANDLE(struct proc_tracker, m_unnamed) },
	{ "nodescope_containers_named_late_total",
	  "Containers named after their first events, once their runtime's metadata was found.",
	  METRIC_COUNTER, METRIC_HANDLE(struct proc_tracker, m_named_late) },
	{ "nodescope_containers_unnamed_given_up_total",
	  "Containers whose runtime metadata was looked for in vain for about 5 minutes (10 "
	  "tries, 1 s to 60 s apart): no longer looked for but at an exec, their series withheld.",
	  METRIC_COUNTER, METRIC_HANDLE(struct proc_tracker, m_gave_up) },
	{ "nodescope_proc_table_processes", "Processes in the process table.", METRIC_GAUGE,
	  METRIC_HANDLE(struct proc_tracker, table_size) },
	{ "nodescope_proc_table_refused_total",
	  "Processes not tracked because the table was full.", METRIC_COUNTER,
	  METRIC_HANDLE(struct proc_tracker, table_refused) },
	{ "nodescope_proc_cgroup_reads_total",
	  "Containers read from /proc/PID/cgroup after an exec, because the cgroup ids the "
	  "kernel sent did not name one (every hierarchy they cover at its root, or a cgroup "
	  "not found by id).",
	  METRIC_COUNTER, METRIC_VALUE(struct proc_tracker, n_proc_reads) },
	{ "nodescope_proc_cgroups_first_execs_total",
	  "First execs in a set of cgroups (a new container, usually), reported by the kernel "
	  "at once so the container is named while it exists.",
	  METRIC_COUNTER, METRIC_VALUE(struct proc_tracker, n_cgroups_new) },
	{ "nodescope_proc_inspect_missed_total",
	  "Processes gone before their container was read from /proc (they keep what their "
	  "exec's cgroup ids said: the host's at the root, else no container).",
	  METRIC_COUNTER, METRIC_VALUE(struct proc_tracker, n_missed) },
	{ "nodescope_proc_unnamed_total",
	  "Processes that exited with their container not named: the cgroups of their exec gone "
	  "before the agent read its record, with no path for them from the kernel, and the "
	  "process gone from /proc. Attributed to no container (container \"\" in traces, no "
	  "series), never to another one.",
	  METRIC_COUNTER, METRIC_VALUE(struct proc_tracker, n_unnamed) },
	{ "nodescope_proc_inspect_dropped_total",
	  "Container look-ups dropped because the queue was full.", METRIC_COUNTER,
	  METRIC_VALUE(struct proc_tracker, n_dropped) },
	{ "nodescope_proc_untracked_events_total",
	  "Exit or OOM events for processes the table did not know.", METRIC_COUNTER,
	  METRIC_VALUE(struct proc_tracker, n_untracked) },
};

int proc_tracker_new(const struct proc_tracker_opts *o, struct proc_tracker **out)
{
	struct proc_tracker *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->o = *o;
	for (int h = 0; h < CG_COUNT; h++)
		t->mounts[h].fd = -1;
	t->table = proc_table_new(o->max_processes);
	if (!t->table || hmap_init(&t->id_paths, ID_CACHE) || hmap_init(&t->picks, ID_CACHE) ||
	    containers_resolver_new(file_host_root(), container_named, t, &t->names)) {
		proc_table_free(t->table);
		free(t);
		return -ENOMEM;
	}
	for (int h = 0; h < CG_COUNT; h++) {
		char *m = t->mounts[h].path;
		size_t ml = sizeof(t->mounts[h].path);
		if (h == CG_V2 ? cgroup_v2_mount(o->cgroupfs_root, m, ml) == 0
			       : cgroup_v1_mount(o->cgroupfs_root, cg_controller[h], m, ml) == 0)
			t->mounts[h].fd = open(m, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (t->mounts[CG_V2].fd < 0 && t->mounts[CG_CPU].fd < 0 && t->mounts[CG_MEMORY].fd < 0)
		log_warn("no cgroup2, cpu or memory hierarchy below %s (--cgroupfs-root): "
			 "containers are read from /proc/PID/cgroup after each exec, so a process "
			 "that exits at once keeps its parent's",
			 o->cgroupfs_root);
	struct metric_registry *r = o->registry;
	if (metric_register_defs(r, proc_metrics, METRIC_DEFS_COUNT(proc_metrics), t,
				 o->max_series)) {
		proc_tracker_free(t);
		return -EINVAL;
	}
	metric_registry_add_collector(r, tracker_collect, t);
	int err = loop_add_worker(o->loop, tracker_work, t, &t->worker);
	if (!err)
		err = loop_timer_new(o->loop, retry_due, t, &t->retry);
	if (err) {
		proc_tracker_free(t);
		return err;
	}
	containers_resolver_on_renamed(t->names, container_renamed, t);
	containers_resolver_on_daemons(t->names, runtime_daemons, t);
	*out = t;
	return 0;
}

void proc_tracker_free(struct proc_tracker *t)
{
	if (!t)
		return;
	proc_table_free(t->table);
	free(t->exited);
	containers_resolver_free(t->names);
	id_cache_clear(t);
	hmap_destroy(&t->id_paths);
	hmap_destroy(&t->picks);
	for (int h = 0; h < CG_COUNT; h++)
		if (t->mounts[h].fd >= 0)
			close(t->mounts[h].fd);
	free(t);
}

void proc_tracker_forget_names(struct proc_tracker *t)
{
	containers_resolver_forget(t->names);
}

struct proc_table *proc_tracker_table(struct proc_tracker *t)
{
	return t->table;
}

struct containers_resolver *proc_tracker_resolver(struct proc_tracker *t)
{
	return t->names;
}

static void scan_one(void *ctx, pid_t pid)
{
	struct proc_tracker *t = ctx;
	struct procfs_stat st;
	const char *container;
	bool created;

	if (procfs_read_stat(pid, &st) || st.state == 'Z' || read_container(t, pid, &container))
		return; /* gone meanwhile, or a zombie */
	struct proc_entry *e = proc_table_upsert(t->table, pid, &created);
	if (!e)
		return;
	e->ppid = st.ppid;
	e->start_ns = st.start_ns;
	e->inspected = true;
	memcpy(e->comm, st.comm, sizeof(e->comm));
	procfs_read_exe(pid, e->exe, sizeof(e->exe));
	e->optouts_read = false; /* read when first asked about (optouts.h) */
	proc_table_set_container(t->table, e, container);
}

int proc_tracker_scan(struct proc_tracker *t)
{
	int rc = procfs_foreach_pid(scan_one, t);
	/* the daemons are in the table now: a container named during the scan may have missed them */
	containers_resolver_find_roots(t->names, clock_mono_ns());
	retry_arm(t);
	return rc;
}

/* A process seen for the first time by an event: it inherits its parent's container. */
static struct proc_entry *tracker_adopt(struct proc_tracker *t, uint32_t pid, uint32_t ppid,
					bool *created)
{
	struct proc_entry *old = proc_table_get(t->table, pid);
	if (old && old->exited) /* the pid was reused before its last owner was reaped */
		proc_table_remove(t->table, pid);
	struct proc_entry *e = proc_table_upsert(t->table, pid, created);
	if (!e || !*created)
		return e;
	struct proc_entry *parent = proc_table_get(t->table, ppid);
	e->ppid = ppid;
	proc_table_set_container(t->table, e, parent ? proc_entry_container(parent) : "/");
	/* a fork's environment is its parent's */
	e->optouts = parent ? parent->optouts : 0;
	e->optouts_read = parent && parent->optouts_read;
	return e;
}

static const char *exit_status(const struct proc_event *ev)
{
	if (ev->signal)
		return "signal";
	return ev->exit_code ? "failure" : "success";
}

/* Keeps an exited process until reaped; without room, it goes now. */
static void tracker_exited(struct proc_tracker *t, struct proc_entry *e)
{
	if (t->n_exited == t->cap_exited) {
		size_t cap = t->cap_exited ? 2 * t->cap_exited : 256;
		uint32_t *p = reallocarray(t->exited, cap, sizeof(*p));
		if (!p) {
			proc_table_remove(t->table, e->pid);
			return;
		}
		t->exited = p;
		t->cap_exited = cap;
	}
	e->exited = true;
	t->exited[t->n_exited++] = e->pid;
}

size_t proc_tracker_exited(const struct proc_tracker *t)
{
	return t->n_exited;
}

void proc_tracker_reap_exited(struct proc_tracker *t, size_t n)
{
	if (n > t->n_exited)
		n = t->n_exited;
	for (size_t i = 0; i < n; i++) {
		struct proc_entry *e = proc_table_get(t->table, t->exited[i]);
		if (e && e->exited)
			proc_table_remove(t->table, e->pid);
	}
	memmove(t->exited, t->exited + n, (t->n_exited - n) * sizeof(*t->exited));
	t->n_exited -= n;
}

int proc_tracker_on_cgroups(struct proc_tracker *t, const void *data, size_t len)
{
	const struct ns_cgroups_event *e = data;

	if (len < sizeof(*e) || e->type != NS_FILE_CGROUPS)
		return -EINVAL;
	t->n_cgroups_new++;
	/* The paths the kernel gave, in case the cgroups are gone already (a late read). */
	const uint64_t ids[CG_COUNT] = { e->ids.v2, e->ids.cpu, e->ids.memory };
	for (int h = 0; h < CG_COUNT; h++) {
		size_t len = strnlen(e->paths[h], sizeof(e->paths[h]));
		if (ids[h] && t->mounts[h].fd >= 0 && len && len < sizeof(e->paths[h]) &&
		    e->paths[h][0] == '/' && !hmap_get(&t->id_paths, id_key(h, ids[h])))
			id_path_put(t, h, ids[h], e->paths[h]);
	}
	/* Both answers are cached: the exec's record, read later, finds them. */
	const char *named = NULL;
	ids_container(t, &e->ids, &named);
	trace_first_exec(t->o.trace, e->ts_ns, e->pid, e->ids.v2, named);
	retry_arm(t);
	return 0;
}

int proc_tracker_on_record(void *ctx, const void *data, size_t len)
{
	struct proc_tracker *t = ctx;
	struct proc_event ev;
	struct proc_entry *e;
	const char *container = NULL;
	bool created;

	if (proc_event_decode(data, len, &ev))
		return -EINVAL;

	switch (ev.type) {
	case NS_PROC_FORK:
		e = tracker_adopt(t, ev.pid, ev.ppid, &created);
		if (e) {
			e->start_ns = ev.ts_ns;
			memcpy(e->comm, ev.comm, sizeof(e->comm));
			container = proc_entry_container(e);
			metric_add(t->starts, &container, 1);
		}
		break;
	case NS_PROC_EXEC:
		e = tracker_adopt(t, ev.pid, ev.ppid, &created);
		if (e) {
			memcpy(e->comm, ev.comm, sizeof(e->comm));
			memcpy(e->exe, ev.exe, sizeof(e->exe));
			e->netns = 0; /* an unshare before the exec is the usual way to change it */
			e->optouts_read = false; /* the new program's environment, when asked */
			/* Runtimes move a process into its container's cgroup before exec:
			 * the cgroup ids in the record say so at once. */
			const char *named = NULL;
			enum ids_answer a = ids_container(t, &ev.cgroups, &named);
			if (a == IDS_NAMED) {
				proc_table_set_container(t->table, e, named);
				e->inspected = true;
			} else {
				/* Never the parent's: the exec may have been into another container. */
				proc_table_set_container(t->table, e,
							 a == IDS_AT_ROOT ? "/" : PROC_CONTAINER_UNNAMED);
				e->inspected = false;
				queue_inspect(t, ev.pid);
			}
			container = proc_entry_container(e);
			retry_arm(t);
		}
		break;
	case NS_PROC_EXIT:
		e = proc_table_get(t->table, ev.pid);
		if (e && e->exited)
			e = NULL; /* a second exit of one pid: the first owner's entry */
		if (e && !e->inspected) {
			const char *named = NULL;
			if (ids_container(t, &ev.cgroups, &named) == IDS_NAMED)
				proc_table_set_container(t->table, e, named);
		}
		if (e && !strcmp(proc_entry_container(e), PROC_CONTAINER_UNNAMED))
			t->n_unnamed++;
		if (e) {
			const char *labels[] = { proc_entry_container(e), exit_status(&ev) };
			metric_add(t->exits, labels, 1);
		} else {
			t->n_untracked++;
		}
		trace_proc(t->o.trace, &ev, e ? proc_entry_container(e) : NULL);
		if (e)
			tracker_exited(t, e);
		return 0;
	case NS_PROC_OOM_KILL:
		e = proc_table_get(t->table, ev.pid);
		if (!e)
			t->n_untracked++;
		container = e ? proc_entry_container(e) : "/";
		metric_add(t->oom_kills, &container, 1);
		if (e)
			memcpy(ev.comm, e->comm, sizeof(ev.comm));
		break;
	}
	trace_proc(t->o.trace, &ev, container);
	return 0;
}
