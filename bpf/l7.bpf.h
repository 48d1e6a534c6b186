/*
 * The l7 stream's per-thread state, shared with threads.bpf.c (which frees
 * it at a thread's exit on kernels without task storage). Defined weak in
 * every object that includes this; the static linker merges them.
 */
#ifndef NODESCOPE_L7_BPF_H
#define NODESCOPE_L7_BPF_H

#include "common.bpf.h"
#include "sockets.bpf.h"

enum l7_buf_kind {
	L7_BUF_PLAIN = 0, /* read, write, recvfrom, sendto: (fd, buf) */
	L7_BUF_IOV = 1,	  /* readv, writev: (fd, iov) */
	L7_BUF_MSG = 2,	  /* recvmsg, sendmsg: (fd, msghdr) */
	L7_BUF_MMSG = 3,  /* sendmmsg, recvmmsg: (fd, mmsghdr[]) — the first message */
	L7_BUF_NONE = 4,  /* sendfile: bytes moved from a file, nothing to capture */
};

struct l7_call {
	__u64 ts_ns;
	__u64 ptr;
	__u64 addr; /* sendto's or recvfrom's address argument */
	__s32 fd;
	__u32 op;
	__u32 kind;
	__u32 active; /* a call is in flight (the storage outlives it) */
	/* Copied at entry: a reset may close the connection before the call returns. */
	struct ns_l7_sock sock;
};

/*
 * The read or write a thread is in, in the thread's own storage: no hash
 * update and delete per call (they were the biggest single cost under load).
 * Before 5.13, an LRU hash by thread id (core_fixes.bpf.h, ns_thread_slot).
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct l7_call);
} l7_calls SEC(".maps") __weak;

#endif
