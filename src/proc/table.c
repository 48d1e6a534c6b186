#include "table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "optouts.h"

struct proc_table {
	struct hmap procs;	/* pid -> struct proc_entry */
	struct hmap containers; /* name hash -> struct proc_container */
	size_t cap;
	uint64_t refused;
	proc_table_observer_fn observer;
	void *observer_ctx;
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
	hmap_unlink(&t->containers, &c->node);
	free(c);
}

static struct proc_container *container_get(struct proc_table *t, const char *name)
{
	uint64_t h = hmap_hash_str(name);
	for (struct hmap_node *n = hmap_get(&t->containers, h); n; n = hmap_next_same(n)) {
		struct proc_container *c = hmap_entry(n, struct proc_container, node);
		if (!strcmp(c->name, name)) {
			c->refs++;
			return c;
		}
	}
	size_t len = strlen(name);
	struct proc_container *c = malloc(sizeof(*c) + len + 1);
	if (!c)
		return NULL;
	memcpy(c->name, name, len + 1);
	c->refs = 1;
	hmap_insert(&t->containers, &c->node, h);
	return c;
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
	if (t->observer)
		t->observer(t->observer_ctx, e, NULL);
	hmap_unlink(&t->procs, &e->node);
	container_put(t, e->container);
	free(e);
}

void proc_table_set_observer(struct proc_table *t, proc_table_observer_fn fn, void *ctx)
{
	t->observer = fn;
	t->observer_ctx = ctx;
}

int proc_table_set_container(struct proc_table *t, struct proc_entry *e, const char *name)
{
	if (!name)
		name = "/";
	if (e->container && !strcmp(e->container->name, name))
		return 0;
	struct proc_container *c = container_get(t, name);
	if (!c)
		return -ENOMEM;
	container_put(t, e->container);
	e->container = c;
	if (t->observer)
		t->observer(t->observer_ctx, e, c->name);
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

uint8_t proc_table_optouts_of(struct proc_table *t, uint32_t pid)
{
	struct proc_entry *e = proc_table_get(t, pid);

	if (!e)
		return 0;
	if (!e->optouts_read) {
		uint8_t bits;
		if (!proc_optouts_read((pid_t)pid, &bits))
			e->optouts = bits;
		e->optouts_read = true; /* gone: what it inherited stands */
	}
	return e->optouts;
}

size_t proc_table_count(const struct proc_table *t)
{
	return t->procs.count;
}

size_t proc_table_containers(const struct proc_table *t)
{
	return t->containers.count;
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

struct rename_ctx {
	struct proc_table *t;
	const struct proc_container *from;
	const char *to;
};

static void rename_one(void *ctx, struct hmap_node *n)
{
	struct rename_ctx *r = ctx;
	struct proc_entry *e = hmap_entry(n, struct proc_entry, node);

	if (e->container == r->from)
		proc_table_set_container(r->t, e, r->to);
}

void proc_table_rename_container(struct proc_table *t, const char *from, const char *to)
{
	uint64_t h = hmap_hash_str(from);

	for (struct hmap_node *n = hmap_get(&t->containers, h); n; n = hmap_next_same(n)) {
		struct proc_container *c = hmap_entry(n, struct proc_container, node);
		if (strcmp(c->name, from))
			continue;
		c->refs++; /* kept while its processes leave it */
		struct rename_ctx r = { t, c, to };
		hmap_foreach(&t->procs, rename_one, &r);
		container_put(t, c);
		return;
	}
}

bool proc_table_has_container(struct proc_table *t, const char *name)
{
	uint64_t h = hmap_hash_str(name);

	for (struct hmap_node *n = hmap_get(&t->containers, h); n; n = hmap_next_same(n))
		if (!strcmp(hmap_entry(n, struct proc_container, node)->name, name))
			return true;
	return false;
}
