/* src/loop/nice.c: the batched reads' priority switch. */
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

/* A read lowers the priority and the end of it restores it; nested reads switch once. */
static void test_nested_reads_switch_once(void **state)
{
	struct nice_switch n;

	nice_switch_init(&n, -20, 0, true, fake_set);
	nice_bulk_enter(&n);
	nice_bulk_enter(&n); /* a hook drains another stream */
	nice_bulk_leave(&n);
	assert_int_equal(n_calls, 1);
	nice_bulk_leave(&n);
	assert_int_equal(n_calls, 2);
	assert_int_equal(calls[0], 0);
	assert_int_equal(calls[1], -20);
	/* an unmatched leave changes nothing */
	nice_bulk_leave(&n);
	assert_int_equal(n_calls, 2);
	nice_bulk_enter(&n);
	nice_bulk_leave(&n);
	assert_int_equal(n_calls, 4);
}

/* No switch where bulk is not lower, where the agent is not at urgent, or without a switch. */
static void test_off(void **state)
{
	struct nice_switch n;

	nice_switch_init(&n, 0, 0, true, fake_set);
	nice_bulk_enter(&n);
	nice_bulk_leave(&n);
	nice_switch_init(&n, 5, -20, true, fake_set);
	nice_bulk_enter(&n);
	nice_bulk_leave(&n);
	nice_switch_init(&n, -20, 0, false, fake_set); /* its --nice could not be set */
	nice_bulk_enter(&n);
	nice_bulk_leave(&n);
	nice_bulk_enter(NULL);
	nice_bulk_leave(NULL);
	assert_int_equal(n_calls, 0);
}

/* A priority that cannot be regained (no CAP_SYS_NICE any more) stops the switching. */
static void test_failed_raise_stops(void **state)
{
	struct nice_switch n;

	nice_switch_init(&n, -20, 0, true, fake_set);
	fail_from = 1;
	nice_bulk_enter(&n);
	nice_bulk_leave(&n);
	assert_int_equal(n_calls, 2);
	assert_false(n.on);
	nice_bulk_enter(&n);
	nice_bulk_leave(&n);
	assert_int_equal(n_calls, 2);
}

/* A failed lowering leaves the agent at urgent and stops the switching. */
static void test_failed_lower_stops(void **state)
{
	struct nice_switch n;

	nice_switch_init(&n, -20, 0, true, fake_set);
	fail_from = 0;
	nice_bulk_enter(&n);
	nice_bulk_leave(&n);
	assert_int_equal(n_calls, 1);
	assert_false(n.on);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_nested_reads_switch_once, setup),
		cmocka_unit_test_setup(test_off, setup),
		cmocka_unit_test_setup(test_failed_raise_stops, setup),
		cmocka_unit_test_setup(test_failed_lower_stops, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
