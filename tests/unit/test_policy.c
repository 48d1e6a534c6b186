#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "loop/policy.h"
#include "loop/stream.h"
#include "wakeup.h"

static const struct stream_policy immediate = { .kind = NS_WAKEUP_IMMEDIATE };
static const struct stream_policy batched = {
	.kind = NS_WAKEUP_BATCHED,
	.max_delay_ns = 5000000,
	.watermark = 4096,
};

/* ---- stream_policy_on_wakeup ---- */

static void test_immediate_always_drains(void **state)
{
	static const uint64_t pending[] = { 0, 1, 4095, 4096, 1u << 30, UINT64_MAX };

	for (size_t i = 0; i < sizeof(pending) / sizeof(pending[0]); i++) {
		assert_int_equal(stream_policy_on_wakeup(&immediate, false, pending[i]),
				 STREAM_DRAIN);
		assert_int_equal(stream_policy_on_wakeup(&immediate, true, pending[i]),
				 STREAM_DRAIN);
	}
	/* immediate ignores any batched settings left in the struct */
	struct stream_policy p = immediate;
	p.max_delay_ns = 1000;
	p.watermark = 100;
	assert_int_equal(stream_policy_on_wakeup(&p, false, 1), STREAM_DRAIN);
	assert_int_equal(stream_policy_on_wakeup(&p, true, 1), STREAM_DRAIN);
}

static void test_batched_below_watermark(void **state)
{
	/* no timer yet: arm it and leave the data */
	assert_int_equal(stream_policy_on_wakeup(&batched, false, 0), STREAM_ARM_TIMER);
	assert_int_equal(stream_policy_on_wakeup(&batched, false, 1), STREAM_ARM_TIMER);
	assert_int_equal(stream_policy_on_wakeup(&batched, false, 4095), STREAM_ARM_TIMER);
	/* a flush is already scheduled */
	assert_int_equal(stream_policy_on_wakeup(&batched, true, 0), STREAM_WAIT);
	assert_int_equal(stream_policy_on_wakeup(&batched, true, 1), STREAM_WAIT);
	assert_int_equal(stream_policy_on_wakeup(&batched, true, 4095), STREAM_WAIT);
}

static void test_batched_at_or_over_watermark(void **state)
{
	assert_int_equal(stream_policy_on_wakeup(&batched, false, 4096), STREAM_DRAIN);
	assert_int_equal(stream_policy_on_wakeup(&batched, true, 4096), STREAM_DRAIN);
	assert_int_equal(stream_policy_on_wakeup(&batched, false, 4097), STREAM_DRAIN);
	assert_int_equal(stream_policy_on_wakeup(&batched, true, 1u << 20), STREAM_DRAIN);
	assert_int_equal(stream_policy_on_wakeup(&batched, true, UINT64_MAX), STREAM_DRAIN);
}

static void test_batched_degenerate(void **state)
{
	struct stream_policy p = batched;

	/* no watermark: only the timer drains */
	p.watermark = 0;
	assert_int_equal(stream_policy_on_wakeup(&p, false, UINT64_MAX), STREAM_ARM_TIMER);
	assert_int_equal(stream_policy_on_wakeup(&p, true, UINT64_MAX), STREAM_WAIT);
	/* no delay: nothing to batch with, drain */
	p = batched;
	p.max_delay_ns = 0;
	assert_int_equal(stream_policy_on_wakeup(&p, false, 1), STREAM_DRAIN);
	assert_int_equal(stream_policy_on_wakeup(&p, true, 1), STREAM_DRAIN);
	/* watermark 1: any pending byte drains */
	p = batched;
	p.watermark = 1;
	assert_int_equal(stream_policy_on_wakeup(&p, false, 0), STREAM_ARM_TIMER);
	assert_int_equal(stream_policy_on_wakeup(&p, false, 1), STREAM_DRAIN);
}

static void test_batched_sequence(void **state)
{
	/* what a reader sees as data piles up: arm, wait, wait, drain */
	bool armed = false;
	uint64_t pending = 0;
	enum stream_action a;

	pending += 100;
	a = stream_policy_on_wakeup(&batched, armed, pending);
	assert_int_equal(a, STREAM_ARM_TIMER);
	armed = true;
	pending += 2000;
	assert_int_equal(stream_policy_on_wakeup(&batched, armed, pending), STREAM_WAIT);
	pending += 1995; /* 4095 */
	assert_int_equal(stream_policy_on_wakeup(&batched, armed, pending), STREAM_WAIT);
	pending += 1;
	assert_int_equal(stream_policy_on_wakeup(&batched, armed, pending), STREAM_DRAIN);
}

/* ---- ns_wakeup_flags (the BPF side) ---- */

