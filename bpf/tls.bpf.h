/*
 * What the TLS uprobes and the syscall hooks share: the library call a
 * thread is in, and which socket each TLS session writes to. A socket
 * syscall made inside SSL_read/SSL_write on the same thread names the
 * session's socket, with no per-version struct offsets. Defined weak in every
 * object that includes this; the static linker merges them.
 */
#ifndef NODESCOPE_TLS_BPF_H
#define NODESCOPE_TLS_BPF_H

#include "common.bpf.h"
#include "sockets.bpf.h"

struct tls_call {
	__u64 session; /* SSL * or gnutls_session_t */
	__u64 buf;
	__u64 len_ptr; /* _ex functions: where the byte count is written */
	__u64 sp;      /* stack pointer at entry: a return with the same one ends this call
			* (0: no call in flight; the storage outlives the call) */
	__u64 ts_ns;
	__s32 fd;      /* -1 until a socket syscall inside the call names it */
	__u32 fn;      /* enum ns_tls_fn */
	struct ns_l7_sock sock; /* fd's connection, copied: it may close before the call returns */
	/*
	 * Libraries on memory BIOs (Node.js, Python asyncio) never touch the
	 * socket inside a call: their event loop reads the ciphertext, feeds it
	 * in and calls SSL_read on the same thread, and writes out what SSL_write
	 * produced right after it. So a session with no known socket takes, for
	 * a read, the thread's latest ciphertext read and, for a write, the
	 * thread's next ciphertext write. Kept outside any call:
	 */
	__u64 pending_session;	      /* an SSL_write waiting for its ciphertext write */
	__u32 enc_read_set;	      /* enc_read_* hold this thread's latest ciphertext read */
	__s32 enc_read_fd;
	struct ns_l7_sock enc_read_sock;
};

/* The call a thread is in, in the thread's own storage (gone with the thread);
 * before 5.13 an LRU hash by thread id (core_fixes.bpf.h, ns_thread_slot). */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct tls_call);
} tls_calls SEC(".maps") __weak;

/*
 * A counting filter of the processes with a library call in flight: per
 * slot of processes, the threads whose tls_calls slot holds a call (sp set).
 * A socket syscall of a process whose slot is 0 is inside no call, known
 * from one load where the thread's slot would cost a helper call: every
 * plaintext read and write of the node, and every read that finds nothing,
 * asks. Every change of a call's sp goes through tls_call_begin and
 * tls_call_end. A count can only be too high (a thread that exits inside a
 * call, a slot evicted before 5.13), which costs the lookup, never a call.
 */
#define NS_TLS_ACTIVE_SLOTS 4096
__u32 ns_tls_active[NS_TLS_ACTIVE_SLOTS] __weak;

_Static_assert((NS_TLS_ACTIVE_SLOTS & (NS_TLS_ACTIVE_SLOTS - 1)) == 0, "a power of two: the slot is a mask");

static __always_inline __u32 *tls_active_slot(__u32 tgid)
{
	return &ns_tls_active[(tgid * 2654435761u) & (NS_TLS_ACTIVE_SLOTS - 1)];
}

/* false: no thread of tgid is inside a library call. */
static __always_inline bool tls_call_maybe(__u32 tgid)
{
	return *(volatile __u32 *)tls_active_slot(tgid) != 0;
}

/* c is the calling thread's slot; a call entered while another is open replaces it. */
static __always_inline void tls_call_begin(struct tls_call *c, __u32 tgid, __u64 sp)
{
	if (!c->sp)
		__sync_fetch_and_add(tls_active_slot(tgid), 1);
	c->sp = sp;
}

static __always_inline void tls_call_end(struct tls_call *c, __u32 tgid)
{
	if (c->sp)
		__sync_fetch_and_add(tls_active_slot(tgid), (__u32)-1);
	c->sp = 0;
}

struct tls_session_key {
	__u64 session;
	__u32 tgid;
	__u32 pad;
};

struct tls_session {
	__s32 fd;
	__u32 pad;
	struct ns_l7_sock sock;
};

/* Session -> socket, for calls served from the library's buffer with no syscall. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct tls_session_key);
	__type(value, struct tls_session);
} tls_sessions SEC(".maps") __weak;

/* The session's socket, if it is still the one open on that fd in tgid. */
static __always_inline struct tls_session *tls_session_of(__u64 session, __u32 tgid)
{
	struct tls_session_key k = { .session = session, .tgid = tgid };
	struct tls_session *known = bpf_map_lookup_elem(&tls_sessions, &k);
	if (!known)
		return NULL;
	/* An SSL * freed and reused for another connection names a socket since closed. */
	__u64 key = l7_key(tgid, known->fd);
	struct ns_l7_sock *open = bpf_map_lookup_elem(&l7_socks, &key);
	if (!open || open->sock != known->sock.sock || open->start_ns != known->sock.start_ns)
		return NULL;
	return known;
}

static __always_inline void tls_session_bind(__u64 session, __u32 tgid, __s32 fd,
					     const struct ns_l7_sock *sock)
{
	struct tls_session_key k = { .session = session, .tgid = tgid };
	struct tls_session ts = { .fd = fd, .sock = *sock };
	bpf_map_update_elem(&tls_sessions, &k, &ts, BPF_ANY);
}

/* Plaintext a TLS call moved, handed to the l7 stream (ns_l7_emit_tls). */
struct tls_plaintext {
	__u32 op; /* enum ns_l7_op */
	__s32 fd;
	__u64 ts_ns; /* when the call started */
	__u64 total; /* bytes moved */
	__u64 buf;
	struct ns_l7_sock sock;
};

#endif
