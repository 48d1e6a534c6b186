#include "resources/collector.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "containers/filter.h"
#include "containers/rules.h"
#include "loop/loop.h"
#include "metrics/registry.h"
#include "proc/table.h"
#include "resources/apptype.h"
#include "resources/cgroup_read.h"
#include "resources/ctr_table.h"
#include "resources/disk_read.h"
#include "resources/taskstats.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/log.h"

#define SLICE_WORK 64		 /* file reads or netlink round trips per slice */
#define MAX_WAITERS 64		 /* scrapes waiting for one collection (the HTTP connection limit) */
#define EXE_CACHE 4096		 /* executables whose golang/rust bits are remembered */

enum read_source { SRC_CGROUP, SRC_CPU, SRC_MEMORY, SRC_PRESSURE, SRC_TASKSTATS, SRC_DISK,
		   SRC_COUNT };
static const char *const source_names[SRC_COUNT] = { "cgroup", "cpu", "memory", "pressure",
						     "taskstats", "disk" };
static const char *const psi_kinds[] = { "cpu", "memory", "io" };

struct exe_bits {
	struct hmap_node node; /* by dev and inode */
	dev_t dev;
	ino_t ino;
	uint64_t bits;
};

struct waiter {
	void (*fn)(void *ctx);
	void *ctx;
};

struct resources {
	struct resources_opts o;
	struct cgroup_roots roots;
	struct ctr_table *ctrs;
	struct taskstats_client *ts; /* NULL: taskstats unavailable (no delays exported) */
	struct hmap exes;
	int worker;

	/* The scrape under way: containers list[next..n) still to read. */
	bool scraping, fresh;
	struct ctr **list;
	size_t n, next;
	struct waiter waiters[MAX_WAITERS];
	int n_waiters;

	struct metric *cpu_usage, *cpu_limit, *cpu_throttled, *cpu_delay, *disk_delay, *mem_rss,
		*mem_cache, *mem_limit, *psi[3], *restarts, *app_type, *m_errors, *m_delayacct;
	struct metric *disk_size, *disk_used, *disk_reserved, *disk_reads, *disk_read_bytes,
		*disk_writes, *disk_written_bytes;
	uint64_t errors[SRC_COUNT];
	uint64_t n_scrapes, n_slices;
	uint64_t slice_max_ns;	     /* longest slice of the scrape under way */
	struct metric *m_slice_max; /* ... of the last one done */
};

#define T struct resources
#define CTR METRIC_LABELS("container_id")
#define CTR_KIND METRIC_LABELS("container_id", "kind")
#define CTR_VOL METRIC_LABELS("container_id", "mount_point", "device", "volume")
/*
 * Not .expires: a live container's counter may stay the same for hours (no
 * restarts); its series go when the container is forgotten (ctr_gone).
 */
#define RES(name, help, type, labels, field)                                                 \
	{ name, help, type, labels, .capped = true, METRIC_HANDLE(T, field) }
