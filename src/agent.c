#include "agent.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "bpf/link_closer.h"
#include "bpf/preflight.h"
#include "node/identity.h"
#include "node/metrics.h"
#include "containers/filter.h"
#include "containers/name.h"
#include "util/file.h"
#include "bpf/probes.h"
#include "exit_codes.h"
#include "export/remote_write.h"
#include "http/page.h"
#include "http/routes.h"
#include "http/server.h"
#include "loop/loop.h"
#include "loop/stream.h"
#include "metrics/process.h"
#include "metrics/registry.h"
#include "proc/cgroup.h"
#include "proc/tracker.h"
#include "resources/collector.h"
#include "l7/tracker.h"
#include "containers/resolver.h"
#include "tcp/proxied.h"
#include "tcp/tracker.h"
#include "tls/hold.h"
#include "tls/manager.h"
#include "tls/plan.h"
#include "trace/trace.h"
#include "util/clock.h"
#include "version.h"
#include "util/log.h"
#include "cli_table.h"

struct agent {
	const struct ns_config *cfg;
	struct loop *loop;
	struct nice_switch nice; /* the loop thread's priorities (src/loop/nice.h) */
	struct metric_registry *registry;
	struct probes *probes;
	struct stream *streams[NS_STREAM_COUNT];
	struct proc_tracker *procs;
	struct resources *resources;
	struct tcp_tracker *tcp;
	struct tcp_proxied *proxied; /* Docker's published ports: listen_info{proxy="dockerd"} */
	struct l7_tracker *l7;
	struct tls_manager *tls;
	struct tls_hold *hold;
	struct containers_filter *filter; /* which named containers make series */
	struct link_closer *closer;
	struct node_metrics *node;
	struct process_metrics *self;
	struct trace trace;
	struct http_routes routes;
	struct http_server *http;
	struct http_page *page; /* the web page's data, with --listen */
	struct node_identity id;
	/* node_cloud_info's zone and region, from the metadata service or the flags ("": unknown). */
	char az[128], region[128];
	struct remote_write *rw; /* NULL unless remote write is configured */
	int sigfd;
	bool ready; /* started (programs loaded, probes attached) and not stopping */
	bool reaping; /* agent_proc_drained is reading the other streams */
	/* The files stream's file records of the read in progress (agent_files_drained). */
	struct ns_file_event *files_queued;
	size_t n_files_queued, cap_files_queued;
	bool files_probing;
	struct metric *m_info, *m_events, *m_lost, *m_malformed, *m_wakeups, *m_loop_wakeups,
		*m_probes, *m_trace_lines, *m_trace_dropped, *m_misses, *m_features,
		*m_log_suppressed;
};

static void agent_set_misses(void *ctx, const char *program, uint64_t misses)
{
	struct agent *a = ctx;
	metric_set(a->m_misses, &program, (double)misses);
}

static void agent_collect(void *ctx)
{
	struct agent *a = ctx;

	for (int i = 0; i < NS_STREAM_COUNT; i++) {
		struct stream *s = a->streams[i];
		if (!s)
			continue;
		const char *name = stream_name(s);
		metric_set(a->m_events, &name, (double)stream_events(s));
		metric_set(a->m_lost, &name, (double)stream_lost(s));
		metric_set(a->m_malformed, &name, (double)stream_malformed(s));
		metric_set(a->m_wakeups, &name, (double)stream_wakeups(s));
	}
	metric_set(a->m_loop_wakeups, NULL, (double)loop_wakeups(a->loop));
	metric_set(a->m_probes, NULL, a->probes ? probes_attached(a->probes) : 0);
	if (a->probes)
		probes_foreach_misses(a->probes, agent_set_misses, a);
	metric_set(a->m_trace_lines, NULL, (double)a->trace.lines);
	metric_set(a->m_trace_dropped, NULL, (double)a->trace.dropped);
	metric_set(a->m_log_suppressed, NULL, (double)log_suppressed_total());
}

/* Coroot's app_id of a container_id ("" for anything but a k8s workload). */
static void agent_app_id(const char *container_id, char *out, size_t outlen)
{
	if (containers_app_id(container_id, out, outlen))
		out[0] = '\0';
}

