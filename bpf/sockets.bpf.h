/*
 * Tracked sockets by (tgid << 32 | fd), shared by the tcp programs (which
 * add them at connect and accept, or under the socket hooks at a socket's
 * first read or write, and drop them at close) and the l7 ones
 * (which capture only their reads and writes). Defined weak in every object
 * that includes this; the static linker merges the identical definitions.
 */
#ifndef NODESCOPE_SOCKETS_BPF_H
#define NODESCOPE_SOCKETS_BPF_H

#include "common.bpf.h"
#include "l7_filter.h"

/*
 * --disable-l7-tracing (Coroot's): no socket is tracked for the l7 programs
 * and the syscall hooks' l7 paths are dropped by the verifier; the socket
 * hooks are not loaded at all (src/bpf/probes.c). Read-only data.
 */
const volatile __u32 ns_l7_off __weak = 0;

#define ENOENT 2
#define E2BIG 7
#define EEXIST 17

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct ns_l7_sock);
} l7_socks SEC(".maps") __weak;

/*
 * Processes that have held a tracked socket (a superset: entries go when the
 * table is full). A fork of one copies its entries to the child, as the
 * child holds the same sockets: a server that accepts and then forks (the
 * PostgreSQL postmaster) serves from the child.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} l7_owners SEC(".maps") __weak;

/* Per-CPU counts of state the BPF side could not keep, by enum ns_drop_reason. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NS_DROP_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} ns_drops SEC(".maps") __weak;

static __always_inline void ns_drop(__u32 reason)
{
	__u64 *n = bpf_map_lookup_elem(&ns_drops, &reason);
	if (n)
		(*n)++;
}

static __always_inline __u64 l7_key(__u32 tgid, __s32 fd)
{
	return ((__u64)tgid << 32) | (__u32)fd;
}

/* The counting filter of l7_socks' keys (bpf/l7_filter.h); user space adopts into it too. */
struct ns_l7_filter ns_l7_filter __weak;

static __always_inline __u32 *l7_filter_slot(__u64 key)
{
	return &ns_l7_filter.slots[ns_l7_filter_slot(key >> 32, (__s32)key)];
}

/* Voids every remembered "no count" (bpf/l7_untracked.bpf.h): after a raise, at an exit and a fork. */
static __always_inline void l7_filter_new_epoch(void)
{
	__sync_fetch_and_add(&ns_l7_filter.epoch, 1);
}

/* false: fd is no tracked socket of tgid's. true: it may be (l7_socks tells). */
static __always_inline bool l7_maybe_tracked(__u32 tgid, __s32 fd)
{
	return *(volatile __u32 *)l7_filter_slot(l7_key(tgid, fd)) != 0;
}

/* key's entry, looked up only where the filter has a count. */
static __always_inline struct ns_l7_sock *l7_socks_find(__u64 key)
{
	if (!*(volatile __u32 *)l7_filter_slot(key))
		return NULL;
	return bpf_map_lookup_elem(&l7_socks, &key);
}

/*
 * Every change to l7_socks goes through these two, which keep the filter
 * counting its entries. An insert over an existing key (flags BPF_ANY)
 * replaces it without counting it twice.
 */
static __always_inline long l7_socks_insert(__u64 key, const struct ns_l7_sock *ls, __u64 flags)
{
	__u32 *slot = l7_filter_slot(key);
	long err;

	__sync_fetch_and_add(slot, 1);
	l7_filter_new_epoch();
	err = bpf_map_update_elem(&l7_socks, &key, ls, BPF_NOEXIST);
	if (err == -EEXIST && flags == BPF_ANY) {
		err = bpf_map_update_elem(&l7_socks, &key, ls, BPF_EXIST);
		/* Deleted between the two (a close on another CPU): it goes in new, counted once. */
		if (err == -ENOENT && !bpf_map_update_elem(&l7_socks, &key, ls, BPF_NOEXIST))
			return 0;
	} else if (!err) {
		return 0;
	}
	__sync_fetch_and_add(slot, (__u32)-1);
	return err;
}

static __always_inline void l7_socks_delete(__u64 key)
{
	if (!bpf_map_delete_elem(&l7_socks, &key))
		__sync_fetch_and_add(l7_filter_slot(key), (__u32)-1);
}

#define AF_INET 2
#define AF_INET6 10
#define IPPROTO_TCP 6
#define IPPROTO_UDP 17
#define S_IFMT 00170000
#define S_IFSOCK 0140000

