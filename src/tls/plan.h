/*
 * Which uprobes a file needs for TLS plaintext: the entry of each TLS
 * library function it defines (SSL_write, SSL_read, their _ex forms,
 * gnutls_record_send/recv) and every return instruction that can end one.
 * Pure: reads the file, nothing else.
 */
#ifndef NODESCOPE_TLS_PLAN_H
#define NODESCOPE_TLS_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "events.h"

#define TLS_PLAN_MAX 512 /* uprobes for one file */

struct tls_probe_site {
	uint64_t offset; /* file offset of the instruction */
	uint32_t fn;	 /* enum ns_tls_fn: the cookie (NS_TLS_RET on return sites) */
};

struct tls_plan {
	const char *library;  /* "openssl" or "gnutls"; NULL when the file has none */
	unsigned functions;   /* entry points planned */
	unsigned skipped;     /* functions found but not probeable (see error) */
	size_t n;
	struct tls_probe_site sites[TLS_PLAN_MAX];
	char error[160];      /* why a function was skipped, "" if none was */
};

/*
 * Plans the probes for the ELF file open on fd. Returns 0 (plan->n == 0 when
 * the file has no TLS functions, which is the common case), -ENOEXEC when it
 * is not an executable or shared ELF, or another -errno when it can't be read.
 * A function whose return sites can't all be found is skipped (counted in
 * skipped, its reason in error): a partial set would leave calls open.
 */
int tls_plan_fd(int fd, struct tls_plan *plan);

#endif