/*
 * As Coroot: az and region on the series of its container registry (every
 * container_* family and ip_to_fqdn) when both are known, from the metadata
 * service or the flags. They are written at exposition, so series made
 * before the service answered carry them too.
 */
static int agent_zone_labels(struct agent *a)
{
	static const char *const zoned[] = { "container_", "ip_to_fqdn", NULL };
	static const char *const names[] = { "az", "region" };
	const char *values[] = { a->az, a->region };
	bool known = a->az[0] && a->region[0];

	return metric_registry_set_const_labels(a->registry, zoned, known ? 2 : 0, names, values);
}

static void agent_on_zone(void *ctx, const char *availability_zone, const char *region)
{
	struct agent *a = ctx;

	snprintf(a->az, sizeof(a->az), "%s", availability_zone);
	snprintf(a->region, sizeof(a->region), "%s", region);
	if (agent_zone_labels(a))
		log_error("cannot set the az and region labels");
}

/*
 * machine_id and system_uuid on every series, as the Coroot server keys
 * nodes, read from the host's root (file_host_root).
 */
static int agent_node_identity(struct agent *a)
{
	static const char *const names[] = { "machine_id", "system_uuid" };
	struct node_identity id;

	node_identity_read(file_host_root(), &id);
	if (!id.machine_id[0] && !id.system_uuid[0])
		node_identity_read("", &id); /* PID 1's root may be no host's (an initramfs) */
	if (!id.machine_id[0])
		log_warn("no machine id (/etc/machine-id, /var/lib/dbus/machine-id, "
			 "DMI product_uuid): series carry machine_id=\"\"");
	const char *values[] = { id.machine_id, id.system_uuid };
	a->id = id;
	/* As Coroot: a destination idle 10 minutes, or a container gone 10 minutes, is forgotten. */
	metric_registry_set_idle_expiry(a->registry, (uint64_t)a->cfg->series_idle_s * 1000000000ull);
	metric_registry_set_max_label_length(a->registry, a->cfg->max_label_length);
	if (metric_registry_set_const_labels(a->registry, NULL, 2, names, values) ||
	    metric_registry_derive_label(a->registry, "container_id", "app_id", agent_app_id))
		return -1;
	return agent_zone_labels(a);
}

#define T struct agent
#define STREAM METRIC_LABELS("stream")
static const struct metric_def agent_metrics[] = {
	{ "node_agent_info", "The agent's version.", METRIC_GAUGE, METRIC_LABELS("version"),
	  METRIC_HANDLE(T, m_info) },
	{ "nodescope_events_total", "Events read from each stream's ring buffer.", METRIC_COUNTER,
	  STREAM, METRIC_HANDLE(T, m_events) },
	{ "nodescope_events_lost_total",
	  "Events dropped on the BPF side because the stream's ring buffer was full.",
	  METRIC_COUNTER, STREAM, METRIC_HANDLE(T, m_lost) },
	{ "nodescope_events_malformed_total", "Records that could not be decoded.", METRIC_COUNTER,
	  STREAM, METRIC_HANDLE(T, m_malformed) },
	{ "nodescope_stream_wakeups_total", "Times the kernel woke a stream's reader.",
	  METRIC_COUNTER, STREAM, METRIC_HANDLE(T, m_wakeups) },
	{ "nodescope_loop_wakeups_total",
	  "Times the event loop returned from epoll_wait with work.", METRIC_COUNTER,
	  METRIC_HANDLE(T, m_loop_wakeups) },
	{ "nodescope_probes_attached", "BPF programs attached.", METRIC_GAUGE,
	  METRIC_HANDLE(T, m_probes) },
	{ "nodescope_trace_lines_total", "JSON lines written by nodescope trace.", METRIC_COUNTER,
	  METRIC_HANDLE(T, m_trace_lines) },
	{ "nodescope_bpf_recursion_misses_total",
	  "Runs of a BPF program the kernel skipped because another BPF program was running on "
	  "that CPU (events lost).",
	  METRIC_COUNTER, METRIC_LABELS("program"), METRIC_HANDLE(T, m_misses) },
	{ "nodescope_trace_lines_dropped_total",
	  "JSON lines not written because the reader of stdout fell more than 8 MiB behind.",
	  METRIC_COUNTER, METRIC_HANDLE(T, m_trace_dropped) },
	{ "nodescope_log_lines_suppressed_total",
	  "The agent's own log lines not written: past --log-burst and --log-per-second "
	  "(the next line written says how many).",
	  METRIC_COUNTER, METRIC_HANDLE(T, m_log_suppressed) },
	{ "nodescope_feature_enabled",
	  "Whether a kernel feature (or TLS or L7 capture) is in use: 0 when the kernel lacks it and "
	  "its part runs degraded or off (the start-up log says how).",
	  METRIC_GAUGE, METRIC_LABELS("feature"), METRIC_HANDLE(T, m_features) },
};
#undef STREAM
#undef T