static const struct metric_def resources_metrics[] = {
	RES("container_resources_cpu_usage_seconds_total",
	    "CPU time the container's cgroup used (v1 cpuacct.usage, v2 cpu.stat usage_usec).",
	    METRIC_COUNTER, CTR, cpu_usage),
	RES("container_resources_cpu_limit_cores",
	    "The container's CPU quota in cores (CFS quota / period); only when one is set.",
	    METRIC_GAUGE, CTR, cpu_limit),
	RES("container_resources_cpu_throttled_seconds_total",
	    "Time the container's cgroup was throttled by its CPU quota.", METRIC_COUNTER, CTR,
	    cpu_throttled),
	RES("container_resources_cpu_delay_seconds_total",
	    "Time the container's processes waited for a CPU while runnable (taskstats).",
	    METRIC_COUNTER, CTR, cpu_delay),
	RES("container_resources_disk_delay_seconds_total",
	    "Time the container's processes waited for block I/O (taskstats; needs "
	    "kernel.task_delayacct=1).",
	    METRIC_COUNTER, CTR, disk_delay),
	RES("container_resources_memory_rss_bytes",
	    "Resident memory of the container's cgroup: anonymous plus mapped files.", METRIC_GAUGE,
	    CTR, mem_rss),
	RES("container_resources_memory_cache_bytes", "Page cache charged to the container's cgroup.",
	    METRIC_GAUGE, CTR, mem_cache),
	RES("container_resources_memory_limit_bytes",
	    "The container's memory limit; only when one is set.", METRIC_GAUGE, CTR, mem_limit),
	RES("container_resources_cpu_pressure_waiting_seconds_total",
	    "Time some (kind=some) or all (full) of the container's tasks waited for a CPU "
	    "(cgroup v2 cpu.pressure).",
	    METRIC_COUNTER, CTR_KIND, psi[0]),
	RES("container_resources_memory_pressure_waiting_seconds_total",
	    "Time some or all of the container's tasks stalled on memory (cgroup v2 "
	    "memory.pressure).",
	    METRIC_COUNTER, CTR_KIND, psi[1]),
	RES("container_resources_io_pressure_waiting_seconds_total",
	    "Time some or all of the container's tasks stalled on I/O (cgroup v2 io.pressure).",
	    METRIC_COUNTER, CTR_KIND, psi[2]),
	RES("container_resources_disk_size_bytes",
	    "Size of a file system the container writes to (statfs as its processes see it).",
	    METRIC_GAUGE, CTR_VOL, disk_size),
	RES("container_resources_disk_used_bytes", "Bytes used on that file system.", METRIC_GAUGE,
	    CTR_VOL, disk_used),
	RES("container_resources_disk_reserved_bytes",
	    "Bytes of that file system reserved for root.", METRIC_GAUGE, CTR_VOL, disk_reserved),
	RES("container_resources_disk_reads_total",
	    "Reads the container's cgroup made from that file system's disk (blkio, io.stat).",
	    METRIC_COUNTER, CTR_VOL, disk_reads),
	RES("container_resources_disk_read_bytes_total", "Bytes it read from that disk.",
	    METRIC_COUNTER, CTR_VOL, disk_read_bytes),
	RES("container_resources_disk_writes_total", "Writes it made to that disk.", METRIC_COUNTER,
	    CTR_VOL, disk_writes),
	RES("container_resources_disk_written_bytes_total", "Bytes it wrote to that disk.",
	    METRIC_COUNTER, CTR_VOL, disk_written_bytes),
	RES("container_restarts_total",
	    "Times the container started again: a process joined after every process of its "
	    "earlier run was gone.",
	    METRIC_COUNTER, CTR, restarts),
	RES("container_application_type",
	    "What the container's processes are (1 per type), by Coroot's rules: command line, "
	    "executable, Go build info, Rust .comment, .NET (dotnet NAME.dll, or an apphost).",
	    METRIC_GAUGE, METRIC_LABELS("container_id", "application_type"), app_type),
	{ "nodescope_container_resource_read_errors_total",
	  "Container resource reads that failed at a scrape, by source (cgroup: no process "
	  "left to read it from; cpu, memory, pressure, disk: the cgroup's files gone or "
	  "malformed; taskstats: a process gone): the series keep their last values.",
	  METRIC_COUNTER, METRIC_LABELS("source"), METRIC_HANDLE(T, m_errors) },
	{ "nodescope_delay_accounting_enabled",
	  "1 when the kernel counts task delays (kernel.task_delayacct), without which "
	  "container_resources_disk_delay_seconds_total stays 0.",
	  METRIC_GAUGE, METRIC_HANDLE(T, m_delayacct) },
	{ "nodescope_container_resource_scrapes_total",
	  "Scrapes that read the containers' resources.", METRIC_COUNTER,
	  METRIC_VALUE(T, n_scrapes) },
	{ "nodescope_container_resource_slices_total",
	  "Slices those reads were split into, each run between event-stream reads.",
	  METRIC_COUNTER, METRIC_VALUE(T, n_slices) },
	{ "nodescope_container_resource_slice_max_seconds",
	  "The longest slice of the last scrape: the longest the event streams waited for it.",
	  METRIC_GAUGE, METRIC_HANDLE(T, m_slice_max) },
};
#undef RES
#undef CTR_VOL
#undef CTR_KIND
#undef CTR
#undef T

