/* src/loop/nice.c: the loop thread's priority, following the open batches. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>

#include "loop/nice.h"

/* What the switch asked for, in order; calls at or past fail_from return -EPERM. */
static int calls[16], n_calls, fail_from = 1000;

static int fake_set(int nice)
{
	if (n_calls < 16)
		calls[n_calls] = nice;
	return n_calls++ >= fail_from ? -EPERM : 0;
}

static int setup(void **state)
{
	n_calls = 0;
	fail_from = 1000;
	return 0;
}

/* The first batch to open lowers the thread, the last to close restores it: once each. */
static void test_open_batches_hold_bulk(void **state)
{
	struct nice_switch n;

	nice_switch_init(&n, -20, 0, true, fake_set);
	nice_batch_opened(&n);
	nice_batch_opened(&n); /* a second stream's batch */
	nice_batch_closed(&n);
	assert_int_equal(n_calls, 1);
	nice_batch_closed(&n);
	assert_int_equal(n_calls, 2);
	assert_int_equal(calls[0], 0);
	assert_int_equal(calls[1], -20);
	/* an unmatched close changes nothing */
	nice_batch_closed(&n);
	assert_int_equal(n_calls, 2);
}

/* An urgent read runs at urgent whatever is open, and the thread goes back to bulk after it. */
static void test_urgent_reads_raise(void **state)
{
	struct nice_switch n;

	nice_switch_init(&n, -20, 5, true, fake_set);
	nice_urgent_enter(&n); /* nothing open: already at urgent */
	nice_urgent_leave(&n);
	assert_int_equal(n_calls, 0);
	nice_batch_opened(&n);
	nice_urgent_enter(&n);
	nice_urgent_enter(&n); /* nested */
	nice_urgent_leave(&n);
	assert_int_equal(n_calls, 2);
	nice_batch_closed(&n); /* closed while an urgent read is under way: stays at urgent */
	nice_urgent_leave(&n);
	assert_int_equal(n_calls, 2);
	nice_batch_opened(&n);
	nice_urgent_enter(&n);
	nice_urgent_leave(&n);
	int want[] = { 5, -20, 5, -20, 5 };
	assert_int_equal(n_calls, 5);
	for (int i = 0; i < 5; i++)
		assert_int_equal(calls[i], want[i]);
}

/* No switch where bulk is not lower, where the agent is not at urgent, or without a switch. */
static void test_off(void **state)
{
	struct nice_switch n;

	nice_switch_init(&n, 0, 0, true, fake_set);
	nice_batch_opened(&n);
	nice_batch_closed(&n);
	nice_switch_init(&n, 5, -20, true, fake_set);
	nice_batch_opened(&n);
	nice_batch_closed(&n);
	nice_switch_init(&n, -20, 0, false, fake_set); /* its --nice could not be set */
	nice_batch_opened(&n);
	nice_urgent_enter(&n);
	nice_urgent_leave(&n);
	nice_batch_closed(&n);
	nice_batch_opened(NULL);
	nice_batch_closed(NULL);
	nice_urgent_enter(NULL);
	nice_urgent_leave(NULL);
	assert_int_equal(n_calls, 0);
}

/* A priority that cannot be regained (no CAP_SYS_NICE any more) stops the switching. */
static void test_failed_raise_stops(void **state)
{
	struct nice_switch n;

	nice_switch_init(&n, -20, 0, true, fake_set);
	fail_from = 1;
	nice_batch_opened(&n);
	nice_batch_closed(&n);
	assert_int_equal(n_calls, 2);
	assert_false(n.on);
	nice_batch_opened(&n);
	nice_batch_closed(&n);
	assert_int_equal(n_calls, 2);
}

/* A failed lowering leaves the thread at urgent and stops the switching. */
static void test_failed_lower_stops(void **state)
{
	struct nice_switch n;

	nice_switch_init(&n, -20, 0, true, fake_set);
	fail_from = 0;
	nice_batch_opened(&n);
	nice_batch_closed(&n);
	assert_int_equal(n_calls, 1);
	assert_false(n.on);
	assert_int_equal(n.cur, -20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_open_batches_hold_bulk, setup),
		cmocka_unit_test_setup(test_urgent_reads_raise, setup),
		cmocka_unit_test_setup(test_off, setup),
		cmocka_unit_test_setup(test_failed_raise_stops, setup),
		cmocka_unit_test_setup(test_failed_lower_stops, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
