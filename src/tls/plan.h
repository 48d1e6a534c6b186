/*
 * Which uprobes a file needs for TLS plaintext: the entry of each TLS
 * library function it defines (SSL_write, SSL_read, their _ex forms,
 * gnutls_record_send/recv; in a Go program crypto/tls.(*Conn).Write and
 * Read, found through the pclntab even when stripped) and every return
 * instruction that can end one.
 * Pure: reads the file, nothing else.
 */
#ifndef NODESCOPE_TLS_PLAN_H
#define NODESCOPE_TLS_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "events.h"

#define TLS_PLAN_MAX 512 /* uprobes for one file */

/* The BPF program a site gets (bpf/tls.bpf.c). */
enum tls_prog {
	TLS_PROG_ENTRY,	   /* ns_tls_enter: C functions */
	TLS_PROG_RET,	   /* ns_tls_ret */
	TLS_PROG_GO_ENTRY, /* ns_tls_go_enter: Go's crypto/tls */
	TLS_PROG_GO_RET,   /* ns_tls_go_ret */
	TLS_PROG_COUNT,
};

struct tls_probe_site {
	uint64_t offset; /* file offset of the instruction */
	uint32_t prog;	 /* enum tls_prog */
	uint32_t cookie; /* enum ns_tls_fn, with NS_TLS_COOKIE_* flags for Go */
};

struct tls_plan {
	const char *library;  /* "openssl", "gnutls" or "go"; NULL when the file has none */
	char go_version[64];  /* "go1.19.8" for a Go program */
	unsigned functions;   /* entry points planned */
	unsigned skipped;     /* functions found but not probeable (see error) */
	size_t n;
	struct tls_probe_site sites[TLS_PLAN_MAX];
	char error[160];      /* why a function was skipped, "" if none was */
};

/*
 * What identifies a program's contents cheaply: its size and build id (GNU
 * or Go note), read from the program headers with a few preads. Two files
 * with the same key get the same plan, so a fresh copy of a known binary
 * (a first run from a new path) is probed without planning again.
 */
struct tls_plan_key {
	uint64_t size;
	uint32_t id_len; /* 0: no build id, the file can't be keyed */
	uint8_t id[128];
};

/* 0, or -ENOEXEC (not a 64-bit little-endian ELF) / -errno. */
int tls_plan_key_fd(int fd, struct tls_plan_key *key);

/*
 * Plans the probes for the ELF file open on fd. Returns 0 (plan->n == 0 when
 * the file has no TLS functions, which is the common case), -ENOEXEC when it
 * is not an executable or shared ELF, or another -errno when it can't be read.
 * A function whose return sites can't all be found is skipped (counted in
 * skipped, its reason in error): a partial set would leave calls open.
 */
int tls_plan_fd(int fd, struct tls_plan *plan);

#endif
