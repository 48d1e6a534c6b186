/*
 * The containers of the resource metrics (src/resources/ctr_table.c): who is
 * in which container, in start order, and Coroot's restart rule.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "resources/ctr_table.h"

static void test_restart_when_every_old_process_is_gone(void **state)
{
	struct ctr_table *t = ctr_table_new();
	assert_non_null(t);
	assert_int_equal(ctr_table_join(t, 10, 100, "/a", 100), 0);
	assert_int_equal(ctr_table_join(t, 11, 200, "/a", 200), 0);
	struct ctr *c = ctr_table_find(t, "/a");
	assert_non_null(c);
	assert_int_equal(c->n_members, 2);
	assert_int_equal(c->restarts, 0);
	assert_int_equal(c->started_at, 100);

	/* The first process goes; one of the same run is left: a new one is no restart. */
	ctr_table_leave(t, 10, 300);
	assert_int_equal(ctr_table_join(t, 12, 400, "/a", 400), 0);
	/* Coroot's rule: the earliest start (200) is past the container's (100): a restart. */
	assert_int_equal(c->restarts, 1);
	assert_int_equal(c->started_at, 200);

	/* All gone, then a new run. */
	ctr_table_leave(t, 11, 500);
	ctr_table_leave(t, 12, 500);
	assert_int_equal(c->n_members, 0);
	assert_int_equal(c->empty_since, 500);
	assert_int_equal(ctr_table_join(t, 13, 600, "/a", 600), 0);
	assert_int_equal(c->restarts, 2);
	assert_int_equal(c->started_at, 600);
	assert_int_equal(c->empty_since, 0);
	/* A later process of the same run: nothing. */
	assert_int_equal(ctr_table_join(t, 14, 700, "/a", 700), 0);
	assert_int_equal(c->restarts, 2);
	/* Its age (--min-container-age) runs from its first start, restarts or not. */
	assert_int_equal(c->since_ns, 100);
	/* A process that started before the container was first seen makes it older. */
	assert_int_equal(ctr_table_join(t, 20, 0, "/b", 900), 0);
	assert_int_equal(ctr_table_find(t, "/b")->since_ns, 900); /* start unknown: first seen */
	assert_int_equal(ctr_table_join(t, 21, 50, "/b", 950), 0);
	assert_int_equal(ctr_table_find(t, "/b")->since_ns, 50);
	ctr_table_free(t);
}

static void test_members_in_start_order_and_moves(void **state)
{
	struct ctr_table *t = ctr_table_new();
	/* Joins out of start order (a process scanned late): kept sorted. */
	ctr_table_join(t, 1, 300, "/a", 1000);
	ctr_table_join(t, 2, 100, "/a", 1000);
	ctr_table_join(t, 3, 200, "/a", 1000);
	struct ctr *a = ctr_table_find(t, "/a");
	assert_int_equal(a->head->pid, 2);
	assert_int_equal(a->head->next->pid, 3);
	assert_int_equal(a->tail->pid, 1);
	assert_int_equal(a->tail->prev->pid, 3);
	/* An older process joining moves the earliest start back: no restart. */
	assert_int_equal(a->restarts, 0);

	/* A process moves to another container: it leaves the first. */
	ctr_table_join(t, 2, 100, "/b", 1100);
	struct ctr *b = ctr_table_find(t, "/b");
	assert_int_equal(a->n_members, 2);
	assert_int_equal(a->head->pid, 3);
	assert_int_equal(b->n_members, 1);
	assert_ptr_equal(ctr_table_member(t, 2)->ctr, b);
	/* Joining the container it is in changes nothing. */
	ctr_table_join(t, 2, 100, "/b", 1200);
	assert_int_equal(b->n_members, 1);
	/* Leaving twice, or a pid never seen, is harmless. */
	ctr_table_leave(t, 2, 1300);
	ctr_table_leave(t, 2, 1300);
	ctr_table_leave(t, 99, 1300);
	assert_int_equal(b->n_members, 0);
	assert_null(b->head);
	assert_null(b->tail);
	ctr_table_free(t);
}

static int gone_count;
static void on_gone(void *ctx, struct ctr *c)
{
	gone_count++;
}

static void test_reap_and_list(void **state)
{
	struct ctr_table *t = ctr_table_new();
	ctr_table_join(t, 1, 10, "/a", 10);
	ctr_table_join(t, 2, 10, "/b", 10);
	ctr_table_leave(t, 2, 50);
	size_t n;
	struct ctr **l = ctr_table_list(t, &n);
	assert_non_null(l);
	assert_int_equal(n, 2);
	/* /b has been empty since 50: kept until 50 + idle. */
	ctr_table_reap(t, 100, 60, on_gone, NULL);
	assert_int_equal(gone_count, 0);
	assert_int_equal(ctr_table_count(t), 2);
	ctr_table_reap(t, 110, 60, on_gone, NULL);
	assert_int_equal(gone_count, 1);
	assert_int_equal(ctr_table_count(t), 1);
	assert_null(ctr_table_find(t, "/b"));
	assert_non_null(ctr_table_find(t, "/a"));
	/* A container that comes back after being forgotten starts afresh. */
	ctr_table_join(t, 3, 200, "/b", 200);
	assert_int_equal(ctr_table_find(t, "/b")->restarts, 0);
	ctr_table_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_restart_when_every_old_process_is_gone),
		cmocka_unit_test(test_members_in_start_order_and_moves),
		cmocka_unit_test(test_reap_and_list),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
