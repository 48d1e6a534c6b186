// SPDX-License-Identifier: GPL-2.0-only OR Apache-2.0
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

/* One BPF ring buffer (or per-CPU perf buffer) per stream. */
enum ns_stream {
	NS_STREAM_PROC = 0,
	NS_STREAM_TCP = 1,
	NS_STREAM_L7 = 2,
	NS_STREAM_FILES = 3,
	NS_STREAM_COUNT,
};

enum ns_wakeup_policy {
	NS_WAKEUP_IMMEDIATE = 0,
	NS_WAKEUP_BATCHED = 1,
};

/* Per-stream settings user space writes into the BPF config map before attaching. */
struct ns_stream_config {
	__u32 policy;	  /* enum ns_wakeup_policy */
	__u32 query_bytes; /* a CPU looks at the ring's fill every this many bytes it wrote (ns_query_due) */
	__u64 watermark; /* batched: force a wakeup once this many bytes are pending */
};
_Static_assert(sizeof(struct ns_stream_config) == 16, "ns_stream_config is ABI");

enum ns_proc_event_type {
	NS_PROC_EXEC = 1,
	NS_PROC_EXIT = 2,
	NS_PROC_FORK = 3,
	NS_PROC_OOM_KILL = 4,
};

/*
 * The cgroups that name a process's container: its cgroup v2 id, and the
 * kernfs ids of its cgroups in the v1 cpu and memory hierarchies (what names
 * a container on a v1 or hybrid host without reading /proc); those two are
 * the v2 cgroup's id where the controllers live in v2, 0 if unknown.
 */
struct ns_cgroup_ids {
	__u64 v2;
	__u64 cpu;
	__u64 memory;
};
_Static_assert(sizeof(struct ns_cgroup_ids) == 24, "ns_cgroup_ids is ABI");

/* Common head of every proc record. */
struct ns_proc_head {
	__u32 type; /* enum ns_proc_event_type */
	__u32 pid;  /* tgid */
	__u64 ts_ns; /* CLOCK_MONOTONIC */
};
_Static_assert(sizeof(struct ns_proc_head) == 16, "ns_proc_head is ABI");

struct ns_proc_exec {
	struct ns_proc_head h;
	__u32 ppid;
	__u32 uid;
	struct ns_cgroup_ids cgroups;
	__u32 filename_len; /* bytes of filename used, without NUL */
	__u32 args_len;	    /* bytes of args used; arguments separated by NUL */
	char comm[NS_COMM_LEN];
	char filename[NS_PATH_LEN];
	char args[NS_ARGS_LEN];
};
_Static_assert(sizeof(struct ns_proc_exec) == 584, "ns_proc_exec is ABI");

struct ns_proc_exit {
	struct ns_proc_head h;
	__u32 exit_code; /* (status >> 8) & 0xff */
	__u32 signal;	 /* status & 0x7f, 0 when it exited by itself */
	__u64 duration_ns; /* since the process started */
	struct ns_cgroup_ids cgroups;
	char comm[NS_COMM_LEN];
};
_Static_assert(sizeof(struct ns_proc_exit) == 72, "ns_proc_exit is ABI");

struct ns_proc_fork {
	struct ns_proc_head h;
	__u32 ppid;
	__u32 pad;
	__u64 cgroup_id;
	char comm[NS_COMM_LEN];
};
_Static_assert(sizeof(struct ns_proc_fork) == 48, "ns_proc_fork is ABI");

struct ns_proc_oom {
	struct ns_proc_head h;
	__u32 trigger_pid; /* the process whose allocation invoked the OOM killer */
	__u32 pad;
};
_Static_assert(sizeof(struct ns_proc_oom) == 24, "ns_proc_oom is ABI");

enum ns_tcp_event_type {
	NS_TCP_CONNECT = 1,	  /* outbound connection established */
	NS_TCP_CONNECT_ERROR = 2, /* outbound connection failed; err = errno */
	NS_TCP_ACCEPT = 3,	  /* inbound connection accepted by pid */
	NS_TCP_CLOSE = 4,	  /* a connection ended; bytes and duration */
	NS_TCP_LISTEN = 5,
	NS_TCP_LISTEN_CLOSE = 6,
	NS_TCP_RETRANSMIT = 7,
};

#define NS_TCP_F_INBOUND 1u	/* the connection was accepted, not connected */
#define NS_TCP_F_KNOWN 2u	/* the agent saw it start (else it predates the agent) */
/* close: the byte counters include a FIN's sequence number (user space subtracts it) */
#define NS_TCP_F_FIN_ACKED 4u
#define NS_TCP_F_FIN_RECEIVED 8u

