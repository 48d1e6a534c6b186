/*
 * Checks made before any BPF is loaded, each with a message that says what is
 * wrong and how to fix it. Each returns 0 or an enum ns_exit code, having
 * printed the message.
 */
#ifndef NODESCOPE_BPF_PREFLIGHT_H
#define NODESCOPE_BPF_PREFLIGHT_H

int preflight_privileges(void);
int preflight_btf(void);
/* The same check against another path (tests, other layouts). */
int preflight_btf_at(const char *vmlinux_btf);
/* Finds tracefs, mounting it at /sys/kernel/tracing when nothing is mounted. */
int preflight_tracefs(void);
/* Old kernels (< 5.11) charge BPF memory to RLIMIT_MEMLOCK: raise it. */
int preflight_memlock(void);

int preflight_all(void);

#endif
