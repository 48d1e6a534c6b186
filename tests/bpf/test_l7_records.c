/*
 * The l7 stream's per-CPU records (bpf/l7_records.bpf.h), run in the kernel
 * on one CPU: a record taken is held until given back, no two
 * runs hold the same one, a fifth take while four are held fails and is
 * counted, and a give frees its record for the next take. A program that
 * took the record another one on its CPU was still building (preempted)
 * would send that one's bytes as its own, or garble them.
 * Loads BPF: run as root; fails, never skips, where it cannot.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/features.h"
#include "events.h"
#include "l7_filter.h" /* the skeleton's .bss holds struct ns_l7_filter */
#include "l7_records.skel.h"
#include "kernel_test.h"

enum { OP_TAKE, OP_GIVE, OP_HELD };
#define RECORDS 4

KERNEL_TEST_SKELETON(l7_records)

/* Every run on CPU 0: the records are per CPU. */
static int run(uint64_t op, uint64_t arg)
{
	uint64_t args[2] = { op, arg };
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = args, .ctx_size_in = sizeof(args),
		    .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = 0);

	assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(skel->progs.l7_records_op), &o), 0);
	return (int)o.retval;
}

/* NS_DROP_L7_RECORDS_BUSY over every CPU. */
static uint64_t busy_drops(void)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *v = calloc(ncpu, sizeof(*v)), sum = 0;
	uint32_t key = NS_DROP_L7_RECORDS_BUSY;

	assert_non_null(v);
	assert_int_equal(bpf_map__lookup_elem(skel->maps.ns_drops, &key, sizeof(key), v,
					      ncpu * sizeof(*v), 0), 0);
	for (int i = 0; i < ncpu; i++)
		sum += v[i];
	free(v);
	return sum;
}

/* A run asked for on CPU 0 from another CPU happens in an interrupt there: a record is held all the same. */
static int fit_skeleton(struct l7_records_bpf *s)
{
	s->rodata->ns_kernel_features = kernel_features_bpf_bits(kernel_features_probe(0));
	return 0;
}

static void each_take_holds_its_own_record_until_given_back(void **state)
{
	int seen = 0;

	for (int i = 0; i < RECORDS; i++) {
		int slot = run(OP_TAKE, 0);
		assert_in_range(slot, 0, RECORDS - 1);
		assert_false(seen & 1 << slot); /* no record held twice */
		seen |= 1 << slot;
		assert_int_equal(run(OP_HELD, slot), 1);
	}
	uint64_t before = busy_drops();
	assert_int_equal(run(OP_TAKE, 0), -1);
	assert_int_equal(busy_drops(), before + 1);

	assert_int_equal(run(OP_GIVE, 2), 0);
	assert_int_equal(run(OP_HELD, 2), 0);
	assert_int_equal(run(OP_TAKE, 0), 2); /* the one given back, and only it */
	assert_int_equal(run(OP_TAKE, 0), -1);
	for (int i = 0; i < RECORDS; i++)
		assert_int_equal(run(OP_GIVE, i), 0);
}

static void taken_and_given_back_forever_never_runs_out(void **state)
{
	uint64_t before = busy_drops();

	for (int i = 0; i < 1000; i++) {
		int slot = run(OP_TAKE, 0);
		assert_int_equal(slot, 0); /* the first free one, every time */
		assert_int_equal(run(OP_GIVE, slot), 0);
	}
	assert_int_equal(busy_drops(), before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(each_take_holds_its_own_record_until_given_back),
		cmocka_unit_test(taken_and_given_back_forever_never_runs_out),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