/* Addresses in network byte order; IPv4 in the first 4 bytes of the 16. */
struct ns_tcp_event {
	__u32 type; /* enum ns_tcp_event_type */
	__u32 pid;  /* owner of the socket; 0 if unknown */
	__u64 ts_ns;
	__u64 sock;	/* kernel socket address: with start_ns, names the connection */
	__u64 start_ns; /* when the connection started (0 if unknown) */
	__s32 fd;	/* -1 if unknown */
	__u16 family;	/* AF_INET or AF_INET6 */
	__u16 flags;	/* NS_TCP_F_* */
	__u16 sport;	/* host byte order */
	__u16 dport;
	union {
		__s32 err;   /* connect_error: errno */
		/*
		 * retransmit: the segments sent again (the kernel's tcp_skb_pcount,
		 * which it adds to tcpi_total_retrans; one event can carry several).
		 */
		__u32 segs;
	};
	__u8 saddr[16];
	__u8 daddr[16];
	__u64 duration_ns; /* connect/connect_error: handshake; close: connection lifetime */
	__u64 bytes_sent;  /* close: tcp_sock bytes_acked (with SYN and FIN, see flags) */
	__u64 bytes_received;
};
_Static_assert(sizeof(struct ns_tcp_event) == 104, "ns_tcp_event is ABI");

/* Payload prefixes of socket reads and writes (stream l7). */
#define NS_L7_CAPTURE 4096 /* most bytes captured of one syscall (power of two) */
/* DNS's port: a UDP socket sending to it or bound to it, a TCP connection to it, is DNS. */
#define NS_DNS_PORT 53

enum ns_l7_op {
	NS_L7_WRITE = 1,
	NS_L7_READ = 2,
	/*
	 * A TLS session's socket became known: conn and fd are the socket's,
	 * data holds the session (a u64, the library's SSL *). Records of that
	 * session sent before with NS_L7_F_UNBOUND belong to this connection.
	 */
	NS_L7_BIND = 3,
};

/* Where a captured buffer came from. */
#define NS_L7_F_INBOUND 1u /* the connection was accepted (this side is the server) */
#define NS_L7_F_TLS 2u	   /* plaintext from a TLS library */
/* Its raw bytes are TLS records (ciphertext): the socket syscalls are not captured. */
#define NS_L7_F_ENCRYPTED 4u
/*
 * Plaintext of a TLS session whose socket is not known yet (a library on
 * memory BIOs, whose event loop writes the ciphertext after the call): fd is
 * -1, conn.sock holds the session (SSL *), and an NS_L7_BIND record follows.
 */
#define NS_L7_F_UNBOUND 8u
/*
 * A UDP socket of DNS (connected to port 53, sending to it unconnected, or
 * bound to it: a server's, with NS_L7_F_INBOUND): each record is one
 * datagram (a DNS message), not a piece of a stream, and conn.daddr/dport
 * is that datagram's peer; conn.start_ns is when the socket was first seen.
 */
#define NS_L7_F_DNS 16u
/*
 * A DNS datagram received under the socket hooks from a socket that names
 * each datagram's source: the kernel copies the source out after the hook,
 * so it is not known (conn.daddr and dport are 0), and its question or
 * answer pairs by socket and id alone.
 */
#define NS_L7_F_PEER_UNKNOWN 32u

/* What the BPF side remembers of a tracked socket, per (tgid, fd). */
struct ns_l7_sock {
	__u64 sock;
	__u64 start_ns;
	__u16 flags; /* NS_L7_F_* */
	__u16 family;
	__u16 sport; /* local, host order */
	__u16 dport; /* remote */
	__u8 saddr[16];
	__u8 daddr[16];
};
_Static_assert(sizeof(struct ns_l7_sock) == 56, "ns_l7_sock is ABI");

struct ns_l7_event {
	__u32 op;  /* enum ns_l7_op */
	__u32 pid;
	__u64 ts_ns; /* write: when it started; read: when it returned */
	__s32 fd;
	__u32 total;	/* bytes the syscall moved */
	__u32 captured; /* bytes of data[] that follow (<= NS_L7_CAPTURE) */
	__u32 pad;
	struct ns_l7_sock conn;
	__u8 data[NS_L7_CAPTURE];
};
_Static_assert(sizeof(struct ns_l7_event) == 88 + NS_L7_CAPTURE, "ns_l7_event is ABI");

#define NS_L7_HEADER_SIZE (sizeof(struct ns_l7_event) - NS_L7_CAPTURE)