static int agent_self_metrics(struct agent *a)
{
	const char *version = nodescope_version;

	if (metric_register_defs(a->registry, agent_metrics, METRIC_DEFS_COUNT(agent_metrics), a,
				 0))
		return -EINVAL;
	metric_set(a->m_info, &version, 1);
	metric_registry_add_collector(a->registry, agent_collect, a);
	return 0;
}

/*
 * nodescope_feature_enabled: 1 for each kernel feature in use, 0 for one
 * this kernel lacks (or --debug-kernel-lacks took away), and "tls" for
 * TLS plaintext capture (off with --no-tls, --disable-l7-tracing or without
 * attach cookies), and "l7" for the L7 capture (off with --disable-l7-tracing).
 */
static void agent_feature_metrics(struct agent *a)
{
	struct metric *m = a->m_features;
	kernel_features_t f = probes_features(a->probes);
	for (int k = 0; k < KF_COUNT; k++)
		metric_set(m, &kernel_feature_defs[k].name, kernel_has(f, k));
	const char *tls = "tls", *l7 = "l7";
	metric_set(m, &tls, a->cfg->tls && a->cfg->l7 && probes_tls_possible(a->probes));
	metric_set(m, &l7, a->cfg->l7);
}

/*
 * SIGHUP: what the agent read once and may have changed is read again (the
 * node's identity, containers' runtime metadata); nothing stops. The agent
 * writes only to stderr, so there is no log file to reopen.
 */
static void agent_reload(struct agent *a)
{
	proc_tracker_forget_names(a->procs);
	if (agent_node_identity(a))
		log_error("SIGHUP: cannot set the node's identity labels");
	else
		log_info("SIGHUP: node identity re-read, container metadata will be read again");
}

/*
 * --debug-hook-signals: SIGUSR1 detaches the kernel-wide probes, SIGUSR2
 * attaches them again (the maps, and so the sockets tracked, stay), for a
 * benchmark that measures a client with and without the hooks seconds
 * apart. /healthz says not ready while they are off.
 */
static void agent_toggle_hooks(struct agent *a, bool on)
{
	if (!a->probes || !a->ready) {
		log_error("%s before the agent was ready: ignored", on ? "SIGUSR2" : "SIGUSR1");
		return;
	}
	if (!on) {
		probes_detach(a->probes);
		log_info("SIGUSR1: probes detached (--debug-hook-signals)");
	} else if (!probes_attached(a->probes)) {
		if (probes_attach(a->probes))
			log_error("SIGUSR2: cannot attach the probes again");
		else
			log_info("SIGUSR2: probes attached again (--debug-hook-signals)");
	}
}

static void agent_on_signal(void *ctx, uint32_t events)
{
	struct agent *a = ctx;
	struct signalfd_siginfo si;

	while (read(a->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			agent_reload(a);
			continue;
		}
		if (si.ssi_signo == SIGUSR1 || si.ssi_signo == SIGUSR2) {
			agent_toggle_hooks(a, si.ssi_signo == SIGUSR2);
			continue;
		}
		a->ready = false;
		loop_stop(a->loop);
	}
}

