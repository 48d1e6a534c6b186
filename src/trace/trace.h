/* `nodescope trace`: one JSON object per line on a file descriptor, written whole per line. */
#ifndef NODESCOPE_TRACE_TRACE_H
#define NODESCOPE_TRACE_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "events.h"
#include "proc/event.h"
#include "util/strbuf.h"

struct loop;
struct trace_l7;

/*
 * What else hears the events trace is given, whether or not lines are
 * written (the web page's recent exits and requests). Called first.
 */
struct trace_tap {
	void (*proc)(void *ctx, const struct proc_event *e, const char *container);
	void (*l7)(void *ctx, const struct trace_l7 *r);
	void *ctx;
};

struct trace {
	struct loop *loop;	   /* stopped when the reader goes away */
	int fd;			   /* -1: tracing off */
	int64_t mono_to_real_ns;   /* added to CLOCK_MONOTONIC stamps to get Unix time */
	bool broken;		   /* the reader went away */
	uint64_t lines;
	uint64_t dropped;	   /* lines not written: the reader fell too far behind */
	struct strbuf line;
	/* A pipe or socket is written without blocking: what it can't take yet
	 * waits here (bounded), so a stalled reader never stalls the agent. */
	bool nonblock;
	int saved_flags;
	bool waiting_out;
	struct strbuf backlog;
	size_t backlog_off;
	/*
	 * Lines are written once per loop iteration (a loop worker), not one
	 * write(2) each: the events of one ring read leave in one call.
	 */
	int flusher; /* -1 without a loop */
	const struct trace_tap *tap; /* may be NULL */
};

void trace_init(struct trace *t, int fd, struct loop *loop);
void trace_free(struct trace *t);
static inline bool trace_on(const struct trace *t)
{
	return t && t->fd >= 0 && !t->broken;
}
/* Whether anyone hears the events: lines are written, or a tap listens (build them then). */
static inline bool trace_wanted(const struct trace *t)
{
	return trace_on(t) || (t && t->tap);
}
void trace_ready(struct trace *t);
/* container: the process' container as known now (may be NULL). */
void trace_proc(struct trace *t, const struct proc_event *e, const char *container);
/* The first exec seen in a set of cgroups; container NULL when their ids name none. */
void trace_first_exec(struct trace *t, uint64_t ts_ns, uint32_t pid, uint64_t cgroup_id,
		      const char *container);

/* One application-protocol request with its response, as trace prints it. */
struct trace_l7 {
	const char *proto; /* "http", "postgres", ... */
	uint32_t pid;
	bool inbound; /* this process served the request */
	bool tls;
	/* HTTP (method set): */
	const char *method;
	const char *path;
	int status;
	/* The other protocols (method NULL): */
	const char *op;		 /* "query", "GET", "find" */
	const char *statement;	 /* literals stripped; "" when unknown */
	const char *status_name; /* "ok", "failed", "unknown" */
	const char *error_code;	 /* SQLSTATE, errno, Redis error word; "" when none */
	bool skipped;		 /* the server passed over it (an error earlier in its batch) */
	uint64_t ts_ns; /* when the request started, CLOCK_MONOTONIC */
	uint64_t duration_ns;
	const char *src; /* the client, "ip:port" */
	const char *dst; /* the server */
	const char *container;
};

void trace_l7(struct trace *t, const struct trace_l7 *r);
void trace_format_l7(struct strbuf *sb, const struct trace_l7 *r, int64_t mono_to_real_ns);

/* A file whose TLS functions were probed (stream files). */
struct trace_tls_probe {
	uint64_t ts_ns;
	uint32_t pid;	     /* the process whose mapping or exec revealed it */
	const char *file;    /* its path as that process sees it */
	const char *library; /* "openssl", "gnutls", "go" */
	const char *version; /* the Go version of a Go program, else NULL */
	unsigned functions;  /* entry points probed */
	unsigned probes;     /* uprobes attached: entries and return sites */
	const char *error;   /* NULL, or why some could not be probed */
	uint64_t since_ns;   /* time from the exec or mapping to the probes in place (0: scan) */
	/* Where since_ns went (0 for a scan): the event waiting to be read, opening the
	 * file, planning (ELF read, symbols, return sites) and attaching. */
	uint64_t wait_ns, open_ns, plan_ns, attach_ns;
};

void trace_tls_probe(struct trace *t, const struct trace_tls_probe *r);
void trace_format_tls_probe(struct strbuf *sb, const struct trace_tls_probe *r,
			    int64_t mono_to_real_ns);

/* A file's TLS probes removed: no process had mapped it for a while. */
void trace_tls_release(struct trace *t, uint64_t ts_ns, const char *file, unsigned probes);

/* Inbound connections print the peer as src and the local address as dst. */
void trace_tcp(struct trace *t, const struct ns_tcp_event *e, uint32_t pid, const char *container);

/* Pure: append the JSON line for the event to sb. */
void trace_format_tcp(struct strbuf *sb, const struct ns_tcp_event *e, uint32_t pid,
		      const char *container, int64_t mono_to_real_ns);
void trace_format_proc(struct strbuf *sb, const struct proc_event *e, const char *container,
		       int64_t mono_to_real_ns);

#endif
