/*
 * The counting filter in front of l7_socks (bpf/l7_filter.h), run in the
 * kernel: the BPF side's inserts and deletes (bpf/sockets.bpf.h) and the
 * agent's adoptions (src/bpf/l7_socks.c) keep every slot at the number of
 * entries whose key falls in it, so a tracked socket's slot is never 0.
 * And the syscall hooks' memory of a thread's fds found with no count
 * (bpf/l7_untracked.bpf.h): an answer is its thread's and fd's, and no
 * count is raised, by either side, without voiding every one.
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
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "events.h"
#include "l7_filter.h"
#include "bpf/l7_socks.h"
#include "l7_filter.skel.h"
#include "kernel_test.h"

enum { OP_INSERT, OP_DELETE, OP_MAYBE, OP_LOOK };
enum { LOOK_NO_COUNT, LOOK_REMEMBERED, LOOK_MAYBE_TRACKED };
#define TABLE_SIZE 4 /* l7_socks made small, to fill it */
#define ANY 0	     /* BPF_ANY */
#define NOEXIST 1    /* BPF_NOEXIST */

KERNEL_TEST_SKELETON(l7_filter)

static uint64_t key_of(uint32_t tgid, int32_t fd)
{
	return (uint64_t)tgid << 32 | (uint32_t)fd;
}

static int run(uint64_t op, uint64_t key, uint64_t flags, uint64_t sock)
{
	uint64_t args[4] = { op, key, flags, sock };
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = args, .ctx_size_in = sizeof(args));

	assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(skel->progs.l7_filter_op), &o), 0);
	return (int)o.retval;
}

static uint32_t slot_count(uint64_t key)
{
	return __atomic_load_n(&skel->bss->ns_l7_filter.slots[ns_l7_filter_slot(key >> 32, (int32_t)key)],
			       __ATOMIC_SEQ_CST);
}

static uint64_t entry_sock(uint64_t key)
{
	struct ns_l7_sock ls;

	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.l7_socks), &key, &ls))
		return 0;
	return ls.sock;
}

/* Deletes key's entry (if any): its slot's count after. */
static uint32_t delete_key(uint64_t key)
{
	run(OP_DELETE, key, 0, 0);
	return slot_count(key);
}

/* Fills l7_socks with tgid's fds 0, 1, ...; empty_table takes them out, each slot back to 0. */
static void fill_table(uint32_t tgid)
{
	for (int fd = 0; fd < TABLE_SIZE; fd++)
		assert_int_equal(run(OP_INSERT, key_of(tgid, fd), ANY, 1), 0);
}

static void empty_table(uint32_t tgid)
{
	for (int fd = 0; fd < TABLE_SIZE; fd++)
		assert_int_equal(delete_key(key_of(tgid, fd)), 0);
}

/* Another process's fd whose key falls in key's slot. */
static uint64_t collider(uint64_t key)
{
	uint32_t want = ns_l7_filter_slot(key >> 32, (int32_t)key);

	for (uint32_t tgid = (key >> 32) + 1;; tgid++)
		for (int32_t fd = 0; fd < 64; fd++)
			if (ns_l7_filter_slot(tgid, fd) == want)
				return key_of(tgid, fd);
}

static int fit_skeleton(struct l7_filter_bpf *s)
{
	return bpf_map__set_max_entries(s->maps.l7_socks, TABLE_SIZE);
}

static void slots_are_in_range_and_a_process_fds_apart(void **state)
{
	for (uint32_t tgid = 1; tgid < 5000; tgid += 7) {
		uint32_t first = ns_l7_filter_slot(tgid, 0);
		for (int32_t fd = 0; fd < 1024; fd++) {
			uint32_t s = ns_l7_filter_slot(tgid, fd);
			assert_true(s < NS_L7_FILTER_SLOTS);
			assert_int_equal(s, (first + (uint32_t)fd) % NS_L7_FILTER_SLOTS);
		}
	}
	/* Processes spread: neighbouring tgids' fd 3 do not share a slot. */
	assert_int_not_equal(ns_l7_filter_slot(1000, 3), ns_l7_filter_slot(1001, 3));
}

static void an_entry_is_counted_once_and_uncounted_once(void **state)
{
	uint64_t k = key_of(4242, 7);

	assert_int_equal(run(OP_MAYBE, k, 0, 0), 0);
	assert_int_equal(run(OP_INSERT, k, ANY, 0x1000), 0);
	assert_int_equal(slot_count(k), 1);
	assert_int_equal(run(OP_MAYBE, k, 0, 0), 1);
	/* Replaced, not counted twice. */
	assert_int_equal(run(OP_INSERT, k, ANY, 0x2000), 0);
	assert_int_equal(slot_count(k), 1);
	assert_int_equal(entry_sock(k), 0x2000);
	/* Not replaced, not counted. */
	assert_int_equal(run(OP_INSERT, k, NOEXIST, 0x3000), -EEXIST);
	assert_int_equal(slot_count(k), 1);
	assert_int_equal(entry_sock(k), 0x2000);
	assert_int_equal(delete_key(k), 0);
	assert_int_equal(run(OP_MAYBE, k, 0, 0), 0);
	/* A delete of nothing lowers nothing. */
	assert_int_equal(delete_key(k), 0);
}

