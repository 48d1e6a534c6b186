#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc/table.h"

static void test_new_empty(void **state)
{
	struct proc_table *t = proc_table_new(16);

	assert_non_null(t);
	assert_int_equal(proc_table_count(t), 0);
	assert_int_equal(proc_table_containers(t), 0);
	assert_int_equal(proc_table_refused(t), 0);
	assert_null(proc_table_get(t, 1));
	proc_table_remove(t, 1); /* removing a missing pid is a no-op */
	assert_int_equal(proc_table_count(t), 0);
	proc_table_free(t);
	proc_table_free(NULL);
}

static void test_upsert_get_remove(void **state)
{
	struct proc_table *t = proc_table_new(16);
	bool created = false;

	struct proc_entry *e = proc_table_upsert(t, 100, &created);
	assert_non_null(e);
	assert_true(created);
	assert_int_equal(e->pid, 100);
	/* a new entry starts zeroed */
	assert_int_equal(e->ppid, 0);
	assert_int_equal(e->start_ns, 0);
	assert_false(e->inspected);
	assert_false(e->start_counted);
	assert_string_equal(e->comm, "");
	assert_string_equal(e->exe, "");
	assert_null(e->container);
	assert_string_equal(proc_entry_container(e), "/");
	assert_int_equal(proc_table_count(t), 1);

	e->ppid = 1;
	strcpy(e->comm, "init");

	created = true;
	struct proc_entry *again = proc_table_upsert(t, 100, &created);
	assert_ptr_equal(again, e);
	assert_false(created);
	assert_int_equal(again->ppid, 1);
	assert_string_equal(again->comm, "init");
	assert_int_equal(proc_table_count(t), 1);

	assert_ptr_equal(proc_table_get(t, 100), e);
	assert_null(proc_table_get(t, 101));

	struct proc_entry *f = proc_table_upsert(t, 101, &created);
	assert_non_null(f);
	assert_true(created);
	assert_ptr_not_equal(f, e);
	assert_int_equal(proc_table_count(t), 2);

	proc_table_remove(t, 100);
	assert_null(proc_table_get(t, 100));
	assert_ptr_equal(proc_table_get(t, 101), f);
	assert_int_equal(proc_table_count(t), 1);
	proc_table_remove(t, 100); /* twice */
	assert_int_equal(proc_table_count(t), 1);

	/* re-adding gives a fresh entry */
	e = proc_table_upsert(t, 100, &created);
	assert_non_null(e);
	assert_true(created);
	assert_int_equal(e->ppid, 0);
	assert_string_equal(e->comm, "");
	proc_table_free(t);
}

static void test_pid_zero_and_max(void **state)
{
	struct proc_table *t = proc_table_new(4);
	bool created;

	assert_non_null(proc_table_upsert(t, 0, &created));
	assert_true(created);
	assert_non_null(proc_table_upsert(t, UINT32_MAX, &created));
	assert_true(created);
	assert_int_equal(proc_table_get(t, 0)->pid, 0);
	assert_int_equal(proc_table_get(t, UINT32_MAX)->pid, UINT32_MAX);
	proc_table_free(t);
}

static void test_cap_refuses(void **state)
{
	struct proc_table *t = proc_table_new(3);
	bool created;

	for (uint32_t pid = 1; pid <= 3; pid++)
		assert_non_null(proc_table_upsert(t, pid, &created));
	assert_int_equal(proc_table_count(t), 3);

	created = true;
	assert_null(proc_table_upsert(t, 4, &created));
	assert_false(created);
	assert_int_equal(proc_table_refused(t), 1);
	assert_null(proc_table_upsert(t, 5, &created));
	assert_int_equal(proc_table_refused(t), 2);
	assert_int_equal(proc_table_count(t), 3);
	assert_null(proc_table_get(t, 4));

	/* an existing pid is still found when full, and not counted as refused */
	assert_non_null(proc_table_upsert(t, 2, &created));
	assert_false(created);
	assert_int_equal(proc_table_refused(t), 2);

	/* room again after a remove */
	proc_table_remove(t, 1);
	assert_non_null(proc_table_upsert(t, 4, &created));
	assert_true(created);
	assert_int_equal(proc_table_count(t), 3);
	assert_int_equal(proc_table_refused(t), 2);
	proc_table_free(t);
}