/* Process table observer: keeps the container -> processes bookkeeping. */
static void on_proc(void *ctx, const struct proc_entry *e, const char *container)
{
	struct resources *r = ctx;
	uint64_t now = clock_mono_ns();

	if (!container)
		ctr_table_leave(r->ctrs, e->pid, now);
	else
		ctr_table_join(r->ctrs, e->pid, e->start_ns ? e->start_ns : now, container, now);
}

static void count_error(struct resources *r, enum read_source s)
{
	r->errors[s]++;
}

/* The container's cgroup directories, from the first of its processes that can tell. */
static int find_dirs(struct resources *r, struct ctr *c, int *work)
{
	char path[64], text[4096];

	if (c->dirs)
		return 0;
	struct cgroup_dirs *d = malloc(sizeof(*d));
	if (!d)
		return -ENOMEM;
	for (struct ctr_member *m = c->head; m; m = m->next) {
		snprintf(path, sizeof(path), "/proc/%u/cgroup", m->pid);
		(*work)++;
		if (file_read_small(path, text, sizeof(text)) > 0 && cgroup_dirs_parse(text, d) == 0) {
			c->dirs = d;
			return 0;
		}
	}
	free(d);
	count_error(r, SRC_CGROUP);
	return -ESRCH;
}

/* A failed read: counted unless there was nothing to read; a gone cgroup is looked up again. */
static void read_failed(struct resources *r, struct ctr *c, int err, enum read_source s)
{
	if (err == -ENODATA)
		return;
	count_error(r, s);
	if (err == -ENOENT) {
		free(c->dirs);
		c->dirs = NULL;
	}
}

static void set_or_remove(struct metric *m, const char *const *labels, double v, bool set)
{
	if (set)
		metric_set(m, labels, v);
	else
		metric_remove(m, labels);
}

static void read_cgroups(struct resources *r, struct ctr *c, int *work)
{
	const char *id = c->name;
	struct cgroup_cpu cpu;
	struct cgroup_memory mem;
	struct cgroup_pressure psi;
	int err;

	if (find_dirs(r, c, work) || cgroup_dirs_root(c->dirs))
		return;
	*work += 4;
	if ((err = cgroup_read_cpu(&r->roots, c->dirs, &cpu))) {
		read_failed(r, c, err, SRC_CPU);
	} else {
		metric_set(r->cpu_usage, &id, cpu.usage_s);
		metric_set(r->cpu_throttled, &id, cpu.throttled_s);
		set_or_remove(r->cpu_limit, &id, cpu.limit_cores, cpu.limit_cores > 0);
	}
	if (!c->dirs)
		return;
	*work += 2;
	if ((err = cgroup_read_memory(&r->roots, c->dirs, &mem))) {
		read_failed(r, c, err, SRC_MEMORY);
	} else {
		metric_set(r->mem_rss, &id, (double)mem.rss);
		metric_set(r->mem_cache, &id, (double)mem.cache);
		set_or_remove(r->mem_limit, &id, (double)mem.limit, mem.limit > 0);
	}
	for (int k = 0; k < 3 && c->dirs; k++) {
		(*work)++;
		if ((err = cgroup_read_pressure(&r->roots, c->dirs, psi_kinds[k], &psi))) {
			read_failed(r, c, err, SRC_PRESSURE);
			continue;
		}
		const char *some[] = { id, "some" }, *full[] = { id, "full" };
		metric_set(r->psi[k], some, psi.some_s);
		metric_set(r->psi[k], full, psi.full_s);
	}
}

