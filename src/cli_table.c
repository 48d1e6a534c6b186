/*
 * Every option nodescope takes, as data. Coroot's options keep Coroot's
 * names and variables (LISTEN, CGROUPFS_ROOT, ...) where the meaning is the
 * same; nodescope's own variables are NODESCOPE_ and the upper-case name.
 */
#include "cli_table.h"

#include <errno.h>
#include <string.h>

#include <sys/socket.h>

#include "containers/filter.h"
#include "http/server.h"
#include "loop/stream.h"
#include "util/glob.h"

#define FIELD(f) .off = offsetof(struct ns_config, f), .size = sizeof(((struct ns_config *)0)->f)

static void list_streams(struct strbuf *sb)
{
	for (int i = 0; i < NS_STREAM_COUNT; i++)
		strbuf_printf(sb, "%s%s", i ? ", " : "", stream_defs[i].name);
}

/* "" turns HTTP off, as --listen "" always did; anything else must be an address. */
static int parse_listen(const char *val, void *field, struct strbuf *why)
{
	struct sockaddr_storage ss;
	unsigned len;

	if (*val && http_parse_listen(val, &ss, &len))
		return -EINVAL;
	*(const char **)field = *val ? val : NULL;
	return 0;
}

static int parse_events(const char *val, void *field, struct strbuf *why)
{
	unsigned mask = 0;

	if (!strcmp(val, "all")) {
		*(unsigned *)field = (1u << NS_STREAM_COUNT) - 1;
		return 0;
	}
	for (const char *p = val; *p;) {
		size_t n = strcspn(p, ",");
		const struct stream_def *d = NULL;
		if (!n) { /* ",proc," is proc */
			p++;
			continue;
		}
		for (int i = 0; i < NS_STREAM_COUNT && !d; i++)
			if (strlen(stream_defs[i].name) == n && !strncmp(stream_defs[i].name, p, n))
				d = &stream_defs[i];
		if (!d) {
			strbuf_printf(
				why, "unknown stream '%.*s'; streams: ", (int)(n < 31 ? n : 31), p);
			list_streams(why);
			return -EINVAL;
		}
		mask |= 1u << d->id;
		p += n + (p[n] == ',');
	}
	if (!mask) {
		strbuf_puts(why, "needs at least one stream: ");
		list_streams(why);
		return -EINVAL;
	}
	*(unsigned *)field = mask;
	return 0;
}

/* SIZE for every stream or STREAM=SIZE for one, comma-separated; applied in order. */
static int parse_ring(const char *val, void *field, struct strbuf *why)
{
	uint32_t *sizes = field;
	const char *p = val;

	do {
		char item[64];
		size_t n = strcspn(p, ",");
		if (n >= sizeof(item))
			n = sizeof(item) - 1; /* long enough to be wrong, and named cut */
		memcpy(item, p, n);
		item[n] = '\0';
		char *eq = strchr(item, '=');
		uint32_t size;
		if (cli_parse_ring_size(eq ? eq + 1 : item, 4096, &size))
			return -EINVAL;
		if (!eq) {
			for (int i = 0; i < NS_STREAM_COUNT; i++)
				sizes[i] = size;
		} else {
			*eq = '\0';
			const struct stream_def *d = stream_def_find(item);
			if (!d) {
				strbuf_printf(why, "unknown stream '%.31s'; streams: ", item);
				list_streams(why);
				return -EINVAL;
			}
			sizes[d->id] = size;
		}
		p += strcspn(p, ",");
	} while (*p++ == ',');
	return 0;
}

static void describe_ring_defaults(struct strbuf *sb)
{
	for (int i = 0; i < NS_STREAM_COUNT; i++) {
		uint32_t s = stream_defs[i].ring_size;
		strbuf_printf(sb, "%s%s %u%s", i ? ", " : "", stream_defs[i].name,
			      s % (1u << 20) ? s >> 10 : s >> 20, s % (1u << 20) ? "k" : "m");
	}
}

static int parse_kernel_lacks(const char *val, void *field, struct strbuf *why)
{
	const char *bad = NULL;

	if (!kernel_features_parse(val, field, &bad))
		return 0;
	strbuf_printf(why, "unknown feature '%s'; features: ", bad);
	for (int k = 0; k < KF_COUNT; k++)
		strbuf_printf(why, "%s%s", k ? ", " : "", kernel_feature_defs[k].name);
	return -EINVAL;
}

