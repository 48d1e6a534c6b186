// SPDX-License-Identifier: GPL-2.0
/* Load generator for bench/tcp, built by the Makefile into build/bench/tcp-gen; see bench/README.md.
 *
 * usage: tcpgen PORT RATE SECONDS THREADS INFLIGHT
 *   Listens on 127.0.0.1:PORT (one server thread: accept, close at once).
 *   THREADS client threads open connections to it with non-blocking connect(),
 *   wait for the server's FIN, then close, so the client side never holds
 *   TIME_WAIT (the server side does) and ephemeral ports are reused quickly.
 *   RATE is connects/s over all threads (0 = as fast as possible), paced in
 *   1 ms steps; at most INFLIGHT connections per thread are open at once.
 *
 * Protocol on stdio: prints "listening PORT" once the server is up, waits for
 * one line on stdin, runs for SECONDS, waits up to 2 s for connections still
 * open, then prints one JSON object with the counts and exits 0.
 * Exit 3: the port could not be bound (the caller picks another one).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_FDS 1048576

static int port, nthreads, inflight_max;
static double rate, seconds;
static double t_start, t_stop;   /* monotonic s: window start, end of new connects */
static atomic_int stop_server;
static struct sockaddr_in dst;

struct worker {
	pthread_t th;
	uint64_t attempted, connected, failed, closed, unfinished, behind;
	uint64_t err_connect, err_socket;
	int last_errno;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *server_main(void *arg)
{
	int lfd = *(int *)arg;
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = lfd }, evs[4];
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	while (!atomic_load_explicit(&stop_server, memory_order_relaxed)) {
		int n = epoll_wait(ep, evs, 4, 50);
		if (n <= 0)
			continue;
		for (;;) {
			int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);
			if (fd < 0)
				break;
			close(fd);
		}
	}
	close(ep);
	return NULL;
}

/* fd -> state: 1 connecting, 2 connected (waiting for the server's FIN). */
static unsigned char *state;

static void *client_main(void *arg)
{
	struct worker *w = arg;
	double my_rate = rate / nthreads; /* per second; 0 = unlimited */
	int ep = epoll_create1(0);
	struct epoll_event evs[256];
	int inflight = 0;
	uint64_t started = 0;

	for (;;) {
		double t = now_s();
		int stopping = t >= t_stop;
		if (!stopping) {
			uint64_t due;
			if (my_rate > 0) {
				due = (uint64_t)((t - t_start) * my_rate) + 1;
				/* Don't catch up more than 10 ms worth of missed slots in a burst. */
				uint64_t slack = (uint64_t)(my_rate * 0.010) + 1;
				if (due > started + slack) {
					w->behind += due - started - slack;
					started = due - slack;
				}
			} else {
				due = started + (uint64_t)(inflight_max - inflight);
			}
			while (started < due && inflight < inflight_max) {
				started++;
				w->attempted++;
				int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
				if (fd < 0) {
					w->err_socket++;
					w->failed++;
					w->last_errno = errno;
					break;
				}
				if (fd >= MAX_FDS) {
					close(fd);
					w->failed++;
					break;
				}
				if (connect(fd, (struct sockaddr *)&dst, sizeof(dst)) < 0 &&
				    errno != EINPROGRESS) {
					w->err_connect++;
					w->failed++;
					w->last_errno = errno;
					close(fd);
					continue;
				}
				struct epoll_event ev = {
					.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP,
					.data.fd = fd,
				};
				epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
				state[fd] = 1;
				inflight++;
			}
		} else if (inflight == 0 || t >= t_stop + 2.0) {
			break;
		}

		int timeout;
		if (stopping)
			timeout = 10;
		else if (my_rate > 0 && inflight < inflight_max)
			timeout = 1; /* pace in 1 ms steps */
		else
			timeout = 10;
		int n = epoll_wait(ep, evs, 256, timeout);
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;
			uint32_t e = evs[i].events;
			if (state[fd] == 1) {
				if (e & EPOLLERR) {
					int err = 0;
					socklen_t len = sizeof(err);
					getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
					w->failed++;
					w->err_connect++;
					w->last_errno = err;
					state[fd] = 0;
					close(fd);
					inflight--;
					continue;
				}
				if (!(e & EPOLLOUT))
					continue;
				w->connected++;
				state[fd] = 2;
				if (!(e & (EPOLLIN | EPOLLRDHUP | EPOLLHUP))) {
					struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP,
								  .data.fd = fd };
					epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
					continue;
				}
			}
			if (state[fd] == 2 && (e & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))) {
				state[fd] = 0;
				close(fd);
				w->closed++;
				inflight--;
			}
		}
	}
	/* Whatever is still open after the grace period. */
	for (int fd = 0; fd < MAX_FDS && inflight > 0; fd++) {
		if (state[fd]) {
			state[fd] = 0;
			close(fd);
			w->unfinished++;
			inflight--;
		}
	}
	close(ep);
	return NULL;
}

