/* Decoding proc stream records into one host-side struct. Pure. */
#ifndef NODESCOPE_PROC_EVENT_H
#define NODESCOPE_PROC_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "events.h"

struct proc_event {
	enum ns_proc_event_type type;
	uint32_t pid;
	uint32_t ppid;	      /* exec, fork */
	uint32_t uid;	      /* exec */
	uint64_t ts_ns;	      /* CLOCK_MONOTONIC */
	struct ns_cgroup_ids cgroups; /* exec, exit; fork: v2 only */
	uint32_t exit_code;   /* exit */
	uint32_t signal;      /* exit */
	uint64_t duration_ns; /* exit */
	uint32_t trigger_pid; /* oom_kill */
	char comm[NS_COMM_LEN + 1];
	char exe[NS_PATH_LEN + 1];  /* exec: the path given to execve */
	char args[NS_ARGS_LEN + 1]; /* exec: argv joined by spaces, may be cut */
};

/* Returns 0, or -EINVAL for a record of unknown type or the wrong size. */
int proc_event_decode(const void *data, size_t len, struct proc_event *out);
const char *proc_event_type_name(enum ns_proc_event_type t);

#endif
