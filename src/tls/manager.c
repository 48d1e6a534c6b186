#include "manager.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "events.h"
#include "bpf/link_closer.h"
#include "bpf/uprobe_multi.h"
#include "files.h"
#include "hold.h"
#include "metrics/registry.h"
#include "plan.h"
#include "trace/trace.h"
#include "util/clock.h"
#include "util/hmap.h"
#include "util/log.h"

struct tls_file {
	struct hmap_node node;
	dev_t dev;
	ino_t ino;
	uint64_t kdev;	     /* dev as the kernel (and the files_seen map) spells it */
	uint64_t used_ns;    /* last known to be mapped */
	bool pinned;	     /* from a library dir: never released */
	bool gen_known;	     /* gen came from a files event (a scan cannot read it) */
	uint32_t gen;	     /* inode generation: tells a reused inode number apart */
	char *path;	     /* probed files only */
	unsigned n_uprobes;	 /* 0 when the file has nothing probed */
	unsigned n_links;
	struct bpf_link **links; /* perf-event uprobes: one link per site */
	unsigned n_multi;
	int multi[TLS_PROG_COUNT]; /* uprobe_multi links: one per program */
};

enum tls_failure {
	TLS_FAIL_GONE,	       /* the process or mapping went before the file was opened */
	TLS_FAIL_UNREADABLE,   /* open or ELF read failed */
	TLS_FAIL_RETURN_SITES, /* a function's return instructions could not all be found */
	TLS_FAIL_ATTACH,       /* the kernel refused a uprobe */
	TLS_FAIL_TABLE_FULL,   /* max_files reached: not inspected */
	TLS_FAIL_COUNT,
};

static const char *const failure_names[TLS_FAIL_COUNT] = {
	[TLS_FAIL_GONE] = "file_gone",
	[TLS_FAIL_UNREADABLE] = "unreadable",
	[TLS_FAIL_RETURN_SITES] = "return_sites",
	[TLS_FAIL_ATTACH] = "attach",
	[TLS_FAIL_TABLE_FULL] = "table_full",
};

#define PLAN_CACHE 32

/* A plan by program contents: a copy of a known binary is not planned again. */
struct plan_cache_entry {
	struct tls_plan_key key;
	struct tls_plan *plan; /* only its n sites allocated */
};

struct tls_manager {
	struct tls_manager_opts o;
	struct hmap files;
	struct tls_plan plan; /* big: one, reused */
	struct plan_cache_entry cache[PLAN_CACHE];
	unsigned cache_next;
	uint64_t n_plan_cached;
	uint64_t n_probes, n_probed_files, n_released;
	uint64_t last_sweep_ns;
	uint64_t n_inspected, failures[TLS_FAIL_COUNT];
	struct metric *m_failures;
	struct metric *m_probe_delay;
	struct tls_hold *hold;
};

/* From a file's first exec or mapping to its probes in place, in seconds. */
static const double probe_delay_bounds[] = { 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
					     0.01,   0.025,   0.05,   0.1,   0.25,   1 };

static uint64_t file_key(dev_t dev, ino_t ino)
{
	uint64_t k[2] = { (uint64_t)dev, (uint64_t)ino };
	return hmap_hash_bytes(k, sizeof(k));
}

static struct tls_file *file_find(struct tls_manager *m, dev_t dev, ino_t ino)
{
	for (struct hmap_node *n = hmap_get(&m->files, file_key(dev, ino)); n; n = hmap_next_same(n)) {
		struct tls_file *f = hmap_entry(n, struct tls_file, node);
		if (f->dev == dev && f->ino == ino)
			return f;
	}
	return NULL;
}

static void tls_collect(void *ctx)
{
	struct tls_manager *m = ctx;
	for (int i = 0; i < TLS_FAIL_COUNT; i++)
		metric_set(m->m_failures, &failure_names[i], (double)m->failures[i]);
}

