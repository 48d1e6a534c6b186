/* The command line: nodescope [run|trace] [options]. Pure. */
#ifndef NODESCOPE_CLI_H
#define NODESCOPE_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/features.h"
#include "events.h"
#include "util/strbuf.h"

#define NS_DEFAULT_LISTEN "127.0.0.1:9645"

struct ns_config {
	bool trace;		/* `nodescope trace`: JSON lines on stdout */
	const char *listen;	/* NULL: no HTTP server */
	unsigned stream_mask;	/* streams traced (bit per enum ns_stream) */
	uint32_t ring_size[NS_STREAM_COUNT];
	unsigned max_series;
	size_t max_processes;
	size_t max_connections;
	unsigned max_destinations;
	size_t max_l7_connections;
	unsigned debug_poll_ms;
	const char *cgroup; /* --cgroup: a cgroup v2 directory, or NULL */
	bool tls;			/* probe TLS libraries (--no-tls: off) */
	unsigned tls_release_after_s;	/* a file unmapped this long loses its probes (0: never) */
	kernel_features_t kernel_lacks; /* --debug-kernel-lacks: features pretended missing */
	bool hold_first_runs;		/* stop a process at a new file until it is probed */
	int nice;			/* the agent's own nice value (-20..19) */
	bool verbose;
};

enum cli_result {
	CLI_RUN = 0,
	CLI_EXIT_OK = 1, /* --help/--version printed to out */
	CLI_ERROR = -1,	 /* message in out */
};

enum cli_result cli_parse(int argc, char **argv, struct ns_config *c, struct strbuf *out);

/*
 * "4096", "64k", "1M" -> bytes, rounded up to a power of two of at least
 * page bytes, as BPF ring buffers need. Returns 0 or -EINVAL.
 */
int cli_parse_ring_size(const char *s, uint32_t page, uint32_t *out);

#endif
