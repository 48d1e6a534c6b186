#include "hold.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "loop/loop.h"
#include "metrics/registry.h"
#include "util/clock.h"
#include "util/log.h"

struct tls_hold {
	struct tls_hold_opts o;
	pid_t watchdog;
	int watchdog_fd; /* pidfd: readable once the watchdog is gone */
	struct metric *hold_seconds;
	uint64_t n_orphaned; /* holds the watchdog or a stop continued, not a probe */
};

/* Hold lengths: a probe is in place in about a millisecond on an idle node. */
static const double hold_bounds[] = { 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
				      0.01,   0.025,   0.05,   0.1,   0.25,   1 };

static int pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

unsigned tls_hold_continue_all(int held_fd)
{
	unsigned n = 0;
	/* Deleting while walking restarts the walk: take a batch, then act on it. */
	for (int round = 0; round < 64; round++) {
		uint32_t keys[256], key, *prev = NULL;
		unsigned k = 0;
		while (k < 256 && bpf_map_get_next_key(held_fd, prev, &key) == 0) {
			keys[k++] = key;
			prev = &keys[k - 1];
		}
		if (!k)
			break;
		for (unsigned i = 0; i < k; i++) {
			kill((pid_t)keys[i], SIGCONT); /* first: the entry outlives a death in between */
			bpf_map_delete_elem(held_fd, &keys[i]);
		}
		n += k;
	}
	return n;
}

/* Closes every fd but a and b (3 <= a < b). */
static void close_all_but(int a, int b)
{
	syscall(SYS_close_range, 3u, (unsigned)a - 1, 0u);
	syscall(SYS_close_range, (unsigned)a + 1, (unsigned)b - 1, 0u);
	syscall(SYS_close_range, (unsigned)b + 1, ~0u, 0u);
}

/*
 * The watchdog: holds nothing of the agent's but the map of held processes
 * (so no BPF program stays attached through it) and a pidfd of the agent.
 * Once the agent has exited — its links closed, so nothing new is held —
 * it continues every process still held, twice: a program running as the
 * agent went may have held one more.
 */
static void __attribute__((noreturn)) watchdog_run(int held_fd, int agent_fd)
{
	static const struct timespec settle = { 0, 200 * 1000 * 1000 };
	struct pollfd p = { .fd = agent_fd, .events = POLLIN };

	setsid(); /* a terminal's hangup or ^C is not for it */
	prctl(PR_SET_NAME, "nodescope-hold");
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	close_all_but(held_fd < agent_fd ? held_fd : agent_fd, held_fd < agent_fd ? agent_fd : held_fd);
	while (poll(&p, 1, -1) < 0 && errno == EINTR)
		;
	tls_hold_continue_all(held_fd);
	nanosleep(&settle, NULL);
	tls_hold_continue_all(held_fd);
	_exit(0);
}

static void hold_watchdog_gone(void *ctx, uint32_t events)
{
	struct tls_hold *h = ctx;
	*h->o.enabled = 0;
	log_warn("the hold watchdog (pid %d) is gone: first runs are no longer "
		 "held",
		 (int)h->watchdog);
	h->n_orphaned += tls_hold_continue_all(h->o.held_fd);
	loop_del_fd(h->o.loop, h->watchdog_fd);
	waitpid(h->watchdog, NULL, WNOHANG);
}

static const struct metric_def hold_metrics[] = {
	{ "nodescope_first_run_hold_seconds",
	  "Processes held (--hold-first-runs) at a file not probed yet, and for how long.",
	  METRIC_HISTOGRAM, METRIC_BOUNDS(hold_bounds), METRIC_HANDLE(struct tls_hold, hold_seconds) },
	{ "nodescope_first_run_holds_orphaned_total",
	  "Held processes continued without their file probed (the watchdog gone, or the agent "
	  "stopping).",
	  METRIC_COUNTER, METRIC_VALUE(struct tls_hold, n_orphaned) },
};

int tls_hold_start(const struct tls_hold_opts *o, struct tls_hold **out)
{
	struct tls_hold *h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->o = *o;
	h->watchdog_fd = -1;
	int err = metric_register_defs(o->registry, hold_metrics, METRIC_DEFS_COUNT(hold_metrics),
				       h, 0);
	if (err) {
		free(h);
		return err;
	}
	int agent_fd = pidfd_open(getpid());
	if (agent_fd < 0) {
		err = -errno;
		free(h);
		return err;
	}
	pid_t pid = fork();
	if (pid == 0)
		watchdog_run(o->held_fd, agent_fd);
	err = pid < 0 ? -errno : 0;
	close(agent_fd);
	if (!err && (h->watchdog_fd = pidfd_open(pid)) < 0)
		err = -errno;
	if (!err)
		err = loop_add_fd(o->loop, h->watchdog_fd, EPOLLIN, hold_watchdog_gone, h);
	if (err) {
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		if (h->watchdog_fd >= 0)
			close(h->watchdog_fd);
		free(h);
		return err;
	}
	h->watchdog = pid;
	*o->enabled = 1;
	*out = h;
	return 0;
}

void tls_hold_file_done(struct tls_hold *h, uint64_t kdev, uint64_t ino)
{
	uint64_t key[2] = { kdev, ino };
	bpf_map_delete_elem(h->o.probing_fd, key);
}

void tls_hold_release(struct tls_hold *h, uint32_t pid, uint64_t ts_ns)
{
	uint64_t now = clock_mono_ns();
	kill((pid_t)pid, SIGCONT); /* a process that died held is no error */
	bpf_map_delete_elem(h->o.held_fd, &pid);
	metric_observe(h->hold_seconds, NULL, now > ts_ns ? (double)(now - ts_ns) / 1e9 : 0);
}

void tls_hold_stop(struct tls_hold *h)
{
	if (!h)
		return;
	*h->o.enabled = 0;
	h->n_orphaned += tls_hold_continue_all(h->o.held_fd);
	if (h->watchdog_fd >= 0) {
		loop_del_fd(h->o.loop, h->watchdog_fd);
		close(h->watchdog_fd);
	}
	/* The watchdog ends by itself once the agent has gone. */
	free(h);
}