/* Coroot's way: each process's growth since the last reading is added to the container's. */
static void read_delays(struct resources *r, struct ctr *c, int *work)
{
	const char *id = c->name;
	struct taskstats_delays d;

	if (!r->ts)
		return;
	for (struct ctr_member *m = c->head; m; m = m->next) {
		(*work)++;
		int err = taskstats_get(r->ts, m->pid, &d);
		if (err == -EPERM) {
			/* The family answers only CAP_NET_ADMIN: no process will do better. */
			log_warn("taskstats refused (%s; it needs CAP_NET_ADMIN): container CPU and "
				 "disk delays are not exported",
				 strerror(-err));
			taskstats_close(r->ts);
			r->ts = NULL;
			return;
		}
		if (err) {
			count_error(r, SRC_TASKSTATS); /* gone; its exit is on its way */
			continue;
		}
		if (d.cpu_delay_ns >= m->cpu_delay_ns)
			c->cpu_delay_ns += d.cpu_delay_ns - m->cpu_delay_ns;
		if (d.blkio_delay_ns >= m->disk_delay_ns)
			c->disk_delay_ns += d.blkio_delay_ns - m->disk_delay_ns;
		m->cpu_delay_ns = d.cpu_delay_ns;
		m->disk_delay_ns = d.blkio_delay_ns;
	}
	metric_set(r->cpu_delay, &id, (double)c->cpu_delay_ns / 1e9);
	metric_set(r->disk_delay, &id, (double)c->disk_delay_ns / 1e9);
}

/* golang/rust bits of pid's executable, remembered per file. */
static uint64_t exe_file_bits(struct resources *r, uint32_t pid, int *work)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st)) {
		close(fd);
		return 0;
	}
	uint64_t key = hmap_hash_bytes(&st.st_ino, sizeof(st.st_ino)) ^ st.st_dev;
	for (struct hmap_node *n = hmap_get(&r->exes, key); n; n = hmap_next_same(n)) {
		struct exe_bits *e = hmap_entry(n, struct exe_bits, node);
		if (e->dev == st.st_dev && e->ino == st.st_ino) {
			close(fd);
			return e->bits;
		}
	}
	*work += 8; /* opening an executable costs more than a small read */
	uint64_t bits = apptype_file(fd);
	close(fd);
	if (r->exes.count >= EXE_CACHE) {
		struct hmap_node *n;
		while ((n = hmap_pop(&r->exes)))
			free(hmap_entry(n, struct exe_bits, node));
	}
	struct exe_bits *e = malloc(sizeof(*e));
	if (e) {
		*e = (struct exe_bits){ .dev = st.st_dev, .ino = st.st_ino, .bits = bits };
		hmap_insert(&r->exes, &e->node, key);
	}
	return bits;
}

/* A process's types, worked out again only when it runs another program. */
static uint64_t member_types(struct resources *r, struct ctr_member *m, int *work)
{
	char path[64], cmdline[4096];

	struct proc_entry *e = proc_table_get(r->o.procs, m->pid);
	uint64_t exe = e ? hmap_hash_str(e->exe) | 1 : 1;
	if (m->typed_exe == exe)
		return m->types;
	snprintf(path, sizeof(path), "/proc/%u/cmdline", m->pid);
	(*work)++;
	ssize_t n = file_read_small(path, cmdline, sizeof(cmdline));
	if (n <= 0)
		return 0; /* gone, or a kernel thread or zombie: nothing to say (Coroot skips it) */
	int bit = apptype_by_cmdline(cmdline, n);
	if (bit < 0) {
		/* Coroot reads the link, not the path exec was given (a symlink named otherwise). */
		char exe_path[PATH_MAX];
		snprintf(path, sizeof(path), "/proc/%u/exe", m->pid);
		ssize_t l = readlink(path, exe_path, sizeof(exe_path) - 1);
		(*work)++;
		if (l > 0) {
			exe_path[l] = '\0';
			bit = apptype_by_exe(exe_path);
		} else if (e && e->exe[0]) {
			bit = apptype_by_exe(e->exe);
		}
	}
	uint64_t file = exe_file_bits(r, m->pid, work);
	if (apptype_dotnet(cmdline, (size_t)n, file & APPTYPE_FILE_APPHOST))
		file |= 1ull << apptype_dotnet_bit();
	m->types = (bit >= 0 ? 1ull << bit : 0) | (file & ~APPTYPE_FILE_APPHOST);
	m->typed_exe = exe;
	return m->types;
}

