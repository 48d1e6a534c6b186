// SPDX-License-Identifier: GPL-2.0
/*
 * The capture floors: the least an agent pays that takes the bytes of each
 * read and write of the sockets it tracks out of the kernel from the syscall
 * hooks, as nodescope's l7 stream does. Everything happens at the syscall's
 * exit, the arguments read back from the saved registers: no state per call
 * or thread. Per read or write on a tracked socket that moved bytes: the fd
 * looked up, the first iovec found (readv, recvmsg, ...), up to CAP_BYTES
 * bytes copied from the user buffer, and
 *   capture: copied straight into a fixed-size ring record, submitted
 *            without a wakeup (bench-floor drains floor_ring on a timer);
 *   copy:    copied onto the stack and dropped: what looking at the bytes
 *            costs before any record.
 * No TLS, no DNS, no address, no timestamps at entry. Tracked sockets are the
 * ones accepted or connected while it runs, and their copies in a fork's
 * child (a server that forks per connection). A measuring aid for bench/'s
 * floor-capture and floor-copy configs, not nodescope's code.
 */
#include "l7.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define CAP_BYTES 64
#define CAP_FORK_FDS 128

struct cap_rec {
	__u64 ts_ns;
	__u32 pid;
	__s32 fd;
	__u32 op;
	__u32 total;
	__u8 data[CAP_BYTES];
};

/* Big enough for bench-floor's 5 ms drain at 40 MB/s of records. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 * 1024 * 1024);
} floor_ring SEC(".maps");

/*
 * The same ring, one per CPU (floor_rings[cpu], made and drained by
 * bench-floor): what the records cost without two CPUs' writers sharing one
 * ring's lock and positions.
 */
struct cap_ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 * 1024 * 1024);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1); /* bench-floor sets it to the CPUs' count */
	__type(key, __u32);
	__array(values, struct cap_ring);
} floor_rings SEC(".maps");

/* Records that found no room (bench-floor reports them: a floor that drops is no floor). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} floor_lost SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, __u8);
} cap_socks SEC(".maps");

/* Processes that have tracked a socket: their forks copy the low fds' entries. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} cap_holders SEC(".maps");

static __always_inline __u64 cap_key(__s32 fd)
{
	return (bpf_get_current_pid_tgid() >> 32) << 32 | (__u32)fd;
}

static __always_inline void cap_track(__s32 fd)
{
	__u64 key = cap_key(fd);
	__u32 tgid = key >> 32;
	__u8 one = 1;

	bpf_map_update_elem(&cap_socks, &key, &one, BPF_ANY);
	bpf_map_update_elem(&cap_holders, &tgid, &one, BPF_ANY);
}

/* The buffer of a plain call, or the first iovec's (of the first message for sendmmsg/recvmmsg). */
static __always_inline int cap_buffer(__u64 ptr, __u32 kind, __u64 *base, __u64 *len)
{
	struct user_msghdr msg;
	struct iovec iov;

	*base = ptr;
	*len = ~0ull;
	if (kind == L7_BUF_PLAIN)
		return 0;
	if (kind == L7_BUF_MSG || kind == L7_BUF_MMSG) {
		if (bpf_probe_read_user(&msg, sizeof(msg), (void *)ptr))
			return -1;
		ptr = (__u64)msg.msg_iov;
	}
	if (bpf_probe_read_user(&iov, sizeof(iov), (void *)ptr))
		return -1;
	*base = (__u64)iov.iov_base;
	*len = iov.iov_len;
	return 0;
}

enum cap_emit { CAP_DROP, CAP_RING, CAP_CPU_RING };

/* A tracked socket's read or write of ret > 0 bytes: its first CAP_BYTES copied (emit: into a record). */
static __always_inline int cap_bytes(struct pt_regs *regs, long ret, __u32 op, __u32 kind,
				     enum cap_emit emit)
{
	__s32 fd = NS_SYSCALL_REG(true, regs, NS_REG_ARG1);
	__u64 key = cap_key(fd), base, len;

	if (cap_buffer(NS_SYSCALL_REG(true, regs, NS_REG_ARG2), kind, &base, &len))
		return 0;
	__u64 n = (__u64)ret < len ? (__u64)ret : len;
	if (n > CAP_BYTES)
		n = CAP_BYTES;
	if (!emit) {
		__u8 head[CAP_BYTES];
		if (bpf_probe_read_user(head, n, (void *)base))
			return 0;
		return head[0] == 0xff;
	}
	void *ring = &floor_ring;
	if (emit == CAP_CPU_RING) {
		__u32 cpu = bpf_get_smp_processor_id();
		ring = bpf_map_lookup_elem(&floor_rings, &cpu);
	}
	struct cap_rec *r = ring ? bpf_ringbuf_reserve(ring, sizeof(*r), 0) : NULL;
	if (!r) {
		__u32 zero = 0;
		__u64 *lost = bpf_map_lookup_elem(&floor_lost, &zero);
		if (lost)
			(*lost)++;
		return 0;
	}
	if (bpf_probe_read_user(r->data, n, (void *)base))
		n = 0;
	r->ts_ns = bpf_ktime_get_ns();
	r->pid = key >> 32;
	r->fd = fd;
	r->op = op;
	r->total = n;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}