/* /healthz: ready once started, while the probes are attached. */
static bool agent_ready(void *ctx, struct strbuf *why)
{
	struct agent *a = ctx;

	if (!a->ready) {
		strbuf_puts(why, "starting or stopping");
		return false;
	}
	if (!a->probes || !probes_attached(a->probes)) {
		strbuf_puts(why, "no probe attached");
		return false;
	}
	return true;
}

static int agent_signals(struct agent *a)
{
	sigset_t set;

	signal(SIGPIPE, SIG_IGN); /* a closed trace reader shows up as EPIPE */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if (a->cfg->debug_hook_signals) {
		sigaddset(&set, SIGUSR1);
		sigaddset(&set, SIGUSR2);
	}
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	a->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (a->sigfd < 0)
		return -errno;
	return loop_add_fd(a->loop, a->sigfd, EPOLLIN, agent_on_signal, a);
}

/*
 * An exec record may be of a set of cgroups whose first exec the files
 * stream brought with their paths (gone since, on a late read): name those first.
 */
static void agent_read_files_first(void *ctx)
{
	struct agent *a = ctx;
	if (a->streams[NS_STREAM_FILES])
		stream_drain(a->streams[NS_STREAM_FILES]);
}

/* Batched records refer to processes: learn about those first. */
static void agent_read_proc_first(void *ctx)
{
	struct agent *a = ctx;
	if (a->streams[NS_STREAM_PROC])
		stream_drain(a->streams[NS_STREAM_PROC]);
}

/*
 * After a proc read that saw exits: what those processes did before exiting
 * is in the other streams already; read it while they are still known, then
 * let them go. Once per read of the proc stream, not per exit. Exits read
 * meanwhile (the other streams read proc first) wait for the next time.
 */
static void agent_proc_drained(void *ctx)
{
	struct agent *a = ctx;
	size_t n = proc_tracker_exited(a->procs);

	if (!n || a->reaping)
		return;
	a->reaping = true;
	if (a->streams[NS_STREAM_TCP])
		stream_drain(a->streams[NS_STREAM_TCP]);
	if (a->streams[NS_STREAM_L7])
		stream_drain(a->streams[NS_STREAM_L7]);
	proc_tracker_reap_exited(a->procs, n);
	a->reaping = false;
}

/* After each l7 read: connections closed long enough ago go. */
static void agent_l7_drained(void *ctx)
{
	struct agent *a = ctx;
	l7_tracker_reap(a->l7, clock_mono_ns());
}

/* --debug-l7-discard: the l7 records are read and dropped. */
static int agent_discard_record(void *ctx, const void *data, size_t len)
{
	return 0;
}

/*
 * The files stream: a set of cgroups' first exec names its container now;
 * files go to TLS once the read is over (agent_files_drained), so that a
 * container that started while earlier files were probed (an ELF symbol
 * table read, slow on a busy node) is named before it is gone.
 */
static int agent_files_record(void *ctx, const void *data, size_t len)
{
	struct agent *a = ctx;
	uint32_t type;

	if (len < sizeof(type))
		return -EINVAL;
	memcpy(&type, data, sizeof(type));
	if (type == NS_FILE_CGROUPS)
		return proc_tracker_on_cgroups(a->procs, data, len);
	if (!a->tls)
		return 0;
	if (len < sizeof(struct ns_file_event))
		return tls_manager_on_record(a->tls, data, len); /* says it is malformed */
	if (a->n_files_queued == a->cap_files_queued) {
		size_t cap = a->cap_files_queued ? 2 * a->cap_files_queued : 64;
		struct ns_file_event *q = reallocarray(a->files_queued, cap, sizeof(*q));
		if (!q) /* probed now, as it comes */
			return tls_manager_on_record(a->tls, data, len);
		a->files_queued = q;
		a->cap_files_queued = cap;
	}
	memcpy(&a->files_queued[a->n_files_queued++], data, sizeof(struct ns_file_event));
	return 0;
}