static void read_types(struct resources *r, struct ctr *c, int *work)
{
	uint64_t types = 0;

	for (struct ctr_member *m = c->head; m; m = m->next)
		types |= member_types(r, m, work);
	for (int b = 0; b < APPTYPE_MAX; b++) {
		uint64_t bit = 1ull << b;
		const char *labels[] = { c->name, apptype_name(b) };
		if (types & bit)
			metric_set(r->app_type, labels, 1);
		else if (c->types_exported & bit)
			metric_remove(r->app_type, labels);
	}
	c->types_exported = types;
}

/* The series of one volume of c: set (usage, io NULL-able) or removed (both NULL). */
static void volume_series(struct resources *r, struct ctr *c, const struct disk_volume *v,
			  const struct disk_usage *u, const struct disk_io *io)
{
	const char *labels[] = { c->name, v->mount_point, v->device, v->volume };
	struct metric *gauges[] = { r->disk_size, r->disk_used, r->disk_reserved };
	struct metric *counters[] = { r->disk_reads, r->disk_read_bytes, r->disk_writes,
				      r->disk_written_bytes };

	for (int i = 0; i < 3; i++) {
		if (!u)
			metric_remove(gauges[i], labels);
	}
	if (u) {
		metric_set(r->disk_size, labels, (double)u->size);
		metric_set(r->disk_used, labels, (double)u->used);
		metric_set(r->disk_reserved, labels, (double)u->reserved);
	}
	if (io) {
		metric_set(r->disk_reads, labels, (double)io->reads);
		metric_set(r->disk_read_bytes, labels, (double)io->read_bytes);
		metric_set(r->disk_writes, labels, (double)io->writes);
		metric_set(r->disk_written_bytes, labels, (double)io->written_bytes);
	} else if (!u) {
		for (int i = 0; i < 4; i++)
			metric_remove(counters[i], labels);
	}
}

/* The mounts the container writes to: found from its processes' descriptors, then read. */
static void read_disks(struct resources *r, struct ctr *c, int *work)
{
	if (!c->volumes && !(c->volumes = calloc(1, sizeof(*c->volumes))))
		return;
	struct disk_volumes *vols = c->volumes;
	for (struct ctr_member *m = c->head; m; m = m->next) {
		*work += 2;
		disk_scan_process(m->pid, vols);
	}
	for (int i = 0; i < vols->n;) {
		struct disk_volume *v = &vols->v[i];
		struct disk_usage u;
		struct disk_io io;
		int err = -ESRCH;
		for (struct ctr_member *m = c->head; m && err; m = m->next)
			err = disk_usage_read(m->pid, v, &u);
		(*work)++;
		if (err) { /* unmounted, or out of every process's sight: the volume goes */
			volume_series(r, c, v, NULL, NULL);
			vols->v[i] = vols->v[--vols->n];
			continue;
		}
		int ioerr = c->dirs && v->device[0] ? disk_io_read(&r->roots, c->dirs, v, &io)
						    : -ENODATA;
		if (ioerr && ioerr != -ENODATA && ioerr != -ENOENT)
			count_error(r, SRC_DISK);
		volume_series(r, c, v, &u, ioerr ? NULL : &io);
		i++;
	}
}

