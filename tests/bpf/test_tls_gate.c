/*
 * The filter of processes inside a TLS library call (bpf/tls.bpf.h), run in
 * the kernel on the test's own threads: a call opens its process's slot, its
 * end closes it, a nested call counts once, each thread counts apart, and no
 * end lowers a slot below what the calls raised. A slot left at 0 while a
 * call is open would hide the call's socket syscalls from it.
 * Loads BPF: run as root; fails, never skips, where it cannot.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bpf/features.h"
#include "l7_filter.h" /* the skeleton's .bss holds struct ns_l7_filter */
#include "tls_gate.skel.h"
#include "kernel_test.h"

enum { OP_BEGIN, OP_END, OP_MAYBE, OP_COUNT };

KERNEL_TEST_SKELETON(tls_gate)

static int run(uint64_t op, uint64_t arg)
{
	uint64_t args[2] = { op, arg };
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = args, .ctx_size_in = sizeof(args));

	assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(skel->progs.tls_gate_op), &o), 0);
	return (int)o.retval;
}

static int count(void)
{
	return run(OP_COUNT, (uint64_t)getpid());
}

static int fit_skeleton(struct tls_gate_bpf *s)
{
	kernel_features_t f = kernel_features_probe(0);

	s->rodata->ns_kernel_features = kernel_features_bpf_bits(f);
	/* As the agent does where there is no task storage (src/bpf/probes.c). */
	if (!kernel_has(f, KF_TASK_STORAGE) &&
	    (bpf_map__set_type(s->maps.tls_calls, BPF_MAP_TYPE_LRU_HASH) ||
	     bpf_map__set_map_flags(s->maps.tls_calls, 0) ||
	     bpf_map__set_max_entries(s->maps.tls_calls, 64)))
		return -1;
	return 0;
}

static void a_call_opens_its_process_and_its_end_closes_it(void **state)
{
	assert_int_equal(run(OP_MAYBE, getpid()), 0);
	assert_int_equal(run(OP_BEGIN, 0x7ff000), 0);
	assert_int_equal(count(), 1);
	assert_int_equal(run(OP_MAYBE, getpid()), 1);
	assert_int_equal(run(OP_END, 0), 0);
	assert_int_equal(count(), 0);
	assert_int_equal(run(OP_MAYBE, getpid()), 0);
}

static void a_nested_call_counts_once_and_an_extra_end_lowers_nothing(void **state)
{
	assert_int_equal(run(OP_BEGIN, 0x7ff000), 0);
	assert_int_equal(run(OP_BEGIN, 0x7fe000), 0); /* SSL_write inside a callback of SSL_read */
	assert_int_equal(count(), 1);
	assert_int_equal(run(OP_END, 0), 0);
	assert_int_equal(count(), 0);
	assert_int_equal(run(OP_END, 0), 0);
	assert_int_equal(count(), 0);
}

static void other_processes_stay_out(void **state)
{
	uint32_t other = (uint32_t)getpid() + 1;

	assert_int_equal(run(OP_BEGIN, 0x7ff000), 0);
	assert_int_equal(run(OP_MAYBE, other), 0);
	assert_int_equal(run(OP_END, 0), 0);
}

static pthread_barrier_t step;

static void *second_thread(void *arg)
{
	assert_int_equal(run(OP_BEGIN, 0x6ff000), 0);
	pthread_barrier_wait(&step); /* both threads inside a call */
	pthread_barrier_wait(&step); /* the first one's call ended */
	assert_int_equal(run(OP_END, 0), 0);
	return NULL;
}

static void each_thread_of_a_process_counts_apart(void **state)
{
	pthread_t t;

	assert_int_equal(pthread_barrier_init(&step, NULL, 2), 0);
	assert_int_equal(run(OP_BEGIN, 0x7ff000), 0);
	assert_int_equal(pthread_create(&t, NULL, second_thread, NULL), 0);
	pthread_barrier_wait(&step);
	assert_int_equal(count(), 2);
	assert_int_equal(run(OP_END, 0), 0);
	assert_int_equal(run(OP_MAYBE, getpid()), 1); /* the other thread is still inside */
	pthread_barrier_wait(&step);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(count(), 0);
	pthread_barrier_destroy(&step);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_call_opens_its_process_and_its_end_closes_it),
		cmocka_unit_test(a_nested_call_counts_once_and_an_extra_end_lowers_nothing),
		cmocka_unit_test(other_processes_stay_out),
		cmocka_unit_test(each_thread_of_a_process_counts_apart),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
