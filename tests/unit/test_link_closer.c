#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "bpf/link_closer.h"
#include "metrics/registry.h"
#include "util/strbuf.h"

/* Any fd stands in for a link fd: the closer only closes it. */
static int new_fd(void)
{
	int fd = eventfd(0, EFD_CLOEXEC);
	assert_true(fd >= 0);
	return fd;
}

static bool is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0 || errno != EBADF;
}

static void test_null_closer_closes_at_once(void **state)
{
	int fd = new_fd();
	link_closer_close_fd(NULL, fd);
	assert_false(is_open(fd));
	link_closer_destroy_link(NULL, NULL); /* nothing to do */
	link_closer_free(NULL);
	assert_int_equal(link_closer_pending(NULL), 0);
}

/* More links than threads: free() returns once every one is closed. */
static void test_free_waits_for_every_close(void **state)
{
	enum { N = 900 };
	static int fds[N];
	struct link_closer *c;

	assert_int_equal(link_closer_new(NULL, LINK_CLOSER_MAX_THREADS, &c), 0);
	link_closer_close_fd(c, -1); /* ignored */
	for (int i = 0; i < N; i++)
		fds[i] = new_fd();
	for (int i = 0; i < N; i++)
		link_closer_close_fd(c, fds[i]);
	link_closer_free(c);
	for (int i = 0; i < N; i++)
		assert_false(is_open(fds[i]));
}

/* Reused after the queue ran dry (its threads gone): starts threads again. */
static void test_metrics_and_reuse(void **state)
{
	struct metric_registry *r = metric_registry_new();
	struct link_closer *c;
	struct strbuf sb = STRBUF_INIT;

	assert_int_equal(link_closer_new(r, 3, &c), 0);
	metric_registry_write(r, &sb);
	assert_non_null(strstr(strbuf_str(&sb), "\nnodescope_bpf_links_closing 0\n"));
	assert_non_null(strstr(strbuf_str(&sb), "\nnodescope_bpf_links_closed_total 0\n"));
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 50; i++)
			link_closer_close_fd(c, new_fd());
		struct timespec ms = { 0, 1000000 };
		for (int i = 0; i < 10000 && link_closer_pending(c); i++)
			nanosleep(&ms, NULL);
		assert_int_equal(link_closer_pending(c), 0);
	}
	strbuf_reset(&sb);
	metric_registry_write(r, &sb);
	assert_non_null(strstr(strbuf_str(&sb), "\nnodescope_bpf_links_closing 0\n"));
	assert_non_null(strstr(strbuf_str(&sb), "\nnodescope_bpf_links_closed_total 100\n"));
	strbuf_free(&sb);
	link_closer_free(c);
	metric_registry_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_null_closer_closes_at_once),
		cmocka_unit_test(test_free_waits_for_every_close),
		cmocka_unit_test(test_metrics_and_reuse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