static void test_cap_zero_means_one(void **state)
{
	struct proc_table *t = proc_table_new(0);
	bool created;

	assert_non_null(t);
	assert_non_null(proc_table_upsert(t, 1, &created));
	assert_null(proc_table_upsert(t, 2, &created));
	assert_int_equal(proc_table_refused(t), 1);
	proc_table_free(t);
}

static void test_container_interning(void **state)
{
	struct proc_table *t = proc_table_new(16);
	bool created;
	struct proc_entry *a = proc_table_upsert(t, 1, &created);
	struct proc_entry *b = proc_table_upsert(t, 2, &created);
	struct proc_entry *c = proc_table_upsert(t, 3, &created);

	/* a distinct buffer with the same text: interning compares by content */
	char name[32];
	strcpy(name, "/docker/abc");
	assert_int_equal(proc_table_set_container(t, a, "/docker/abc"), 0);
	assert_int_equal(proc_table_set_container(t, b, name), 0);
	assert_ptr_equal(a->container, b->container);
	assert_ptr_equal(proc_entry_container(a), proc_entry_container(b));
	assert_string_equal(proc_entry_container(a), "/docker/abc");
	assert_int_equal(a->container->refs, 2);
	assert_int_equal(proc_table_containers(t), 1);
	name[0] = 'X'; /* the table holds its own copy */
	assert_string_equal(proc_entry_container(b), "/docker/abc");

	assert_int_equal(proc_table_set_container(t, c, "/docker/def"), 0);
	assert_ptr_not_equal(c->container, a->container);
	assert_int_equal(proc_table_containers(t), 2);

	/* setting the same name again changes nothing */
	assert_int_equal(proc_table_set_container(t, a, "/docker/abc"), 0);
	assert_int_equal(a->container->refs, 2);
	assert_int_equal(proc_table_containers(t), 2);

	/* moving a: abc keeps one ref (b), def gets two */
	assert_int_equal(proc_table_set_container(t, a, "/docker/def"), 0);
	assert_ptr_equal(a->container, c->container);
	assert_int_equal(c->container->refs, 2);
	assert_int_equal(b->container->refs, 1);
	assert_int_equal(proc_table_containers(t), 2);

	/* last user of abc goes: it is freed */
	proc_table_remove(t, 2);
	assert_int_equal(proc_table_containers(t), 1);

	/* moving the last users of def away frees it too */
	assert_int_equal(proc_table_set_container(t, a, "/x"), 0);
	assert_int_equal(proc_table_containers(t), 2);
	assert_int_equal(proc_table_set_container(t, c, "/x"), 0);
	assert_int_equal(proc_table_containers(t), 1);
	assert_ptr_equal(a->container, c->container);
	assert_int_equal(a->container->refs, 2);

	proc_table_remove(t, 1);
	assert_int_equal(proc_table_containers(t), 1);
	proc_table_remove(t, 3);
	assert_int_equal(proc_table_containers(t), 0);

	/* a name freed and interned again works */
	struct proc_entry *d = proc_table_upsert(t, 4, &created);
	assert_int_equal(proc_table_set_container(t, d, "/docker/abc"), 0);
	assert_string_equal(proc_entry_container(d), "/docker/abc");
	assert_int_equal(proc_table_containers(t), 1);
	proc_table_free(t); /* frees the entry's container too (checked under ASan) */
}

