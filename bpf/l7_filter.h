// SPDX-License-Identifier: GPL-2.0-only OR Apache-2.0
/*
 * The counting filter in front of l7_socks (bpf/sockets.bpf.h): one counter
 * per slot of (tgid, fd), the entries of l7_socks whose key falls in the
 * slot. A read or write whose slot is zero is on no tracked socket, known
 * from one load: the syscall hooks run for every read and write on the node,
 * and the hash lookup that tells for sure cost a pipe loop as much again as
 * the empty hooks themselves (bench/syscall).
 *
 * A counter is raised before its entry goes in and lowered after it went out
 * (the BPF side, and the agent for the connections its start-up scan adopts),
 * so a tracked socket's slot is never zero: a wrong count can only be too
 * high, which costs a lookup, never a capture. Shared with user space and
 * the unit tests, so both sides name the same slot.
 */
#ifndef NODESCOPE_L7_FILTER_H
#define NODESCOPE_L7_FILTER_H

#include "events.h"

/* 128 KiB; one process's fds take consecutive slots, so they collide only past this many. */
#define NS_L7_FILTER_SLOTS 32768

_Static_assert((NS_L7_FILTER_SLOTS & (NS_L7_FILTER_SLOTS - 1)) == 0, "a power of two: the slot is a mask");

/*
 * The filter as the BPF side keeps it (a global, mapped into the agent).
 * epoch is raised after every count is: an answer "fd has no count"
 * remembered before the raise (bpf/l7_untracked.bpf.h) is void after it. A
 * thread's exit and a fork raise it too: a new task may get a dead one's
 * kernel stack, which is what names a thread in those answers.
 */
struct ns_l7_filter {
	__u64 epoch;
	__u8 pad[56]; /* the counters start a cache line apart: epoch is read by every syscall hook */
	__u32 slots[NS_L7_FILTER_SLOTS];
};

static inline __u32 ns_l7_filter_slot(__u32 tgid, __s32 fd)
{
	/* Fibonacci hashing spreads the processes; the fd adds, so a process's fds do not collide. */
	return (tgid * 2654435761u + (__u32)fd) & (NS_L7_FILTER_SLOTS - 1);
}

#endif
