// SPDX-License-Identifier: GPL-2.0
/*
 * Stream tcp: connects (and their failures), accepts, closes with byte
 * counts, listens and retransmits — from tracepoints only. State changes in
 * softirq context are attributed through tcp_socks, filled in process context.
 */
#include "common.bpf.h"
#include "sockets.bpf.h"
#include "syscalls.bpf.h"

char LICENSE[] SEC("license") = "GPL";

NS_STREAM_DEFINE(tcp, sizeof(struct ns_tcp_event))

#define EINPROGRESS 115
#define EALREADY 114
#define ECONNABORTED 103
#define RCV_SHUTDOWN 1
#define SEND_SHUTDOWN 2


struct sock_info {
	__u32 pid;
	__s32 fd;
	__u64 start_ns;
	__u64 est_ns;
	__u16 flags;
};

struct pending_connect {
	__s32 fd;
	__u32 syn_sent;
	__u16 family;
	__u16 port; /* host order */
	__u8 addr[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64); /* struct sock * */
	__type(value, struct sock_info);
} tcp_socks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64); /* pid_tgid of the thread in connect() */
	__type(value, struct pending_connect);
} tcp_connecting SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64); /* pid_tgid of the thread in listen() */
	__type(value, __s32);
} tcp_listening SEC(".maps");


#define PF_EXITING 0x00000004

/* The peer's FIN arrived: tcp_fin() alone marks the socket done (not RCV_SHUTDOWN, which close() sets too). */
static __always_inline bool sk_fin_received(struct sock *s)
{
	return BPF_CORE_READ(s, __sk_common.skc_flags) & (1ull << bpf_core_enum_value(enum sock_flags, SOCK_DONE));
}

/* The close is the exit of the socket's owner closing its fds: nobody reads after it. */
static __always_inline bool owner_exiting(__u32 tgid)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	return (bpf_get_current_pid_tgid() >> 32) == tgid && (BPF_CORE_READ(task, flags) & PF_EXITING);
}

/*
 * The connection closed while its fd is open: a reset, or TIME_WAIT after
 * this side's shutdown. Its owner may still read bytes from the receive
 * queue (a response followed by a reset, the reply to a half-closed
 * request): while there are some, the entry stays so those reads are
 * captured, and the fd's close(2) takes it — or the exit of its owner,
 * whose own closing of the fd comes here (the exit's loop covers only the
 * lowest fds).
 */
static __always_inline void untrack_for_l7(const struct sock_info *info, __u64 sk, struct sock *s)
{
	__u64 key = l7_key(info->pid, info->fd);
	struct ns_l7_sock *ls = bpf_map_lookup_elem(&l7_socks, &key);
	/* The fd may already name another socket: only drop our own entry. */
	if (!ls || ls->sock != sk)
		return;
	struct tcp_sock *tp = (struct tcp_sock *)s;
	/* A FIN received takes a sequence number no read copies: no byte left to read. */
	__u32 fin = sk_fin_received(s);
	if (BPF_CORE_READ(tp, rcv_nxt) - BPF_CORE_READ(tp, copied_seq) > fin && !owner_exiting(info->pid))
		return;
	l7_socks_delete(key);
}


static __always_inline struct ns_tcp_event *tcp_event(__u32 type, __u64 sock)
{
	struct ns_tcp_event *e = tcp_reserve(sizeof(*e));
	if (!e)
		return NULL;
	__builtin_memset(e, 0, sizeof(*e));
	e->type = type;
	e->ts_ns = bpf_ktime_get_ns();
	e->sock = sock;
	e->fd = -1;
	return e;
}

static __always_inline void set_owner(struct ns_tcp_event *e, const struct sock_info *info)
{
	if (!info)
		return;
	e->pid = info->pid;
	e->fd = info->fd;
	e->start_ns = info->start_ns;
	e->flags = info->flags;
}

/*
 * The fd of the connect(2) this thread is in, from its saved registers: the
 * socket hooks have no connect hook to remember it (-1 under the syscall
 * hooks, whose entry did, or outside a connect: io_uring, the kernel's own).
 */