static double tv_s(struct timeval tv)
{
	return tv.tv_sec + tv.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: %s PORT RATE SECONDS THREADS INFLIGHT\n", argv[0]);
		return 2;
	}
	port = atoi(argv[1]);
	rate = atof(argv[2]);
	seconds = atof(argv[3]);
	nthreads = atoi(argv[4]);
	inflight_max = atoi(argv[5]);
	if (port <= 0 || port > 65535 || rate < 0 || seconds <= 0 || nthreads < 1 ||
	    inflight_max < 1) {
		fprintf(stderr, "tcpgen: bad arguments\n");
		return 2;
	}
	struct rlimit rl = { MAX_FDS, MAX_FDS };
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
		getrlimit(RLIMIT_NOFILE, &rl);
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	state = calloc(MAX_FDS, 1);

	memset(&dst, 0, sizeof(dst));
	dst.sin_family = AF_INET;
	dst.sin_port = htons(port);
	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	int one = 1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&dst, sizeof(dst)) < 0) {
		fprintf(stderr, "tcpgen: bind 127.0.0.1:%d: %s\n", port, strerror(errno));
		return 3;
	}
	if (listen(lfd, 65535) < 0) {
		fprintf(stderr, "tcpgen: listen: %s\n", strerror(errno));
		return 1;
	}
	pthread_t srv;
	pthread_create(&srv, NULL, server_main, &lfd);
	printf("listening %d\n", port);
	fflush(stdout);

	char buf[64];
	if (!fgets(buf, sizeof(buf), stdin))
		return 1;

	struct rusage ru0, ru1;
	getrusage(RUSAGE_SELF, &ru0);
	t_start = now_s();
	t_stop = t_start + seconds;
	struct worker *ws = calloc(nthreads, sizeof(*ws));
	for (int i = 0; i < nthreads; i++)
		pthread_create(&ws[i].th, NULL, client_main, &ws[i]);
	for (int i = 0; i < nthreads; i++)
		pthread_join(ws[i].th, NULL);
	double t_end = now_s();
	atomic_store(&stop_server, 1);
	pthread_join(srv, NULL);
	getrusage(RUSAGE_SELF, &ru1);

	struct worker sum = { 0 };
	for (int i = 0; i < nthreads; i++) {
		sum.attempted += ws[i].attempted;
		sum.connected += ws[i].connected;
		sum.failed += ws[i].failed;
		sum.closed += ws[i].closed;
		sum.unfinished += ws[i].unfinished;
		sum.behind += ws[i].behind;
		sum.err_connect += ws[i].err_connect;
		sum.err_socket += ws[i].err_socket;
		if (ws[i].last_errno)
			sum.last_errno = ws[i].last_errno;
	}
	printf("{\"attempted\":%llu,\"connected\":%llu,\"failed\":%llu,\"closed\":%llu,"
	       "\"unfinished\":%llu,\"skipped\":%llu,\"err_connect\":%llu,\"err_socket\":%llu,"
	       "\"last_error\":\"%s\",\"window_s\":%.6f,\"elapsed_s\":%.6f,"
	       "\"utime_s\":%.6f,\"stime_s\":%.6f}\n",
	       (unsigned long long)sum.attempted, (unsigned long long)sum.connected,
	       (unsigned long long)sum.failed, (unsigned long long)sum.closed,
	       (unsigned long long)sum.unfinished, (unsigned long long)sum.behind,
	       (unsigned long long)sum.err_connect, (unsigned long long)sum.err_socket,
	       sum.last_errno ? strerror(sum.last_errno) : "", seconds, t_end - t_start,
	       tv_s(ru1.ru_utime) - tv_s(ru0.ru_utime), tv_s(ru1.ru_stime) - tv_s(ru0.ru_stime));
	fflush(stdout);
	close(lfd);
	return 0;
}