/*
 * Coroot's rule on what is a container, unless --keep-standalone-processes;
 * and its filters (allow and deny lists, systemd's own services) in any case.
 */
static bool container_admitted(void *ctx, const char *id)
{
	const struct resources *r = ctx;
	if (!*id)
		return false; /* PROC_CONTAINER_UNNAMED: no container at all */
	if (containers_filter_skips(r->o.filter, id))
		return false;
	return r->o.keep_standalone || containers_id_reported(id);
}

/*
 * A runtime's container is written once named (Coroot withholds it until
 * its runtime answers), and with --min-container-age once it has lived that
 * long, or if it did.
 */
static bool container_shown(void *ctx, const char *id, uint64_t now_ns)
{
	struct resources *r = ctx;
	if (!containers_id_named(id))
		return false;
	if (!r->o.min_container_age_ns)
		return true;
	const struct ctr *c = ctr_table_find(r->ctrs, id);
	if (!c || !c->since_ns)
		return true; /* forgotten, or never had a process: its age is not known */
	uint64_t end = c->n_members ? now_ns : c->empty_since;
	return end > c->since_ns && end - c->since_ns >= r->o.min_container_age_ns;
}

static void read_container(struct resources *r, struct ctr *c, int *work)
{
	const char *id = c->name;

	(*work)++;
	/* What Coroot makes no container of (the host's own processes, sessions, sandboxes)
	 * would make no series anyway (the registry's container_id policy): not read at all.
	 * Nor a container not named yet: its cgroups' totals are read under its name, and
	 * its cgroup path, renamed, names its name's series (metric_registry_rename). */
	if (!strcmp(id, "/") || !container_admitted(r, id) || !containers_id_named(id))
		return;
	metric_set(r->restarts, &id, (double)c->restarts);
	c->exported = true;
	if (!c->n_members)
		return; /* a stopped container keeps its last values until it is forgotten */
	read_cgroups(r, c, work);
	read_delays(r, c, work);
	read_types(r, c, work);
	read_disks(r, c, work);
}

/* A container forgotten: its series go with it. */
static void ctr_gone(void *ctx, struct ctr *c)
{
	struct resources *r = ctx;
	const char *id = c->name;
	struct metric *plain[] = { r->cpu_usage, r->cpu_limit, r->cpu_throttled, r->cpu_delay,
				   r->disk_delay, r->mem_rss, r->mem_cache, r->mem_limit,
				   r->restarts };

	if (!c->exported)
		return;
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		metric_remove(plain[i], &id);
	for (int k = 0; k < 3; k++) {
		const char *some[] = { id, "some" }, *full[] = { id, "full" };
		metric_remove(r->psi[k], some);
		metric_remove(r->psi[k], full);
	}
	for (int b = 0; b < APPTYPE_MAX; b++) {
		const char *labels[] = { id, apptype_name(b) };
		if (c->types_exported & (1ull << b))
			metric_remove(r->app_type, labels);
	}
	for (int i = 0; c->volumes && i < c->volumes->n; i++)
		volume_series(r, c, &c->volumes->v[i], NULL, NULL);
}

static void scrape_start(struct resources *r)
{
	ctr_table_reap(r->ctrs, clock_mono_ns(), r->o.gone_after_ns, ctr_gone, r);
	r->list = ctr_table_list(r->ctrs, &r->n);
	if (!r->list)
		r->n = 0;
	r->next = 0;
	r->scraping = true;
	r->slice_max_ns = 0;
	r->n_scrapes++;
}

/* One slice; true while containers are left. */
static bool scrape_slice(struct resources *r)
{
	int work = 0;
	uint64_t t0 = clock_mono_ns();

	r->n_slices++;
	while (r->next < r->n && work < SLICE_WORK)
		read_container(r, r->list[r->next++], &work);
	uint64_t took = clock_mono_ns() - t0;
	if (took > r->slice_max_ns)
		r->slice_max_ns = took;
	return r->next < r->n;
}