/* Coroot's form; "" (only from the command line: an empty variable is unset) skips no port. */
static int parse_port_ranges(const char *val, void *field, struct strbuf *why)
{
	if (!*val) {
		*(struct ns_port_ranges *)field = (struct ns_port_ranges){ 0 };
		return 0;
	}
	return cli_parse_port_ranges(val, field);
}

/* Each blank-separated piece of val, (p, n), to fn; stops at its first error. */
static int each_piece(const char *val, void *field, struct strbuf *why,
		      int (*fn)(const char *p, size_t n, void *field, struct strbuf *why))
{
	for (const char *p = val;;) {
		p += strspn(p, " \t\r\n");
		size_t n = strcspn(p, " \t\r\n");
		if (!n)
			return 0;
		int err = fn(p, n, field, why);
		if (err)
			return err;
		p += n;
	}
}

static int add_network(const char *p, size_t n, void *field, struct strbuf *why)
{
	struct ns_cidrs *l = field;

	if (l->n == NS_CIDRS_MAX) {
		strbuf_printf(why, "at most %d networks", NS_CIDRS_MAX);
		return -EINVAL;
	}
	if (cli_parse_cidr(p, n, &l->v[l->n])) {
		strbuf_printf(why, "'%.*s' is no network: IP/BITS, IPv4 or IPv6", (int)(n < 64 ? n : 64), p);
		return -EINVAL;
	}
	l->n++;
	return 0;
}

/* Coroot's kingpin takes an empty value as no network: "" keeps no public destination. */
static int parse_networks(const char *val, void *field, struct strbuf *why)
{
	return each_piece(val, field, why, add_network);
}

static int add_glob(const char *p, size_t n, void *field, struct strbuf *why)
{
	struct ns_globs *l = field;

	if (l->n == NS_GLOBS_MAX) {
		strbuf_printf(why, "at most %d patterns", NS_GLOBS_MAX);
		return -EINVAL;
	}
	if (!glob_valid(p, n)) {
		strbuf_printf(why, "'%.*s': a [ or { left open, or a \\ at the end", (int)(n < 64 ? n : 64), p);
		return -EINVAL;
	}
	l->v[l->n].p = p;
	l->v[l->n].len = (unsigned)n;
	l->n++;
	return 0;
}

static int parse_globs(const char *val, void *field, struct strbuf *why)
{
	return each_piece(val, field, why, add_glob);
}

static int parse_rate(const char *val, void *field, struct strbuf *why)
{
	double v;
	if (cli_parse_float(val, 0, 1e9, &v))
		return -EINVAL;
	*(double *)field = v;
	return 0;
}

static int parse_fraction(const char *val, void *field, struct strbuf *why)
{
	double v;
	return cli_parse_float(val, 0, 1, &v);
}

static int parse_go_heap_profiler(const char *val, void *field, struct strbuf *why)
{
	return strcmp(val, "disabled") && strcmp(val, "enabled") && strcmp(val, "force") ? -EINVAL
											   : 0;
}

static int parse_abs_path(const char *val, void *field, struct strbuf *why)
{
	if (val[0] != '/')
		return -EINVAL;
	*(const char **)field = val;
	return 0;
}

/* One more value of a repeatable option of container patterns, each of its lines checked. */
static int parse_container_patterns(const char *val, void *field, struct strbuf *why)
{
	struct ns_list *l = field;
	char msg[256];

	if (l->n == NS_LIST_MAX) {
		strbuf_printf(why, "at most %d values", NS_LIST_MAX);
		return -EINVAL;
	}
	if (containers_filter_check(val, msg, sizeof(msg))) {
		strbuf_printf(why, "bad regular expression %s", msg);
		return -EINVAL;
	}
	l->v[l->n++] = val;
	return 0;
}

static int parse_url(const char *val, void *field, struct strbuf *why)
{
	if (strncmp(val, "http://", 7) && strncmp(val, "https://", 8))
		return -EINVAL;
	*(const char **)field = val;
	return 0;
}

static int parse_spool_size(const char *val, void *field, struct strbuf *why)
{
	unsigned long long v;
	if (cli_parse_bytes(val, 4096, 1ull << 40, &v))
		return -EINVAL;
	*(uint64_t *)field = v;
	return 0;
}