#define T struct tls_manager
static const struct metric_def tls_metrics[] = {
	{ "nodescope_tls_probe_failures_total",
	  "Files or TLS functions that could not be probed, by reason.", METRIC_COUNTER,
	  METRIC_LABELS("reason"), METRIC_HANDLE(T, m_failures) },
	{ "nodescope_tls_files_inspected_total",
	  "Executable files inspected for TLS library functions.", METRIC_COUNTER,
	  METRIC_VALUE(T, n_inspected) },
	{ "nodescope_tls_probe_delay_seconds",
	  "Time from a new file's first exec or executable mapping to its TLS probes in place "
	  "(files with probes only).",
	  METRIC_HISTOGRAM, METRIC_BOUNDS(probe_delay_bounds), METRIC_HANDLE(T, m_probe_delay) },
	{ "nodescope_tls_probed_files", "Files with TLS uprobes attached.", METRIC_GAUGE,
	  METRIC_VALUE(T, n_probed_files) },
	{ "nodescope_tls_uprobes", "TLS uprobes attached.", METRIC_GAUGE, METRIC_VALUE(T, n_probes) },
	{ "nodescope_tls_plans_reused_total",
	  "Files probed with the plan of an identical program (same size and build id) "
	  "inspected before.",
	  METRIC_COUNTER, METRIC_VALUE(T, n_plan_cached) },
	{ "nodescope_tls_files_released_total",
	  "Files whose TLS probes were removed: no process had mapped them for "
	  "--tls-release-after.",
	  METRIC_COUNTER, METRIC_VALUE(T, n_released) },
};
#undef T

int tls_manager_new(const struct tls_manager_opts *o, struct tls_manager **out)
{
	struct tls_manager *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->o = *o;
	if (hmap_init(&m->files, o->max_files)) {
		free(m);
		return -ENOMEM;
	}
	struct metric_registry *r = o->registry;
	if (metric_register_defs(r, tls_metrics, METRIC_DEFS_COUNT(tls_metrics), m, 0)) {
		tls_manager_free(m);
		return -EINVAL;
	}
	metric_registry_add_collector(r, tls_collect, m);
	*out = m;
	return 0;
}

/* Closing a link waits for grace periods: the closer's threads do it, off the loop. */
static void file_detach(struct tls_manager *m, struct tls_file *f)
{
	for (unsigned i = 0; i < f->n_multi; i++)
		link_closer_close_fd(m->o.closer, f->multi[i]);
	for (unsigned i = 0; i < f->n_links; i++)
		link_closer_destroy_link(m->o.closer, f->links[i]);
	if (f->n_uprobes) {
		m->n_probes -= f->n_uprobes;
		m->n_probed_files--;
	}
	free(f->links);
	f->links = NULL;
	f->n_links = f->n_multi = f->n_uprobes = 0;
}

void tls_manager_free(struct tls_manager *m)
{
	struct hmap_node *n;
	if (!m)
		return;
	while ((n = hmap_pop(&m->files))) {
		struct tls_file *f = hmap_entry(n, struct tls_file, node);
		file_detach(m, f);
		free(f->path);
		free(f);
	}
	hmap_destroy(&m->files);
	for (int i = 0; i < PLAN_CACHE; i++)
		free(m->cache[i].plan);
	free(m);
}

static size_t plan_bytes(const struct tls_plan *p)
{
	return offsetof(struct tls_plan, sites) + p->n * sizeof(p->sites[0]);
}

static bool plan_cached(struct tls_manager *m, const struct tls_plan_key *k)
{
	for (int i = 0; i < PLAN_CACHE; i++) {
		struct plan_cache_entry *c = &m->cache[i];
		if (c->plan && c->key.size == k->size && c->key.id_len == k->id_len &&
		    !memcmp(c->key.id, k->id, k->id_len)) {
			memcpy(&m->plan, c->plan, plan_bytes(c->plan));
			m->n_plan_cached++;
			return true;
		}
	}
	return false;
}

static void plan_remember(struct tls_manager *m, const struct tls_plan_key *k)
{
	struct plan_cache_entry *c = &m->cache[m->cache_next++ % PLAN_CACHE];
	struct tls_plan *copy = malloc(plan_bytes(&m->plan));
	if (!copy)
		return;
	memcpy(copy, &m->plan, plan_bytes(&m->plan));
	free(c->plan);
	c->plan = copy;
	c->key = *k;
}

