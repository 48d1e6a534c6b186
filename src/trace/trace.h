/* `nodescope trace`: one JSON object per line on a file descriptor, written whole per line. */
#ifndef NODESCOPE_TRACE_TRACE_H
#define NODESCOPE_TRACE_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "proc/event.h"
#include "util/strbuf.h"

struct loop;

struct trace {
	struct loop *loop;	   /* stopped when the reader goes away */
	int fd;			   /* -1: tracing off */
	int64_t mono_to_real_ns;   /* added to CLOCK_MONOTONIC stamps to get Unix time */
	bool broken;		   /* the reader went away */
	uint64_t lines;
	struct strbuf line;
};

void trace_init(struct trace *t, int fd, struct loop *loop);
void trace_free(struct trace *t);
static inline bool trace_on(const struct trace *t)
{
	return t->fd >= 0 && !t->broken;
}
void trace_ready(struct trace *t);
/* container: the process' container as known now (may be NULL). */
void trace_proc(struct trace *t, const struct proc_event *e, const char *container);

/* Pure: appends the JSON line for e to sb. */
void trace_format_proc(struct strbuf *sb, const struct proc_event *e, const char *container,
		       int64_t mono_to_real_ns);

#endif