/* Why the BPF side could not keep tracking state (the ns_drops map's index). */
enum ns_drop_reason {
	NS_DROP_SOCKS_FULL = 0,	   /* tcp: socket owner table full */
	NS_DROP_PENDING_FULL = 1,  /* tcp: connect()/listen() in flight table full */
	NS_DROP_L7_SOCKS_FULL = 2, /* l7: tracked socket table full */
	NS_DROP_L7_CALLS_FULL = 3, /* l7: no storage for a read/write in flight (no longer counted: l7 keeps none) */
	NS_DROP_TLS_CALLS_FULL = 4, /* tls: no room for a library call in flight */
	NS_DROP_TLS_NO_SOCKET = 5,  /* tls: plaintext whose socket was not found */
	NS_DROP_FILES_SEEN_FULL = 6, /* files: could not remember a file (reported again) */
	NS_DROP_HOLDS_FULL = 7,	     /* files: a first run not held, the table of holds full */
	NS_DROP_L7_RECORDS_BUSY = 8, /* l7: every record of a CPU held by preempted programs */
	NS_DROP_COUNT,
};

/*
 * TLS library functions probed for plaintext, as the uprobe's BPF cookie.
 * Entry probes save the call; probes on the function's return instructions
 * (not uretprobes) read the result and emit the plaintext on stream l7.
 */
enum ns_tls_fn {
	NS_TLS_RET = 0,		  /* a return instruction of any of the below */
	NS_TLS_SSL_WRITE = 1,	  /* int SSL_write(SSL *, const void *buf, int num) */
	NS_TLS_SSL_READ = 2,	  /* int SSL_read(SSL *, void *buf, int num) */
	NS_TLS_SSL_WRITE_EX = 3,  /* int SSL_write_ex(SSL *, buf, size_t num, size_t *written) */
	NS_TLS_SSL_READ_EX = 4,	  /* int SSL_read_ex(SSL *, buf, size_t num, size_t *readbytes) */
	NS_TLS_GNUTLS_SEND = 5,	  /* ssize_t gnutls_record_send(session, const void *, size_t) */
	NS_TLS_GNUTLS_RECV = 6,	  /* ssize_t gnutls_record_recv(session, void *, size_t) */
	NS_TLS_GO_WRITE = 7,	  /* Go: func (c *tls.Conn) Write(b []byte) (int, error) */
	NS_TLS_GO_READ = 8,	  /* Go: func (c *tls.Conn) Read(b []byte) (int, error) */
	NS_TLS_FN_COUNT,
};

/* Go cookies: the function in the low byte, and these flags. */
#define NS_TLS_COOKIE_FN(c) ((c)&0xffu)
#define NS_TLS_COOKIE_RET (1u << 8)	      /* a return site of that function */
#define NS_TLS_COOKIE_GO_STACK_ABI (1u << 9) /* Go < 1.17: arguments and results on the stack */

/*
 * Stream files, what must be acted on at once: an executable file mapped for
 * the first time since the agent started (exec, or mmap with PROT_EXEC), so
 * user space can probe it before the program calls into it; and the first
 * exec in a set of cgroups, so a new container is named while its runtime's
 * state and its cgroups still exist (the proc stream's exec record may be
 * read tens of ms later, after a 1 ms container is gone).
 */
enum ns_file_event_type {
	NS_FILE_EXEC = 1, /* the new program of an exec */
	NS_FILE_MMAP = 2, /* a file mapped executable (a library, by ld.so or dlopen) */
	NS_FILE_CGROUPS = 3, /* the first exec seen in these cgroups: struct ns_cgroups_event */
};

/*
 * A cgroup's path in its hierarchy as the kernel names it at the event
 * ("/docker/<id>"), read from the kernfs nodes up from the task's cgroup: a
 * container whose cgroups are gone before the record is read (`docker run
 * --rm` on a slow or busy node) is still named from it. Deeper or longer
 * paths are not sent (""), and the cgroup is then looked up by its id.
 */
#define NS_CGROUP_PATH_LEN 256 /* with its NUL; a power of two */
#define NS_CGROUP_DEPTH 10     /* components below the hierarchy's root */

/* The hierarchies of struct ns_cgroup_ids, in its order. */
enum ns_cgroup_hierarchy {
	NS_CGROUP_V2 = 0,
	NS_CGROUP_CPU = 1,
	NS_CGROUP_MEMORY = 2,
	NS_CGROUP_HIERARCHIES,
};

