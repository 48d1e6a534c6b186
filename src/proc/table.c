#include "table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"

/* Gone containers remembered at most; past it one is forgotten as it goes. */
#define GONE_MAX 4096

struct proc_table {
	struct hmap procs;	/* pid -> struct proc_entry */
	struct hmap containers; /* name hash -> struct proc_container */
	size_t cap;
	size_t n_gone; /* containers without processes still remembered */
	uint64_t refused;
};

struct proc_table *proc_table_new(size_t cap)
{
	struct proc_table *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->cap = cap ? cap : 1;
	if (hmap_init(&t->procs, t->cap)) {
		free(t);
		return NULL;
	}
	if (hmap_init(&t->containers, 1024)) {
		hmap_destroy(&t->procs);
		free(t);
		return NULL;
	}
	return t;
}

static void container_put(struct proc_table *t, struct proc_container *c)
{
	if (!c || --c->refs)
		return;
	if (t->n_gone < GONE_MAX) {
		c->gone_ns = clock_mono_ns();
		t->n_gone++;
		return;
	}
	hmap_unlink(&t->containers, &c->node);
	free(c);
}

static struct proc_container *container_find(struct proc_table *t, const char *name, uint64_t h)
{
	for (struct hmap_node *n = hmap_get(&t->containers, h); n; n = hmap_next_same(n)) {
		struct proc_container *c = hmap_entry(n, struct proc_container, node);
		if (!strcmp(c->name, name))
			return c;
	}
	return NULL;
}

static struct proc_container *container_get(struct proc_table *t, const char *name)
{
	uint64_t h = hmap_hash_str(name);
	struct proc_container *c = container_find(t, name, h);
	if (c) {
		if (!c->refs++) {
			c->gone_ns = 0; /* back: a restart, not a new container */
			t->n_gone--;
		}
		return c;
	}
	size_t len = strlen(name);
	c = calloc(1, sizeof(*c) + len + 1);
	if (!c)
		return NULL;
	memcpy(c->name, name, len + 1);
	c->refs = 1;
	c->since_ns = clock_mono_ns();
	hmap_insert(&t->containers, &c->node, h);
	return c;
}

const struct proc_container *proc_table_find_container(struct proc_table *t, const char *name)
{
	return container_find(t, name, hmap_hash_str(name));
}

struct forget_ctx {
	uint64_t before_ns;
	struct proc_container *list[GONE_MAX]; /* collected first: the walk must not unlink */
	size_t n;
};

static void forget_one(void *ctx, struct hmap_node *n)
{
	struct forget_ctx *f = ctx;
	struct proc_container *c = hmap_entry(n, struct proc_container, node);
	if (!c->refs && c->gone_ns < f->before_ns && f->n < GONE_MAX)
		f->list[f->n++] = c;
}

void proc_table_forget_gone(struct proc_table *t, uint64_t before_ns)
{
	if (!t->n_gone)
		return;
	struct forget_ctx *f = malloc(sizeof(*f)); /* 32 KiB: not on the stack */
	if (!f)
		return; /* forgotten at a later call */
	f->before_ns = before_ns;
	f->n = 0;
	hmap_foreach(&t->containers, forget_one, f);
	for (size_t i = 0; i < f->n; i++) {
		hmap_unlink(&t->containers, &f->list[i]->node);
		free(f->list[i]);
	}
	t->n_gone -= f->n;
	free(f);
}

void proc_table_free(struct proc_table *t)
{
	struct hmap_node *n;

	if (!t)
		return;
	while ((n = hmap_pop(&t->procs)))
		free(hmap_entry(n, struct proc_entry, node));
	while ((n = hmap_pop(&t->containers)))
		free(hmap_entry(n, struct proc_container, node));
	hmap_destroy(&t->procs);
	hmap_destroy(&t->containers);
	free(t);
}

struct proc_entry *proc_table_get(struct proc_table *t, uint32_t pid)
{
	struct hmap_node *n = hmap_get(&t->procs, pid);
	return n ? hmap_entry(n, struct proc_entry, node) : NULL;
}

struct proc_entry *proc_table_upsert(struct proc_table *t, uint32_t pid, bool *created)
{
	struct proc_entry *e = proc_table_get(t, pid);

	*created = false;
	if (e)
		return e;
	if (t->procs.count >= t->cap) {
		t->refused++;
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		t->refused++;
		return NULL;
	}
	e->pid = pid;
	hmap_insert(&t->procs, &e->node, pid);
	*created = true;
	return e;
}

void proc_table_remove(struct proc_table *t, uint32_t pid)
{
	struct proc_entry *e = proc_table_get(t, pid);
	if (!e)
		return;
	hmap_unlink(&t->procs, &e->node);
	container_put(t, e->container);
	free(e);
}

int proc_table_set_container(struct proc_table *t, struct proc_entry *e, const char *name)
{
	if (!name || !*name)
		name = "/";
	if (e->container && !strcmp(e->container->name, name))
		return 0;
	struct proc_container *c = container_get(t, name);
	if (!c)
		return -ENOMEM;
	container_put(t, e->container);
	e->container = c;
	/* A container is as old as its oldest process (Coroot: the earliest start). */
	if (e->start_ns && e->start_ns < c->since_ns)
		c->since_ns = e->start_ns;
	return 0;
}

const char *proc_entry_container(const struct proc_entry *e)
{
	return e->container ? e->container->name : "/";
}

const char *proc_table_container_of(struct proc_table *t, uint32_t pid)
{
	struct proc_entry *e = pid ? proc_table_get(t, pid) : NULL;
	return e ? proc_entry_container(e) : "/";
}

size_t proc_table_count(const struct proc_table *t)
{
	return t->procs.count;
}

size_t proc_table_containers(const struct proc_table *t)
{
	return t->containers.count - t->n_gone;
}

uint64_t proc_table_refused(const struct proc_table *t)
{
	return t->refused;
}

struct foreach_ctx {
	void (*fn)(void *ctx, const struct proc_entry *e);
	void *ctx;
};

static void foreach_one(void *ctx, struct hmap_node *n)
{
	struct foreach_ctx *f = ctx;
	f->fn(f->ctx, hmap_entry(n, struct proc_entry, node));
}

void proc_table_foreach(struct proc_table *t, void (*fn)(void *ctx, const struct proc_entry *e),
			void *ctx)
{
	struct foreach_ctx f = { fn, ctx };
	hmap_foreach(&t->procs, foreach_one, &f);
}