static __always_inline __s32 connect_fd_from_regs(void)
{
	if (!ns_kernel_has(NS_FEAT_SOCKET_HOOKS))
		return -1;
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

	if (regs->NS_REG_NR != NS_NR_connect || ns_syscall_compat_of(regs, task))
		return -1;
	return (__s32)regs->NS_REG_ARG1;
}

/*
 * A raw tracepoint, not a classic one: classic tracepoint programs are
 * skipped whenever any other BPF program runs on the CPU (as when a softirq
 * interrupts a syscall program), raw ones only on recursion into themselves.
 */
SEC("raw_tp/inet_sock_set_state")
int BPF_PROG(ns_tcp_state, struct sock *s, int old, int new)
{
	if (!sk_is_tcp(s))
		return 0;
	__u64 sk = (__u64)s;
	__u64 now = bpf_ktime_get_ns();
	struct sock_info *info;
	struct ns_tcp_event *e;
	__u32 type;

	if (new == TCP_SYN_SENT) {
		/* connect(), in the connecting thread. */
		__u64 id = bpf_get_current_pid_tgid();
		struct pending_connect *pc = bpf_map_lookup_elem(&tcp_connecting, &id);
		struct sock_info ni = {
			.pid = id >> 32, .fd = pc ? pc->fd : connect_fd_from_regs(), .start_ns = now,
			.flags = NS_TCP_F_KNOWN,
		};
		if (pc)
			pc->syn_sent = 1;
		if (bpf_map_update_elem(&tcp_socks, &sk, &ni, BPF_ANY))
			ns_drop(NS_DROP_SOCKS_FULL);
		return 0;
	}
	if (old == TCP_SYN_RECV && new == TCP_ESTABLISHED) {
		/* Inbound, in softirq: the owner is known at accept(). */
		struct sock_info ni = {
			.fd = -1, .start_ns = now, .est_ns = now,
			.flags = NS_TCP_F_KNOWN | NS_TCP_F_INBOUND,
		};
		if (bpf_map_update_elem(&tcp_socks, &sk, &ni, BPF_ANY))
			ns_drop(NS_DROP_SOCKS_FULL);
		return 0;
	}

	if (old == TCP_SYN_SENT && new == TCP_ESTABLISHED)
		type = NS_TCP_CONNECT;
	else if (old == TCP_SYN_SENT && new == TCP_CLOSE)
		type = NS_TCP_CONNECT_ERROR;
	else if (old == TCP_LISTEN && new == TCP_CLOSE)
		type = NS_TCP_LISTEN_CLOSE;
	else if (new == TCP_CLOSE && old != TCP_SYN_RECV && old != TCP_NEW_SYN_RECV)
		type = NS_TCP_CLOSE;
	else
		return 0;

	info = bpf_map_lookup_elem(&tcp_socks, &sk);
	if ((type == NS_TCP_CONNECT || type == NS_TCP_CONNECT_ERROR) && !info)
		return 0; /* started before the agent */
	e = tcp_event(type, sk);
	if (!e)
		goto out;
	set_owner(e, info);
	if (type == NS_TCP_LISTEN_CLOSE)
		e->pid = bpf_get_current_pid_tgid() >> 32; /* close() of the listener */
	fill_from_sock(e, s);
	if (type == NS_TCP_CONNECT) {
		e->duration_ns = info ? now - info->start_ns : 0;
	} else if (type == NS_TCP_CONNECT_ERROR) {
		e->err = BPF_CORE_READ(s, sk_err);
		if (!e->err)
			e->err = ECONNABORTED; /* closed by its owner before it completed */
		e->duration_ns = info ? now - info->start_ns : 0;
	} else if (type == NS_TCP_CLOSE) {
		struct tcp_sock *tp = (struct tcp_sock *)sk;
		__u8 shut = BPF_CORE_READ_BITFIELD_PROBED(s, sk_shutdown);
		e->bytes_sent = BPF_CORE_READ(tp, bytes_acked);
		e->bytes_received = BPF_CORE_READ(tp, bytes_received);
		/* A FIN takes a sequence number: ours counts once the peer acked it. */
		if ((shut & SEND_SHUTDOWN) && BPF_CORE_READ(tp, snd_una) == BPF_CORE_READ(tp, write_seq))
			e->flags |= NS_TCP_F_FIN_ACKED;
		/*
		 * The peer's FIN took a sequence number too. Not RCV_SHUTDOWN: close()
		 * sets it with no FIN received (4,999,999 of 5,000,000 bytes when the
		 * local side closed first). tcp_fin() alone marks the socket done.
		 */
		if (sk_fin_received(s))
			e->flags |= NS_TCP_F_FIN_RECEIVED;
		if (info && info->est_ns)
			e->duration_ns = now - info->est_ns;
	}
	tcp_submit(ctx, e, sizeof(*e));
out:
	if (type == NS_TCP_CONNECT) {
		if (info) {
			struct ns_l7_sock ls = { .sock = sk, .start_ns = info->start_ns };
			fill_from_sock(&ls, s);
			info->est_ns = now;
			track_for_l7(info->pid, info->fd, &ls);
		}
	} else if (info) {
		untrack_for_l7(info, sk, s);
		bpf_map_delete_elem(&tcp_socks, &sk);
	}
	return 0;
}

