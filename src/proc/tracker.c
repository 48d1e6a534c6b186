#include "tracker.h"

#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "containers/resolver.h"
#include "util/clock.h"
#include "util/file.h"
#include "event.h"
#include "loop/loop.h"
#include "metrics/registry.h"
#include "procfs.h"
#include "trace/trace.h"
#include "util/log.h"

#define INSPECT_QUEUE 8192 /* power of two */
#define V2_CACHE 4096	   /* cgroup v2 ids -> paths remembered */
#define INSPECT_SLICE 64

struct proc_tracker {
	struct proc_tracker_opts o;
	struct proc_table *table;
	int worker;
	uint32_t queue[INSPECT_QUEUE];
	uint32_t q_head, q_tail;

	/* cgroup v2 ids (in every event) -> container, known without /proc. */
	int v2_fd;
	char v2_mount[256];
	struct hmap v2_paths;

	/* cgroup paths -> Coroot's container ids (runtime metadata read once per container). */
	struct containers_resolver *names;

	struct metric *starts, *exits, *oom_kills, *m_metadata, *info;
	struct metric *table_size, *table_refused;
	uint64_t n_missed, n_dropped, n_untracked;
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
}

struct v2_path {
	struct hmap_node node;
	char name[];
};

static void v2_cache_clear(struct proc_tracker *t)
{
	struct hmap_node *n;
	while ((n = hmap_pop(&t->v2_paths)))
		free(hmap_entry(n, struct v2_path, node));
}

/* The container a cgroup v2 id names, or NULL (no cgroup2, gone, or the root). */
static const char *v2_container(struct proc_tracker *t, uint64_t id)
{
	char path[512];

	if (t->v2_fd < 0 || !id)
		return NULL;
	struct hmap_node *n = hmap_get(&t->v2_paths, id);
	if (!n) {
		if (cgroup_v2_path_of_id(t->v2_fd, t->v2_mount, id, path, sizeof(path)))
			return NULL;
		if (t->v2_paths.count >= V2_CACHE)
			v2_cache_clear(t);
		size_t len = strlen(path);
		struct v2_path *p = malloc(sizeof(*p) + len + 1);
		if (!p)
			return NULL;
		memcpy(p->name, path, len + 1);
		hmap_insert(&t->v2_paths, &p->node, id);
		n = &p->node;
	}
	const char *name = hmap_entry(n, struct v2_path, node)->name;
	/* The root says nothing: the v1 hierarchies may still name a container. */
	return strcmp(name, "/") ? containers_resolve(t->names, name, clock_mono_ns()) : NULL;
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
		t->n_dropped++; /* the process keeps the container it inherited */
		return;
	}
	t->queue[t->q_tail++ & (INSPECT_QUEUE - 1)] = pid;
	loop_work_pending(t->o.loop, t->worker);
}

static void inspect(struct proc_tracker *t, struct proc_entry *e)
{
	const char *container;

	if (read_container(t, e->pid, &container) < 0) {
		t->n_missed++; /* gone already: it keeps the inherited container */
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
	{ "nodescope_proc_table_processes", "Processes in the process table.", METRIC_GAUGE,
	  METRIC_HANDLE(struct proc_tracker, table_size) },
	{ "nodescope_proc_table_refused_total",
	  "Processes not tracked because the table was full.", METRIC_COUNTER,
	  METRIC_HANDLE(struct proc_tracker, table_refused) },
	{ "nodescope_proc_inspect_missed_total",
	  "Processes gone before their container was read from /proc (they keep the "
	  "container inherited from their parent).",
	  METRIC_COUNTER, METRIC_VALUE(struct proc_tracker, n_missed) },
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
	t->v2_fd = -1;
	t->table = proc_table_new(o->max_processes);
	if (!t->table || hmap_init(&t->v2_paths, V2_CACHE) ||
	    containers_resolver_new(file_host_root(), container_named, t, &t->names)) {
		proc_table_free(t->table);
		free(t);
		return -ENOMEM;
	}
	if (cgroup_v2_mount(o->cgroupfs_root, t->v2_mount, sizeof(t->v2_mount)) == 0)
		t->v2_fd = open(t->v2_mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->v2_fd < 0)
		log_warn("no cgroup2 at %s or %s/unified (--cgroupfs-root): containers are "
			 "read from /proc/PID/cgroup after each exec, so a process that exits at "
			 "once "
			 "keeps its parent's",
			 o->cgroupfs_root, o->cgroupfs_root);
	struct metric_registry *r = o->registry;
	if (metric_register_defs(r, proc_metrics, METRIC_DEFS_COUNT(proc_metrics), t,
				 o->max_series)) {
		proc_tracker_free(t);
		return -EINVAL;
	}
	metric_registry_add_collector(r, tracker_collect, t);
	int err = loop_add_worker(o->loop, tracker_work, t, &t->worker);
	if (err) {
		proc_tracker_free(t);
		return err;
	}
	*out = t;
	return 0;
}

void proc_tracker_free(struct proc_tracker *t)
{
	if (!t)
		return;
	proc_table_free(t->table);
	containers_resolver_free(t->names);
	v2_cache_clear(t);
	hmap_destroy(&t->v2_paths);
	if (t->v2_fd >= 0)
		close(t->v2_fd);
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
	proc_table_set_container(t->table, e, container);
}

int proc_tracker_scan(struct proc_tracker *t)
{
	return procfs_foreach_pid(scan_one, t);
}

/* A process seen for the first time by an event: it inherits its parent's container. */
static struct proc_entry *tracker_adopt(struct proc_tracker *t, uint32_t pid, uint32_t ppid,
					bool *created)
{
	struct proc_entry *e = proc_table_upsert(t->table, pid, created);
	if (!e || !*created)
		return e;
	struct proc_entry *parent = proc_table_get(t->table, ppid);
	e->ppid = ppid;
	proc_table_set_container(t->table, e, parent ? proc_entry_container(parent) : "/");
	return e;
}

static const char *exit_status(const struct proc_event *ev)
{
	if (ev->signal)
		return "signal";
	return ev->exit_code ? "failure" : "success";
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
			/* Runtimes move a process into its container's cgroup before exec:
			 * its cgroup v2 id says so at once; v1 needs /proc, later. */
			const char *v2 = v2_container(t, ev.cgroup_id);
			if (v2) {
				proc_table_set_container(t->table, e, v2);
				e->inspected = true;
			} else {
				e->inspected = false;
				queue_inspect(t, ev.pid);
			}
			container = proc_entry_container(e);
		}
		break;
	case NS_PROC_EXIT:
		if (t->o.on_exit)
			t->o.on_exit(t->o.on_exit_ctx);
		e = proc_table_get(t->table, ev.pid);
		if (e && !e->inspected) {
			const char *v2 = v2_container(t, ev.cgroup_id);
			if (v2)
				proc_table_set_container(t->table, e, v2);
		}
		if (e) {
			const char *labels[] = { proc_entry_container(e), exit_status(&ev) };
			metric_add(t->exits, labels, 1);
		} else {
			t->n_untracked++;
		}
		trace_proc(t->o.trace, &ev, e ? proc_entry_container(e) : NULL);
		if (e)
			proc_table_remove(t->table, ev.pid);
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
