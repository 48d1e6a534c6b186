// SPDX-License-Identifier: GPL-2.0
/* Exec storm generator for bench/exec, built by the Makefile into build/bench/exec-gen; see bench/README.md.
 *
 * usage: execgen RATE SECONDS INFLIGHT PROG
 *   fork()s and execve()s PROG (no arguments, PATH-only environment) RATE
 *   times per second (0 = as fast as possible) for SECONDS, with at most
 *   INFLIGHT children alive at once, and reaps every child with waitpid().
 *   Pacing is exact to the slot: the generator sleeps in sigtimedwait() until
 *   the next fork is due or a child exits. If it falls more than 10 ms behind,
 *   it skips the missed slots rather than catching up in a burst, and counts them.
 *
 * Protocol on stdio: prints "ready PID", waits for one line on stdin, runs,
 * waits for the children still alive (at most 5 s), then prints one JSON
 * object with the counts and exits 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t forked, fork_failed, exit_ok, exec_failed, exit_other;
static int inflight;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double tv_s(struct timeval tv)
{
	return tv.tv_sec + tv.tv_usec / 1e6;
}

static void reap(int block)
{
	int st;
	pid_t p;
	while (inflight > 0 && (p = waitpid(-1, &st, block ? 0 : WNOHANG)) > 0) {
		inflight--;
		block = 0;
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			exit_ok++;
		else if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
			exec_failed++;
		else
			exit_other++;
	}
}

/* Sleep until a child exits (SIGCHLD) or `timeout` seconds pass. */
static void wait_chld(const sigset_t *chld, double timeout)
{
	if (timeout <= 0)
		return;
	if (timeout > 0.010)
		timeout = 0.010;
	struct timespec ts = { 0, (long)(timeout * 1e9) };
	sigtimedwait(chld, NULL, &ts);
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: %s RATE SECONDS INFLIGHT PROG\n", argv[0]);
		return 2;
	}
	double rate = atof(argv[1]), seconds = atof(argv[2]);
	int inflight_max = atoi(argv[3]);
	char *prog = argv[4];
	if (rate < 0 || seconds <= 0 || inflight_max < 1) {
		fprintf(stderr, "execgen: bad arguments\n");
		return 2;
	}
	char *cargv[] = { prog, NULL };
	char *cenv[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };

	sigset_t chld, old;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	char buf[64];
	if (!fgets(buf, sizeof(buf), stdin))
		return 1;

	struct rusage s0, c0, s1, c1;
	getrusage(RUSAGE_SELF, &s0);
	getrusage(RUSAGE_CHILDREN, &c0);
	double t_start = now_s(), t_stop = t_start + seconds;
	uint64_t started = 0, skipped = 0;
	int last_errno = 0;

	for (;;) {
		double t = now_s();
		if (t >= t_stop)
			break;
		uint64_t due;
		if (rate > 0) {
			due = (uint64_t)((t - t_start) * rate) + 1;
			uint64_t slack = (uint64_t)(rate * 0.010) + 1;
			if (due > started + slack) {
				skipped += due - started - slack;
				started = due - slack;
			}
		} else {
			due = started + (uint64_t)(inflight_max - inflight);
		}
		while (started < due && inflight < inflight_max) {
			started++;
			pid_t p = fork();
			if (p == 0) {
				sigprocmask(SIG_SETMASK, &old, NULL);
				execve(prog, cargv, cenv);
				_exit(127);
			}
			if (p < 0) {
				fork_failed++;
				last_errno = errno;
				break;
			}
			forked++;
			inflight++;
		}
		reap(0);
		if (inflight >= inflight_max || rate <= 0) {
			wait_chld(&chld, 0.010);
		} else {
			/* The next fork is due when floor((t - t_start) * rate) >= started. */
			double next = t_start + (double)started / rate;
			wait_chld(&chld, next - now_s());
		}
		reap(0);
	}
	/* Wind-down: reap what is still alive. */
	double t_end_new = now_s();
	while (inflight > 0 && now_s() < t_end_new + 5.0) {
		reap(0);
		if (inflight)
			wait_chld(&chld, 0.010);
	}
	double t_end = now_s();
	getrusage(RUSAGE_SELF, &s1);
	getrusage(RUSAGE_CHILDREN, &c1);

	printf("{\"pid\":%d,\"attempted\":%llu,\"forked\":%llu,\"fork_failed\":%llu,"
	       "\"exit_ok\":%llu,\"exec_failed\":%llu,\"exit_other\":%llu,\"unreaped\":%d,"
	       "\"skipped\":%llu,\"last_error\":\"%s\",\"window_s\":%.6f,\"elapsed_s\":%.6f,"
	       "\"utime_s\":%.6f,\"stime_s\":%.6f,\"child_utime_s\":%.6f,\"child_stime_s\":%.6f}\n",
	       (int)getpid(), (unsigned long long)started, (unsigned long long)forked,
	       (unsigned long long)fork_failed, (unsigned long long)exit_ok,
	       (unsigned long long)exec_failed, (unsigned long long)exit_other, inflight,
	       (unsigned long long)skipped, last_errno ? strerror(last_errno) : "", seconds,
	       t_end - t_start, tv_s(s1.ru_utime) - tv_s(s0.ru_utime),
	       tv_s(s1.ru_stime) - tv_s(s0.ru_stime), tv_s(c1.ru_utime) - tv_s(c0.ru_utime),
	       tv_s(c1.ru_stime) - tv_s(c0.ru_stime));
	fflush(stdout);
	return 0;
}
