#define _GNU_SOURCE /* pthread_attr_setsigmask_np */
#include "link_closer.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "metrics/registry.h"

/* close() and libbpf's link teardown need little stack. */
#define CLOSER_STACK (64 * 1024)

struct closer_item {
	int fd;			/* a link fd, or -1 */
	struct bpf_link *link;	/* or a libbpf link */
};

struct link_closer {
	pthread_mutex_t mu;
	pthread_cond_t all_done; /* threads == 0 */
	struct closer_item *q;	 /* ring of n items from head */
	size_t head, n, cap;
	unsigned max_threads;
	unsigned threads;	 /* running: each closes until the queue is empty, then exits */
	unsigned starting;	 /* of which not running yet (0 or 1: they start one another) */
	uint64_t pending;	 /* handed over, not closed yet (queued + being closed) */
	uint64_t closed;
	struct metric *m_pending, *m_closed, *m_threads;
};

static void item_close(const struct closer_item *it)
{
	if (it->link)
		bpf_link__destroy(it->link);
	else if (it->fd >= 0)
		close(it->fd);
}

static struct closer_item pop_locked(struct link_closer *c)
{
	struct closer_item it = c->q[c->head];
	c->head = (c->head + 1) % c->cap;
	c->n--;
	return it;
}

/*
 * Whether to start one more thread (and count it as started). One starts at a
 * time, and each new thread starts the next while links wait that no thread
 * has taken, up to the cap: a burst of links costs its handing over one
 * pthread_create, and the rest are made by the closer threads themselves.
 */
static bool want_thread_locked(struct link_closer *c)
{
	if (!c->n || c->starting || c->threads >= c->max_threads)
		return false;
	c->threads++;
	c->starting++;
	return true;
}

static void *closer_main(void *arg);

/* Starts the thread want_thread_locked() counted; false (and uncounted) if it could not. */
static bool start_thread(struct link_closer *c)
{
	pthread_attr_t attr;
	pthread_t t;
	sigset_t all;
	int err;

	if (!(err = pthread_attr_init(&attr))) {
		/* Detached, every signal blocked (the loop's signalfd takes them). */
		sigfillset(&all);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&attr, CLOSER_STACK);
		pthread_attr_setsigmask_np(&attr, &all);
		err = pthread_create(&t, &attr, closer_main, c);
		pthread_attr_destroy(&attr);
	}
	if (!err)
		return true;
	pthread_mutex_lock(&c->mu);
	c->threads--;
	c->starting--;
	/* No thread left to take them (cannot happen while one runs): close them here. */
	while (!c->threads && c->n) {
		struct closer_item it = pop_locked(c);
		pthread_mutex_unlock(&c->mu);
		item_close(&it);
		pthread_mutex_lock(&c->mu);
		c->pending--;
		c->closed++;
	}
	if (!c->threads)
		pthread_cond_broadcast(&c->all_done);
	pthread_mutex_unlock(&c->mu);
	return false;
}

static void *closer_main(void *arg)
{
	struct link_closer *c = arg;

	pthread_mutex_lock(&c->mu);
	c->starting--;
	while (c->n) {
		struct closer_item it = pop_locked(c);
		bool more = want_thread_locked(c);
		pthread_mutex_unlock(&c->mu);
		if (more)
			start_thread(c);
		/* Returns once the kernel has run the release (task work on the way out). */
		item_close(&it);
		pthread_mutex_lock(&c->mu);
		c->pending--;
		c->closed++;
	}
	if (--c->threads == 0)
		pthread_cond_broadcast(&c->all_done);
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

static bool grow_locked(struct link_closer *c)
{
	size_t cap = c->cap ? c->cap * 2 : 64;
	struct closer_item *q = malloc(cap * sizeof(*q));
	if (!q)
		return false;
	for (size_t i = 0; i < c->n; i++)
		q[i] = c->q[(c->head + i) % c->cap];
	free(c->q);
	c->q = q;
	c->head = 0;
	c->cap = cap;
	return true;
}

static void hand_over(struct link_closer *c, struct closer_item it)
{
	if (!c) {
		item_close(&it);
		return;
	}
	pthread_mutex_lock(&c->mu);
	if (c->n == c->cap && !grow_locked(c)) {
		pthread_mutex_unlock(&c->mu);
		item_close(&it);
		return;
	}
	c->q[(c->head + c->n) % c->cap] = it;
	c->n++;
	c->pending++;
	bool more = want_thread_locked(c);
	pthread_mutex_unlock(&c->mu);
	if (more)
		start_thread(c);
}

void link_closer_close_fd(struct link_closer *c, int fd)
{
	if (fd >= 0)
		hand_over(c, (struct closer_item){ .fd = fd });
}

void link_closer_destroy_link(struct link_closer *c, struct bpf_link *link)
{
	if (link)
		hand_over(c, (struct closer_item){ .fd = -1, .link = link });
}

uint64_t link_closer_pending(struct link_closer *c)
{
	if (!c)
		return 0;
	pthread_mutex_lock(&c->mu);
	uint64_t n = c->pending;
	pthread_mutex_unlock(&c->mu);
	return n;
}

static void closer_collect(void *ctx)
{
	struct link_closer *c = ctx;
	pthread_mutex_lock(&c->mu);
	double pending = (double)c->pending, closed = (double)c->closed, threads = c->threads;
	pthread_mutex_unlock(&c->mu);
	metric_set(c->m_pending, NULL, pending);
	metric_set(c->m_closed, NULL, closed);
	metric_set(c->m_threads, NULL, threads);
}

static const struct metric_def closer_metrics[] = {
	{ "nodescope_bpf_links_closing",
	  "BPF links handed over to be detached off the event loop and not detached yet "
	  "(released files' uprobes).",
	  METRIC_GAUGE, METRIC_HANDLE(struct link_closer, m_pending) },
	{ "nodescope_bpf_links_closed_total", "BPF links detached off the event loop.",
	  METRIC_COUNTER, METRIC_HANDLE(struct link_closer, m_closed) },
	{ "nodescope_bpf_link_closer_threads",
	  "Threads detaching BPF links now (none while nothing is being released).", METRIC_GAUGE,
	  METRIC_HANDLE(struct link_closer, m_threads) },
};

int link_closer_new(struct metric_registry *r, unsigned max_threads, struct link_closer **out)
{
	struct link_closer *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->max_threads = max_threads ? max_threads : 1;
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->all_done, NULL);
	if (r) {
		if (metric_register_defs(r, closer_metrics, METRIC_DEFS_COUNT(closer_metrics), c,
					 0)) {
			link_closer_free(c);
			return -EINVAL;
		}
		metric_registry_add_collector(r, closer_collect, c);
		closer_collect(c);
	}
	*out = c;
	return 0;
}

void link_closer_free(struct link_closer *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->mu);
	while (c->threads)
		pthread_cond_wait(&c->all_done, &c->mu);
	pthread_mutex_unlock(&c->mu);
	/* The last thread's unlock was its last touch of c: it only returns after it. */
	pthread_cond_destroy(&c->all_done);
	pthread_mutex_destroy(&c->mu);
	free(c->q);
	free(c);
}