static __always_inline int connect_enter(__s32 fd, __u64 uaddr)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct pending_connect pc = { .fd = fd };
	struct sockaddr_in6 sa = {};

	/* sockaddr_in and sockaddr_in6 share family and port offsets. */
	if (bpf_probe_read_user(&sa, sizeof(sa), (void *)uaddr) == 0) {
		pc.family = sa.sin6_family;
		pc.port = bpf_ntohs(sa.sin6_port);
		if (pc.family == AF_INET)
			__builtin_memcpy(pc.addr, &((struct sockaddr_in *)&sa)->sin_addr, 4);
		else
			__builtin_memcpy(pc.addr, &sa.sin6_addr, 16);
	}
	if (bpf_map_update_elem(&tcp_connecting, &id, &pc, BPF_ANY))
		ns_drop(NS_DROP_PENDING_FULL);
	return 0;
}

/*
 * A UDP socket connected to a DNS server (what glibc's, musl's and Go's
 * resolvers and dig do): its datagrams are captured as DNS messages.
 */
static __always_inline void udp_connected(__u32 pid, const struct pending_connect *pc)
{
	struct sock *sk = sk_of_fd(pc->fd);
	if (sk_is_udp(sk))
		track_dns_socket(pid, pc->fd, sk, 0);
}

/*
 * A UDP socket bound to port 53 is a DNS server's (dnsmasq, unbound): its
 * datagrams are captured as DNS messages, this side answering. The
 * address is remembered at entry as a connect's is (one call per thread).
 */
static __always_inline int bind_exit(long ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct pending_connect *pc = bpf_map_lookup_elem(&tcp_connecting, &id);

	if (!pc)
		return 0;
	if (ret == 0 && pc->port == 53 && (pc->family == AF_INET || pc->family == AF_INET6)) {
		struct sock *sk = sk_of_fd(pc->fd);
		if (sk_is_udp(sk))
			track_dns_socket(id >> 32, pc->fd, sk, NS_L7_F_INBOUND);
	}
	bpf_map_delete_elem(&tcp_connecting, &id);
	return 0;
}

static __always_inline int connect_exit(void *ctx, long ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct pending_connect *pc = bpf_map_lookup_elem(&tcp_connecting, &id);

	if (!pc)
		return 0;
	if (ret == 0 && pc->port == 53 && (pc->family == AF_INET || pc->family == AF_INET6))
		udp_connected(id >> 32, pc);
	/* A connect that failed before any SYN was sent (no route, bad address...). */
	if (ret < 0 && ret != -EINPROGRESS && ret != -EALREADY && !pc->syn_sent &&
	    (pc->family == AF_INET || pc->family == AF_INET6)) {
		struct sock *sk = sk_of_fd(pc->fd);
		if (sk_is_tcp(sk)) {
			struct ns_tcp_event *e = tcp_event(NS_TCP_CONNECT_ERROR, (__u64)sk);
			if (e) {
				e->pid = id >> 32;
				e->fd = pc->fd;
				e->flags = NS_TCP_F_KNOWN;
				e->err = -ret;
				e->family = pc->family;
				e->dport = pc->port;
				__builtin_memcpy(e->daddr, pc->addr, 16);
				tcp_submit(ctx, e, sizeof(*e));
			}
		}
	}
	bpf_map_delete_elem(&tcp_connecting, &id);
	return 0;
}

