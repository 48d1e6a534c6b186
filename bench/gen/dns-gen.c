// SPDX-License-Identifier: GPL-2.0
/*
 * bench/dns's load: a DNS query storm at a fixed rate from one unconnected
 * UDP socket (sendto and recvfrom, as dnspython and many stub resolvers do).
 *
 *   dns-gen SERVER NAME RATE SECONDS
 *
 * Sends RATE type-A questions for NAME per second to SERVER:53 for SECONDS,
 * each at its own time on a fixed schedule (open loop: a slow answer does not
 * slow the questions), with ids 0..65535 in turn; reads the answers as they
 * come, and for 1 s after the last question. Prints one line of JSON: the
 * questions sent, the answers read (and how many were not NOERROR), and the
 * seconds the sending took.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A standard query with recursion desired; the id is patched in per question. */
static size_t build_query(const char *name, unsigned char *q, size_t cap)
{
	static const unsigned char head[12] = { 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0 };
	size_t n = sizeof(head);

	memcpy(q, head, n);
	for (const char *p = name; *p;) {
		const char *dot = strchr(p, '.');
		size_t l = dot ? (size_t)(dot - p) : strlen(p);
		if (!l || l > 63 || n + l + 6 > cap)
			return 0;
		q[n++] = (unsigned char)l;
		memcpy(q + n, p, l);
		n += l;
		p += l + (dot ? 1 : 0);
	}
	q[n++] = 0;
	q[n++] = 0, q[n++] = 1; /* type A */
	q[n++] = 0, q[n++] = 1; /* class IN */
	return n;
}

/* Reads every answer waiting (or, with wait_ms, the first for up to that long). */
static void drain(int s, int wait_ms, long *answers, long *failed)
{
	unsigned char buf[1500];
	struct pollfd pfd = { .fd = s, .events = POLLIN };

	while (poll(&pfd, 1, wait_ms) > 0) {
		struct sockaddr_in from;
		socklen_t len = sizeof(from);
		ssize_t r = recvfrom(s, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &len);
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		if (r < 0) {
			perror("dns-gen: recvfrom");
			exit(1);
		}
		if (r >= 4 && (buf[2] & 0x80)) {
			(*answers)++;
			*failed += (buf[3] & 0x0f) != 0;
		}
		wait_ms = 0;
	}
}

int main(int argc, char **argv)
{
	unsigned char q[300];
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(53) };

	if (argc != 5 || inet_pton(AF_INET, argv[1], &to.sin_addr) != 1) {
		fprintf(stderr, "usage: dns-gen SERVER(IPv4) NAME RATE SECONDS\n");
		return 2;
	}
	size_t qlen = build_query(argv[2], q, sizeof(q));
	long rate = atol(argv[3]), seconds = atol(argv[4]);
	if (!qlen || rate < 1 || seconds < 1) {
		fprintf(stderr, "dns-gen: bad name, rate or seconds\n");
		return 2;
	}
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	int rcvbuf = 4 << 20;
	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf))) {
		perror("dns-gen: socket");
		return 1;
	}
	long total = rate * seconds, answers = 0, failed = 0;
	long long start = now_ns(), step = 1000000000LL / rate;
	for (long i = 0; i < total; i++) {
		long long due = start + i * step;
		while (now_ns() < due) {
			long long left = due - now_ns();
			drain(s, left > 1000000 ? (int)(left / 1000000) : 0, &answers, &failed);
		}
		q[0] = (unsigned char)(i >> 8);
		q[1] = (unsigned char)i;
		if (sendto(s, q, qlen, 0, (struct sockaddr *)&to, sizeof(to)) != (ssize_t)qlen) {
			perror("dns-gen: sendto");
			return 1;
		}
		drain(s, 0, &answers, &failed);
	}
	double sent_s = (now_ns() - start) / 1e9;
	long long end = now_ns() + 1000000000LL;
	while (answers < total && now_ns() < end)
		drain(s, 50, &answers, &failed);
	printf("{\"sent\":%ld,\"answers\":%ld,\"failed\":%ld,\"seconds\":%.3f}\n", total, answers, failed,
	       sent_s);
	return 0;
}
