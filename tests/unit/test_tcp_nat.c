#define _GNU_SOURCE /* unshare */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tcp/addr.h"
#include "tcp/nat.h"
#include "util/netns.h"

static struct tcp_tuple tuple4(void)
{
	struct tcp_tuple t = { .family = AF_INET, .sport = 40000, .dport = 80 };
	inet_pton(AF_INET, "10.0.0.1", t.saddr);
	inet_pton(AF_INET, "10.96.0.10", t.daddr);
	return t;
}

/* A child in a network namespace of its own until killed; 0 when that is not permitted. */
static pid_t child_in_new_netns(void)
{
	int p[2];
	char ok = 0;

	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		/* Gone with the test, whatever happens to it, and holding none of its output. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		int null = open("/dev/null", O_RDWR);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		ok = unshare(CLONE_NEWNET) == 0;
		if (write(p[1], &ok, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	assert_int_equal(read(p[0], &ok, 1), 1);
	close(p[0]);
	close(p[1]);
	if (!ok) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return 0;
	}
	return pid;
}

static uint64_t netns_of(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
	return netns_inode(path);
}

/*
 * Each process's namespace asked through a socket of its own, kept while
 * it lives; what cannot be entered is counted.
 */
static void test_namespaces(void **state)
{
	struct tcp_nat n;
	struct tcp_tuple t = tuple4();
	char actual[TCP_ADDR_STRLEN];
	uint64_t own = netns_of(getpid());

	/* The host's is made another than ours, so that ours is asked first. */
	assert_int_equal(tcp_nat_init(&n, own + 1), 0);
	if (n.host_fd < 0) { /* no ctnetlink here: not root, or nfnetlink not loaded */
		tcp_nat_destroy(&n);
		skip();
	}

	/* A process gone: its namespace is not entered, the host's alone is asked. */
	pid_t gone = fork();
	if (!gone)
		_exit(0);
	waitpid(gone, NULL, 0);
	strcpy(actual, "10.96.0.10:80");
	tcp_nat_resolve(&n, &t, gone, own, "10.96.0.10:80", actual, sizeof(actual), 1);
	assert_string_equal(actual, "10.96.0.10:80");
	assert_int_equal(n.n_netns_failed, 1);
	assert_int_equal(n.n_socks, 0);
	/* Found not translated: not asked again for a while, so not counted again. */
	tcp_nat_resolve(&n, &t, gone, own, "10.96.0.10:80", actual, sizeof(actual), 2);
	assert_int_equal(n.n_netns_failed, 1);
	/* Its namespace unknown: counted. */
	tcp_nat_resolve(&n, &t, gone, 0, "10.96.0.11:80", actual, sizeof(actual), 3);
	assert_int_equal(n.n_netns_failed, 2);

	/* This process: a socket made in its namespace and kept. */
	tcp_nat_resolve(&n, &t, getpid(), own, "10.96.0.12:80", actual, sizeof(actual), 4);
	assert_int_equal(n.n_socks, 1);
	assert_int_equal(n.n_netns_failed, 2);
	/* Its pid claimed for another namespace (a pid reused): refused, counted. */
	tcp_nat_resolve(&n, &t, getpid(), own + 2, "10.96.0.13:80", actual, sizeof(actual), 5);
	assert_int_equal(n.n_socks, 1);
	assert_int_equal(n.n_netns_failed, 3);
	/* The host's namespace: its own socket serves it, nothing entered. */
	tcp_nat_resolve(&n, &t, getpid(), own + 1, "10.96.0.14:80", actual, sizeof(actual), 6);
	assert_int_equal(n.n_socks, 1);
	assert_int_equal(n.n_netns_failed, 3);

	pid_t other = child_in_new_netns();
	if (other) {
		uint64_t ns = netns_of(other);
		assert_int_not_equal(ns, own);
		tcp_nat_resolve(&n, &t, other, ns, "10.96.0.15:80", actual, sizeof(actual), 7);
		assert_int_equal(n.n_socks, 2);
		tcp_nat_sweep(&n);
		assert_int_equal(n.n_socks, 2); /* both processes alive */
		kill(other, SIGKILL);
		waitpid(other, NULL, 0);
		/* Its socket would keep its namespace alive: closed at the next sweep. */
		tcp_nat_sweep(&n);
		assert_int_equal(n.n_socks, 1);
		assert_int_equal(n.socks[0].netns, own);
		assert_int_equal(n.n_evicted, 0);
	}
	tcp_nat_destroy(&n);
	assert_int_equal(n.n_socks, 0);
	if (!other)
		skip(); /* no CLONE_NEWNET: the sweep was not tried */
}

/* A full table closes its least recently used socket for a new namespace's. */
static void test_eviction(void **state)
{
	struct tcp_nat n;
	struct tcp_tuple t = tuple4();
	char actual[TCP_ADDR_STRLEN];
	uint64_t own = netns_of(getpid());

	assert_int_equal(tcp_nat_init(&n, own + 1), 0);
	pid_t other = n.host_fd >= 0 ? child_in_new_netns() : 0;
	if (!other) {
		tcp_nat_destroy(&n);
		skip();
	}
	uint64_t ns = netns_of(other);
	n.cap = 1;
	tcp_nat_resolve(&n, &t, getpid(), own, "10.96.0.20:80", actual, sizeof(actual), 1);
	tcp_nat_resolve(&n, &t, other, ns, "10.96.0.21:80", actual, sizeof(actual), 2);
	assert_int_equal(n.n_evicted, 1);
	assert_int_equal(n.n_socks, 1);
	assert_int_equal(n.socks[0].netns, ns);
	tcp_nat_resolve(&n, &t, getpid(), own, "10.96.0.22:80", actual, sizeof(actual), 3);
	assert_int_equal(n.n_evicted, 2);
	assert_int_equal(n.socks[0].netns, own);
	/* Room for two: both kept. */
	n.cap = 2;
	tcp_nat_resolve(&n, &t, other, ns, "10.96.0.23:80", actual, sizeof(actual), 4);
	tcp_nat_resolve(&n, &t, getpid(), own, "10.96.0.24:80", actual, sizeof(actual), 5);
	assert_int_equal(n.n_evicted, 2);
	assert_int_equal(n.n_socks, 2);
	assert_int_equal(n.n_netns_failed, 0);
	kill(other, SIGKILL);
	waitpid(other, NULL, 0);
	tcp_nat_destroy(&n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_namespaces),
		cmocka_unit_test(test_eviction),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
