/*
 * What the running kernel offers the BPF side, as a table: each feature's
 * name (the label of nodescope_feature_enabled), the first kernel with it,
 * and what nodescope does without it. Probed once before load; a missing
 * feature turns one thing off or down, never the whole agent (without ring
 * buffers, every stream runs on perf buffers).
 */
#ifndef NODESCOPE_BPF_FEATURES_H
#define NODESCOPE_BPF_FEATURES_H

#include <stdbool.h>
#include <stdint.h>

enum kernel_feature {
	KF_RING_BUFFER,
	KF_CURRENT_TASK_BTF,
	KF_TASK_STORAGE,
	KF_ATTACH_COOKIE,
	KF_UPROBE_MULTI,
	KF_EXIT_GROUP_DEAD,
	KF_TP_BTF,
	KF_SOCKET_HOOKS,
	KF_COUNT,
};

/* Threads whose call state is kept at once on kernels without task storage. */
#define KF_THREAD_SLOTS 32768

struct kernel_feature_def {
	const char *name;
	const char *since;   /* first mainline kernel that has it */
	const char *without; /* what nodescope does on a kernel without it; NULL: cannot run */
	uint32_t bpf_bit;    /* enum ns_kernel_feature handed to the BPF side, or 0 */
};

extern const struct kernel_feature_def kernel_feature_defs[KF_COUNT];

/* Bit i set: feature i present (and not pretended away). */
typedef uint32_t kernel_features_t;

/*
 * Probes the running kernel. pretend_missing (a mask of enum kernel_feature
 * bits, from --debug-kernel-lacks) is taken away from what was found, so the
 * degraded paths run on any kernel.
 */
kernel_features_t kernel_features_probe(kernel_features_t pretend_missing);

static inline bool kernel_has(kernel_features_t f, enum kernel_feature k)
{
	return f & (1u << k);
}

/* The kernel's BTF names tracepoint name (btf_trace_<name>): a BTF-typed program attaches to it. */
bool kernel_has_tracepoint(const char *name);

/* The enum ns_kernel_feature bits for the programs' read-only data. */
uint32_t kernel_features_bpf_bits(kernel_features_t f);

/* "task_storage,uprobe_multi" -> mask; -1 (and *bad set) for an unknown name. */
int kernel_features_parse(const char *list, kernel_features_t *out, const char **bad);

/* One line per missing feature on stderr: what it is, since when, what is off. */
void kernel_features_report(kernel_features_t f, const char *kernel_release);

#endif