static void test_wakeup_immediate(void **state)
{
	/* immediate: the kernel's own wakeup (flag 0) below the watermark... */
	assert_int_equal(ns_wakeup_flags(NS_WAKEUP_IMMEDIATE, 0, 65536), 0);
	assert_int_equal(ns_wakeup_flags(NS_WAKEUP_IMMEDIATE, 65535, 65536), 0);
	/* ...and a forced one past it, so a reader that missed a wakeup is woken again */
	assert_int_equal(ns_wakeup_flags(NS_WAKEUP_IMMEDIATE, 65536, 65536), BPF_RB_FORCE_WAKEUP);
	/* no watermark: flag 0 always */
	assert_int_equal(ns_wakeup_flags(NS_WAKEUP_IMMEDIATE, UINT64_MAX, 0), 0);
}

static void test_wakeup_batched(void **state)
{
	assert_int_equal(ns_wakeup_flags(NS_WAKEUP_BATCHED, 0, 4096), 0);
	assert_int_equal(ns_wakeup_flags(NS_WAKEUP_BATCHED, 1, 4096), 0);
	assert_int_equal(ns_wakeup_flags(NS_WAKEUP_BATCHED, 4095, 4096), 0);
	assert_int_equal(ns_wakeup_flags(NS_WAKEUP_BATCHED, 4096, 4096), BPF_RB_FORCE_WAKEUP);
	assert_int_equal(ns_wakeup_flags(NS_WAKEUP_BATCHED, 4097, 4096), BPF_RB_FORCE_WAKEUP);
	assert_int_equal(ns_wakeup_flags(NS_WAKEUP_BATCHED, UINT64_MAX, 4096),
			 BPF_RB_FORCE_WAKEUP);
	assert_int_equal(ns_wakeup_flags(NS_WAKEUP_BATCHED, 0, 1), 0);
	assert_int_equal(ns_wakeup_flags(NS_WAKEUP_BATCHED, 1, 1), BPF_RB_FORCE_WAKEUP);
	assert_int_equal(ns_wakeup_flags(NS_WAKEUP_BATCHED, UINT64_MAX, UINT64_MAX),
			 BPF_RB_FORCE_WAKEUP);
}

/* A CPU looks at the ring once per query_bytes it wrote, counting from its last look. */
static void test_query_due(void **state)
{
	__u64 since = 0;

	assert_false(ns_query_due(&since, 100, 1000));
	assert_false(ns_query_due(&since, 899, 1000));
	assert_int_equal(since, 999);
	assert_true(ns_query_due(&since, 1, 1000));
	assert_int_equal(since, 0);
	/* a record bigger than the interval looks at once */
	assert_true(ns_query_due(&since, 5000, 1000));
	assert_int_equal(since, 0);
	/* 0: every record */
	for (int i = 0; i < 3; i++)
		assert_true(ns_query_due(&since, 1, 0));
}

/* The CPUs' lateness past the watermark adds up to half of it at most. */
static void test_query_bytes(void **state)
{
	assert_int_equal(ns_query_bytes(1 << 20, 2), 256 << 10);
	assert_int_equal(ns_query_bytes(64 << 10, 64), 512);
	for (unsigned n = 1; n <= 512; n *= 2)
		assert_true((uint64_t)ns_query_bytes(1 << 20, n) * n <= (1 << 20) / 2);
	/* no CPU count: as one */
	assert_int_equal(ns_query_bytes(4096, 0), 2048);
	/* a small watermark on many CPUs: every record looks */
	assert_int_equal(ns_query_bytes(16, 64), 0);
	assert_int_equal(ns_query_bytes(UINT64_MAX, 1), 0xffffffffu);
}

static void test_wakeup_watermark_zero(void **state)
{
	assert_int_equal(ns_wakeup_flags(NS_WAKEUP_BATCHED, 0, 0), 0);
	assert_int_equal(ns_wakeup_flags(NS_WAKEUP_BATCHED, 1, 0), 0);
	assert_int_equal(ns_wakeup_flags(NS_WAKEUP_BATCHED, UINT64_MAX, 0), 0);
}

static void test_wakeup_unknown_policy(void **state)
{
	/* the policy does not matter to the kernel side: only the watermark does */
	assert_int_equal(ns_wakeup_flags(7, UINT64_MAX, 1), BPF_RB_FORCE_WAKEUP);
	assert_int_equal(ns_wakeup_flags(7, 0, 1), 0);
	assert_int_equal(BPF_RB_FORCE_WAKEUP, 2); /* the kernel's value, 1 << 1 */
}

