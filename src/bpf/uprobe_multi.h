/*
 * uprobe_multi links (kernel 6.6+): many offsets of one file on one BPF
 * program in one system call, and — what matters most — removed with one
 * RCU-tasks-trace grace period for the whole link instead of one per uprobe
 * (a perf-event uprobe costs tens of milliseconds to detach, so a few
 * hundred of them held shutdown for seconds). Debian 12's libbpf (1.1)
 * predates them, so the link is created with the bpf() system call here.
 */
#ifndef NODESCOPE_BPF_UPROBE_MULTI_H
#define NODESCOPE_BPF_UPROBE_MULTI_H

#include <stddef.h>
#include <stdint.h>

#define NS_BPF_TRACE_UPROBE_MULTI 48 /* enum bpf_attach_type */

/* Whether this kernel creates uprobe_multi links (asks it once, then remembers). */
int uprobe_multi_supported(void);

/*
 * Attaches prog_fd (loaded with expected_attach_type
 * NS_BPF_TRACE_UPROBE_MULTI) to n offsets of the file at path, for every
 * process, each with its cookie. Returns the link fd (close it to detach) or
 * -errno.
 */
int uprobe_multi_attach(int prog_fd, const char *path, const uint64_t *offsets,
			const uint64_t *cookies, size_t n);

#endif