static __always_inline int cap_exit(struct pt_regs *regs, long ret, __u32 op, __u32 kind,
				    enum cap_emit emit)
{
	__u64 key = cap_key(NS_SYSCALL_REG(true, regs, NS_REG_ARG1));

	if (ret <= 0 || !bpf_map_lookup_elem(&cap_socks, &key))
		return 0;
	return cap_bytes(regs, ret, op, kind, emit);
}

SEC("tp_btf/sys_enter")
int BPF_PROG(cap_sys_enter, struct pt_regs *regs, long id)
{
	if (id == NS_NR_close) {
		__u64 key = cap_key(NS_SYSCALL_REG(true, regs, NS_REG_ARG1));
		bpf_map_delete_elem(&cap_socks, &key);
	}
	return 0;
}

static __always_inline int cap_dispatch_exit(struct pt_regs *regs, long ret, enum cap_emit emit)
{
	long id = NS_SYSCALL_REG(true, regs, NS_REG_NR);
	__u32 op, kind;

	switch (id) {
	case NS_NR_accept:
	case NS_NR_accept4:
		if (ret >= 0)
			cap_track(ret);
		return 0;
	case NS_NR_connect:
		if (ret == 0 || ret == -115 /* EINPROGRESS */)
			cap_track(NS_SYSCALL_REG(true, regs, NS_REG_ARG1));
		return 0;
	}
	if (!ns_l7_call_shape(id, &op, &kind) || kind == L7_BUF_NONE)
		return 0;
	return cap_exit(regs, ret, op, kind, emit);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(cap_sys_exit, struct pt_regs *regs, long ret)
{
	return cap_dispatch_exit(regs, ret, CAP_RING);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(cap_cpu_sys_exit, struct pt_regs *regs, long ret)
{
	return cap_dispatch_exit(regs, ret, CAP_CPU_RING);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(copy_sys_exit, struct pt_regs *regs, long ret)
{
	return cap_dispatch_exit(regs, ret, CAP_DROP);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(cap_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	__u8 one = 1;

	if (ptgid == ctgid || !bpf_map_lookup_elem(&cap_holders, &ptgid))
		return 0;
	for (__u32 fd = 0; fd < CAP_FORK_FDS; fd++) {
		__u64 key = (__u64)ptgid << 32 | fd;
		if (!bpf_map_lookup_elem(&cap_socks, &key))
			continue;
		key = (__u64)ctgid << 32 | fd;
		bpf_map_update_elem(&cap_socks, &key, &one, BPF_ANY);
	}
	bpf_map_update_elem(&cap_holders, &ctgid, &one, BPF_ANY);
	return 0;
}

/*
 * The same capture from the socket tracepoints instead of the syscall hooks
 * (sock:sock_send_length and sock:sock_recv_length, Linux 6.4+): they fire in
 * sock_sendmsg and sock_recvmsg alone, so no other syscall pays anything.
 * Sockets are tracked by their kernel address from the moment they are
 * established while it runs (both ends of a loopback connection); the
 * syscall and its buffer come from the task's saved registers. No timestamp
 * at a write's entry, as in the capture above.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, __u8);
} cap_sks SEC(".maps");

#define CAP_TCP_ESTABLISHED 1
#define CAP_TCP_CLOSE 7

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(sk_cap_state, const struct sock *sk, int oldstate, int newstate)
{
	__u64 key = (__u64)sk;
	__u8 one = 1;

	if (newstate == CAP_TCP_ESTABLISHED)
		bpf_map_update_elem(&cap_sks, &key, &one, BPF_ANY);
	else if (newstate == CAP_TCP_CLOSE)
		bpf_map_delete_elem(&cap_sks, &key);
	return 0;
}

static __always_inline int sk_cap(struct sock *sk, int ret, enum cap_emit emit)
{
	__u64 key = (__u64)sk;
	__u32 op, kind;

	if (ret <= 0 || !bpf_map_lookup_elem(&cap_sks, &key))
		return 0;
	struct pt_regs *regs = ns_l7_sock_syscall(bpf_get_current_task_btf(), &op, &kind);
	if (!regs || kind == L7_BUF_NONE)
		return 0;
	return cap_bytes(regs, ret, op, kind, emit);
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(sk_cap_send, struct sock *sk, int ret, int flags)
{
	return sk_cap(sk, ret, CAP_RING);
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(sk_cap_recv, struct sock *sk, int ret, int flags)
{
	return sk_cap(sk, ret, CAP_RING);
}

/* The hooks alone, empty: what they cost before any work. */
SEC("tp_btf/sock_send_length")
int BPF_PROG(sk_empty_send, struct sock *sk, int ret, int flags)
{
	return 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(sk_empty_recv, struct sock *sk, int ret, int flags)
{
	return 0;
}
