#include "manager.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "events.h"
#include "files.h"
#include "metrics/registry.h"
#include "plan.h"
#include "trace/trace.h"
#include "util/hmap.h"

struct tls_file {
	struct hmap_node node;
	dev_t dev;
	ino_t ino;
	unsigned n_links;
	struct bpf_link **links; /* NULL when the file has nothing to probe */
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

struct tls_manager {
	struct tls_manager_opts o;
	struct hmap files;
	struct tls_plan plan; /* big: one, reused */
	uint64_t n_probes, n_probed_files;
	uint64_t n_inspected, failures[TLS_FAIL_COUNT];
	struct metric *m_failures;
};

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

int tls_manager_new(const struct tls_manager_opts *o, struct tls_manager **out)
{
	static const char *const reason_label[] = { "reason" };
	struct tls_manager *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->o = *o;
	if (hmap_init(&m->files, o->max_files)) {
		free(m);
		return -ENOMEM;
	}
	struct metric_registry *r = o->registry;
	m->m_failures = metric_register(r, "nodescope_tls_probe_failures_total",
					"Files or TLS functions that could not be probed, by reason.",
					METRIC_COUNTER, 0, 1, reason_label);
	int err = metric_register_u64(r, "nodescope_tls_files_inspected_total",
				      "Executable files inspected for TLS library functions.",
				      METRIC_COUNTER, &m->n_inspected);
	err |= metric_register_u64(r, "nodescope_tls_probed_files",
				   "Files with TLS uprobes attached.", METRIC_GAUGE,
				   &m->n_probed_files);
	err |= metric_register_u64(r, "nodescope_tls_uprobes", "TLS uprobes attached.",
				   METRIC_GAUGE, &m->n_probes);
	if (err || !m->m_failures) {
		tls_manager_free(m);
		return -EINVAL;
	}
	metric_registry_add_collector(r, tls_collect, m);
	*out = m;
	return 0;
}

static void file_detach(struct tls_manager *m, struct tls_file *f)
{
	for (unsigned i = 0; i < f->n_links; i++)
		bpf_link__destroy(f->links[i]);
	if (f->n_links) {
		m->n_probes -= f->n_links;
		m->n_probed_files--;
	}
	free(f->links);
	f->links = NULL;
	f->n_links = 0;
}

void tls_manager_free(struct tls_manager *m)
{
	struct hmap_node *n;
	if (!m)
		return;
	while ((n = hmap_pop(&m->files))) {
		struct tls_file *f = hmap_entry(n, struct tls_file, node);
		file_detach(m, f);
		free(f);
	}
	hmap_destroy(&m->files);
	free(m);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Attaches the plan's uprobes to the file open on fd; all or none. */
static int file_attach(struct tls_manager *m, struct tls_file *f, int fd, const struct tls_plan *p)
{
	char path[64];
	f->links = calloc(p->n, sizeof(*f->links));
	if (!f->links)
		return -ENOMEM;
	/* The kernel resolves the magic link to the inode: any mount namespace works. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	for (size_t i = 0; i < p->n; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = p->sites[i].fn);
		struct bpf_program *prog = p->sites[i].fn == NS_TLS_RET ? m->o.ret : m->o.entry;
		struct bpf_link *l = bpf_program__attach_uprobe_opts(prog, -1, path,
								     p->sites[i].offset, &uo);
		if (!l) {
			int err = -errno;
			file_detach(m, f);
			return err ? err : -EINVAL;
		}
		f->links[f->n_links++] = l;
		if (f->n_links == 1)
			m->n_probed_files++;
		m->n_probes++;
	}
	return 0;
}

/* Inspects and probes a file not seen before; fd is the caller's. */
static void file_inspect(struct tls_manager *m, int fd, dev_t dev, ino_t ino, uint32_t pid,
			 const char *path, uint64_t event_ts)
{
	struct tls_file *f;

	if (m->files.count >= m->o.max_files) {
		m->failures[TLS_FAIL_TABLE_FULL]++;
		return;
	}
	if (!(f = calloc(1, sizeof(*f))))
		return;
	f->dev = dev;
	f->ino = ino;
	hmap_insert(&m->files, &f->node, file_key(dev, ino));
	m->n_inspected++;

	struct tls_plan *p = &m->plan;
	int err = tls_plan_fd(fd, p);
	if (err) {
		if (err != -ENOEXEC)
			m->failures[TLS_FAIL_UNREADABLE]++;
		return;
	}
	if (p->skipped)
		m->failures[TLS_FAIL_RETURN_SITES] += p->skipped;
	if (!p->n && !p->skipped)
		return;
	const char *error = p->error[0] ? p->error : NULL;
	char msg[200];
	if (p->n && (err = file_attach(m, f, fd, p))) {
		m->failures[TLS_FAIL_ATTACH]++;
		snprintf(msg, sizeof(msg), "attach: %s", strerror(-err));
		error = msg;
	}
	if (error)
		fprintf(stderr, "nodescope: TLS probes on %s: %s\n", path, error);
	uint64_t now = now_ns();
	struct trace_tls_probe r = {
		.ts_ns = now,
		.since_ns = event_ts && now > event_ts ? now - event_ts : 0,
		.pid = pid,
		.file = path,
		.library = p->library ? p->library : "unknown",
		.functions = f->n_links ? p->functions : 0,
		.probes = f->n_links,
		.error = error,
	};
	trace_tls_probe(m->o.trace, &r);
}

/* The BPF side reports a file once: one we could not open must be reported again. */
static void forget_reported(struct tls_manager *m, uint64_t kdev, uint64_t ino)
{
	uint64_t key[2] = { kdev, ino };
	if (m->o.files_seen_fd >= 0)
		bpf_map_delete_elem(m->o.files_seen_fd, key);
}

int tls_manager_on_record(void *ctx, const void *data, size_t len)
{
	struct tls_manager *m = ctx;
	const struct ns_file_event *e = data;
	char path[512];

	if (len < sizeof(*e) || (e->type != NS_FILE_EXEC && e->type != NS_FILE_MMAP))
		return -EINVAL;
	dev_t dev = tls_dev_from_kernel(e->dev);
	if (file_find(m, dev, (ino_t)e->ino))
		return 0;
	int fd = tls_open_event_file(e->pid, e->type == NS_FILE_EXEC ? -1 : e->fd, e->addr, dev,
				     (ino_t)e->ino, path, sizeof(path));
	if (fd < 0) {
		m->failures[TLS_FAIL_GONE]++;
		forget_reported(m, e->dev, e->ino);
		return 0;
	}
	file_inspect(m, fd, dev, (ino_t)e->ino, e->pid, path, e->ts_ns);
	close(fd);
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
	file_inspect(m, fd, c->dev, c->ino, c->pid, c->path, 0);
	close(fd);
}

void tls_manager_scan(struct tls_manager *m)
{
	tls_scan_library_dirs(scan_candidate, m);
	tls_scan_processes(scan_candidate, m);
}

unsigned tls_manager_probes(const struct tls_manager *m)
{
	return (unsigned)m->n_probes;
}
