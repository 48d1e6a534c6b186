#include "process.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "registry.h"
#include "util/file.h"
#include "util/strbuf.h"

struct process_metrics {
	char proc[PATH_MAX / 2];
	double ticks_per_s, page_size, boot_time_s;
	struct metric *m_cpu, *m_rss, *m_vms, *m_fds, *m_max_fds, *m_start;
};

#define T struct process_metrics
static const struct metric_def process_defs[] = {
	{ "process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
	  METRIC_COUNTER, METRIC_HANDLE(T, m_cpu) },
	{ "process_resident_memory_bytes", "Resident memory size in bytes.", METRIC_GAUGE,
	  METRIC_HANDLE(T, m_rss) },
	{ "process_virtual_memory_bytes", "Virtual memory size in bytes.", METRIC_GAUGE,
	  METRIC_HANDLE(T, m_vms) },
	{ "process_open_fds", "Number of open file descriptors.", METRIC_GAUGE,
	  METRIC_HANDLE(T, m_fds) },
	{ "process_max_fds", "Maximum number of open file descriptors.", METRIC_GAUGE,
	  METRIC_HANDLE(T, m_max_fds) },
	{ "process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
	  METRIC_GAUGE, METRIC_HANDLE(T, m_start) },
};
#undef T

int process_stat_parse(const char *text, struct process_stat *out)
{
	/* The command name may hold spaces and parentheses: the fields start after the last ')'. */
	const char *p = strrchr(text, ')');
	uint64_t v[22];
	int n = 0;

	if (!p)
		return -EINVAL;
	p++;
	/* Fields 3 (state) to 24 (rss): state is a letter, the rest numbers. */
	while (*p == ' ')
		p++;
	if (!*p)
		return -EINVAL;
	p++; /* state */
	for (n = 0; n < 21; n++) {
		char *end;
		while (*p == ' ')
			p++;
		if (*p == '-') /* signed fields (priority, nice) */
			p++;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		v[n] = strtoull(p, &end, 10);
		p = end;
	}
	/* v[i] is field i + 4: utime 14, stime 15, starttime 22, vsize 23, rss 24. */
	out->utime_ticks = v[10];
	out->stime_ticks = v[11];
	out->start_ticks = v[18];
	out->vsize_bytes = v[19];
	out->rss_pages = v[20];
	return 0;
}

static unsigned count_fds(const char *proc)
{
	char path[PATH_MAX];
	unsigned n = 0;

	snprintf(path, sizeof(path), "%s/self/fd", proc);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n ? n - 1 : 0; /* less the directory's own descriptor */
}

static void process_collect(void *ctx)
{
	struct process_metrics *p = ctx;
	char path[PATH_MAX], buf[1024];
	struct process_stat st;
	struct rlimit rl;

	snprintf(path, sizeof(path), "%s/self/stat", p->proc);
	if (file_read_small(path, buf, sizeof(buf)) > 0 && process_stat_parse(buf, &st) == 0) {
		metric_set(p->m_cpu, NULL, (double)(st.utime_ticks + st.stime_ticks) / p->ticks_per_s);
		metric_set(p->m_rss, NULL, (double)st.rss_pages * p->page_size);
		metric_set(p->m_vms, NULL, (double)st.vsize_bytes);
		metric_set(p->m_start, NULL, p->boot_time_s + (double)st.start_ticks / p->ticks_per_s);
	}
	metric_set(p->m_fds, NULL, count_fds(p->proc));
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		metric_set(p->m_max_fds, NULL,
			   rl.rlim_cur == RLIM_INFINITY ? (double)UINT64_MAX : (double)rl.rlim_cur);
}

/* btime of /proc/stat: the boot's wall-clock time, which start times count from. */
static double boot_time(const char *proc)
{
	char path[PATH_MAX];
	struct strbuf sb = STRBUF_INIT;
	double t = 0;

	snprintf(path, sizeof(path), "%s/stat", proc);
	if (file_read_all(path, &sb, 1 << 22) > 0) {
		const char *b = strstr(strbuf_str(&sb), "\nbtime ");
		if (b)
			t = strtod(b + 7, NULL);
	}
	strbuf_free(&sb);
	return t;
}

int process_metrics_new(struct metric_registry *r, const char *proc, struct process_metrics **out)
{
	struct process_metrics *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	snprintf(p->proc, sizeof(p->proc), "%s", proc);
	long tck = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	p->ticks_per_s = tck > 0 ? (double)tck : 100;
	p->page_size = page > 0 ? (double)page : 4096;
	p->boot_time_s = boot_time(proc);
	if (metric_register_defs(r, process_defs, METRIC_DEFS_COUNT(process_defs), p, 0)) {
		free(p);
		return -EINVAL;
	}
	metric_registry_add_collector(r, process_collect, p);
	*out = p;
	return 0;
}

void process_metrics_free(struct process_metrics *p)
{
	free(p);
}
