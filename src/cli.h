/*
 * The configuration: nodescope [run|trace] [options], each option also from
 * an environment variable. Pure: the environment comes through a lookup
 * function. The options themselves are one table, in cli_table.c.
 */
#ifndef NODESCOPE_CLI_H
#define NODESCOPE_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/features.h"
#include "events.h"
#include "util/strbuf.h"

#define NS_DEFAULT_LISTEN "127.0.0.1:9645"

/* A range of TCP ports, lo <= hi. */
struct ns_port_range {
	uint16_t lo, hi;
};

/* An option given several times: its values as given, in order. */
#define NS_LIST_MAX 32
struct ns_list {
	const char *v[NS_LIST_MAX];
	unsigned n;
};

/* Coroot's --ephemeral-port-range: several ranges ("1024-23768 30000-65535"); n 0: none. */
#define NS_PORT_RANGES_MAX 16
struct ns_port_ranges {
	unsigned n;
	struct ns_port_range r[NS_PORT_RANGES_MAX];
};

/* An IP network: family AF_INET (addr's first 4 bytes) or AF_INET6, and its prefix length. */
struct ns_cidr {
	uint16_t family;
	uint8_t bits;
	uint8_t addr[16];
};

/* Coroot's --track-public-network: the public networks whose destinations are kept. */
#define NS_CIDRS_MAX 64
struct ns_cidrs {
	unsigned n;
	struct ns_cidr v[NS_CIDRS_MAX];
};

/* Coroot's --exclude-http-requests-by-path: glob patterns, each a piece of a given value. */
#define NS_GLOBS_MAX 64
struct ns_globs {
	unsigned n;
	struct {
		const char *p;
		unsigned len;
	} v[NS_GLOBS_MAX];
};

struct ns_config {
	bool trace;		/* `nodescope trace`: JSON lines on stdout */
	const char *listen;	/* NULL: no HTTP server */
	/* What one HTTP client may hold (struct http_limits). */
	unsigned http_max_per_client;
	unsigned http_max_connections;
	unsigned http_head_timeout_s;
	unsigned http_idle_timeout_s;
	unsigned stream_mask;	/* streams traced (bit per enum ns_stream) */
	uint32_t ring_size[NS_STREAM_COUNT]; /* 0: the stream's default */
	unsigned max_series;
	size_t max_processes;
	size_t max_connections;
	unsigned max_destinations;
	unsigned max_fqdns;
	size_t max_l7_connections;
	unsigned max_label_length;	/* Coroot's: label values cut to this */
	unsigned debug_poll_ms;
	unsigned debug_batch_ms;
	bool debug_l7_discard;		/* l7 records read and dropped unparsed (bench) */
	bool debug_hook_signals;	/* SIGUSR1/SIGUSR2 detach and attach the probes (bench) */
	bool debug_syscall_hooks;	/* the syscall hooks even where the socket hooks can run */
	unsigned series_idle_s;		/* idle container series expire (Coroot: 10 min) */
	const char *cgroup;		/* --cgroup: a cgroup v2 directory, or NULL */
	const char *cgroupfs_root;	/* where the host's cgroup hierarchies are mounted */
	unsigned min_container_age_ms;	/* Coroot's: series of younger containers not written */
	bool keep_standalone;		/* report processes outside containers too */
	/* Coroot's container filters (src/containers/filter.h): values of one pattern a line */
	struct ns_list container_allowlist;
	struct ns_list container_denylist;
	bool skip_systemd_system_services; /* Coroot's: systemd's own services make no series */
	struct ns_port_ranges ephemeral_ports; /* TCP ports left out of the metrics */
	struct ns_cidrs public_networks; /* public destinations kept (Coroot: 0.0.0.0/0) */
	struct ns_globs http_exclude;	/* HTTP requests by path left out of the L7 metrics */
	bool l7;			/* capture and parse L7 (--disable-l7-tracing: off) */
	double log_per_second;		/* the agent's own log lines: rate and burst */
	unsigned log_burst;
	bool tls;			/* probe TLS libraries (--no-tls: off) */
	unsigned tls_release_after_s;	/* a file unmapped this long loses its probes (0: never) */
	kernel_features_t kernel_lacks; /* --debug-kernel-lacks: features pretended missing */
	bool hold_first_runs;		/* stop a process at a new file until it is probed */
	int nice;			/* the agent's own nice value (-20..19) */
	int batch_nice;			/* the batched streams' reads run at this one */
	bool verbose;
	/* The node's cloud metadata as given (NULL: not given), for node_cloud_info. */
	const char *provider;
	const char *region;
	const char *availability_zone;
	const char *instance_type;
	const char *instance_life_cycle;
	/* Remote write (Coroot's flags): off unless an endpoint is given. */
	const char *metrics_endpoint;
	const char *collector_endpoint; /* its /v1/metrics when metrics_endpoint is not given */
	const char *api_key;
	const char *ca_file;
	bool insecure_skip_verify;
	unsigned scrape_interval_ms;
	const char *wal_dir;		/* the spool is DIR/spool */
	uint64_t max_spool_size;	/* bytes */
	unsigned max_series_per_write;	/* samples per request */
};

