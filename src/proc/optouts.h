/*
 * Coroot's per-process opt-outs (its proc/flags.go): a process started with
 * COROOT_EBPF_TRACES, COROOT_LOG_MONITORING or COROOT_EBPF_PROFILING set to
 * a value containing "disabled" asks to be left out of that feature. Read
 * from /proc/PID/environ, the environment the process was started (exec'd)
 * with, when a feature first asks about the process (proc_table_optouts_of):
 * an exec storm of processes that never make a request reads none (read at
 * every exec, it was most of the agent's cost per exec). A fork keeps its
 * parent's; a process gone before it is asked about keeps what it inherited.
 */
#ifndef NODESCOPE_PROC_OPTOUTS_H
#define NODESCOPE_PROC_OPTOUTS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum proc_optout {
	/* Its requests make no trace lines (nodescope trace, the page's recent requests),
	 * and will make no spans once nodescope sends them. */
	PROC_OPTOUT_TRACES = 1u << 0,
	/* Kept for log collection, which nodescope does not do yet. */
	PROC_OPTOUT_LOGS = 1u << 1,
	/* Kept for profiling, which nodescope does not do yet. */
	PROC_OPTOUT_PROFILING = 1u << 2,
};

/* Most of an environment read: Coroot reads it whole; past this, variables are not seen. */
#define PROC_ENVIRON_MAX 65536

/* The opt-outs of an environment as /proc/PID/environ lays it out (NUL-separated). Pure. */
uint8_t proc_optouts_parse(const char *env, size_t len);

/*
 * The opt-outs of process pid, into *out (the calling thread's buffer of
 * PROC_ENVIRON_MAX bytes holds its environment meanwhile). 0, or -errno when
 * its environment cannot be read (gone, a kernel thread: -ESRCH).
 */
int proc_optouts_read(pid_t pid, uint8_t *out);

#endif
