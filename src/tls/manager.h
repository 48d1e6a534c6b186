/*
 * The TLS uprobe manager: probes files, not processes. Each executable file
 * (device + inode) is inspected once; one holding TLS library functions gets
 * their entry and return-site uprobes, shared by every process that maps it,
 * now or later. Files come from the files stream (execs and new executable
 * mappings, so a library loaded after start-up is probed before its first
 * TLS record) and, at start-up, from the host's library dirs and every
 * process' mappings.
 */
#ifndef NODESCOPE_TLS_MANAGER_H
#define NODESCOPE_TLS_MANAGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan.h"

struct bpf_program;
struct link_closer;
struct metric_registry;
struct tls_hold;
struct trace;
struct tls_manager;

struct tls_manager_opts {
	struct metric_registry *registry;
	struct trace *trace; /* may be NULL: "tls_probe" lines */
	struct bpf_program *progs[TLS_PROG_COUNT];
	bool uprobe_multi;   /* the programs were loaded for uprobe_multi links */
	struct link_closer *closer; /* closes released files' links (NULL: here, blocking) */
	int files_seen_fd;   /* BPF map of reported files: a file not inspected is forgotten */
	size_t max_files;    /* inspected files remembered */
	/*
	 * A file no process has mapped for this long loses its probes (0: never).
	 * Checked when files-stream events arrive, never on a timer; files of
	 * the host's library dirs keep theirs, so a first run never races.
	 */
	uint64_t release_after_ns;
};

int tls_manager_new(const struct tls_manager_opts *o, struct tls_manager **out);
void tls_manager_free(struct tls_manager *m);
/* stream_record_fn for the files stream. */
int tls_manager_on_record(void *ctx, const void *data, size_t len);
/* --hold-first-runs: processes held for a file go on once it is handled. */
void tls_manager_set_hold(struct tls_manager *m, struct tls_hold *h);
/* Probes what is installed and mapped now (call after the files stream is open). */
void tls_manager_scan(struct tls_manager *m);

#endif