/* A record submitted in place while the reader's batch is open wakes nobody... */
static void test_submit_flags_batch_open(void **state)
{
	assert_int_equal(ns_submit_flags(NS_WAKEUP_BATCHED, 0, 4096, 1), BPF_RB_NO_WAKEUP);
	assert_int_equal(ns_submit_flags(NS_WAKEUP_BATCHED, 4095, 4096, 1), BPF_RB_NO_WAKEUP);
	/* ...below the watermark: past it the reader is forced awake, open or not */
	assert_int_equal(ns_submit_flags(NS_WAKEUP_BATCHED, 4096, 4096, 1), BPF_RB_FORCE_WAKEUP);
	assert_int_equal(ns_submit_flags(NS_WAKEUP_BATCHED, 4096, 4096, 0), BPF_RB_FORCE_WAKEUP);
	/* closed: the kernel's own wakeup, the first record after an empty ring wakes */
	assert_int_equal(ns_submit_flags(NS_WAKEUP_BATCHED, 0, 4096, 0), 0);
	/* an immediate stream never holds back a wakeup */
	assert_int_equal(ns_submit_flags(NS_WAKEUP_IMMEDIATE, 0, 4096, 1), 0);
	assert_int_equal(BPF_RB_NO_WAKEUP, 1); /* the kernel's value, 1 << 0 */
}

static void test_wakeup_matches_user_side(void **state)
{
	/* the BPF side forces a wakeup exactly when the reader would then drain */
	static const uint64_t v[] = { 0, 1, 100, 4095, 4096, 4097, 1u << 20, UINT64_MAX };
	static const uint64_t wm[] = { 0, 1, 4096, 1u << 20 };

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		for (size_t j = 0; j < sizeof(wm) / sizeof(wm[0]); j++) {
			struct stream_policy p = batched;
			p.watermark = wm[j];
			bool forced = ns_wakeup_flags(NS_WAKEUP_BATCHED, v[i], wm[j]) != 0;
			bool drains = stream_policy_on_wakeup(&p, true, v[i]) == STREAM_DRAIN;
			assert_int_equal(forced, drains);
		}
	}
}

/* Both sides must force/expect a wakeup before a small ring can fill. */
static void test_watermark_fits_the_ring(void **state)
{
	const struct stream_def *tcp = stream_def_find("tcp");
	const struct stream_def *proc = stream_def_find("proc");

	assert_non_null(tcp);
	assert_non_null(proc);
	assert_int_equal(stream_watermark(tcp, 1 << 20), tcp->policy.watermark);
	assert_int_equal(stream_watermark(tcp, 16384), 8192);
	assert_int_equal(stream_watermark(tcp, 4096), 2048);
	/* ...and the user side drains at that fitted watermark. */
	struct stream_policy p = tcp->policy;
	p.watermark = stream_watermark(tcp, 16384);
	assert_int_equal(stream_policy_on_wakeup(&p, true, 8192), STREAM_DRAIN);
	assert_int_equal(stream_policy_on_wakeup(&p, true, 8191), STREAM_WAIT);
	assert_int_equal(stream_watermark(proc, 4096), 2048);
	assert_int_equal(stream_watermark(proc, 2 << 20), 512 * 1024);
	assert_int_equal(stream_watermark(proc, 512 * 1024), 256 * 1024);
}

/* Perf buffers (before 5.8): the stream's bytes shared out over the CPUs. */
static void test_perf_cpu_bytes(void **state)
{
	assert_int_equal(stream_perf_cpu_bytes(8 << 20, 2), 4 << 20);
	assert_int_equal(stream_perf_cpu_bytes(8 << 20, 3), 4 << 20); /* rounded up */
	assert_int_equal(stream_perf_cpu_bytes(1 << 20, 64), STREAM_PERF_MIN_CPU_BYTES);
	assert_int_equal(stream_perf_cpu_bytes(4096, 1), STREAM_PERF_MIN_CPU_BYTES);
	assert_int_equal(stream_perf_cpu_bytes(1 << 20, 0), 1 << 20);
	/* The watermark still fits: half a CPU's buffer at most. */
	assert_int_equal(stream_watermark(stream_def_find("l7"), stream_perf_cpu_bytes(1 << 20, 64)),
			 STREAM_PERF_MIN_CPU_BYTES / 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_immediate_always_drains),
		cmocka_unit_test(test_batched_below_watermark),
		cmocka_unit_test(test_batched_at_or_over_watermark),
		cmocka_unit_test(test_batched_degenerate),
		cmocka_unit_test(test_batched_sequence),
		cmocka_unit_test(test_wakeup_immediate),
		cmocka_unit_test(test_wakeup_batched),
		cmocka_unit_test(test_wakeup_watermark_zero),
		cmocka_unit_test(test_query_due),
		cmocka_unit_test(test_query_bytes),
		cmocka_unit_test(test_wakeup_unknown_policy),
		cmocka_unit_test(test_wakeup_matches_user_side),
		cmocka_unit_test(test_watermark_fits_the_ring),
		cmocka_unit_test(test_submit_flags_batch_open),
		cmocka_unit_test(test_perf_cpu_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
