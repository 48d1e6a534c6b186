/*
 * A thread's fds the l7 filter found no count for, remembered: the filter's
 * answer needs the process (bpf_get_current_pid_tgid, a helper call), and a
 * call and its return are most of what a read or write on a pipe or file
 * pays the syscall hooks above empty programs (bench/syscall's pipe loop on
 * a CPU whose returns go through a mitigation thunk). The syscall's saved
 * registers name the thread without a call: their address is the top of its
 * kernel stack, its own while it lives.
 *
 * An entry is one word, a tag of (thread, fd, the filter's epoch): a thread
 * has a line of eight entries, by fd mod 8, among L7_UNTRACKED_THREADS lines
 * shared by hash; a tag written by another thread, for another fd or before
 * the epoch moved does not match (one word: no torn reads, whoever writes
 * the line meanwhile). The epoch moves after every count raised
 * (l7_filter_new_epoch, and the agent's adoptions), so "no count" is never
 * remembered past a socket becoming tracked, and at every thread's exit and
 * every fork, so a new task given a dead one's kernel stack does not inherit
 * its answers.
 * Only "no count" is remembered; a slot with a count is looked at each time.
 */
#ifndef NODESCOPE_L7_UNTRACKED_BPF_H
#define NODESCOPE_L7_UNTRACKED_BPF_H

#include "sockets.bpf.h"

#define L7_UNTRACKED_THREAD_BITS 10
#define L7_UNTRACKED_THREADS (1 << L7_UNTRACKED_THREAD_BITS) /* 64 KiB: a line of 8 fds each */
#define L7_UNTRACKED_FDS 8

__u64 ns_l7_untracked[L7_UNTRACKED_THREADS * L7_UNTRACKED_FDS] __weak;

/* An entry and the tag it holds when the answer it remembers is still good. */
struct l7_untracked {
	__u64 *entry;
	__u64 tag;
};

/*
 * The thread of a syscall hook, as a number: where its saved registers are.
 * A tp_btf program's regs is a typed pointer, which takes no arithmetic but
 * the difference to another pointer (this table's, fixed while loaded); a
 * raw_tp's is a number already.
 */
static __always_inline __u64 l7_untracked_thread(const void *regs, bool btf)
{
	if (!btf)
		return (__u64)regs;
	__u64 at = (__u64)regs, table = (__u64)ns_l7_untracked;
	asm volatile("%0 -= %1" : "+r"(at) : "r"(table));
	return at;
}

/*
 * Whether fd of thread (l7_untracked_thread) is known to have no count in
 * the l7 filter. The epoch is read before the caller reads the filter, so a
 * count raised in between voids the tag written after.
 */
static __always_inline bool l7_untracked_known(__u64 thread, __s32 fd, struct l7_untracked *u)
{
	__u64 epoch = *(volatile __u64 *)&ns_l7_filter.epoch;
	/* Multiplicative hashing: distinct (thread, fd, epoch) give distinct tags but by chance. */
	__u64 x = thread ^ ((__u64)(__u32)fd * 0x9e3779b97f4a7c15ull) ^ (epoch * 0xc2b2ae3d27d4eb4full);
	__u32 line = (__u32)(((thread >> 12) * 0x9e3779b97f4a7c15ull) >> (64 - L7_UNTRACKED_THREAD_BITS));

	__u32 i = line * L7_UNTRACKED_FDS + ((__u32)fd & (L7_UNTRACKED_FDS - 1));

	x *= 0xff51afd7ed558ccdull;
	u->tag = (x ^ (x >> 32)) | 1; /* never 0, which an entry never written holds */
	/* The mask the compiler would drop as redundant: 5.10's and 6.1's verifiers need it. */
	barrier_var(i);
	u->entry = &ns_l7_untracked[i & (L7_UNTRACKED_THREADS * L7_UNTRACKED_FDS - 1)];
	return *(volatile __u64 *)u->entry == u->tag;
}

/* The filter had no count for it: remembered until the epoch moves. */
static __always_inline void l7_untracked_remember(const struct l7_untracked *u)
{
	*(volatile __u64 *)u->entry = u->tag;
}

/*
 * Whether fd of the calling thread may be a tracked socket, and *tgid its
 * process: the filter's answer (a helper call for the process, which leaves
 * *task the current task where it is a BTF pointer: ns_current_task_btf),
 * or none at all where the thread's last look at fd found no count and none
 * was raised since; *tgid is 0 and *task NULL then.
 */
static __always_inline bool l7_maybe_tracked_by(__u64 thread, __s32 fd, __u32 *tgid,
						struct task_struct **task)
{
	struct l7_untracked u;

	*tgid = 0;
	*task = NULL;
	if (l7_untracked_known(thread, fd, &u))
		return false;
	*task = ns_current_task_btf();
	*tgid = ns_current_tgid_of(*task);
	if (l7_maybe_tracked(*tgid, fd))
		return true;
	l7_untracked_remember(&u);
	return false;
}

#endif