/* After a read of files: its files are probed, and the stream read again between two. */
static void agent_files_drained(void *ctx)
{
	struct agent *a = ctx;

	if (a->files_probing)
		return; /* a read from the loop below: that loop probes what it queued */
	a->files_probing = true;
	for (size_t i = 0; i < a->n_files_queued; i++) {
		struct ns_file_event e = a->files_queued[i];
		tls_manager_on_record(a->tls, &e, sizeof(e));
		stream_drain(a->streams[NS_STREAM_FILES]);
	}
	a->n_files_queued = 0;
	a->files_probing = false;
}

static int agent_open_streams(struct agent *a)
{
	for (int i = 0; i < NS_STREAM_COUNT; i++) {
		if (i == NS_STREAM_L7 && !a->cfg->l7)
			continue; /* --disable-l7-tracing: nothing writes it */
		struct stream_params p = {
			.def = &stream_defs[i],
			.ring = probes_ring(a->probes, i),
			.lost = probes_lost(a->probes, i),
			.perf_cpu_bytes = probes_perf_cpu_bytes(a->probes, i),
			.bell = probes_bell(a->probes, i),
			.bell_state = probes_bell_state(a->probes, i),
			.debug_poll_ns = (uint64_t)a->cfg->debug_poll_ms * 1000000ull,
			.debug_batch_ns = (uint64_t)a->cfg->debug_batch_ms * 1000000ull,
			.nice = &a->nice,
		};
		if (stream_defs[i].policy.kind == NS_WAKEUP_BATCHED && i != NS_STREAM_PROC) {
			p.before_drain = agent_read_proc_first;
			p.before_drain_ctx = a;
		}
		switch (i) {
		case NS_STREAM_PROC:
			p.fn = proc_tracker_on_record;
			p.ctx = a->procs;
			p.before_drain = agent_read_files_first;
			p.before_drain_ctx = a;
			p.after_drain = agent_proc_drained;
			p.after_drain_ctx = a;
			break;
		case NS_STREAM_TCP:
			p.fn = tcp_tracker_on_record;
			p.ctx = a->tcp;
			break;
		case NS_STREAM_L7:
			p.fn = a->cfg->debug_l7_discard ? agent_discard_record : l7_tracker_on_record;
			p.ctx = a->l7;
			p.after_drain = agent_l7_drained;
			p.after_drain_ctx = a;
			break;
		case NS_STREAM_FILES:
			p.fn = agent_files_record;
			p.ctx = a;
			p.after_drain = agent_files_drained;
			p.after_drain_ctx = a;
			break;
		}
		int err = stream_open(a->loop, &p, &a->streams[i]);
		if (err) {
			log_error("cannot read stream %s: %s", stream_defs[i].name, strerror(-err));
			return err;
		}
	}
	return 0;
}


/* A connection closed: first read the payloads still queued for it. */
static void agent_conn_closed(void *ctx, uint64_t sock, uint64_t start_ns)
{
	struct agent *a = ctx;
	if (a->streams[NS_STREAM_L7])
		stream_drain(a->streams[NS_STREAM_L7]);
	l7_tracker_conn_closed(a->l7, sock, start_ns, clock_mono_ns());
}

static int agent_start_holds(struct agent *a)
{
	struct tls_hold_opts ho = {
		.registry = a->registry,
		.loop = a->loop,
		.held_fd = bpf_map__fd(probes_held(a->probes)),
		.probing_fd = bpf_map__fd(probes_files_probing(a->probes)),
		.enabled = probes_hold_switch(a->probes),
	};
	int err = tls_hold_start(&ho, &a->hold);
	if (err) {
		log_error("--hold-first-runs: cannot start its watchdog: %s", strerror(-err));
		return NS_EXIT_RUNTIME;
	}
	tls_manager_set_hold(a->tls, a->hold);
	return 0;
}

static bool agent_destination(void *ctx, const struct ns_l7_sock *s, uint32_t pid, char *dest,
			      char *actual)
{
	struct agent *a = ctx;
	return a->tcp ? tcp_tracker_destination(a->tcp, s, pid, dest, actual) : true;
}

static const char *agent_fan_out_domain(void *ctx, int family, const uint8_t *addr)
{
	struct agent *a = ctx;
	return a->l7 ? l7_tracker_fan_out_domain(a->l7, family, addr) : NULL;
}