/* An inbound connection's owner found: pid's fd (accept, or the socket hooks' first use). */
static __always_inline int tcp_accepted(void *ctx, struct sock *sk, __u32 pid, __s32 fd,
					struct sock_info *info)
{
	__u64 key = (__u64)sk;
	if (info) {
		info->pid = pid;
		info->fd = fd;
	} else {
		/* Its handshake predates the agent, or the table was full. */
		struct sock_info ni = { .pid = pid, .fd = fd, .flags = NS_TCP_F_INBOUND };
		if (bpf_map_update_elem(&tcp_socks, &key, &ni, BPF_ANY))
			ns_drop(NS_DROP_SOCKS_FULL);
		info = bpf_map_lookup_elem(&tcp_socks, &key);
	}
	struct ns_l7_sock ls = {
		.sock = key, .start_ns = info ? info->start_ns : 0, .flags = NS_L7_F_INBOUND,
	};
	fill_from_sock(&ls, sk);
	track_for_l7(pid, fd, &ls);

	struct ns_tcp_event *e = tcp_event(NS_TCP_ACCEPT, key);
	if (!e)
		return 0;
	set_owner(e, info);
	e->pid = pid;
	e->fd = fd;
	e->flags |= NS_TCP_F_INBOUND;
	e->family = ls.family;
	e->sport = ls.sport;
	e->dport = ls.dport;
	__builtin_memcpy(e->saddr, ls.saddr, 16);
	__builtin_memcpy(e->daddr, ls.daddr, 16);
	tcp_submit(ctx, e, sizeof(*e));
	return 0;
}

static __always_inline int on_accept(void *ctx, long ret)
{
	if (ret < 0)
		return 0;
	struct sock *sk = sk_of_fd(ret);
	if (!sk_is_tcp(sk))
		return 0;
	__u64 key = (__u64)sk;
	return tcp_accepted(ctx, sk, bpf_get_current_pid_tgid() >> 32, ret,
			    bpf_map_lookup_elem(&tcp_socks, &key));
}

/*
 * The socket hooks' first read or write of a socket no entry tracks (key:
 * l7_key of the caller's process and fd), which has no accept, connect or
 * bind hook: an inbound connection established while the agent runs finds
 * its owner here; a UDP socket connected to port 53 is a resolver's, one
 * bound to it a DNS server's. true when the socket is tracked now.
 */
__hidden int ns_tcp_sock_first_use(struct bpf_raw_tracepoint_args *ctx, __u64 skp, __u64 key)
{
	struct sock *sk = (struct sock *)skp;
	__u32 pid = key >> 32;
	__s32 fd = (__s32)key;
	__u8 proto = BPF_CORE_READ_BITFIELD_PROBED(sk, sk_protocol);

	if (proto == IPPROTO_TCP) {
		struct sock_info *info = bpf_map_lookup_elem(&tcp_socks, &skp);
		if (!info || !(info->flags & NS_TCP_F_INBOUND) || info->fd >= 0)
			return 0;
		tcp_accepted(ctx, sk, pid, fd, info);
		return 1;
	}
	if (proto != IPPROTO_UDP)
		return 0;
	bool resolver = BPF_CORE_READ(sk, __sk_common.skc_dport) == bpf_htons(NS_DNS_PORT);
	if (!resolver && BPF_CORE_READ(sk, __sk_common.skc_num) != NS_DNS_PORT)
		return 0;
	track_dns_socket(pid, fd, sk, resolver ? 0 : NS_L7_F_INBOUND);
	return 1;
}

