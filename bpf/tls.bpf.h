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
};

/* The call a thread is in, in the thread's own storage (gone with the thread). */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct tls_call);
} tls_calls SEC(".maps") __weak;

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