/* The plan for the file on fd: from the cache when its contents are known. */
/*
 * The ELF readers map the file: one truncated under them (a library copied
 * over in place) would raise SIGBUS. While a plan is made, that signal
 * abandons the plan instead of the agent (what it had allocated leaks: rare).
 */
static sigjmp_buf *plan_guard;

static void plan_on_sigbus(int sig)
{
	if (plan_guard)
		siglongjmp(*plan_guard, 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

static int plan_guarded(int fd, struct tls_plan *plan)
{
	static bool installed;
	sigjmp_buf jb;
	if (!installed) {
		struct sigaction sa = { .sa_handler = plan_on_sigbus };
		sigemptyset(&sa.sa_mask);
		sigaction(SIGBUS, &sa, NULL);
		installed = true;
	}
	if (sigsetjmp(jb, 1)) {
		plan_guard = NULL;
		return -EIO;
	}
	plan_guard = &jb;
	int err = tls_plan_fd(fd, plan);
	plan_guard = NULL;
	return err;
}

static int plan_file(struct tls_manager *m, int fd)
{
	struct tls_plan_key k;
	bool keyed = tls_plan_key_fd(fd, &k) == 0 && k.id_len;
	if (keyed && plan_cached(m, &k))
		return 0;
	int err = plan_guarded(fd, &m->plan);
	if (!err && keyed)
		plan_remember(m, &k);
	return err;
}

/* One uprobe_multi link per program, in the order the plan first names them. */
static int attach_multi(struct tls_manager *m, struct tls_file *f, const char *path,
			const struct tls_plan *p)
{
	uint64_t offsets[TLS_PLAN_MAX], cookies[TLS_PLAN_MAX];
	bool done[TLS_PROG_COUNT] = { false };

	for (size_t i = 0; i < p->n; i++) {
		uint32_t prog = p->sites[i].prog;
		if (done[prog])
			continue;
		done[prog] = true;
		size_t n = 0;
		for (size_t j = i; j < p->n; j++)
			if (p->sites[j].prog == prog) {
				offsets[n] = p->sites[j].offset;
				cookies[n++] = p->sites[j].cookie;
			}
		int fd = uprobe_multi_attach(bpf_program__fd(m->o.progs[prog]), path, offsets,
					     cookies, n);
		if (fd < 0)
			return fd;
		f->multi[f->n_multi++] = fd;
		f->n_uprobes += n;
	}
	return 0;
}

/* Kernels before 6.6: one perf-event uprobe per site. */
static int attach_each(struct tls_manager *m, struct tls_file *f, const char *path,
		       const struct tls_plan *p)
{
	if (!(f->links = calloc(p->n, sizeof(*f->links))))
		return -ENOMEM;
	for (size_t i = 0; i < p->n; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = p->sites[i].cookie);
		struct bpf_program *prog = m->o.progs[p->sites[i].prog];
		struct bpf_link *l = bpf_program__attach_uprobe_opts(prog, -1, path,
								     p->sites[i].offset, &uo);
		if (!l)
			return errno ? -errno : -EINVAL;
		f->links[f->n_links++] = l;
		f->n_uprobes++;
	}
	return 0;
}

/* Attaches the plan's uprobes to the file open on fd; all or none. */
static int file_attach(struct tls_manager *m, struct tls_file *f, int fd, const struct tls_plan *p)
{
	char path[64];
	/* The kernel resolves the magic link to the inode: any mount namespace works. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int err = m->o.uprobe_multi ? attach_multi(m, f, path, p) : attach_each(m, f, path, p);
	if (f->n_uprobes) {
		m->n_probed_files++;
		m->n_probes += f->n_uprobes;
	}
	if (err)
		file_detach(m, f);
	return err;
}

/* Inspects and probes a file not seen before; fd is the caller's. */
/* When a files event was made, read and its file opened (all 0 for a scan). */
struct inspect_times {
	uint64_t event, read, opened;
};

static struct tls_file *file_inspect(struct tls_manager *m, int fd, dev_t dev, ino_t ino, uint32_t pid,
			 const char *path, const struct inspect_times *at, bool pinned)
{
	struct tls_file *f;
	uint64_t event_ts = at ? at->event : 0;

	if (m->files.count >= m->o.max_files) {
		m->failures[TLS_FAIL_TABLE_FULL]++;
		return NULL;
	}
	if (!(f = calloc(1, sizeof(*f))))
		return NULL;
	f->dev = dev;
	f->ino = ino;
	f->kdev = ((uint64_t)major(dev) << 20) | minor(dev);
	f->used_ns = clock_mono_ns();
	f->pinned = pinned;
	hmap_insert(&m->files, &f->node, file_key(dev, ino));
	m->n_inspected++;

	struct tls_plan *p = &m->plan;
	uint64_t plan_start = clock_mono_ns();
	int err = plan_file(m, fd);
	uint64_t planned = clock_mono_ns();
	if (err) {
		if (err != -ENOEXEC)
			m->failures[TLS_FAIL_UNREADABLE]++;
		return f;
	}
	if (p->skipped)
		m->failures[TLS_FAIL_RETURN_SITES] += p->skipped;
	if (!p->n && !p->skipped)
		return f;
	const char *error = p->error[0] ? p->error : NULL;
	char msg[200];
	if (p->n && (err = file_attach(m, f, fd, p))) {
		m->failures[TLS_FAIL_ATTACH]++;
		snprintf(msg, sizeof(msg), "attach: %s", strerror(-err));
		error = msg;
	}
	if (error)
		log_warn("TLS probes on %s: %s", path, error);
	if (f->n_uprobes)
		f->path = strdup(path);
	uint64_t now = clock_mono_ns();
	if (f->n_uprobes && event_ts)
		metric_observe(m->m_probe_delay, NULL,
			       now > event_ts ? (double)(now - event_ts) / 1e9 : 0);
	struct trace_tls_probe r = {
		.ts_ns = now,
		.since_ns = event_ts && now > event_ts ? now - event_ts : 0,
		.pid = pid,
		.file = path,
		.library = p->library ? p->library : "unknown",
		.version = p->go_version[0] ? p->go_version : NULL,
		.functions = f->n_uprobes ? p->functions : 0,
		.probes = f->n_uprobes,
		.error = error,
	};
	if (at && r.since_ns) {
		r.wait_ns = at->read > at->event ? at->read - at->event : 0;
		r.open_ns = at->opened - at->read;
		r.plan_ns = planned - plan_start;
		r.attach_ns = now - planned;
	}
	trace_tls_probe(m->o.trace, &r);
	return f;
}

/* The BPF side reports a file once: one we could not open must be reported again. */
static void forget_reported(struct tls_manager *m, uint64_t kdev, uint64_t ino)
{
	uint64_t key[2] = { kdev, ino };
	if (m->o.files_seen_fd >= 0)
		bpf_map_delete_elem(m->o.files_seen_fd, key);
}

/* When the BPF side last saw the file mapped (0: unknown, e.g. evicted). */
static uint64_t last_mapped(struct tls_manager *m, const struct tls_file *f)
{
	uint64_t key[2] = { f->kdev, (uint64_t)f->ino };
	struct ns_file_seen seen = { 0 };
	if (m->o.files_seen_fd >= 0)
		bpf_map_lookup_elem(m->o.files_seen_fd, key, &seen);
	return seen.ts_ns;
}

struct sweep {
	struct tls_manager *m;
	uint64_t now;
	size_t n;
	struct tls_file **idle;
};

static void collect_idle(void *ctx, struct hmap_node *n)
{
	struct sweep *s = ctx;
	struct tls_file *f = hmap_entry(n, struct tls_file, node);
	uint64_t seen = last_mapped(s->m, f);

	if (seen > f->used_ns)
		f->used_ns = seen;
	if (!f->pinned && s->now - f->used_ns > s->m->o.release_after_ns)
		s->idle[s->n++] = f;
}

/* A process still maps an idle file (a server started long ago): it stays. */
static void mark_in_use(void *ctx, const struct tls_candidate *c)
{
	struct sweep *s = ctx;
	for (size_t i = 0; i < s->n; i++)
		if (s->idle[i] && s->idle[i]->dev == c->dev && s->idle[i]->ino == c->ino) {
			s->idle[i]->used_ns = s->now;
			s->idle[i] = NULL;
		}
}

static void file_release(struct tls_manager *m, struct tls_file *f, uint64_t now)
{
	if (f->n_uprobes) {
		trace_tls_release(m->o.trace, now, f->path, f->n_uprobes);
		m->n_released++;
	}
	file_detach(m, f);
	hmap_unlink(&m->files, &f->node);
	/* Its next mapping is reported and inspected afresh. */
	forget_reported(m, f->kdev, (uint64_t)f->ino);
	free(f->path);
	free(f);
}

/* At most once per half release period, on the back of an event. */
static void maybe_sweep(struct tls_manager *m)
{
	uint64_t now = clock_mono_ns();
	if (!m->o.release_after_ns || now - m->last_sweep_ns < m->o.release_after_ns / 2)
		return;
	m->last_sweep_ns = now;
	struct sweep s = { m, now, 0, calloc(m->files.count + 1, sizeof(*s.idle)) };
	if (!s.idle)
		return;
	hmap_foreach(&m->files, collect_idle, &s);
	bool probed_idle = false;
	for (size_t i = 0; i < s.n; i++)
		probed_idle |= s.idle[i]->n_uprobes > 0;
	if (probed_idle)
		tls_scan_processes(mark_in_use, &s);
	for (size_t i = 0; i < s.n; i++)
		if (s.idle[i])
			file_release(m, s.idle[i], now);
	free(s.idle);
}

static void on_file_event(struct tls_manager *m, const struct ns_file_event *e)
{
	char path[512];
	struct inspect_times at = { .event = e->ts_ns, .read = clock_mono_ns() };

	maybe_sweep(m);
	dev_t dev = tls_dev_from_kernel(e->dev);
	struct tls_file *known = file_find(m, dev, (ino_t)e->ino);
	if (known) {
		/* Probed: its uprobes pin the inode, so this is that file. */
		if (known->n_uprobes || (known->gen_known && known->gen == e->gen))
			return;
		/* Nothing probed there: the file may be gone and its inode number reused. */
		hmap_unlink(&m->files, &known->node);
		free(known->path);
		free(known);
	}
	int fd = tls_open_event_file(e->pid, e->type == NS_FILE_EXEC ? -1 : e->fd, e->addr, dev,
				     (ino_t)e->ino, path, sizeof(path));
	if (fd < 0) {
		m->failures[TLS_FAIL_GONE]++;
		forget_reported(m, e->dev, e->ino);
		return;
	}
	at.opened = clock_mono_ns();
	struct tls_file *f = file_inspect(m, fd, dev, (ino_t)e->ino, e->pid, path, &at, false);
	if (f) {
		f->gen = e->gen;
		f->gen_known = true;
	}
	close(fd);
}

void tls_manager_set_hold(struct tls_manager *m, struct tls_hold *h)
{
	m->hold = h;
}

int tls_manager_on_record(void *ctx, const void *data, size_t len)
{
	struct tls_manager *m = ctx;
	const struct ns_file_event *e = data;

	if (len < sizeof(*e) || (e->type != NS_FILE_EXEC && e->type != NS_FILE_MMAP))
		return -EINVAL;
	on_file_event(m, e);
	/* Probed, or not to be: a process held for it goes on, whatever happened. */
	if (m->hold) {
		tls_hold_file_done(m->hold, e->dev, e->ino);
		if (e->flags & NS_FILE_F_HELD)
			tls_hold_release(m->hold, e->pid, e->ts_ns);
	}
	return 0;
}

static void scan_candidate(void *ctx, const struct tls_candidate *c)
{
	struct tls_manager *m = ctx;

	if (file_find(m, c->dev, c->ino))
		return;
	int fd = open(c->open_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return; /* gone since it was listed: its next mapping reports it */
	file_inspect(m, fd, c->dev, c->ino, c->pid, c->path, NULL, c->pid == 0);
	close(fd);
}

void tls_manager_scan(struct tls_manager *m)
{
	tls_scan_library_dirs(scan_candidate, m);
	tls_scan_processes(scan_candidate, m);
}