/* Only when an endpoint is given: otherwise no timer, no spool, no curl. */
static int agent_remote_write(struct agent *a)
{
	const struct ns_config *c = a->cfg;
	char url[4096], spool[4096];

	if (!remote_write_url(c->metrics_endpoint, c->collector_endpoint, url, sizeof(url)))
		return 0;
	snprintf(spool, sizeof(spool), "%s/spool", c->wal_dir);
	struct remote_write_opts o = {
		.registry = a->registry,
		.loop = a->loop,
		.resources = a->resources,
		.url = url,
		.api_key = c->api_key,
		.ca_file = c->ca_file,
		.insecure = c->insecure_skip_verify,
		.interval_ms = c->scrape_interval_ms,
		.spool_dir = spool,
		.spool_max_bytes = c->max_spool_size,
		.max_series = c->max_series_per_write,
		.machine_id = a->id.machine_id,
		.system_uuid = a->id.system_uuid,
	};
	if (remote_write_new(&o, &a->rw))
		return NS_EXIT_RUNTIME;
	struct strbuf every = STRBUF_INIT;
	cli_format_millis(c->scrape_interval_ms, &every);
	log_info("remote write to %s every %s (spool %s)", url, strbuf_str(&every), spool);
	strbuf_free(&every);
	return 0;
}