/* NS_FILE_CGROUPS: the ids and paths of a set of cgroups an exec was first seen in. */
struct ns_cgroups_event {
	__u32 type; /* NS_FILE_CGROUPS */
	__u32 pid;  /* the process whose exec it was */
	__u64 ts_ns;
	struct ns_cgroup_ids ids;
	/* by enum ns_cgroup_hierarchy; "" when not known (id 0, too deep, too long) */
	char paths[NS_CGROUP_HIERARCHIES][NS_CGROUP_PATH_LEN];
};
_Static_assert(sizeof(struct ns_cgroups_event) == 40 + 3 * NS_CGROUP_PATH_LEN,
	       "ns_cgroups_event is ABI");

/*
 * --hold-first-runs: the process was stopped (SIGSTOP) when it mapped this
 * new file; user space continues it (SIGCONT) once the file is probed.
 */
#define NS_FILE_F_HELD 1u

struct ns_file_event {
	__u32 type; /* enum ns_file_event_type */
	__u32 pid;
	__u64 ts_ns;
	__s32 fd;    /* mmap: the fd mapped (still open when the event was made); exec: -1 */
	__u32 flags; /* NS_FILE_F_* */
	__u64 addr;  /* mmap: where it was mapped */
	__u64 dev;   /* the kernel's dev_t (major << 20 | minor) */
	__u64 ino;
	/*
	 * The inode's generation: an inode number is reused once its file is
	 * gone (a deleted fresh copy), and dev+ino alone would take the new file
	 * for the old one. A probed inode is pinned by its uprobes, never reused.
	 */
	__u32 gen;
	__u32 pad;
};
_Static_assert(sizeof(struct ns_file_event) == 56, "ns_file_event is ABI");
_Static_assert(sizeof(struct ns_file_event) <= sizeof(struct ns_cgroups_event),
	       "the files stream's records fit its biggest");

/* The files_seen map's value, by (dev, ino). */
struct ns_file_seen {
	__u64 ts_ns; /* last mapped */
	__u32 gen;   /* the inode generation reported */
	__u32 pad;
};
_Static_assert(sizeof(struct ns_file_seen) == 16, "ns_file_seen is ABI");


/*
 * What the running kernel has, found by user space before load and written
 * into the programs' read-only data (ns_kernel_features, core_fixes.bpf.h):
 * the verifier drops the branch a kernel cannot run. A bit each.
 */
enum ns_kernel_feature {
	/* bpf_get_current_task_btf (5.11): task fields read directly, not copied out. */
	NS_FEAT_CURRENT_TASK_BTF = 1u << 0,
	/* Task storage for tracing programs (5.13): per-thread state lives in the task. */
	NS_FEAT_TASK_STORAGE = 1u << 1,
	/* bpf_get_attach_cookie for uprobes (5.15): which function a TLS probe is on. */
	NS_FEAT_ATTACH_COOKIE = 1u << 2,
	/* sched_process_exit's group_dead field (6.16): do_exit says "last thread out". */
	NS_FEAT_EXIT_GROUP_DEAD = 1u << 3,
	/* BPF ring buffers (5.8); without, every stream is a per-CPU perf buffer. */
	NS_FEAT_RING_BUFFER = 1u << 4,
	/*
	 * The socket hooks are attached instead of the syscall hooks (src/bpf/probes.c):
	 * what the syscall entry remembered comes from the saved registers.
	 */
	NS_FEAT_SOCKET_HOOKS = 1u << 5,
};

/*
 * What the reader of a stream tells its writers, in a mapped array.
 *
 * armed (perf-buffer streams, kernels without ring buffers): the reader's
 * doorbell. The reader sets armed before it reads the buffers; the first
 * record written after that clears it and rings the stream's bell (a second
 * perf buffer whose every record wakes the reader), so the reader is woken
 * when a record lands in buffers it had emptied, as a ring buffer does with
 * flag 0.
 *
 * batch_open (batched ring-buffer streams): the reader's flush timer is
 * armed, so records need wake nobody (below the watermark). The reader keeps
 * the batch open while its timer finds records, and closes it only when,
 * after clearing batch_open, the ring holds nothing: a writer that reserved
 * before that check is seen by it; one that reserved after reads batch_open
 * 0 (each side has a full barrier between its store and its load) and wakes
 * the reader as flag 0 does. So a steady stream costs the reader one wakeup
 * per timer period instead of two (the first record's and the timer's).
 */
struct ns_reader_state {
	__u32 armed;
	__u32 batch_open;
	/* bells rung (perf), batched records submitted (ring buffer): an atomic add, the barrier */
	__u64 rings;
};
_Static_assert(sizeof(struct ns_reader_state) == 16, "ns_reader_state is shared with BPF");

#endif
