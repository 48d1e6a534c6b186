/* The loop's fd sources (one callback deleting another source of the same batch, loop_mod_fd)
 * and its timers (one disarming or re-arming another of the same batch, periodic and one-shot). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
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

/* ---- timers ---- */

struct timers {
	struct loop *l;
	struct loop_timer *t[3]; /* two racing, and the stop */
	int calls[3];
	int periodic_stop_after;
	bool rearm; /* the first to fire re-arms the other 10 s away, rather than disarming it */
};

static void other_timer(struct timers *x, int me)
{
	struct loop_timer *o = x->t[!me];
	if (x->calls[!me])
		return;
	if (x->rearm)
		assert_int_equal(loop_timer_arm(o, 10000000000ull), 0);
	else
		assert_int_equal(loop_timer_disarm(o), 0);
}

static void on_t0(void *ctx)
{
	struct timers *x = ctx;
	x->calls[0]++;
	other_timer(x, 0);
}

static void on_t1(void *ctx)
{
	struct timers *x = ctx;
	x->calls[1]++;
	other_timer(x, 1);
}

static void on_timer_stop(void *ctx)
{
	struct timers *x = ctx;
	x->calls[2]++;
	loop_stop(x->l);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/*
 * Both timers expired before the loop's first wait (armed at 1 ns, then a
 * 20 ms sleep), so one batch reports both; whichever runs first disarms or
 * re-arms the other, whose event in the batch is then stale: exactly one
 * fires. Were they in two batches, the disarm before the second wait would
 * keep the second from being reported at all: one either way.
 */
static void run_racing_timers(bool rearm)
{
	struct timers x = { .rearm = rearm };
	loop_timer_fn fns[3] = { on_t0, on_t1, on_timer_stop };

	assert_int_equal(loop_new(&x.l), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(loop_timer_new(x.l, fns[i], &x, &x.t[i]), 0);
	assert_int_equal(loop_timer_arm(x.t[0], 1), 0);
	assert_int_equal(loop_timer_arm(x.t[1], 1), 0);
	assert_int_equal(loop_timer_arm(x.t[2], 200000000ull), 0); /* 200 ms */
	sleep_ms(20);
	assert_int_equal(loop_run(x.l), 0);
	assert_int_equal(x.calls[0] + x.calls[1], 1);
	assert_int_equal(x.calls[2], 1);
	/* the one that fired was one-shot: disarmed; the other as its rival left it */
	int fired = x.calls[1];
	assert_false(loop_timer_armed(x.t[fired]));
	assert_int_equal(loop_timer_armed(x.t[!fired]), rearm);
	loop_free(x.l);
}

static void test_timer_disarmed_in_the_batch_does_not_fire(void **state)
{
	run_racing_timers(false);
}

static void test_timer_rearmed_in_the_batch_does_not_fire_early(void **state)
{
	run_racing_timers(true);
}

static void on_tick(void *ctx)
{
	struct timers *x = ctx;
	if (++x->calls[0] == x->periodic_stop_after)
		loop_stop(x->l);
}

static void on_once(void *ctx)
{
	struct timers *x = ctx;
	x->calls[1]++;
}

/* A periodic timer keeps firing; a one-shot one fires once and is then disarmed. */
static void test_timer_periodic_and_one_shot(void **state)
{
	struct timers x = { .periodic_stop_after = 5 };

	assert_int_equal(loop_new(&x.l), 0);
	assert_int_equal(loop_timer_new(x.l, on_tick, &x, &x.t[0]), 0);
	assert_int_equal(loop_timer_new(x.l, on_once, &x, &x.t[1]), 0);
	assert_int_equal(loop_timer_arm_every(x.t[0], 2000000ull), 0); /* 2 ms */
	assert_int_equal(loop_timer_arm(x.t[1], 1), 0);
	assert_int_equal(loop_run(x.l), 0);
	assert_int_equal(x.calls[0], 5);
	assert_int_equal(x.calls[1], 1);
	assert_true(loop_timer_armed(x.t[0]));
	assert_false(loop_timer_armed(x.t[1]));
	loop_free(x.l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_delete_another_source_of_the_batch),
		cmocka_unit_test(test_delete_own_source),
		cmocka_unit_test(test_mod_fd),
		cmocka_unit_test(test_timer_disarmed_in_the_batch_does_not_fire),
		cmocka_unit_test(test_timer_rearmed_in_the_batch_does_not_fire_early),
		cmocka_unit_test(test_timer_periodic_and_one_shot),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
