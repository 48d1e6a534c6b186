// SPDX-License-Identifier: GPL-2.0
/*
 * bench/syscall's load: a loop of syscalls nodescope has no interest in, timed.
 *
 *   syscall-gen getpid N   N getpid() calls
 *   syscall-gen pipe N     N/2 times: write one byte to a pipe, read it back
 *
 * Prints one line of JSON: the syscalls made, and the wall and CPU time
 * (CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID) of the loop in ns. The CPU time
 * leaves out the time other work on a busy machine held the CPU; a warm-up of
 * a tenth of N runs first, untimed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* syscall() itself, so no library caches the answer. */
static void loop_getpid(long n)
{
	for (long i = 0; i < n; i++)
		syscall(SYS_getpid);
}

static int fds[2];

static void loop_pipe(long n)
{
	char c = 'x';

	for (long i = 0; i < n / 2; i++) {
		if (write(fds[1], &c, 1) != 1 || read(fds[0], &c, 1) != 1) {
			perror("syscall-gen: pipe");
			exit(1);
		}
	}
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "getpid") && strcmp(argv[1], "pipe"))) {
		fprintf(stderr, "usage: syscall-gen getpid|pipe N\n");
		return 2;
	}
	long n = atol(argv[2]);
	void (*loop)(long) = argv[1][0] == 'g' ? loop_getpid : loop_pipe;

	if (n < 2) {
		fprintf(stderr, "syscall-gen: N must be 2 or more\n");
		return 2;
	}
	if (loop == loop_pipe && pipe(fds)) {
		perror("syscall-gen: pipe");
		return 1;
	}
	n -= n % 2;
	loop(n / 10 + 2);
	long long w0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	loop(n);
	long long c1 = now_ns(CLOCK_THREAD_CPUTIME_ID), w1 = now_ns(CLOCK_MONOTONIC);
	printf("{\"mode\":\"%s\",\"syscalls\":%ld,\"wall_ns\":%lld,\"cpu_ns\":%lld}\n", argv[1], n,
	       w1 - w0, c1 - c0);
	return 0;
}
