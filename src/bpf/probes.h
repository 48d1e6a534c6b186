/* Loading and attaching nodescope's BPF programs, with errors that name the probe. */
#ifndef NODESCOPE_BPF_PROBES_H
#define NODESCOPE_BPF_PROBES_H

#include <stdbool.h>
#include <stdint.h>

#include "events.h"
#include "features.h"

struct bpf_map;
struct bpf_program;
struct probes;

struct probes_opts {
	uint32_t ring_size[NS_STREAM_COUNT]; /* bytes, power of two >= page size; 0 = default */
	bool verbose;			     /* pass libbpf's debug output through */
	uint64_t cgroup_id;		     /* proc events only below this cgroup v2 (0: all) */
	uint32_t cgroup_level;
	kernel_features_t pretend_missing; /* --debug-kernel-lacks: run the paths of older kernels */
	bool syscall_hooks;		   /* --debug-syscall-hooks: not the socket hooks */
	const char *cgroup_v2_root;	   /* where cgroup2 is mounted (NULL: nowhere) */
	bool no_l7;			   /* --disable-l7-tracing: no L7 hook, no socket tracked */
};

/*
 * Loads what this kernel can run: a missing feature (features.h) turns its
 * part down or off and is reported on stderr. Returns 0, or an enum ns_exit
 * code after printing what went wrong.
 */
int probes_start(const struct probes_opts *o, struct probes **out);
/*
 * Attaches the programs (but the TLS uprobes, which go on files). After the
 * streams are open: a perf-buffer stream's CPUs have no buffer until its
 * reader puts one in, and what is written before would be lost.
 */
int probes_attach(struct probes *p);
/* Detaches what probes_attach attached (the maps and the TLS uprobes stay); probes_attach again undoes it. */
void probes_detach(struct probes *p);
void probes_stop(struct probes *p);

struct bpf_map *probes_ring(struct probes *p, enum ns_stream s);
struct bpf_map *probes_lost(struct probes *p, enum ns_stream s);
/*
 * Kernels without ring buffers: probes_ring is a perf event array of this
 * many bytes per CPU (0: a ring buffer), woken through the doorbell maps.
 */
uint32_t probes_perf_cpu_bytes(const struct probes *p, enum ns_stream s);
struct bpf_map *probes_bell(struct probes *p, enum ns_stream s);
struct bpf_map *probes_bell_state(struct probes *p, enum ns_stream s);
/* Per-CPU counters of state the BPF side could not keep (enum ns_drop_reason). */
struct bpf_map *probes_drops(struct probes *p);
/* (pid, fd) -> struct ns_l7_sock: the sockets whose reads and writes are captured. */
struct bpf_map *probes_l7_socks(struct probes *p);
/* The counting filter in front of l7_socks (bpf/l7_filter.h): its counters and epoch. */
struct ns_l7_filter;
struct ns_l7_filter *probes_l7_filter(struct probes *p);
/* Not counted in probes_attached: the programs the TLS manager attaches to files. */
unsigned probes_attached(const struct probes *p);
/* The TLS uprobe programs, by enum tls_prog (tls/plan.h). */
struct bpf_program *probes_tls_program(struct probes *p, unsigned which);
/* What the kernel offered (less what was pretended away). */
kernel_features_t probes_features(const struct probes *p);
/* TLS plaintext can be captured (uprobes know their function: attach cookies). */
bool probes_tls_possible(const struct probes *p);
/* The TLS programs take uprobe_multi links (else one perf-event uprobe per site). */
bool probes_tls_multi(const struct probes *p);
/* Files the files stream reported (key: struct { u64 dev, ino; }). */
struct bpf_map *probes_files_seen(struct probes *p);
/* --hold-first-runs: processes held (tgid -> ns), files reported and not probed yet. */
struct bpf_map *probes_held(struct probes *p);
struct bpf_map *probes_files_probing(struct probes *p);
/* The BPF side's hold switch (0: off), writable at run time. */
volatile uint32_t *probes_hold_switch(struct probes *p);
/*
 * Calls fn with each program's count of runs the kernel skipped because
 * another BPF program was running on that CPU (recursion_misses).
 */
void probes_foreach_misses(struct probes *p,
			   void (*fn)(void *ctx, const char *program, uint64_t misses), void *ctx);

#endif