/* sk listens now, pid's fd. */
static __always_inline int tcp_listened(void *ctx, struct sock *sk, __u32 pid, __s32 fd)
{
	struct ns_tcp_event *e = tcp_event(NS_TCP_LISTEN, (__u64)sk);
	if (!e)
		return 0;
	e->pid = pid;
	e->fd = fd;
	e->flags = NS_TCP_F_KNOWN;
	fill_from_sock(e, sk);
	tcp_submit(ctx, e, sizeof(*e));
	return 0;
}

static __always_inline int listen_enter(__s32 fd)
{
	__u64 id = bpf_get_current_pid_tgid();

	if (bpf_map_update_elem(&tcp_listening, &id, &fd, BPF_ANY))
		ns_drop(NS_DROP_PENDING_FULL);
	return 0;
}

static __always_inline int listen_exit(void *ctx, long ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	__s32 *fdp = bpf_map_lookup_elem(&tcp_listening, &id);

	if (!fdp)
		return 0;
	__s32 fd = *fdp;
	bpf_map_delete_elem(&tcp_listening, &id);
	if (ret != 0)
		return 0;
	/* listen() moves the socket to LISTEN without the state tracepoint. */
	struct sock *sk = sk_of_fd(fd);
	if (!sk_is_tcp(sk))
		return 0;
	return tcp_listened(ctx, sk, id >> 32, fd);
}

/*
 * listen(2) under the socket hooks, which leave the syscall hooks off: a
 * sock_ops program on the root of cgroup v2 (attached by src/bpf/probes.c)
 * is called in the listening task once its socket listens
 * (BPF_SOCK_OPS_TCP_LISTEN_CB); the fd is in the task's saved registers.
 * It answers every other callback at once, and changes nothing.
 */
SEC("sockops")
int ns_tcp_sockops(struct bpf_sock_ops *skops)
{
	struct sock *sk = NULL;

	if (skops->op != BPF_SOCK_OPS_TCP_LISTEN_CB)
		return 1;
	/*
	 * The socket's kernel address, as tcp_socks and the state tracepoint
	 * name it: skops->sk is a pointer the verifier will not let be read
	 * through or turned into one, so it is copied out of the kernel's
	 * context (struct bpf_sock_ops_kern), which the program's stands for.
	 */
	bpf_probe_read_kernel(&sk, sizeof(sk), &((struct bpf_sock_ops_kern *)skops)->sk);
	if (!sk)
		return 1;
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	__s32 fd = -1;
	if (regs->NS_REG_NR == NS_NR_listen && !ns_syscall_compat_of(regs, task))
		fd = (__s32)regs->NS_REG_ARG1;
	tcp_listened(skops, sk, task->tgid, fd);
	return 1;
}

/* Called by the syscall dispatcher (syscalls.bpf.c) for the calls listed there. */
__hidden int ns_tcp_syscall_enter(long id, __u64 arg1, __u64 arg2)
{
	switch (id) {
	case NS_NR_connect:
	case NS_NR_bind: /* the same address argument */
		return connect_enter((__s32)arg1, arg2);
	case NS_NR_listen:
		return listen_enter((__s32)arg1);
	}
	return 0;
}

__hidden int ns_tcp_syscall_exit(struct bpf_raw_tracepoint_args *ctx, long id, long ret)
{
	switch (id) {
	case NS_NR_connect:
		return connect_exit(ctx, ret);
	case NS_NR_bind:
		return bind_exit(ret);
	case NS_NR_accept:
	case NS_NR_accept4:
		return on_accept(ctx, ret);
	case NS_NR_listen:
		return listen_exit(ctx, ret);
	}
	return 0;
}

/* Only a field probe: whether this kernel's tracepoint passes the send result. */
struct trace_event_raw_tcp_retransmit_skb___err {
	int err;
} __attribute__((preserve_access_index));

