/*
 * The ABI between the BPF programs and user space: stream ids, record
 * layouts, wakeup policies. Included by both sides, so only fixed-size types.
 */
#ifndef NODESCOPE_EVENTS_H
#define NODESCOPE_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define NS_COMM_LEN 16
#define NS_PATH_LEN 256
#define NS_ARGS_LEN 256

/* One BPF ring buffer per stream. */
enum ns_stream {
	NS_STREAM_PROC = 0,
	NS_STREAM_COUNT,
};

enum ns_wakeup_policy {
	NS_WAKEUP_IMMEDIATE = 0,
	NS_WAKEUP_BATCHED = 1,
};

/* Per-stream settings user space writes into the BPF config map before attaching. */
struct ns_stream_config {
	__u32 policy;	  /* enum ns_wakeup_policy */
	__u32 pad;
	__u64 watermark; /* batched: force a wakeup once this many bytes are pending */
};

enum ns_proc_event_type {
	NS_PROC_EXEC = 1,
	NS_PROC_EXIT = 2,
	NS_PROC_FORK = 3,
	NS_PROC_OOM_KILL = 4,
};

/* Common head of every proc record. */
struct ns_proc_head {
	__u32 type; /* enum ns_proc_event_type */
	__u32 pid;  /* tgid */
	__u64 ts_ns; /* CLOCK_MONOTONIC */
};

struct ns_proc_exec {
	struct ns_proc_head h;
	__u32 ppid;
	__u32 uid;
	__u64 cgroup_id; /* cgroup v2 id of the process */
	__u32 filename_len; /* bytes of filename used, without NUL */
	__u32 args_len;	    /* bytes of args used; arguments separated by NUL */
	char comm[NS_COMM_LEN];
	char filename[NS_PATH_LEN];
	char args[NS_ARGS_LEN];
};

struct ns_proc_exit {
	struct ns_proc_head h;
	__u32 exit_code; /* (status >> 8) & 0xff */
	__u32 signal;	 /* status & 0x7f, 0 when it exited by itself */
	__u64 duration_ns; /* since the process started */
	__u64 cgroup_id;
	char comm[NS_COMM_LEN];
};

struct ns_proc_fork {
	struct ns_proc_head h;
	__u32 ppid;
	__u32 pad;
	__u64 cgroup_id;
	char comm[NS_COMM_LEN];
};

struct ns_proc_oom {
	struct ns_proc_head h;
	__u32 trigger_pid; /* the process whose allocation invoked the OOM killer */
	__u32 pad;
};

#endif
