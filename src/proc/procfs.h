/* Reading what /proc says of one process. Each call may find it gone (-ENOENT/-ESRCH). */
#ifndef NODESCOPE_PROC_PROCFS_H
#define NODESCOPE_PROC_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct procfs_stat {
	uint32_t ppid;
	uint64_t start_ns; /* since boot */
	char comm[17];
	char state;
};

/* Parses the text of /proc/PID/stat (pure): comm may hold spaces and ')'. */
int procfs_parse_stat(const char *text, long clk_tck, struct procfs_stat *out);
int procfs_read_stat(pid_t pid, struct procfs_stat *out);
int procfs_read_exe(pid_t pid, char *out, size_t outlen);
/* Calls fn for every process in /proc. 0, or -errno when /proc can't be read. */
int procfs_foreach_pid(void (*fn)(void *ctx, pid_t pid), void *ctx);

#endif