static void a_shared_slot_stays_up_while_either_entry_is_there(void **state)
{
	uint64_t a = key_of(777, 5), b = collider(a);

	assert_int_not_equal(a, b);
	assert_int_equal(run(OP_INSERT, a, ANY, 1), 0);
	assert_int_equal(run(OP_INSERT, b, NOEXIST, 2), 0);
	assert_int_equal(slot_count(a), 2);
	assert_int_equal(delete_key(a), 1);
	assert_int_equal(delete_key(a), 1);
	assert_int_equal(run(OP_MAYBE, b, 0, 0), 1);
	assert_int_equal(delete_key(b), 0);
}

static void a_full_table_counts_nothing(void **state)
{
	uint64_t extra = key_of(999, TABLE_SIZE);

	fill_table(999);
	assert_int_equal(run(OP_INSERT, extra, ANY, 1), -E2BIG);
	assert_int_equal(slot_count(extra), 0);
	assert_int_equal(run(OP_MAYBE, extra, 0, 0), 0);
	empty_table(999);
}

static void the_agents_adoptions_count_as_the_kernels_inserts(void **state)
{
	int map = bpf_map__fd(skel->maps.l7_socks);
	struct ns_l7_sock ls = { .sock = 0 };
	uint64_t k = key_of(31337, 12);

	assert_int_equal(l7_socks_adopt(map, &skel->bss->ns_l7_filter, 31337, 12, &ls), 0);
	assert_int_equal(slot_count(k), 1);
	assert_int_equal(run(OP_MAYBE, k, 0, 0), 1);
	/* An entry the BPF side made meanwhile stays, counted once. */
	assert_int_equal(l7_socks_adopt(map, &skel->bss->ns_l7_filter, 31337, 12, &ls), -EEXIST);
	assert_int_equal(slot_count(k), 1);
	assert_int_equal(delete_key(k), 0);
	/* A full table refuses it, and its slot stays 0. */
	fill_table(1);
	assert_int_equal(l7_socks_adopt(map, &skel->bss->ns_l7_filter, 31337, 12, &ls), -E2BIG);
	assert_int_equal(slot_count(k), 0);
	empty_table(1);
}

/* The hooks' look at fd of this process's thread (a number naming it: the hooks use its registers' address). */
static int look(uint64_t thread, int32_t fd)
{
	return run(OP_LOOK, key_of(getpid(), fd), thread, 0);
}

static void a_thread_remembers_an_fd_without_count_until_a_count_is_raised(void **state)
{
	const uint64_t thread = 0xffffc90001234f58ull, other = thread + 0x4000;
	int map = bpf_map__fd(skel->maps.l7_socks);
	struct ns_l7_sock ls = { .sock = 0 };

	assert_int_equal(look(thread, 5), LOOK_NO_COUNT);
	assert_int_equal(look(thread, 5), LOOK_REMEMBERED);
	/* Its own: not another thread's, nor another fd's (13 shares 5's entry and takes it). */
	assert_int_equal(look(other, 5), LOOK_NO_COUNT);
	assert_int_equal(look(thread, 6), LOOK_NO_COUNT);
	assert_int_equal(look(thread, 13), LOOK_NO_COUNT);
	assert_int_equal(look(thread, 5), LOOK_NO_COUNT);
	assert_int_equal(look(thread, 5), LOOK_REMEMBERED);
	assert_int_equal(look(other, 5), LOOK_REMEMBERED);

	/* fd 5 becomes a tracked socket: seen at once, and looked at while it is one. */
	assert_int_equal(run(OP_INSERT, key_of(getpid(), 5), ANY, 1), 0);
	assert_int_equal(look(thread, 5), LOOK_MAYBE_TRACKED);
	assert_int_equal(look(thread, 5), LOOK_MAYBE_TRACKED);
	assert_int_equal(delete_key(key_of(getpid(), 5)), 0);
	assert_int_equal(look(thread, 5), LOOK_NO_COUNT);
	assert_int_equal(look(thread, 5), LOOK_REMEMBERED);

	/* Any count raised voids every answer: another process's socket, by the kernel or the agent. */
	assert_int_equal(run(OP_INSERT, key_of(4343, 9), ANY, 1), 0);
	assert_int_equal(look(thread, 5), LOOK_NO_COUNT);
	assert_int_equal(look(thread, 5), LOOK_REMEMBERED);
	assert_int_equal(delete_key(key_of(4343, 9)), 0);
	assert_int_equal(l7_socks_adopt(map, &skel->bss->ns_l7_filter, 4343, 9, &ls), 0);
	assert_int_equal(look(thread, 5), LOOK_NO_COUNT);
	assert_int_equal(delete_key(key_of(4343, 9)), 0);
	/* A raise that did not go in (a full table) voids them too: the count went up first. */
	assert_int_equal(look(thread, 5), LOOK_REMEMBERED);
	fill_table(1);
	assert_int_equal(run(OP_INSERT, key_of(4343, 9), ANY, 1), -E2BIG);
	empty_table(1);
	assert_int_equal(look(thread, 5), LOOK_NO_COUNT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(slots_are_in_range_and_a_process_fds_apart),
		cmocka_unit_test(an_entry_is_counted_once_and_uncounted_once),
		cmocka_unit_test(a_shared_slot_stays_up_while_either_entry_is_there),
		cmocka_unit_test(a_full_table_counts_nothing),
		cmocka_unit_test(the_agents_adoptions_count_as_the_kernels_inserts),
		cmocka_unit_test(a_thread_remembers_an_fd_without_count_until_a_count_is_raised),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
