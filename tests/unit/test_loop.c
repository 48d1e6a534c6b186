/* The loop's fd sources: one callback deleting another source of the same batch, and loop_mod_fd. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "loop/loop.h"

struct two {
	struct loop *l;
	int fd[3];
	int calls[3];
};

/* Whichever runs first deletes the other (libcurl closes a connection while handling another). */
static void on_a(void *ctx, uint32_t ev)
{
	struct two *t = ctx;
	t->calls[0]++;
	if (!t->calls[1])
		assert_int_equal(loop_del_fd(t->l, t->fd[1]), 0);
}

static void on_b(void *ctx, uint32_t ev)
{
	struct two *t = ctx;
	t->calls[1]++;
	if (!t->calls[0])
		assert_int_equal(loop_del_fd(t->l, t->fd[0]), 0);
}

static void on_stop(void *ctx, uint32_t ev)
{
	struct two *t = ctx;
	t->calls[2]++;
	loop_stop(t->l);
}

static void test_delete_another_source_of_the_batch(void **state)
{
	struct two t = { 0 };
	uint64_t one = 1;

	assert_int_equal(loop_new(&t.l), 0);
	for (int i = 0; i < 3; i++) {
		t.fd[i] = eventfd(0, EFD_NONBLOCK);
		assert_true(t.fd[i] >= 0);
		assert_int_equal(write(t.fd[i], &one, sizeof(one)), sizeof(one));
	}
	/* All three ready at once: one batch of three events, the stopper's last. */
	assert_int_equal(loop_add_fd(t.l, t.fd[0], EPOLLIN, on_a, &t), 0);
	assert_int_equal(loop_add_fd(t.l, t.fd[1], EPOLLIN, on_b, &t), 0);
	assert_int_equal(loop_add_fd(t.l, t.fd[2], EPOLLIN, on_stop, &t), 0);
	assert_int_equal(loop_run(t.l), 0);
	/* One ran and deleted the other, whose event in the same batch was skipped. */
	assert_int_equal(t.calls[2], 1);
	assert_int_equal(t.calls[0] + t.calls[1], 1);
	assert_int_equal(loop_del_fd(t.l, t.fd[0]) + loop_del_fd(t.l, t.fd[1]), -ENOENT);
	loop_free(t.l);
	for (int i = 0; i < 3; i++)
		close(t.fd[i]);
}

static void on_self(void *ctx, uint32_t ev)
{
	struct two *t = ctx;
	t->calls[0]++;
	assert_int_equal(loop_del_fd(t->l, t->fd[0]), 0); /* its own source, freed after the batch */
	assert_int_equal(loop_del_fd(t->l, t->fd[0]), -ENOENT);
	loop_stop(t->l);
}

static void test_delete_own_source(void **state)
{
	struct two t = { 0 };
	uint64_t one = 1;

	assert_int_equal(loop_new(&t.l), 0);
	t.fd[0] = eventfd(0, EFD_NONBLOCK);
	assert_int_equal(write(t.fd[0], &one, sizeof(one)), sizeof(one));
	assert_int_equal(loop_add_fd(t.l, t.fd[0], EPOLLIN, on_self, &t), 0);
	assert_int_equal(loop_run(t.l), 0);
	assert_int_equal(t.calls[0], 1);
	loop_free(t.l);
	close(t.fd[0]);
}

static void on_writable(void *ctx, uint32_t ev)
{
	struct two *t = ctx;
	assert_true(ev & EPOLLOUT);
	t->calls[0]++;
	loop_stop(t->l);
}

static void test_mod_fd(void **state)
{
	struct two t = { 0 };

	assert_int_equal(loop_new(&t.l), 0);
	t.fd[0] = eventfd(0, EFD_NONBLOCK); /* never readable here, always writable */
	assert_int_equal(loop_add_fd(t.l, t.fd[0], EPOLLIN, on_writable, &t), 0);
	assert_int_equal(loop_mod_fd(t.l, t.fd[0], EPOLLOUT), 0);
	assert_int_equal(loop_run(t.l), 0);
	assert_int_equal(t.calls[0], 1);
	assert_int_equal(loop_mod_fd(t.l, 12345, EPOLLIN), -ENOENT);
	loop_free(t.l);
	close(t.fd[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_delete_another_source_of_the_batch),
		cmocka_unit_test(test_delete_own_source),
		cmocka_unit_test(test_mod_fd),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
