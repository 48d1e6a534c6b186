// SPDX-License-Identifier: GPL-2.0
/*
 * bench/syscall's load: a loop of syscalls nodescope has no interest in, timed.
 *
 *   syscall-gen getpid N   N getpid() calls
 *   syscall-gen pipe N     N/2 times: write one byte to a pipe, read it back
 *   syscall-gen udp N      N/2 times: sendto one byte to a UDP socket of its own (on
 *                          127.0.0.1, not port 53) from an unconnected one, recvfrom it
 *   syscall-gen tcp N      N/3 times: write 64 bytes to a loopback TCP connection of
 *                          its own, read them at the other end, read again (EAGAIN, as
 *                          an event loop's last read): a socket nodescope captures
 *
 * Prints one line of JSON: the syscalls made, and the wall and CPU time
 * (CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID) of the loop in ns. The CPU time
 * leaves out the time other work on a busy machine held the CPU; a warm-up of
 * a tenth of N runs first, untimed.
 */
#define _GNU_SOURCE /* accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/tcp.h>
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

static int pipe_open(void)
{
	return pipe(fds);
}

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

/* A connection both of whose ends are this process's: connected and accepted, so tracked. */
static int tcp_tx, tcp_rx;

static void loop_tcp(long n)
{
	char buf[64];

	memset(buf, 'x', sizeof(buf));
	for (long i = 0; i < n / 3; i++) {
		if (write(tcp_tx, buf, sizeof(buf)) != sizeof(buf) ||
		    read(tcp_rx, buf, sizeof(buf)) != sizeof(buf) || read(tcp_rx, buf, sizeof(buf)) != -1) {
			perror("syscall-gen: tcp");
			exit(1);
		}
	}
}

static int tcp_open(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int one = 1, l = socket(AF_INET, SOCK_STREAM, 0);

	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &len))
		return -1;
	tcp_tx = socket(AF_INET, SOCK_STREAM, 0);
	if (tcp_tx < 0 || connect(tcp_tx, (struct sockaddr *)&a, sizeof(a)))
		return -1;
	tcp_rx = accept4(l, NULL, NULL, SOCK_NONBLOCK);
	close(l);
	if (tcp_rx < 0)
		return -1;
	/* Each write a segment of its own, read whole by the next read. */
	return setsockopt(tcp_tx, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static const struct {
	const char *name;
	void (*loop)(long);
	int (*open)(void);
	int per_round; /* syscalls per turn of the loop */
} modes[] = {
	{ "getpid", loop_getpid, NULL, 1 },
	{ "pipe", loop_pipe, pipe_open, 2 },
	{ "udp", loop_udp, udp_open, 2 },
	{ "tcp", loop_tcp, tcp_open, 3 },
};

int main(int argc, char **argv)
{
	int m = 0;
	while (argc == 3 && m < (int)(sizeof(modes) / sizeof(modes[0])) && strcmp(argv[1], modes[m].name))
		m++;
	if (argc != 3 || m == (int)(sizeof(modes) / sizeof(modes[0]))) {
		fprintf(stderr, "usage: syscall-gen getpid|pipe|udp|tcp N\n");
		return 2;
	}
	long n = atol(argv[2]);
	void (*loop)(long) = modes[m].loop;

	if (n < modes[m].per_round) {
		fprintf(stderr, "syscall-gen: N must be %d or more\n", modes[m].per_round);
		return 2;
	}
	if (modes[m].open && modes[m].open()) {
		fprintf(stderr, "syscall-gen: %s: cannot set up: %s\n", argv[1], strerror(errno));
		return 1;
	}
	n -= n % modes[m].per_round;
	loop(n / 10 + modes[m].per_round);
	long long w0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	loop(n);
	long long c1 = now_ns(CLOCK_THREAD_CPUTIME_ID), w1 = now_ns(CLOCK_MONOTONIC);
	printf("{\"mode\":\"%s\",\"syscalls\":%ld,\"wall_ns\":%lld,\"cpu_ns\":%lld}\n", argv[1], n,
	       w1 - w0, c1 - c0);
	return 0;
}
