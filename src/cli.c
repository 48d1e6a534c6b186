#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "loop/stream.h"
#include "version.h"

static const char usage[] =
	"usage: nodescope [run] [options]     the agent: /metrics and a web page over HTTP\n"
	"       nodescope trace [options]     print events as JSON lines on stdout\n"
	"\n"
	"options:\n"
	"  --listen HOST:PORT    HTTP address for /metrics and the web page\n"
	"                        (default " NS_DEFAULT_LISTEN "; trace: none unless given)\n"
	"  --events LIST         trace: streams to print, comma-separated (default: all).\n"
	"                        streams: proc, tcp, l7, files (TLS probing of new files)\n"
	"  --ringbuf-size SIZE   BPF ring buffer size for every stream, or STREAM=SIZE for\n"
	"                        one (repeatable); k/m suffixes; rounded up to a power of\n"
	"                        two, at least one page (defaults: proc 1m, tcp 1m,\n"
	"                        l7 8m, files 256k)\n"
	"  --max-series N        series per metric before new ones are dropped (and\n"
	"                        counted); default 10000\n"
	"  --max-processes N     process table size (default 131072)\n"
	"  --max-connections N   connection table size (default 262144)\n"
	"  --max-destinations N  TCP destinations per container in metrics (default 1000)\n"
	"  --cgroup DIR          process events only from processes in this cgroup v2\n"
	"                        directory and below (e.g. /sys/fs/cgroup/unified/app)\n"
	"  --no-tls              do not probe TLS libraries (no plaintext of HTTPS)\n"
	"  --tls-release-after S remove a file's TLS probes once no process has mapped it\n"
	"                        for S seconds (default 600; 0: never)\n"
	"  --hold-first-runs     stop a process that runs or maps a file not probed yet\n"
	"                        until its TLS probes are in place (SIGSTOP, SIGCONT), so\n"
	"                        even its first run is seen; see README for side effects\n"
	"  --nice N              the agent's scheduling priority, -20..19 (default -20:\n"
	"                        woken by a new program, it runs before busy work, so the\n"
	"                        program is probed sooner)\n"
	"  --verbose             libbpf's own messages on stderr\n"
	"  --version             print the version\n"
	"  -h, --help            this text\n"
	"\n"
	"exit codes: 0 clean stop, 1 runtime error, 2 usage, 3 privileges, 4 kernel lacks a\n"
	"feature, 5 a probe failed to load or attach, 6 cannot listen\n";

int cli_parse_ring_size(const char *s, uint32_t page, uint32_t *out)
{
	char *end;
	unsigned shift = 0;
	if (*s < '0' || *s > '9') /* strtoull would take blanks and a sign ("-1") */
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (end == s || errno)
		return -EINVAL;
	if (*end == 'k' || *end == 'K')
		shift = 10, end++;
	else if (*end == 'm' || *end == 'M')
		shift = 20, end++;
	/* compare before shifting, so a huge v cannot wrap into range */
	if (*end || v == 0 || v > ((1ull << 30) >> shift))
		return -EINVAL;
	v <<= shift;
	unsigned long long p = page;
	while (p < v)
		p <<= 1;
	*out = (uint32_t)p;
	return 0;
}

static int parse_ring_arg(struct ns_config *c, const char *arg, struct strbuf *out)
{
	const char *eq = strchr(arg, '=');
	uint32_t size;
	char name[32];

	if (cli_parse_ring_size(eq ? eq + 1 : arg, 4096, &size)) {
		strbuf_printf(out, "nodescope: bad --ringbuf-size '%s'\n", arg);
		return -EINVAL;
	}
	if (!eq) {
		for (int i = 0; i < NS_STREAM_COUNT; i++)
			c->ring_size[i] = size;
		return 0;
	}
	size_t n = (size_t)(eq - arg);
	if (n >= sizeof(name))
		n = sizeof(name) - 1;
	memcpy(name, arg, n);
	name[n] = '\0';
	const struct stream_def *d = stream_def_find(name);
	if (!d) {
		strbuf_printf(out, "nodescope: unknown stream '%s' in --ringbuf-size\n", name);
		return -EINVAL;
	}
	c->ring_size[d->id] = size;
	return 0;
}