static void test_container_root_default(void **state)
{
	struct proc_table *t = proc_table_new(16);
	bool created;
	struct proc_entry *a = proc_table_upsert(t, 1, &created);
	struct proc_entry *b = proc_table_upsert(t, 2, &created);
	struct proc_entry *c = proc_table_upsert(t, 3, &created);

	assert_int_equal(proc_table_set_container(t, a, NULL), 0);
	assert_string_equal(proc_entry_container(a), "/");
	assert_non_null(a->container);
	assert_int_equal(proc_table_set_container(t, b, "/"), 0);
	/* NULL and "/" intern to the one "/" */
	assert_ptr_equal(a->container, b->container);
	assert_int_equal(a->container->refs, 2);
	assert_int_equal(proc_table_containers(t), 1);
	/* "" is no container at all (PROC_CONTAINER_UNNAMED), not the host's */
	assert_int_equal(proc_table_set_container(t, c, PROC_CONTAINER_UNNAMED), 0);
	assert_string_equal(proc_entry_container(c), "");
	assert_ptr_not_equal(a->container, c->container);
	assert_int_equal(proc_table_containers(t), 2);
	assert_int_equal(proc_table_set_container(t, c, "/"), 0);
	assert_int_equal(a->container->refs, 3);
	assert_int_equal(proc_table_containers(t), 1);

	/* from a container back to the host */
	assert_int_equal(proc_table_set_container(t, a, "/docker/q"), 0);
	assert_int_equal(proc_table_containers(t), 2);
	assert_int_equal(proc_table_set_container(t, a, NULL), 0);
	assert_string_equal(proc_entry_container(a), "/");
	assert_int_equal(proc_table_containers(t), 1);
	proc_table_free(t);
}

static void test_many_containers(void **state)
{
	/* more names than hash buckets, so chains form */
	enum { N = 3000 };
	struct proc_table *t = proc_table_new(N);
	bool created;
	char name[64];

	for (uint32_t pid = 1; pid <= N; pid++) {
		struct proc_entry *e = proc_table_upsert(t, pid, &created);
		assert_non_null(e);
		snprintf(name, sizeof(name), "/c/%u", pid % 1500);
		assert_int_equal(proc_table_set_container(t, e, name), 0);
	}
	assert_int_equal(proc_table_containers(t), 1500);
	for (uint32_t pid = 1; pid <= N; pid++) {
		snprintf(name, sizeof(name), "/c/%u", pid % 1500);
		assert_string_equal(proc_entry_container(proc_table_get(t, pid)), name);
	}
	/* remove the first half: every name keeps one user */
	for (uint32_t pid = 1; pid <= 1500; pid++)
		proc_table_remove(t, pid);
	assert_int_equal(proc_table_containers(t), 1500);
	/* remove every other of the rest */
	for (uint32_t pid = 1501; pid <= N; pid += 2)
		proc_table_remove(t, pid);
	assert_int_equal(proc_table_containers(t), 750);
	for (uint32_t pid = 1502; pid <= N; pid += 2) {
		snprintf(name, sizeof(name), "/c/%u", pid % 1500);
		assert_string_equal(proc_entry_container(proc_table_get(t, pid)), name);
	}
	proc_table_free(t);
}

struct visit {
	size_t calls;
	uint64_t pid_sum;
	unsigned char *seen;
	size_t seen_len;
	size_t dup;
};

static void visit_fn(void *ctx, const struct proc_entry *e)
{
	struct visit *v = ctx;

	v->calls++;
	v->pid_sum += e->pid;
	if (e->pid < v->seen_len) {
		if (v->seen[e->pid])
			v->dup++;
		v->seen[e->pid] = 1;
	}
}

static void test_foreach(void **state)
{
	struct proc_table *t = proc_table_new(64);
	bool created;
	unsigned char seen[1000] = { 0 };
	struct visit v = { .seen = seen, .seen_len = sizeof(seen) };

	proc_table_foreach(t, visit_fn, &v);
	assert_int_equal(v.calls, 0);

	for (uint32_t pid = 10; pid < 1000; pid += 20)
		assert_non_null(proc_table_upsert(t, pid, &created));
	proc_table_remove(t, 30);
	proc_table_foreach(t, visit_fn, &v);
	assert_int_equal(v.calls, 49);
	assert_int_equal(v.dup, 0);
	uint64_t sum = 0;
	for (uint32_t pid = 10; pid < 1000; pid += 20) {
		if (pid == 30) {
			assert_int_equal(seen[pid], 0);
			continue;
		}
		assert_int_equal(seen[pid], 1);
		sum += pid;
	}
	assert_int_equal(v.pid_sum, sum);
	proc_table_free(t);
}

