/*
 * --hold-first-runs: a process that maps a file nobody has probed yet is
 * stopped by the BPF side (SIGSTOP, before the new program's first
 * instruction) and continued here (SIGCONT) once that file's probes are in
 * place, so even a first run's first TLS record is seen.
 *
 * Never leave a process stopped: a watchdog process, forked before holds
 * are turned on, waits for the agent to end by any means (SIGKILL included)
 * and then continues everything still held. At a clean stop the agent turns
 * holds off and continues what is held itself.
 */
#ifndef NODESCOPE_TLS_HOLD_H
#define NODESCOPE_TLS_HOLD_H

#include <stdint.h>

struct loop;
struct metric_registry;
struct tls_hold;

struct tls_hold_opts {
	struct metric_registry *registry;
	struct loop *loop; /* watches the watchdog: if it goes, holds go off */
	int held_fd;			   /* BPF hash: tgid -> when it was stopped */
	int probing_fd;			   /* BPF hash: files reported, not yet probed */
	volatile uint32_t *enabled;	   /* the BPF side's switch (.bss) */
};

/* Forks the watchdog, then turns holds on. Returns 0 or -errno (holds stay off). */
int tls_hold_start(const struct tls_hold_opts *o, struct tls_hold **out);
/* The file (kernel dev, ino) of a files event is handled: later maps of it are not held. */
void tls_hold_file_done(struct tls_hold *h, uint64_t kdev, uint64_t ino);
/* Continues pid, stopped at ts_ns (CLOCK_MONOTONIC) for a file now probed. */
void tls_hold_release(struct tls_hold *h, uint32_t pid, uint64_t ts_ns);
/* Turns holds off and continues every process still held. NULL-safe. */
void tls_hold_stop(struct tls_hold *h);

/* The watchdog's work, also the agent's at stop: continue and forget all held. */
unsigned tls_hold_continue_all(int held_fd);

#endif
