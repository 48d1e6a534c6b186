/*
 * A batched stream's copy-out writer (bpf/common.bpf.h, *_output: the l7
 * stream's), run in the kernel: the first record after the reader emptied the
 * ring wakes it; while the reader's batch is open (struct ns_reader_state)
 * records wake nobody and add no empty wakeup record of their own; closed
 * again, the next record wakes it. The ring is watched as the agent watches
 * it, edge-triggered, so only a wakeup the writer asked for is seen.
 * Loads BPF: run as root; fails, never skips, where it cannot.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "bpf/features.h"
#include "events.h"
#include "stream_output.skel.h"
#include "kernel_test.h"

KERNEL_TEST_SKELETON(stream_output)

static int fit_skeleton(struct stream_output_bpf *s)
{
	s->rodata->ns_kernel_features = kernel_features_bpf_bits(kernel_features_probe(0));
	s->rodata->cfg_tst.policy = NS_WAKEUP_BATCHED;
	s->rodata->cfg_tst.watermark = 128 * 1024; /* never reached here */
	return 0;
}

static unsigned records, empties;

static int on_record(void *ctx, void *data, size_t len)
{
	if (len)
		records++;
	else
		empties++;
	return 0;
}

static void output_one(void)
{
	LIBBPF_OPTS(bpf_test_run_opts, o);
	uint64_t args[1] = { 0 };
	o.ctx_in = args;
	o.ctx_size_in = sizeof(args);
	assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(skel->progs.stream_output_one), &o), 0);
}

static void set_batch_open(uint32_t open)
{
	uint32_t zero = 0;
	struct ns_reader_state st = { .batch_open = open };
	assert_int_equal(bpf_map__update_elem(skel->maps.bellst_tst, &zero, sizeof(zero), &st, sizeof(st), 0), 0);
}

/* Whether the ring's reader was woken within ms (edge-triggered: a wakeup, not data pending). */
static bool woken(int ep, int ms)
{
	struct epoll_event ev;
	int n = epoll_wait(ep, &ev, 1, ms);
	assert_true(n >= 0);
	return n == 1;
}

static void records_wake_the_reader_only_while_no_batch_is_open(void **state)
{
	int ring = bpf_map__fd(skel->maps.rb_tst);
	struct ring_buffer *rb = ring_buffer__new(ring, on_record, NULL, NULL);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };

	assert_non_null(rb);
	assert_true(ep >= 0);
	assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, ring, &ev), 0); /* the ring is empty */

	set_batch_open(0);
	output_one();
	assert_true(woken(ep, 1000)); /* the first record after an empty ring */
	assert_int_equal(ring_buffer__consume(rb), 1);

	set_batch_open(1);
	for (int i = 0; i < 3; i++)
		output_one();
	assert_false(woken(ep, 200)); /* the batch's timer reads them */
	records = empties = 0;
	assert_int_equal(ring_buffer__consume(rb), 3);
	assert_int_equal(records, 3);
	assert_int_equal(empties, 0); /* the batch stayed open: no wakeup record */

	set_batch_open(0);
	output_one();
	assert_true(woken(ep, 1000));
	records = 0;
	ring_buffer__consume(rb);
	assert_int_equal(records, 1);

	close(ep);
	ring_buffer__free(rb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(records_wake_the_reader_only_while_no_batch_is_open),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