static void test_many_pids(void **state)
{
	enum { N = 100000 };
	struct proc_table *t = proc_table_new(N);
	bool created;

	/* dense low pids, then pids spread up to pid_max (2^22) */
	for (uint32_t i = 0; i < N; i++) {
		uint32_t pid = i < N / 2 ? i + 1 : i * 41 + 7;
		struct proc_entry *e = proc_table_upsert(t, pid, &created);
		assert_non_null(e);
		assert_true(created);
		e->ppid = pid ^ 0x5a5a;
	}
	assert_int_equal(proc_table_count(t), N);
	assert_null(proc_table_upsert(t, 0xfffffff0u, &created));
	assert_int_equal(proc_table_refused(t), 1);

	for (uint32_t i = 0; i < N; i++) {
		uint32_t pid = i < N / 2 ? i + 1 : i * 41 + 7;
		struct proc_entry *e = proc_table_get(t, pid);
		assert_non_null(e);
		assert_int_equal(e->pid, pid);
		assert_int_equal(e->ppid, pid ^ 0x5a5a);
	}
	/* remove every third */
	size_t removed = 0;
	for (uint32_t i = 0; i < N; i += 3) {
		uint32_t pid = i < N / 2 ? i + 1 : i * 41 + 7;
		proc_table_remove(t, pid);
		removed++;
	}
	assert_int_equal(proc_table_count(t), N - removed);
	for (uint32_t i = 0; i < N; i++) {
		uint32_t pid = i < N / 2 ? i + 1 : i * 41 + 7;
		struct proc_entry *e = proc_table_get(t, pid);
		if (i % 3 == 0) {
			assert_null(e);
		} else {
			assert_non_null(e);
			assert_int_equal(e->ppid, pid ^ 0x5a5a);
		}
	}
	struct visit v = { 0 };
	proc_table_foreach(t, visit_fn, &v);
	assert_int_equal(v.calls, N - removed);

	/* refill to the cap with new pids */
	for (uint32_t i = 0; i < removed; i++)
		assert_non_null(proc_table_upsert(t, 0x80000000u + i, &created));
	assert_int_equal(proc_table_count(t), N);
	assert_null(proc_table_upsert(t, 0x7fffffffu, &created));
	assert_int_equal(proc_table_refused(t), 2);

	/* and empty it completely */
	for (uint32_t i = 0; i < N; i++)
		proc_table_remove(t, i < N / 2 ? i + 1 : i * 41 + 7);
	for (uint32_t i = 0; i < removed; i++)
		proc_table_remove(t, 0x80000000u + i);
	assert_int_equal(proc_table_count(t), 0);
	v = (struct visit){ 0 };
	proc_table_foreach(t, visit_fn, &v);
	assert_int_equal(v.calls, 0);
	proc_table_free(t);
}

/* The observer hears each entry entering a container (once per change) and leaving the table. */
static char heard[8][64];
static int n_heard;

static void observe(void *ctx, const struct proc_entry *e, const char *container)
{
	snprintf(heard[n_heard++ % 8], sizeof(heard[0]), "%u %s", e->pid,
		 container ? container : "(gone)");
}

static void test_observer(void **state)
{
	struct proc_table *t = proc_table_new(16);
	bool created;
	n_heard = 0;
	proc_table_set_observer(t, observe, NULL);
	struct proc_entry *e = proc_table_upsert(t, 7, &created);
	assert_int_equal(proc_table_set_container(t, e, "/a"), 0);
	assert_int_equal(proc_table_set_container(t, e, "/a"), 0); /* no change: not told */
	assert_int_equal(proc_table_set_container(t, e, NULL), 0);
	proc_table_remove(t, 7);
	proc_table_remove(t, 8); /* never there: not told */
	assert_int_equal(n_heard, 3);
	assert_string_equal(heard[0], "7 /a");
	assert_string_equal(heard[1], "7 /");
	assert_string_equal(heard[2], "7 (gone)");
	proc_table_set_observer(t, NULL, NULL);
	e = proc_table_upsert(t, 9, &created);
	proc_table_set_container(t, e, "/b");
	assert_int_equal(n_heard, 3);
	proc_table_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_empty),
		cmocka_unit_test(test_upsert_get_remove),
		cmocka_unit_test(test_pid_zero_and_max),
		cmocka_unit_test(test_cap_refuses),
		cmocka_unit_test(test_cap_zero_means_one),
		cmocka_unit_test(test_container_interning),
		cmocka_unit_test(test_container_root_default),
		cmocka_unit_test(test_many_containers),
		cmocka_unit_test(test_foreach),
		cmocka_unit_test(test_many_pids),
		cmocka_unit_test(test_observer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
