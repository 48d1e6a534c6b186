/*
 * What every kernel test (tests/bpf/test_X.c) does around its cases: open the
 * skeleton of tests/bpf/X.bpf.c, let the test fit it to this kernel
 * (fit_skeleton, which the test defines), load it, and destroy it at the end;
 * a step that fails says which and fails the group, never skips it. A macro:
 * each skeleton is a type of its own.
 */
#ifndef NODESCOPE_KERNEL_TEST_H
#define NODESCOPE_KERNEL_TEST_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define KERNEL_TEST_SKELETON(name)                                                              \
	static struct name##_bpf *skel;                                                         \
	static int fit_skeleton(struct name##_bpf *s);                                          \
	static int setup(void **state)                                                          \
	{                                                                                       \
		skel = name##_bpf__open();                                                      \
		if (!skel) {                                                                    \
			fprintf(stderr, "cannot open the test's BPF object: %s\n", strerror(errno)); \
			return -1;                                                              \
		}                                                                               \
		if (fit_skeleton(skel))                                                         \
			return -1;                                                              \
		if (name##_bpf__load(skel)) {                                                   \
			fprintf(stderr, "cannot load the test's BPF programs (root and BPF needed): %s\n", \
				strerror(errno));                                               \
			return -1;                                                              \
		}                                                                               \
		return 0;                                                                       \
	}                                                                                       \
	static int teardown(void **state)                                                       \
	{                                                                                       \
		name##_bpf__destroy(skel);                                                      \
		return 0;                                                                       \
	}

#endif
