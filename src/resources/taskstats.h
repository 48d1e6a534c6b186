/*
 * Per-process delay accounting from the kernel's taskstats over generic
 * netlink (TASKSTATS_CMD_GET with a TGID: the sums over the process's
 * threads, live and exited), as Coroot's agent reads it
 * (containers/taskstats.go). The kernel counts block I/O delays only while
 * kernel.task_delayacct is 1 (off by default since Linux 5.14; nodescope
 * does not change it); the CPU delay is the scheduler's run delay, counted
 * anyway here (6.x). The reply parser is pure; the socket is the rest.
 */
#ifndef NODESCOPE_RESOURCES_TASKSTATS_H
#define NODESCOPE_RESOURCES_TASKSTATS_H

#include <stddef.h>
#include <stdint.h>

struct taskstats_delays {
	uint32_t tgid;
	uint64_t cpu_delay_ns;	 /* waiting for a CPU while runnable */
	uint64_t blkio_delay_ns; /* waiting for block I/O */
};

/*
 * One reply to TASKSTATS_CMD_GET (buf, len bytes from recv) for the family
 * id `family`: 0 with *out filled, the request's error (-ESRCH: no such
 * process) from an NLMSG_ERROR, or -EINVAL for anything else (truncated,
 * another message type, no stats attribute).
 */
int taskstats_parse_reply(const void *buf, size_t len, uint16_t family,
			  struct taskstats_delays *out);

/*
 * The TASKSTATS family id from a CTRL_CMD_GETFAMILY reply (pure, like the
 * above): 0, the error of an NLMSG_ERROR, or -EINVAL.
 */
int taskstats_parse_family(const void *buf, size_t len, uint16_t *family);

struct taskstats_client;

/* Opens the socket and resolves the family. 0 or -errno. */
int taskstats_open(struct taskstats_client **out);
void taskstats_close(struct taskstats_client *c);
/* The delays of process tgid: 0, -ESRCH when it is gone, or -errno. */
int taskstats_get(struct taskstats_client *c, uint32_t tgid, struct taskstats_delays *out);

#endif