/* The socket behind fd of the current task, or NULL if fd is no socket. */
static __always_inline struct sock *sk_of_fd(int fd)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct file **fds = BPF_CORE_READ(task, files, fdt, fd);
	unsigned int max = BPF_CORE_READ(task, files, fdt, max_fds);
	struct file *f = NULL;

	if (fd < 0 || (unsigned int)fd >= max)
		return NULL;
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f)
		return NULL;
	if ((BPF_CORE_READ(f, f_inode, i_mode) & S_IFMT) != S_IFSOCK)
		return NULL;
	struct socket *sock = BPF_CORE_READ(f, private_data);
	return BPF_CORE_READ(sock, sk);
}

static __always_inline bool sk_is_tcp(struct sock *sk)
{
	return sk && BPF_CORE_READ_BITFIELD_PROBED(sk, sk_protocol) == IPPROTO_TCP;
}

static __always_inline bool sk_is_udp(struct sock *sk)
{
	return sk && BPF_CORE_READ_BITFIELD_PROBED(sk, sk_protocol) == IPPROTO_UDP;
}

/*
 * A connection that existed before the agent started (or a DNS server's
 * bound UDP socket) is added to l7_socks by user space (from its /proc and
 * sock_diag scan) with sock 0, as the
 * kernel's address of the socket — the connection's key on the L7 side and
 * what its TCP close names — is known only here. It is filled in at the
 * socket's first read or write. false: fd is not that connection any more
 * (closed and reused between the scan and the entry's insertion), and the
 * entry goes.
 */
static __always_inline bool l7_sock_adopt(struct ns_l7_sock *s, __u64 key, __s32 fd)
{
	if (s->sock)
		return true;
	struct sock *sk = sk_of_fd(fd);
	/* A DNS server's UDP socket is known by its bound port, a connection by its peer's. */
	bool same = s->flags & NS_L7_F_DNS
			    ? sk_is_udp(sk) && BPF_CORE_READ(sk, __sk_common.skc_num) == s->sport
			    : sk_is_tcp(sk) &&
				      BPF_CORE_READ(sk, __sk_common.skc_dport) == bpf_htons(s->dport);
	if (!same) {
		l7_socks_delete(key);
		return false;
	}
	s->sock = (__u64)sk;
	return true;
}

/* Local and remote address of sk into e (local = s*, remote = d*). */
#define fill_from_sock(e, sk)                                                       \
	do {                                                                        \
		(e)->family = BPF_CORE_READ(sk, __sk_common.skc_family);             \
		/* inet_sport: at close the kernel has already zeroed skc_num. */  \
		(e)->sport = bpf_ntohs(BPF_CORE_READ((struct inet_sock *)(sk), inet_sport)); \
		(e)->dport = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));    \
		if ((e)->family == AF_INET) {                                        \
			bpf_core_read((e)->saddr, 4, &sk->__sk_common.skc_rcv_saddr); \
			bpf_core_read((e)->daddr, 4, &sk->__sk_common.skc_daddr);     \
		} else {                                                             \
			bpf_core_read((e)->saddr, 16, &sk->__sk_common.skc_v6_rcv_saddr); \
			bpf_core_read((e)->daddr, 16, &sk->__sk_common.skc_v6_daddr); \
		}                                                                    \
	} while (0)

/* Lets the l7 programs capture this socket's reads and writes. */
static __always_inline void track_for_l7(__u32 pid, __s32 fd, const struct ns_l7_sock *ls)
{
	__u64 key = l7_key(pid, fd);
	__u8 one = 1;
	if (fd < 0 || ns_l7_off)
		return;
	if (l7_socks_insert(key, ls, BPF_ANY) == -E2BIG)
		ns_drop(NS_DROP_L7_SOCKS_FULL);
	bpf_map_update_elem(&l7_owners, &pid, &one, BPF_ANY);
}

/*
 * A UDP socket whose datagrams are DNS messages: a resolver's (connected to
 * port 53, or asking it unconnected), or with NS_L7_F_INBOUND a server's
 * (bound to port 53).
 */
static __always_inline void track_dns_socket(__u32 pid, __s32 fd, struct sock *sk, __u32 inbound)
{
	struct ns_l7_sock ls = { .sock = (__u64)sk, .start_ns = bpf_ktime_get_ns(),
				 .flags = NS_L7_F_DNS | inbound };
	fill_from_sock(&ls, sk);
	track_for_l7(pid, fd, &ls);
}

#endif