enum cli_result {
	CLI_RUN = 0,
	CLI_EXIT_OK = 1, /* --help/--version printed to out */
	CLI_ERROR = -1,	 /* message in out */
};

/* Looks an environment variable up: NULL when it is not set. */
typedef const char *cli_getenv_fn(const char *name);
/* The process' own environment (getenv), for cli_parse. */
const char *cli_environ(const char *name);

/*
 * Fills c: each option from argv, else from its variable through env (NULL:
 * no environment), else its default. Strings in c point into argv, env's
 * values or the option table.
 */
enum cli_result cli_parse(int argc, char **argv, cli_getenv_fn *env, struct ns_config *c,
			  struct strbuf *out);

/* The --help text. */
void cli_help(struct strbuf *out);

/*
 * "4096", "64k", "1M" -> bytes, rounded up to a power of two of at least
 * page bytes, as BPF ring buffers need. Returns 0 or -EINVAL.
 */
int cli_parse_ring_size(const char *s, uint32_t page, uint32_t *out);
/* A decimal integer in min..max ("-5" when min < 0; no blanks or '+'). 0 or -EINVAL. */
int cli_parse_int(const char *s, long long min, long long max, long long *out);
/*
 * A duration in nanoseconds: plain seconds ("90"), or Go's form
 * (time.ParseDuration): a sequence of decimals with units ns, us (or µs), ms,
 * s, m, h: "500ms", "1.5s", "1h30m". No sign but '+'. 0 or -EINVAL.
 */
int cli_parse_duration(const char *s, unsigned long long *ns);
/* A duration that is whole seconds, in min..max seconds. 0 or -EINVAL. */
int cli_parse_seconds(const char *s, long long min, long long max, long long *out);
/* A duration that is whole milliseconds, in min..max milliseconds. 0 or -EINVAL. */
int cli_parse_millis(const char *s, long long min, long long max, long long *out);
/* A decimal number ("10", "0.25", "1e3") in min..max. 0 or -EINVAL. */
int cli_parse_float(const char *s, double min, double max, double *out);
/* 1/0, t/f, true/false, yes/no, any case (Go's strconv.ParseBool and more). 0 or -EINVAL. */
int cli_parse_bool(const char *s, bool *out);
/*
 * A size in bytes in min..max: digits and a unit as Coroot's flags take
 * them, any case, powers of 1024: none or B, K/KB/KiB, M/MB/MiB, G/GB/GiB
 * ("500MB" is 500 MiB). 0 or -EINVAL.
 */
int cli_parse_bytes(const char *s, unsigned long long min, unsigned long long max,
		    unsigned long long *out);
/* "LO-HI", ports 1..65535 with LO <= HI. 0 or -EINVAL. */
int cli_parse_port_range(const char *s, struct ns_port_range *out);
/*
 * Coroot's form: ranges "LO-HI" separated by blanks or commas, at least one
 * ("1024-23768 30000-65535"). 0 or -EINVAL.
 */
int cli_parse_port_ranges(const char *s, struct ns_port_ranges *out);
/* "10.0.0.0/8", "2001:db8::/32"; a bare address is its own /32 or /128. 0 or -EINVAL. */
int cli_parse_cidr(const char *s, size_t len, struct ns_cidr *out);

#endif