static void scrape_finish(struct resources *r)
{
	char text[16];

	for (int s = 0; s < SRC_COUNT; s++)
		metric_set(r->m_errors, &source_names[s], (double)r->errors[s]);
	uint64_t on = 0;
	if (file_read_small("/proc/sys/kernel/task_delayacct", text, sizeof(text)) > 0)
		on = text[0] == '1';
	metric_set(r->m_delayacct, NULL, (double)on);
	metric_set(r->m_slice_max, NULL, (double)r->slice_max_ns / 1e9);
	r->scraping = false;
	r->list = NULL;
}

/* Loop work: a slice per turn, then the waiting scrapes are told. */
static bool scrape_work(void *ctx)
{
	struct resources *r = ctx;

	if (!r->scraping)
		return false;
	if (scrape_slice(r))
		return true;
	scrape_finish(r);
	r->fresh = true;
	/* Those told may start another scrape: take the list first. */
	struct waiter w[MAX_WAITERS];
	int n = r->n_waiters;
	memcpy(w, r->waiters, n * sizeof(w[0]));
	r->n_waiters = 0;
	for (int i = 0; i < n; i++)
		w[i].fn(w[i].ctx);
	r->fresh = false;
	return r->scraping;
}

int resources_scrape_begin(struct resources *r, void (*done)(void *ctx), void *ctx)
{
	if (r->n_waiters == MAX_WAITERS)
		return -ENOMEM;
	r->waiters[r->n_waiters++] = (struct waiter){ done, ctx };
	if (!r->scraping)
		scrape_start(r);
	loop_work_pending(r->o.loop, r->worker);
	return 0;
}

/* An exposition without a sliced scrape just before it (a test, or a scrape refused): read all. */
static void resources_collect(void *ctx)
{
	struct resources *r = ctx;

	if (r->fresh || r->scraping)
		return; /* read just now, or being read in slices: the values so far */
	scrape_start(r);
	while (scrape_slice(r))
		;
	scrape_finish(r);
}

int resources_new(const struct resources_opts *o, struct resources **out)
{
	struct resources *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->o = *o;
	cgroup_roots_find(o->cgroupfs_root ? o->cgroupfs_root : "/sys/fs/cgroup", &r->roots);
	r->ctrs = ctr_table_new();
	if (!r->ctrs || hmap_init(&r->exes, EXE_CACHE)) {
		resources_free(r);
		return -ENOMEM;
	}
	int err = taskstats_open(&r->ts);
	if (err)
		log_warn("no taskstats (%s): container CPU and disk delays are "
			 "not exported",
			 strerror(-err));
	if (metric_register_defs(o->registry, resources_metrics,
				 METRIC_DEFS_COUNT(resources_metrics), r, o->max_series)) {
		resources_free(r);
		return -EINVAL;
	}
	if ((err = loop_add_worker(o->loop, scrape_work, r, &r->worker))) {
		resources_free(r);
		return err;
	}
	struct metric_label_policy policy = {
		.admit = container_admitted,
		.show = container_shown,
		.ctx = r,
	};
	if (metric_registry_set_label_policy(o->registry, "container_id", &policy)) {
		resources_free(r);
		return -EINVAL;
	}
	metric_registry_add_collector(o->registry, resources_collect, r);
	proc_table_set_observer(o->procs, on_proc, r);
	*out = r;
	return 0;
}

void resources_free(struct resources *r)
{
	struct hmap_node *n;

	if (!r)
		return;
	if (r->o.procs)
		proc_table_set_observer(r->o.procs, NULL, NULL);
	ctr_table_free(r->ctrs);
	taskstats_close(r->ts);
	if (r->exes.buckets) {
		while ((n = hmap_pop(&r->exes)))
			free(hmap_entry(n, struct exe_bits, node));
		hmap_destroy(&r->exes);
	}
	free(r);
}