const struct cli_opt cli_opts[] = {
	{ CLI_HEADING, "output" },
	{ CLI_CUSTOM, "listen", .env = "LISTEN", .metavar = "HOST:PORT", FIELD(listen),
	  .def = NS_DEFAULT_LISTEN, .parse = parse_listen,
	  .form = "HOST:PORT, [IPV6]:PORT or :PORT, numeric; \"\" for none",
	  .help = "HTTP address for /metrics, /api and the web page; \"\" turns HTTP off; "
		  "trace serves HTTP only when given one; Coroot's default is 0.0.0.0:80",
	  .flags = CLI_ENV_EMPTY },
	{ CLI_INT, "http-max-per-client", .env = "NODESCOPE_HTTP_MAX_PER_CLIENT", .metavar = "N",
	  FIELD(http_max_per_client), .min = 1, .max = 65536, .def = "8",
	  .help = "HTTP connections one source address may hold open; one more is closed at "
		  "once and counted (so no other client can keep a scraper out)" },
	{ CLI_INT, "http-max-connections", .env = "NODESCOPE_HTTP_MAX_CONNECTIONS", .metavar = "N",
	  FIELD(http_max_connections), .min = 1, .max = 65536, .def = "256",
	  .help = "HTTP connections open in all; one more is closed at once and counted" },
	{ CLI_SECONDS, "http-head-timeout", .env = "NODESCOPE_HTTP_HEAD_TIMEOUT", .metavar = "TIME",
	  FIELD(http_head_timeout_s), .min = 1, .max = 3600, .def = "5s",
	  .help = "time an HTTP connection has to send each request head, from its accept or its "
		  "last response; one that sends nothing, or too slowly, is cut and counted" },
	{ CLI_SECONDS, "http-idle-timeout", .env = "NODESCOPE_HTTP_IDLE_TIMEOUT", .metavar = "TIME",
	  FIELD(http_idle_timeout_s), .min = 1, .max = 3600, .def = "10s",
	  .help = "an HTTP connection on which nothing moves either way for this long is closed "
		  "(a response the client stops reading, too)" },
	{ CLI_CUSTOM, "events", .env = "NODESCOPE_EVENTS", .metavar = "LIST", FIELD(stream_mask),
	  .def = "all", .parse = parse_events, .form = "comma-separated streams, or all",
	  .help = "trace: streams to print, comma-separated: proc, tcp, l7, files (TLS probing "
		  "of new files)" },
	{ CLI_CUSTOM, "ringbuf-size", .env = "NODESCOPE_RINGBUF_SIZE", .metavar = "SIZE",
	  FIELD(ring_size), .parse = parse_ring, .describe_default = describe_ring_defaults,
	  .form = "SIZE or STREAM=SIZE, comma-separated; SIZE 1..1024m with k/m suffixes",
	  .help = "BPF ring buffer size for every stream, or STREAM=SIZE for one (repeatable, or "
		  "comma-separated); rounded up to a power of two of at least a page; on kernels "
		  "without ring buffers, shared out over the CPUs' perf buffers (32k each at least)" },

	{ CLI_HEADING, "limits" },
	{ CLI_INT, "max-series", .env = "NODESCOPE_MAX_SERIES", .metavar = "N", FIELD(max_series),
	  .min = 0, .max = 10000000, .def = "10000",
	  .help = "series per metric; past it new label sets are dropped and counted" },
	{ CLI_INT, "max-processes", .env = "NODESCOPE_MAX_PROCESSES", .metavar = "N",
	  FIELD(max_processes), .min = 1, .max = 4194304, .def = "131072",
	  .help = "process table size" },
	{ CLI_INT, "max-connections", .env = "NODESCOPE_MAX_CONNECTIONS", .metavar = "N",
	  FIELD(max_connections), .min = 1, .max = 16777216, .def = "262144",
	  .help = "connection table size" },
	{ CLI_INT, "max-destinations", .env = "NODESCOPE_MAX_DESTINATIONS", .metavar = "N",
	  FIELD(max_destinations), .min = 1, .max = 1000000, .def = "1000",
	  .help = "TCP destinations per container in the metrics" },
	{ CLI_INT, "max-fqdns-per-container", .env = "MAX_FQDNS_PER_CONTAINER", .metavar = "N",
	  FIELD(max_fqdns), .min = 1, .max = 1000000, .def = "50",
	  .help = "Coroot's: DNS domains per container in the metrics; more are counted as ~other" },
	{ CLI_INT, "max-label-length", .env = "MAX_LABEL_LENGTH", .metavar = "N",
	  FIELD(max_label_length), .min = 1, .max = 1048576, .def = "4096",
	  .help = "Coroot's: label values longer than this are cut to it" },

	{ CLI_HEADING, "what is watched" },
	{ CLI_STRING, "cgroup", .env = "NODESCOPE_CGROUP", .metavar = "DIR", FIELD(cgroup),
	  .help = "process events only from processes in this cgroup v2 directory and below "
		  "(e.g. /sys/fs/cgroup/app), filtered in the kernel" },
	{ CLI_CUSTOM, "cgroupfs-root", .env = "CGROUPFS_ROOT", .metavar = "DIR",
	  FIELD(cgroupfs_root), .def = "/sys/fs/cgroup", .parse = parse_abs_path,
	  .form = "an absolute path",
	  .help = "Coroot's: where the host's cgroup hierarchies are mounted (cgroup2 at DIR "
		  "or DIR/unified, v1 at DIR/<controller>; the container resource metrics read "
		  "both)" },
	{ CLI_MILLIS, "min-container-age", .env = "MIN_CONTAINER_AGE", .metavar = "TIME",
	  FIELD(min_container_age_ms), .min = 0, .max = 31536000000, .def = "0",
	  .help = "Coroot's: series of a container that lives (or lived) less than this are "
		  "not written; 0 here (Coroot: 30s), since nodescope sees short-lived processes "
		  "whole" },
	{ CLI_FLAG, "keep-standalone-processes", .env = "NODESCOPE_KEEP_STANDALONE_PROCESSES",
	  FIELD(keep_standalone), .min = true,
	  .help = "also report processes outside any container (the root cgroup, user "
		  "sessions, *.scope), pod sandboxes and runtime monitors, which Coroot leaves "
		  "out (their events are traced either way)" },
	{ CLI_CUSTOM, "container-allowlist", .env = "CONTAINER_ALLOWLIST", .metavar = "REGEX",
	  FIELD(container_allowlist), .parse = parse_container_patterns,
	  .form = "POSIX extended regular expressions, one a line",
	  .help = "Coroot's, repeatable: only containers whose container_id matches one of "
		  "these make series (POSIX extended regular expressions, regcomp's: Coroot's Go "
		  "syntax without \\d, (?i) or lazy quantifiers; the variable holds one a line)",
	  .flags = CLI_REPEATABLE },
	{ CLI_CUSTOM, "container-denylist", .env = "CONTAINER_DENYLIST", .metavar = "REGEX",
	  FIELD(container_denylist), .parse = parse_container_patterns,
	  .form = "POSIX extended regular expressions, one a line",
	  .help = "Coroot's, repeatable: containers whose container_id matches one of these "
		  "make no series, whatever the allowlist says (same syntax; their events are "
		  "still traced)",
	  .flags = CLI_REPEATABLE },
	{ CLI_FLAG, "skip-systemd-system-services", .env = "SKIP_SYSTEMD_SYSTEM_SERVICES",
	  FIELD(skip_systemd_system_services), .min = true, .def = "true",
	  .help = "Coroot's: systemd's own services (systemd-*, dbus, getty, snapd, ...; "
		  "oneshot, D-Bus and timer-started units, from their unit files) make no "
		  "series; --no-skip-systemd-system-services keeps them" },
	{ CLI_CUSTOM, "ephemeral-port-range", .env = "EPHEMERAL_PORT_RANGE", .metavar = "RANGES",
	  FIELD(ephemeral_ports), .def = "32768-60999", .parse = parse_port_ranges,
	  .form = "LO-HI ranges separated by blanks or commas (\"1024-23768 30000-65535\"), "
		  "at most 16, ports 1..65535, LO <= HI; \"\" for none",
	  .help = "TCP destinations and listens on ports in these ranges (but 50051) are left "
		  "out of the metrics, as Coroot does; \"\" for none" },
	{ CLI_CUSTOM, "track-public-network", .env = "TRACK_PUBLIC_NETWORK", .metavar = "CIDR",
	  FIELD(public_networks), .def = "0.0.0.0/0", .parse = parse_networks,
	  .form = "IP/BITS networks, IPv4 or IPv6, at most 64",
	  .help = "Coroot's: a public destination (not private, loopback or link-local) is kept "
		  "only in these networks, its NAT target's, or the node's own public ones; "
		  "repeatable, newline- or blank-separated in the variable; the default keeps "
		  "IPv4 and drops IPv6 public destinations, as Coroot's does",
	  .flags = CLI_REPEATABLE },
	{ CLI_CUSTOM, "exclude-http-requests-by-path", .env = "EXCLUDE_HTTP_REQUESTS_BY_PATH",
	  .metavar = "GLOB", FIELD(http_exclude), .parse = parse_globs,
	  .form = "glob patterns (* ? [a-z] [!a-z] {a,b} \\x), at most 64",
	  .help = "Coroot's: HTTP requests whose path matches are not counted in the L7 metrics "
		  "(outbound and inbound, HTTP/1 and HTTP/2; * matches '/' too); repeatable, "
		  "newline- or blank-separated in the variable",
	  .flags = CLI_REPEATABLE },
	{ CLI_FLAG, "disable-l7-tracing", .env = "DISABLE_L7_TRACING", FIELD(l7), .min = false,
	  .help = "Coroot's: no L7 capture at all (no request metrics, DNS, ip_to_fqdn or TLS "
		  "probing; their hooks are not attached); the TCP metrics stay" },

	{ CLI_HEADING, "TLS" },
	{ CLI_FLAG, "no-tls", .env = "NODESCOPE_NO_TLS", FIELD(tls), .min = false,
	  .help = "do not probe TLS libraries: HTTPS is then neither decrypted nor parsed" },
	{ CLI_SECONDS, "tls-release-after", .env = "NODESCOPE_TLS_RELEASE_AFTER", .metavar = "TIME",
	  FIELD(tls_release_after_s), .min = 0, .max = 31536000, .def = "600",
	  .help = "a file no process has mapped for this long loses its TLS probes (0: never)" },
	{ CLI_FLAG, "hold-first-runs", .env = "NODESCOPE_HOLD_FIRST_RUNS", FIELD(hold_first_runs),
	  .min = true,
	  .help = "stop a process that runs or maps a file not probed yet until its TLS probes "
		  "are in place (SIGSTOP, SIGCONT), so even its first run is seen; see README" },

	{ CLI_HEADING, "node metadata (each wins over the cloud provider's metadata service)" },
	{ CLI_STRING, "provider", .env = "PROVIDER", .metavar = "NAME", FIELD(provider),
	  .help = "the node's cloud provider (else the one DMI names; only that one's metadata "
		  "service is asked)" },
	{ CLI_STRING, "region", .env = "REGION", .metavar = "NAME", FIELD(region),
	  .help = "the node's cloud region: with the availability zone, the region label of "
		  "every container series and ip_to_fqdn" },
	{ CLI_STRING, "availability-zone", .env = "AVAILABILITY_ZONE", .metavar = "NAME",
	  FIELD(availability_zone),
	  .help = "the node's availability zone: with the region, the az label of every "
		  "container series and ip_to_fqdn" },
	{ CLI_STRING, "instance-type", .env = "INSTANCE_TYPE", .metavar = "NAME",
	  FIELD(instance_type), .help = "the node's instance type" },
	{ CLI_STRING, "instance-life-cycle", .env = "INSTANCE_LIFE_CYCLE", .metavar = "NAME",
	  FIELD(instance_life_cycle), .help = "the node's instance life cycle (on-demand, spot)" },

	{ CLI_HEADING, "remote write (Coroot's flags; off unless an endpoint is given)" },
	{ CLI_CUSTOM, "metrics-endpoint", .env = "METRICS_ENDPOINT", .metavar = "URL",
	  FIELD(metrics_endpoint), .parse = parse_url, .form = "an http:// or https:// URL",
	  .help = "push every series to this Prometheus remote-write URL each --scrape-interval" },
	{ CLI_CUSTOM, "collector-endpoint", .env = "COLLECTOR_ENDPOINT", .metavar = "URL",
	  FIELD(collector_endpoint), .parse = parse_url, .form = "an http:// or https:// URL",
	  .help = "the Coroot server: remote write to URL/v1/metrics unless --metrics-endpoint "
		  "is given" },
	{ CLI_STRING, "api-key", .env = "API_KEY", .metavar = "KEY", FIELD(api_key),
	  .help = "sent as the X-Api-Key header of every remote-write request" },
	{ CLI_MILLIS, "scrape-interval", .env = "SCRAPE_INTERVAL", .metavar = "TIME",
	  FIELD(scrape_interval_ms), .min = 100, .max = 86400000, .def = "15s",
	  .help = "how often every series is collected for remote write" },
	{ CLI_CUSTOM, "wal-dir", .env = "WAL_DIR", .metavar = "DIR", FIELD(wal_dir),
	  .def = "/var/lib/nodescope", .parse = parse_abs_path, .form = "an absolute path",
	  .help = "remote-write batches wait in DIR/spool until the receiver takes them, across "
		  "outages and restarts" },
	{ CLI_CUSTOM, "max-spool-size", .env = "MAX_SPOOL_SIZE", .metavar = "SIZE",
	  FIELD(max_spool_size), .def = "500MB", .parse = parse_spool_size,
	  .form = "4KB..1024GB, units B, KB, MB, GB (powers of 1024)",
	  .help = "past this the spool drops its oldest batches, counted in "
		  "nodescope_remote_write_batches_dropped_total" },
	{ CLI_STRING, "ca-file", .env = "CA_FILE", .metavar = "FILE", FIELD(ca_file),
	  .help = "a PEM file of CA certificates that verify an https endpoint" },
	{ CLI_FLAG, "insecure-skip-verify", .env = "INSECURE_SKIP_VERIFY",
	  FIELD(insecure_skip_verify), .min = true,
	  .help = "do not verify the remote-write server's certificate" },
	{ CLI_INT, "max-series-per-write", .env = "NODESCOPE_MAX_SERIES_PER_WRITE", .metavar = "N",
	  FIELD(max_series_per_write), .min = 1, .max = 1000000, .def = "2000",
	  .help = "samples in one remote-write request (and 4 MiB before compression at most): "
		  "a larger collection is sent as several requests" },

	{ CLI_HEADING, "the agent" },
	{ CLI_INT, "nice", .env = "NODESCOPE_NICE", .metavar = "N", FIELD(nice), .min = -20,
	  .max = 19, .def = "-20",
	  .help = "the agent's scheduling priority: woken by a new program, it runs before busy "
		  "work, so the program is probed sooner" },
	{ CLI_INT, "batch-nice", .env = "NODESCOPE_BATCH_NICE", .metavar = "N", FIELD(batch_nice),
	  .min = -20, .max = 19, .def = "0",
	  .help = "the priority the agent waits and reads at while requests keep coming, back "
		  "to --nice once they stop, so that, woken every batch period, it does not "
		  "preempt the busy servers whose requests it reads (not higher than --nice: no "
		  "switch)" },
	{ CLI_FLAG, "verbose", .env = "NODESCOPE_VERBOSE", FIELD(verbose), .min = true,
	  .help = "pass libbpf's own messages through to stderr" },
	{ CLI_CUSTOM, "log-per-second", .env = "LOG_PER_SECOND", .metavar = "RATE",
	  FIELD(log_per_second), .def = "10", .parse = parse_rate, .form = "a number 0..1e9",
	  .help = "Coroot's: the agent's own log lines, this many a second on average past "
		  "--log-burst; the rest are counted in nodescope_log_lines_suppressed_total and "
		  "the next line says how many" },
	{ CLI_INT, "log-burst", .env = "LOG_BURST", .metavar = "N", FIELD(log_burst), .min = 0,
	  .max = 1000000, .def = "100",
	  .help = "Coroot's: log lines written at once before --log-per-second holds them back" },
	/* Drain every stream on a fixed period, as polling agents do (bench only). */
	{ CLI_INT, "debug-poll-ms", .env = "NODESCOPE_DEBUG_POLL_MS", .metavar = "MS",
	  FIELD(debug_poll_ms), .min = 0, .max = 10000, .flags = CLI_HIDDEN },
	/* Read the batched streams this late (tests: a record read after what it names is gone). */
	{ CLI_INT, "debug-batch-ms", .env = "NODESCOPE_DEBUG_BATCH_MS", .metavar = "MS",
	  FIELD(debug_batch_ms), .min = 0, .max = 60000, .flags = CLI_HIDDEN },
	/* Read the l7 stream and drop its records unparsed: the kernel side's cost alone (bench only). */
	{ CLI_FLAG, "debug-l7-discard", .env = "NODESCOPE_DEBUG_L7_DISCARD", FIELD(debug_l7_discard),
	  .min = true, .flags = CLI_HIDDEN },
	/*
	 * SIGUSR1 detaches the kernel-wide probes, SIGUSR2 attaches them again:
	 * bench/db --interleave runs one client with the hooks on and off a
	 * few seconds apart (bench only: what happens meanwhile is not seen).
	 */
	{ CLI_FLAG, "debug-hook-signals", .env = "NODESCOPE_DEBUG_HOOK_SIGNALS",
	  FIELD(debug_hook_signals), .min = true, .flags = CLI_HIDDEN },
	/*
	 * The syscall hooks even where the kernel has the socket hooks
	 * (src/bpf/probes.c): to compare the two (make test-e2e-syscall-hooks,
	 * the benches), and to see a connect that fails before its SYN.
	 */
	{ CLI_FLAG, "debug-syscall-hooks", .env = "NODESCOPE_DEBUG_SYSCALL_HOOKS",
	  FIELD(debug_syscall_hooks), .min = true, .flags = CLI_HIDDEN },
	/* Run as on a kernel without these features (tests, benches). */
	{ CLI_CUSTOM, "debug-kernel-lacks", .env = "NODESCOPE_DEBUG_KERNEL_LACKS",
	  .metavar = "LIST", FIELD(kernel_lacks), .parse = parse_kernel_lacks,
	  .form = "comma-separated kernel features", .flags = CLI_HIDDEN },
	/* Series idle this long expire, and gone containers are forgotten (tests; Coroot: 10 min). */
	{ CLI_SECONDS, "debug-series-idle", .env = "NODESCOPE_DEBUG_SERIES_IDLE", .metavar = "TIME",
	  FIELD(series_idle_s), .min = 1, .max = 31536000, .def = "600", .flags = CLI_HIDDEN },

	{ CLI_VERSION, "version", .help = "print the version" },
	{ CLI_HELP, "help", .short_name = 'h', .help = "this text" },

	{ CLI_HEADING, "Coroot's, not implemented yet (values checked; each given warns)" },
#define NOT_DONE .flags = CLI_NOT_IMPLEMENTED
	{ CLI_FLAG, "disable-log-parsing", .env = "DISABLE_LOG_PARSING", .min = true, NOT_DONE,
	  .help = "no container log parsing (nodescope parses no logs)" },
	{ CLI_FLAG, "disable-json-log-parsing", .env = "DISABLE_JSON_LOG_PARSING", .min = true,
	  NOT_DONE, .help = "no JSON log field extraction (nodescope parses no logs)" },
	{ CLI_INT, "log-patterns-per-container", .env = "LOG_PATTERNS_PER_CONTAINER", .metavar = "N",
	  .min = 0, .max = 1000000, .def = "256", NOT_DONE,
	  .help = "log patterns per container and level" },
	{ CLI_CUSTOM, "logs-endpoint", .env = "LOGS_ENDPOINT", .metavar = "URL", .parse = parse_url,
	  .form = "an http:// or https:// URL", NOT_DONE,
	  .help = "where logs are sent (OTLP): nodescope sends none" },
	{ CLI_CUSTOM, "traces-endpoint", .env = "TRACES_ENDPOINT", .metavar = "URL",
	  .parse = parse_url, .form = "an http:// or https:// URL", NOT_DONE,
	  .help = "where eBPF traces are sent (OTLP): nodescope sends none" },
	{ CLI_CUSTOM, "traces-sampling", .env = "TRACES_SAMPLING", .metavar = "RATE",
	  .def = "1.0", .parse = parse_fraction, .form = "a number 0..1", NOT_DONE,
	  .help = "the share of traces sent" },
	{ CLI_CUSTOM, "profiles-endpoint", .env = "PROFILES_ENDPOINT", .metavar = "URL",
	  .parse = parse_url, .form = "an http:// or https:// URL", NOT_DONE,
	  .help = "where profiles are sent: nodescope profiles nothing" },
	{ CLI_CUSTOM, "profiles-prune-fraction", .env = "PROFILES_PRUNE_FRACTION",
	  .metavar = "FRACTION", .def = "0.0025", .parse = parse_fraction, .form = "a number 0..1",
	  NOT_DONE, .help = "profile code paths below this share dropped" },
	{ CLI_FLAG, "disable-gpu-monitoring", .env = "DISABLE_GPU_MONITORING", .min = true,
	  NOT_DONE, .help = "no GPU metrics (nodescope has none)" },
	{ CLI_FLAG, "disable-pinger", .env = "DISABLE_PINGER", .min = true, NOT_DONE,
	  .help = "no pings of upstreams (nodescope has no pinger)" },
	{ CLI_FLAG, "enable-java-tls", .env = "ENABLE_JAVA_TLS", .min = true, NOT_DONE,
	  .help = "Java TLS through a loaded agent" },
	{ CLI_FLAG, "enable-java-async-profiler", .env = "ENABLE_JAVA_ASYNC_PROFILER", .min = true,
	  NOT_DONE, .help = "Java profiling through async-profiler" },
	{ CLI_MILLIS, "java-async-profiler-delay", .env = "JAVA_ASYNC_PROFILER_DELAY",
	  .metavar = "TIME", .min = 0, .max = 31536000000, .def = "30s", NOT_DONE,
	  .help = "wait before async-profiler starts in a JVM" },
	{ CLI_CUSTOM, "go-heap-profiler", .env = "GO_HEAP_PROFILER", .metavar = "MODE",
	  .def = "enabled", .parse = parse_go_heap_profiler, .form = "disabled, enabled or force",
	  NOT_DONE, .help = "Go heap profiles" },
	{ CLI_MILLIS, "instrumentation-delay", .env = "INSTRUMENTATION_DELAY", .metavar = "TIME",
	  .min = 0, .max = 31536000000, .def = "30s", NOT_DONE,
	  .help = "wait before a new process is instrumented (nodescope probes TLS at exec)" },
#undef NOT_DONE
};
const size_t cli_opts_count = sizeof(cli_opts) / sizeof(cli_opts[0]);
_Static_assert(sizeof(cli_opts) / sizeof(cli_opts[0]) <= CLI_OPTS_MAX, "raise CLI_OPTS_MAX");