static int agent_start(struct agent *a)
{
	const struct ns_config *c = a->cfg;
	int rc;

	if ((rc = preflight_all()))
		return rc;
	/*
	 * A new program's probes race it to its first TLS record: woken by its
	 * exec, the agent should run before busy work does. Before any thread
	 * starts, so they share it.
	 */
	int nice_err = nice_set_thread(c->nice);
	if (nice_err)
		log_warn("cannot set nice %d: %s (running at %d)", c->nice, strerror(-nice_err),
			 getpriority(PRIO_PROCESS, 0));
	nice_switch_init(&a->nice, c->nice, c->batch_nice, !nice_err, nice_set_thread);
	if (loop_new(&a->loop) || !(a->registry = metric_registry_new()))
		return NS_EXIT_RUNTIME;
	if (agent_signals(a) || agent_node_identity(a) || agent_self_metrics(a))
		return NS_EXIT_RUNTIME;
	struct node_metrics_opts no = {
		.registry = a->registry,
		.proc_root = "/proc",
		.dmi_root = "",
		.cloud = { c->provider, c->region, c->availability_zone, c->instance_type,
			   c->instance_life_cycle },
		.loop = a->loop,
		.on_zone = agent_on_zone,
		.zone_ctx = a,
	};
	if (process_metrics_new(a->registry, "/proc", &a->self) ||
	    node_metrics_new(&no, &a->node)) {
		log_error("cannot register the node metrics");
		return NS_EXIT_RUNTIME;
	}
	trace_init(&a->trace, c->trace ? STDOUT_FILENO : -1, a->loop);

	struct proc_tracker_opts po = {
		.registry = a->registry,
		.trace = (c->stream_mask & (1u << NS_STREAM_PROC)) ? &a->trace : NULL,
		.loop = a->loop,
		.max_processes = c->max_processes,
		.max_series = c->max_series,
		.cgroupfs_root = c->cgroupfs_root,
	};
	if (proc_tracker_new(&po, &a->procs))
		return NS_EXIT_RUNTIME;
	struct containers_filter_opts fo = {
		.allow = c->container_allowlist.v,
		.n_allow = c->container_allowlist.n,
		.deny = c->container_denylist.v,
		.n_deny = c->container_denylist.n,
		.skip_system_services = c->skip_systemd_system_services,
		.root = file_host_root(),
	};
	char why[256];
	int ferr = containers_filter_new(&fo, &a->filter, why, sizeof(why));
	if (ferr) { /* the patterns were checked as options: only memory can fail here */
		log_error("container filters: %s", ferr == -EINVAL ? why : strerror(-ferr));
		return NS_EXIT_RUNTIME;
	}
	struct resources_opts ro = {
		.registry = a->registry,
		.procs = proc_tracker_table(a->procs),
		.loop = a->loop,
		.cgroupfs_root = c->cgroupfs_root,
		.keep_standalone = c->keep_standalone,
		.filter = a->filter,
		.max_series = c->max_series,
		.gone_after_ns = (uint64_t)c->series_idle_s * 1000000000ull,
		.min_container_age_ns = (uint64_t)c->min_container_age_ms * 1000000ull,
	};
	if (resources_new(&ro, &a->resources))
		return NS_EXIT_RUNTIME;

	struct probes_opts bo = { .verbose = c->verbose, .pretend_missing = c->kernel_lacks,
				  .syscall_hooks = c->debug_syscall_hooks, .no_l7 = !c->l7 };
	char cgroup2[PATH_MAX];
	if (!cgroup_v2_mount(c->cgroupfs_root, cgroup2, sizeof(cgroup2)))
		bo.cgroup_v2_root = cgroup2;
	if (c->cgroup) {
		int err = cgroup_v2_id(c->cgroup, &bo.cgroup_id, &bo.cgroup_level);
		if (err) {
			log_error("--cgroup %s: %s", c->cgroup,
				  err == -EINVAL ? "not a cgroup v2 directory" : strerror(-err));
			return NS_EXIT_USAGE;
		}
	}
	memcpy(bo.ring_size, c->ring_size, sizeof(bo.ring_size));
	if (!c->l7) /* never read: the least the kernel takes */
		bo.ring_size[NS_STREAM_L7] = (uint32_t)sysconf(_SC_PAGESIZE);
	if ((rc = probes_start(&bo, &a->probes)))
		return rc;
	if (link_closer_new(a->registry,
			    probes_tls_multi(a->probes) ? LINK_CLOSER_MAX_THREADS
							: LINK_CLOSER_PERF_THREADS,
			    &a->closer))
		return NS_EXIT_RUNTIME;
	struct tcp_tracker_opts to = {
		.registry = a->registry,
		.procs = proc_tracker_table(a->procs),
		.trace = (c->stream_mask & (1u << NS_STREAM_TCP)) ? &a->trace : NULL,
		.drops = probes_drops(a->probes),
		.l7_socks = c->l7 ? probes_l7_socks(a->probes) : NULL,
		.l7_filter = c->l7 ? probes_l7_filter(a->probes) : NULL,
		.max_connections = c->max_connections,
		.max_destinations = c->max_destinations,
		.max_series = c->max_series,
		.ephemeral = &c->ephemeral_ports,
		.public_networks = &c->public_networks,
		.on_close = agent_conn_closed,
		.on_close_ctx = a,
		.fan_out_domain = agent_fan_out_domain,
		.fan_out_ctx = a,
	};
	struct l7_tracker_opts lo = {
		.destination = agent_destination,
		.destination_ctx = a,
		.registry = a->registry,
		.procs = proc_tracker_table(a->procs),
		.trace = (c->stream_mask & (1u << NS_STREAM_L7)) ? &a->trace : NULL,
		.max_connections = c->max_l7_connections,
		.max_series = c->max_series,
		.max_fqdns = c->max_fqdns,
		.http_exclude = &c->http_exclude,
	};
	struct tls_manager_opts so = {
		.registry = a->registry,
		.trace = (c->stream_mask & (1u << NS_STREAM_FILES)) ? &a->trace : NULL,
		.progs = { probes_tls_program(a->probes, TLS_PROG_ENTRY),
			   probes_tls_program(a->probes, TLS_PROG_RET),
			   probes_tls_program(a->probes, TLS_PROG_GO_ENTRY),
			   probes_tls_program(a->probes, TLS_PROG_GO_RET) },
		.uprobe_multi = probes_tls_multi(a->probes),
		.closer = a->closer,
		.files_seen_fd = bpf_map__fd(probes_files_seen(a->probes)),
		.max_files = 65536,
		.release_after_ns = (uint64_t)c->tls_release_after_s * 1000000000ull,
	};
	agent_feature_metrics(a);
	if (tcp_tracker_new(&to, &a->tcp) ||
	    tcp_proxied_new(a->registry, proc_tracker_table(a->procs), &c->ephemeral_ports,
			    c->max_series, &a->proxied) ||
	    l7_tracker_new(&lo, &a->l7) ||
	    (c->tls && c->l7 && probes_tls_possible(a->probes) && tls_manager_new(&so, &a->tls)))
		return NS_EXIT_RUNTIME;
	containers_resolver_on_ports(proc_tracker_resolver(a->procs), tcp_proxied_set, a->proxied);
	if (c->listen) {
		if (http_page_new(a->loop, a->registry, proc_tracker_table(a->procs), &a->page))
			return NS_EXIT_RUNTIME;
		a->trace.tap = http_page_tap(a->page); /* before any event is read */
	}
	if (agent_open_streams(a))
		return NS_EXIT_RUNTIME;
	if ((rc = probes_attach(a->probes)))
		return rc;
	/* After attaching, so a process or socket is either scanned or seen by an event. */
	if (a->tls)
		tls_manager_scan(a->tls);
	proc_tracker_scan(a->procs);
	tcp_tracker_scan(a->tcp);
	/* After the scans: a process started meanwhile is not held for their length. */
	if (c->hold_first_runs && !a->tls)
		log_warn("--hold-first-runs has no effect: no TLS probing here");
	else if (c->hold_first_runs && (rc = agent_start_holds(a)))
		return rc;

	if (c->listen) {
		a->routes = (struct http_routes){ a->registry, proc_tracker_table(a->procs),
						  a->resources, agent_ready, a, a->page };
		const struct http_limits lim = { c->http_max_per_client, c->http_max_connections,
						 c->http_head_timeout_s, c->http_idle_timeout_s };
		if (http_server_start(a->loop, a->registry, c->listen, &lim, http_routes_handle,
				      &a->routes, &a->http))
			return NS_EXIT_LISTEN;
		log_info("serving http://%s/ (metrics at /metrics; per client %u connections, "
			 "%u in all, %us for a request head, %us idle)",
			 c->listen, lim.max_per_client, lim.max_connections, lim.head_timeout_s,
			 lim.idle_timeout_s);
	}
	return agent_remote_write(a);
}

