#include "loop.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define LOOP_MAX_WORKERS 8
#define LOOP_BATCH 64

struct loop_source {
	int fd;
	loop_fd_fn fn;
	void *ctx;
	struct loop_source *next;
};

struct loop_timer {
	struct loop *loop;
	int fd;
	bool armed;
	bool periodic; /* armed with an interval: still armed after it fires */
	loop_timer_fn fn;
	void *ctx;
	struct loop_timer *next; /* the loop's timers, freed with it */
};

struct loop_worker {
	loop_work_fn fn;
	void *ctx;
	bool pending;
};

struct loop {
	int epfd;
	bool stop;
	uint64_t wakeups;
	struct loop_source *sources;
	struct loop_timer *timers;
	struct loop_worker workers[LOOP_MAX_WORKERS];
	int n_workers;
};

int loop_new(struct loop **out)
{
	struct loop *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0) {
		int err = -errno;
		free(l);
		return err;
	}
	*out = l;
	return 0;
}

void loop_free(struct loop *l)
{
	if (!l)
		return;
	while (l->sources) {
		struct loop_source *s = l->sources;
		l->sources = s->next;
		free(s);
	}
	while (l->timers) {
		struct loop_timer *t = l->timers;
		l->timers = t->next;
		close(t->fd);
		free(t);
	}
	close(l->epfd);
	free(l);
}

int loop_add_fd(struct loop *l, int fd, uint32_t events, loop_fd_fn fn, void *ctx)
{
	struct loop_source *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->fd = fd;
	s->fn = fn;
	s->ctx = ctx;
	struct epoll_event ev = { .events = events, .data.ptr = s };
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		int err = -errno;
		free(s);
		return err;
	}
	s->next = l->sources;
	l->sources = s;
	return 0;
}

int loop_del_fd(struct loop *l, int fd)
{
	for (struct loop_source **p = &l->sources; *p; p = &(*p)->next) {
		if ((*p)->fd != fd)
			continue;
		struct loop_source *s = *p;
		*p = s->next;
		epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
		/* Freed now: epoll_wait results for it are consumed within one batch,
		 * and deletions only happen from callbacks of other sources or at exit. */
		free(s);
		return 0;
	}
	return -ENOENT;
}

static void loop_timer_fire(void *ctx, uint32_t events)
{
	struct loop_timer *t = ctx;
	uint64_t n;

	if (read(t->fd, &n, sizeof(n)) != sizeof(n))
		return; /* disarmed or re-armed meanwhile */
	t->armed = t->periodic;
	t->fn(t->ctx);
}

int loop_timer_new(struct loop *l, loop_timer_fn fn, void *ctx, struct loop_timer **out)
{
	struct loop_timer *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->loop = l;
	t->fn = fn;
	t->ctx = ctx;
	t->fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (t->fd < 0) {
		int err = -errno;
		free(t);
		return err;
	}
	int err = loop_add_fd(l, t->fd, EPOLLIN, loop_timer_fire, t);
	if (err) {
		close(t->fd);
		free(t);
		return err;
	}
	t->next = l->timers;
	l->timers = t;
	*out = t;
	return 0;
}

static int timer_set(struct loop_timer *t, uint64_t after_ns, bool periodic)
{
	if (!after_ns)
		after_ns = 1;
	struct timespec ts = { .tv_sec = after_ns / 1000000000ull, .tv_nsec = after_ns % 1000000000ull };
	struct itimerspec its = { .it_value = ts };
	if (periodic)
		its.it_interval = ts;
	if (timerfd_settime(t->fd, 0, &its, NULL) < 0)
		return -errno;
	t->armed = true;
	t->periodic = periodic;
	return 0;
}

int loop_timer_arm(struct loop_timer *t, uint64_t after_ns)
{
	return timer_set(t, after_ns, false);
}

int loop_timer_arm_every(struct loop_timer *t, uint64_t period_ns)
{
	return timer_set(t, period_ns, true);
}

int loop_timer_disarm(struct loop_timer *t)
{
	struct itimerspec its = { 0 };
	if (!t->armed)
		return 0;
	if (timerfd_settime(t->fd, 0, &its, NULL) < 0)
		return -errno;
	t->armed = false;
	t->periodic = false;
	return 0;
}

bool loop_timer_armed(const struct loop_timer *t)
{
	return t->armed;
}

int loop_add_worker(struct loop *l, loop_work_fn fn, void *ctx, int *id_out)
{
	if (l->n_workers == LOOP_MAX_WORKERS)
		return -ENOSPC;
	l->workers[l->n_workers] = (struct loop_worker){ .fn = fn, .ctx = ctx };
	*id_out = l->n_workers++;
	return 0;
}

void loop_work_pending(struct loop *l, int id)
{
	if (id >= 0 && id < l->n_workers)
		l->workers[id].pending = true;
}

static bool loop_run_workers(struct loop *l)
{
	bool more = false;
	for (int i = 0; i < l->n_workers; i++) {
		struct loop_worker *w = &l->workers[i];
		if (!w->pending)
			continue;
		w->pending = w->fn(w->ctx);
		more |= w->pending;
	}
	return more;
}

int loop_run(struct loop *l)
{
	struct epoll_event evs[LOOP_BATCH];
	bool work = false;

	while (!l->stop) {
		/* Sleep without a timeout unless sliced work is waiting. */
		int n = epoll_wait(l->epfd, evs, LOOP_BATCH, work ? 0 : -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n > 0)
			l->wakeups++;
		for (int i = 0; i < n && !l->stop; i++) {
			struct loop_source *s = evs[i].data.ptr;
			s->fn(s->ctx, evs[i].events);
		}
		work = loop_run_workers(l);
	}
	return 0;
}

void loop_stop(struct loop *l)
{
	l->stop = true;
}

uint64_t loop_wakeups(const struct loop *l)
{
	return l->wakeups;
}