const struct cli_opt *cli_opt_find(const char *name)
{
	for (size_t i = 0; i < cli_opts_count; i++)
		if (cli_opts[i].kind != CLI_HEADING && !strcmp(cli_opts[i].name, name))
			return &cli_opts[i];
	return NULL;
}

void cli_opt_form(const struct cli_opt *o, struct strbuf *sb)
{
	switch (o->kind) {
	case CLI_INT:
		strbuf_printf(sb, "%lld..%lld", o->min, o->max);
		break;
	case CLI_SECONDS:
		strbuf_printf(sb, "%lld..%lld seconds, whole: 90, or Go's form: 90s, 10m, 1h30m",
			      o->min, o->max);
		break;
	case CLI_MILLIS:
		cli_format_millis(o->min, sb);
		strbuf_puts(sb, "..");
		cli_format_millis(o->max, sb);
		strbuf_puts(sb, ", Go's form: 500ms, 1.5s, 1m30s, or seconds: 90");
		break;
	case CLI_FLAG:
		strbuf_puts(sb, "1, 0, t, f, true, false, yes or no");
		break;
	case CLI_CUSTOM:
		strbuf_puts(sb, o->form);
		break;
	default:
		strbuf_puts(sb, "any text");
		break;
	}
}

void cli_format_millis(long long ms, struct strbuf *sb)
{
	if (!ms) {
		strbuf_puts(sb, "0s");
		return;
	}
	if (ms / 3600000)
		strbuf_printf(sb, "%lldh", ms / 3600000);
	if (ms % 3600000 / 60000)
		strbuf_printf(sb, "%lldm", ms % 3600000 / 60000);
	if (ms % 60000 / 1000)
		strbuf_printf(sb, "%llds", ms % 60000 / 1000);
	if (ms % 1000)
		strbuf_printf(sb, "%lldms", ms % 1000);
}
