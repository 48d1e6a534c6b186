// SPDX-License-Identifier: GPL-2.0
/*
 * bench/syscall's load: a loop of syscalls nodescope has no interest in, timed.
 *
 *   syscall-gen getpid N   N getpid() calls
 *   syscall-gen pipe N     N/2 times: write one byte to a pipe, read it back
 *   syscall-gen udp N      N/2 times: sendto one byte to a UDP socket of its own (on
 *                          127.0.0.1, not port 53) from an unconnected one, recvfrom it
 *
 * Prints one line of JSON: the syscalls made, and the wall and CPU time
 * (CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID) of the loop in ns. The CPU time
 * leaves out the time other work on a busy machine held the CPU; a warm-up of
 * a tenth of N runs first, untimed.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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

/* Datagrams the DNS hooks look at (an address given, on an untracked socket) and let go. */
static int udp_tx, udp_rx;
static struct sockaddr_in udp_to;

static void loop_udp(long n)
{
	char c = 'x';
	struct sockaddr_in from;
	socklen_t len;

	for (long i = 0; i < n / 2; i++) {
		len = sizeof(from);
		if (sendto(udp_tx, &c, 1, 0, (struct sockaddr *)&udp_to, sizeof(udp_to)) != 1 ||
		    recvfrom(udp_rx, &c, 1, 0, (struct sockaddr *)&from, &len) != 1) {
			perror("syscall-gen: udp");
			exit(1);
		}
	}
}

static int udp_open(void)
{
	socklen_t len = sizeof(udp_to);

	udp_to.sin_family = AF_INET;
	udp_to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	udp_tx = socket(AF_INET, SOCK_DGRAM, 0);
	udp_rx = socket(AF_INET, SOCK_DGRAM, 0);
	if (udp_tx < 0 || udp_rx < 0 || bind(udp_rx, (struct sockaddr *)&udp_to, sizeof(udp_to)) ||
	    getsockname(udp_rx, (struct sockaddr *)&udp_to, &len))
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3 ||
	    (strcmp(argv[1], "getpid") && strcmp(argv[1], "pipe") && strcmp(argv[1], "udp"))) {
		fprintf(stderr, "usage: syscall-gen getpid|pipe|udp N\n");
		return 2;
	}
	long n = atol(argv[2]);
	void (*loop)(long) = argv[1][0] == 'g' ? loop_getpid : argv[1][0] == 'p' ? loop_pipe : loop_udp;

	if (n < 2) {
		fprintf(stderr, "syscall-gen: N must be 2 or more\n");
		return 2;
	}
	if (loop == loop_pipe && pipe(fds)) {
		perror("syscall-gen: pipe");
		return 1;
	}
	if (loop == loop_udp && udp_open()) {
		perror("syscall-gen: udp socket");
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
