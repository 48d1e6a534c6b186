#include "table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CONTAINER_BUCKETS 1024

struct proc_table {
	struct proc_entry **buckets;
	size_t n_buckets; /* power of two */
	size_t count;
	size_t cap;
	uint64_t refused;
	struct proc_container *containers[CONTAINER_BUCKETS];
	size_t n_containers;
};

static size_t pid_slot(const struct proc_table *t, uint32_t pid)
{
	return (pid * 2654435761u) & (t->n_buckets - 1);
}

static uint32_t str_hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

struct proc_table *proc_table_new(size_t cap)
{
	struct proc_table *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->cap = cap ? cap : 1;
	t->n_buckets = 64;
	while (t->n_buckets < t->cap)
		t->n_buckets *= 2;
	t->buckets = calloc(t->n_buckets, sizeof(*t->buckets));
	if (!t->buckets) {
		free(t);
		return NULL;
	}
	return t;
}

static void container_put(struct proc_table *t, struct proc_container *c)
{
	if (!c || --c->refs)
		return;
	struct proc_container **p = &t->containers[str_hash(c->name) % CONTAINER_BUCKETS];
	for (; *p; p = &(*p)->next) {
		if (*p == c) {
			*p = c->next;
			t->n_containers--;
			free(c);
			return;
		}
	}
}

static struct proc_container *container_get(struct proc_table *t, const char *name)
{
	struct proc_container **head = &t->containers[str_hash(name) % CONTAINER_BUCKETS];
	for (struct proc_container *c = *head; c; c = c->next) {
		if (!strcmp(c->name, name)) {
			c->refs++;
			return c;
		}
	}
	size_t n = strlen(name);
	struct proc_container *c = malloc(sizeof(*c) + n + 1);
	if (!c)
		return NULL;
	memcpy(c->name, name, n + 1);
	c->refs = 1;
	c->next = *head;
	*head = c;
	t->n_containers++;
	return c;
}

void proc_table_free(struct proc_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_buckets; i++) {
		while (t->buckets[i]) {
			struct proc_entry *e = t->buckets[i];
			t->buckets[i] = e->next;
			container_put(t, e->container);
			free(e);
		}
	}
	free(t->buckets);
	free(t);
}

struct proc_entry *proc_table_get(struct proc_table *t, uint32_t pid)
{
	for (struct proc_entry *e = t->buckets[pid_slot(t, pid)]; e; e = e->next)
		if (e->pid == pid)
			return e;
	return NULL;
}

struct proc_entry *proc_table_upsert(struct proc_table *t, uint32_t pid, bool *created)
{
	struct proc_entry *e = proc_table_get(t, pid);

	*created = false;
	if (e)
		return e;
	if (t->count >= t->cap) {
		t->refused++;
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		t->refused++;
		return NULL;
	}
	e->pid = pid;
	size_t slot = pid_slot(t, pid);
	e->next = t->buckets[slot];
	t->buckets[slot] = e;
	t->count++;
	*created = true;
	return e;
}

void proc_table_remove(struct proc_table *t, uint32_t pid)
{
	for (struct proc_entry **p = &t->buckets[pid_slot(t, pid)]; *p; p = &(*p)->next) {
		if ((*p)->pid != pid)
			continue;
		struct proc_entry *e = *p;
		*p = e->next;
		container_put(t, e->container);
		free(e);
		t->count--;
		return;
	}
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
	return 0;
}

const char *proc_entry_container(const struct proc_entry *e)
{
	return e->container ? e->container->name : "/";
}

size_t proc_table_count(const struct proc_table *t)
{
	return t->count;
}

size_t proc_table_containers(const struct proc_table *t)
{
	return t->n_containers;
}

uint64_t proc_table_refused(const struct proc_table *t)
{
	return t->refused;
}

void proc_table_foreach(struct proc_table *t, void (*fn)(void *ctx, const struct proc_entry *e),
			void *ctx)
{
	for (size_t i = 0; i < t->n_buckets; i++)
		for (struct proc_entry *e = t->buckets[i]; e; e = e->next)
			fn(ctx, e);
}