static void agent_stop(struct agent *a)
{
	/* Nothing is held from here on; what is held goes on. */
	if (a->hold) {
		tls_manager_set_hold(a->tls, NULL);
		tls_hold_stop(a->hold);
	}
	/* Detach first so nothing new arrives, then read what is left. */
	struct probes *p = a->probes;
	if (p) {
		for (int i = 0; i < NS_STREAM_COUNT; i++)
			if (a->streams[i])
				stream_drain(a->streams[i]);
	}
	http_server_stop(a->http);
	remote_write_free(a->rw);
	for (int i = 0; i < NS_STREAM_COUNT; i++)
		stream_close(a->streams[i]);
	tls_manager_free(a->tls); /* hands its links to the closer */
	free(a->files_queued);
	probes_stop(p);
	/* Their grace periods overlapped with the above: wait until every link is gone. */
	link_closer_free(a->closer);
	l7_tracker_free(a->l7);
	tcp_tracker_free(a->tcp);
	tcp_proxied_free(a->proxied);
	resources_free(a->resources); /* before the process table it observes */
	containers_filter_free(a->filter);
	proc_tracker_free(a->procs);
	metric_registry_free(a->registry);
	a->trace.tap = NULL;
	http_page_free(a->page); /* after the registry: it exports the page's counters */
	node_metrics_free(a->node);
	process_metrics_free(a->self);
	trace_free(&a->trace);
	loop_free(a->loop);
	if (a->sigfd > 0)
		close(a->sigfd);
}

int agent_run(const struct ns_config *c)
{
	struct agent a = { .cfg = c, .sigfd = -1 };
	int rc = agent_start(&a);

	if (!rc) {
		a.ready = true;
		trace_ready(&a.trace);
		if (!c->trace)
			log_info("ready");
		int err = loop_run(a.loop);
		if (err) {
			log_error("event loop failed: %s", strerror(-err));
			rc = NS_EXIT_RUNTIME;
		}
	}
	agent_stop(&a);
	return rc;
}