static int parse_events(struct ns_config *c, const char *arg, struct strbuf *out)
{
	char buf[256];
	char *save;

	if (strlen(arg) >= sizeof(buf)) {
		strbuf_puts(out, "nodescope: --events list too long\n");
		return -EINVAL;
	}
	strcpy(buf, arg);
	c->stream_mask = 0;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		const struct stream_def *d = stream_def_find(tok);
		if (!d) {
			strbuf_printf(out, "nodescope: unknown stream '%s' in --events (known:", tok);
			for (int i = 0; i < NS_STREAM_COUNT; i++)
				strbuf_printf(out, " %s", stream_defs[i].name);
			strbuf_puts(out, ")\n");
			return -EINVAL;
		}
		c->stream_mask |= 1u << d->id;
	}
	if (!c->stream_mask) {
		strbuf_puts(out, "nodescope: --events needs at least one stream\n");
		return -EINVAL;
	}
	return 0;
}

static int parse_uint(const char *arg, const char *flag, unsigned long long max,
		      unsigned long long *v, struct strbuf *out)
{
	char *end;
	errno = 0;
	*v = strtoull(arg, &end, 10);
	if (*arg < '0' || *arg > '9' || end == arg || *end || errno || *v > max) {
		strbuf_printf(out, "nodescope: bad %s '%s'\n", flag, arg);
		return -EINVAL;
	}
	return 0;
}