/* Raw for the same reason as ns_tcp_state: it fires in timer softirqs. */
SEC("raw_tp/tcp_retransmit_skb")
int ns_tcp_retransmit(struct bpf_raw_tracepoint_args *ctx)
{
	struct sock *s = (struct sock *)ctx->args[0];
	__u64 sk = (__u64)s;

	/* Newer kernels also report attempts that did not go out (err != 0). */
	if (bpf_core_field_exists(struct trace_event_raw_tcp_retransmit_skb___err, err) &&
	    (int)ctx->args[2] != 0)
		return 0;
	struct ns_tcp_event *e = tcp_event(NS_TCP_RETRANSMIT, sk);
	if (!e)
		return 0;
	set_owner(e, bpf_map_lookup_elem(&tcp_socks, &sk));
	fill_from_sock(e, s);
	/* skb->cb holds TCP's control block while the skb is in TCP's queues. */
	struct sk_buff *skb = (struct sk_buff *)ctx->args[1];
	struct tcp_skb_cb *cb = (struct tcp_skb_cb *)&skb->cb[0];
	e->segs = BPF_CORE_READ(cb, tcp_gso_segs);
	tcp_submit(ctx, e, sizeof(*e));
	return 0;
}

/*
 * The fds a fork's child inherits that are tracked in its parent: the
 * lowest L7_INHERIT_FDS numbers (a forking server's client socket is a low
 * one). Only for a parent that has held a tracked socket.
 */
#define L7_INHERIT_FDS 128

SEC("raw_tp/sched_process_fork")
int BPF_PROG(ns_l7_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	__u8 one = 1;

	/* Before the child runs: it may have a dead task's kernel stack (bpf/l7_untracked.bpf.h). */
	l7_filter_new_epoch();
	if (ctgid != BPF_CORE_READ(child, pid) || ctgid == ptgid ||
	    !bpf_map_lookup_elem(&l7_owners, &ptgid))
		return 0; /* a thread, or a parent with no tracked socket */
	bpf_map_update_elem(&l7_owners, &ctgid, &one, BPF_ANY);
	for (__s32 fd = 0; fd < L7_INHERIT_FDS; fd++) {
		__u64 pk = l7_key(ptgid, fd), ck = l7_key(ctgid, fd);
		struct ns_l7_sock *s = l7_socks_find(pk);
		if (!s)
			continue;
		struct ns_l7_sock copy = *s;
		if (l7_socks_insert(ck, &copy, BPF_NOEXIST) == -E2BIG)
			ns_drop(NS_DROP_L7_SOCKS_FULL);
	}
	return 0;
}

/*
 * A process's last threads are leaving: its sockets close without
 * close(2). A TCP connection's entry goes as it closes (untrack_for_l7),
 * but a DNS socket's (UDP) would stay until another process got the same
 * pid: the entries of the lowest L7_INHERIT_FDS fds go now, deleted only
 * where the l7 filter says there may be one (as the fork and exec loops
 * look up only there). Idempotent: before 6.16 two
 * threads leaving together may both come here.
 */
SEC("tracepoint/sched/sched_process_exit")
int ns_l7_process_exit(struct trace_event_raw_sched_process_exit *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	/*
	 * Every thread: its kernel stack may go to a new task, which must not
	 * find its remembered answers (bpf/l7_untracked.bpf.h; the fork raises
	 * the epoch too, so both would have to be missed).
	 */
	l7_filter_new_epoch();
	if (!ns_process_dying(ctx, (struct task_struct *)bpf_get_current_task()) ||
	    !bpf_map_lookup_elem(&l7_owners, &tgid))
		return 0;
	for (__s32 fd = 0; fd < L7_INHERIT_FDS; fd++)
		if (l7_maybe_tracked(tgid, fd))
			l7_socks_delete(l7_key(tgid, fd));
	bpf_map_delete_elem(&l7_owners, &tgid);
	return 0;
}

/*
 * exec closed the close-on-exec fds without close(2): entries a fork copied
 * for them go, lest a file opened on the same number be read as the socket.
 */
SEC("tracepoint/sched/sched_process_exec")
int ns_l7_exec(void *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (!bpf_map_lookup_elem(&l7_owners, &tgid))
		return 0;
	for (__s32 fd = 0; fd < L7_INHERIT_FDS; fd++) {
		__u64 k = l7_key(tgid, fd);
		struct ns_l7_sock *s = l7_socks_find(k);
		if (s && s->sock && (__u64)sk_of_fd(fd) != s->sock)
			l7_socks_delete(k);
	}
	return 0;
}