enum cli_result cli_parse(int argc, char **argv, struct ns_config *c, struct strbuf *out)
{
	enum { OPT_LISTEN = 256, OPT_EVENTS, OPT_RING, OPT_SERIES, OPT_PROCS, OPT_CONNS, OPT_DESTS, OPT_CGROUP, OPT_POLL,
	       OPT_VERBOSE, OPT_VERSION, OPT_NO_TLS, OPT_TLS_RELEASE, OPT_KERNEL_LACKS,
	       OPT_HOLD, OPT_NICE };
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, OPT_LISTEN },
		{ "events", required_argument, NULL, OPT_EVENTS },
		{ "ringbuf-size", required_argument, NULL, OPT_RING },
		{ "max-series", required_argument, NULL, OPT_SERIES },
		{ "max-processes", required_argument, NULL, OPT_PROCS },
		{ "max-connections", required_argument, NULL, OPT_CONNS },
		{ "max-destinations", required_argument, NULL, OPT_DESTS },
		{ "cgroup", required_argument, NULL, OPT_CGROUP },
		/* Hidden: drain every stream on a fixed period, as polling agents do (bench only). */
		{ "debug-poll-ms", required_argument, NULL, OPT_POLL },
		{ "no-tls", no_argument, NULL, OPT_NO_TLS },
		{ "tls-release-after", required_argument, NULL, OPT_TLS_RELEASE },
		{ "hold-first-runs", no_argument, NULL, OPT_HOLD },
		{ "nice", required_argument, NULL, OPT_NICE },
		/* Hidden: run as on a kernel without these features (tests, benches). */
		{ "debug-kernel-lacks", required_argument, NULL, OPT_KERNEL_LACKS },
		{ "verbose", no_argument, NULL, OPT_VERBOSE },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	bool listen_given = false;
	unsigned long long v;

	*c = (struct ns_config){
		.stream_mask = (1u << NS_STREAM_COUNT) - 1,
		.max_series = 10000,
		.max_processes = 131072,
		.max_connections = 262144,
		.max_destinations = 1000,
		.max_l7_connections = 16384,
		.tls = true,
		.tls_release_after_s = 600,
		.nice = -20,
	};
	int first = 1;
	if (argc > 1 && !strcmp(argv[1], "trace")) {
		c->trace = true;
		first = 2;
	} else if (argc > 1 && !strcmp(argv[1], "run")) {
		first = 2;
	}
	/*
	 * getopt_long from argv[first] on. optind = 0 (not 1) makes getopt drop
	 * all its state from an earlier call (glibc keeps the permutation bounds
	 * and the position inside "-xy" otherwise); it then starts at index 1,
	 * so it is given argv shifted to put argv[first] there.
	 */
	int gargc = argc - first + 1;
	char **gargv = argv + first - 1;
	optind = 0;
	opterr = 0;
	int opt;
	while ((opt = getopt_long(gargc, gargv, ":h", opts, NULL)) != -1) {
		switch (opt) {
		case OPT_LISTEN:
			c->listen = optarg;
			listen_given = true;
			break;
		case OPT_EVENTS:
			if (parse_events(c, optarg, out))
				return CLI_ERROR;
			break;
		case OPT_RING:
			if (parse_ring_arg(c, optarg, out))
				return CLI_ERROR;
			break;
		case OPT_SERIES:
			if (parse_uint(optarg, "--max-series", 10000000, &v, out))
				return CLI_ERROR;
			c->max_series = (unsigned)v;
			break;
		case OPT_PROCS:
			if (parse_uint(optarg, "--max-processes", 4194304, &v, out))
				return CLI_ERROR;
			if (!v) {
				strbuf_printf(out, "nodescope: bad --max-processes '%s'\n", optarg);
				return CLI_ERROR;
			}
			c->max_processes = v;
			break;
		case OPT_CONNS:
			if (parse_uint(optarg, "--max-connections", 16777216, &v, out) || !v)
				return CLI_ERROR;
			c->max_connections = v;
			break;
		case OPT_DESTS:
			if (parse_uint(optarg, "--max-destinations", 1000000, &v, out) || !v)
				return CLI_ERROR;
			c->max_destinations = (unsigned)v;
			break;
		case OPT_CGROUP:
			c->cgroup = optarg;
			break;
		case OPT_POLL:
			if (parse_uint(optarg, "--debug-poll-ms", 10000, &v, out))
				return CLI_ERROR;
			c->debug_poll_ms = (unsigned)v;
			break;
		case OPT_NO_TLS:
			c->tls = false;
			break;
		case OPT_KERNEL_LACKS: {
			const char *bad = NULL;
			if (kernel_features_parse(optarg, &c->kernel_lacks, &bad)) {
				strbuf_printf(out, "nodescope: --debug-kernel-lacks: unknown feature '%s' (",
					      bad);
				for (int k = 0; k < KF_COUNT; k++)
					strbuf_printf(out, "%s%s", k ? ", " : "",
						      kernel_feature_defs[k].name);
				strbuf_puts(out, ")\n");
				return CLI_ERROR;
			}
			break;
		}
		case OPT_HOLD:
			c->hold_first_runs = true;
			break;
		case OPT_NICE: {
			char *end;
			long n = strtol(optarg, &end, 10);
			if (end == optarg || *end || n < -20 || n > 19) {
				strbuf_printf(out, "nodescope: bad --nice '%s' (-20..19)\n", optarg);
				return CLI_ERROR;
			}
			c->nice = (int)n;
			break;
		}
		case OPT_TLS_RELEASE:
			if (parse_uint(optarg, "--tls-release-after", 31536000, &v, out))
				return CLI_ERROR;
			c->tls_release_after_s = (unsigned)v;
			break;
		case OPT_VERBOSE:
			c->verbose = true;
			break;
		case OPT_VERSION:
			strbuf_printf(out, "nodescope %s\n", nodescope_version);
			return CLI_EXIT_OK;
		case 'h':
			strbuf_puts(out, usage);
			return CLI_EXIT_OK;
		case ':':
			strbuf_printf(out, "nodescope: %s needs a value\n%s", gargv[optind - 1], usage);
			return CLI_ERROR;
		default:
			/* A short one may sit inside "-xy", where optind has not moved on. */
			if (optopt > 0 && optopt < 256)
				strbuf_printf(out, "nodescope: unknown option '-%c'\n%s", optopt,
					      usage);
			else
				strbuf_printf(out, "nodescope: unknown option '%s'\n%s",
					      gargv[optind - 1], usage);
			return CLI_ERROR;
		}
	}
	if (optind < gargc) {
		strbuf_printf(out, "nodescope: unexpected argument '%s'\n%s", gargv[optind], usage);
		return CLI_ERROR;
	}
	if (c->hold_first_runs && !c->tls) {
		strbuf_puts(out, "nodescope: --hold-first-runs holds processes until their TLS probes "
				 "are in place: it needs TLS probing (drop --no-tls)\n");
		return CLI_ERROR;
	}
	if (!listen_given && !c->trace)
		c->listen = NS_DEFAULT_LISTEN;
	if (c->listen && !*c->listen)
		c->listen = NULL; /* --listen "" turns HTTP off */
	return CLI_RUN;
}
