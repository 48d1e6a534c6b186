#include "resources/ctr_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct ctr_table {
	struct hmap ctrs;
	struct hmap members;
	struct ctr **list; /* ctr_table_list's array */
	size_t list_cap;
};

struct ctr_table *ctr_table_new(void)
{
	struct ctr_table *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	if (hmap_init(&t->ctrs, 4096) || hmap_init(&t->members, 65536)) {
		hmap_destroy(&t->ctrs);
		free(t);
		return NULL;
	}
	return t;
}

static void ctr_free(struct ctr *c)
{
	free(c->dirs);
	free(c->volumes);
	free(c);
}

void ctr_table_free(struct ctr_table *t)
{
	struct hmap_node *n;

	if (!t)
		return;
	while ((n = hmap_pop(&t->members)))
		free(hmap_entry(n, struct ctr_member, node));
	while ((n = hmap_pop(&t->ctrs)))
		ctr_free(hmap_entry(n, struct ctr, node));
	hmap_destroy(&t->members);
	hmap_destroy(&t->ctrs);
	free(t->list);
	free(t);
}

struct ctr *ctr_table_find(struct ctr_table *t, const char *name)
{
	for (struct hmap_node *n = hmap_get(&t->ctrs, hmap_hash_str(name)); n; n = hmap_next_same(n)) {
		struct ctr *c = hmap_entry(n, struct ctr, node);
		if (!strcmp(c->name, name))
			return c;
	}
	return NULL;
}

struct ctr_member *ctr_table_member(struct ctr_table *t, uint32_t pid)
{
	struct hmap_node *n = hmap_get(&t->members, pid);
	return n ? hmap_entry(n, struct ctr_member, node) : NULL;
}

size_t ctr_table_count(const struct ctr_table *t)
{
	return t->ctrs.count;
}

static struct ctr *ctr_get(struct ctr_table *t, const char *name)
{
	struct ctr *c = ctr_table_find(t, name);
	if (c)
		return c;
	size_t len = strlen(name);
	c = calloc(1, sizeof(*c) + len + 1);
	if (!c)
		return NULL;
	memcpy(c->name, name, len + 1);
	hmap_insert(&t->ctrs, &c->node, hmap_hash_str(name));
	return c;
}

static void unlink_member(struct ctr_member *m, uint64_t now_ns)
{
	struct ctr *c = m->ctr;
	if (!c)
		return;
	*(m->prev ? &m->prev->next : &c->head) = m->next;
	*(m->next ? &m->next->prev : &c->tail) = m->prev;
	m->prev = m->next = NULL;
	m->ctr = NULL;
	if (!--c->n_members)
		c->empty_since = now_ns ? now_ns : 1;
}

/* Inserts m in c's list by start time; processes mostly join in start order, so from the tail. */
static void link_member(struct ctr *c, struct ctr_member *m)
{
	struct ctr_member *after = c->tail;
	while (after && after->start_ns > m->start_ns)
		after = after->prev;
	m->prev = after;
	m->next = after ? after->next : c->head;
	*(m->next ? &m->next->prev : &c->tail) = m;
	*(after ? &after->next : &c->head) = m;
	m->ctr = c;
	c->n_members++;
	c->empty_since = 0;
}

int ctr_table_join(struct ctr_table *t, uint32_t pid, uint64_t start_ns, const char *name,
		   uint64_t now_ns)
{
	struct ctr_member *m = ctr_table_member(t, pid);
	if (m && m->ctr && !strcmp(m->ctr->name, name))
		return 0;
	struct ctr *c = ctr_get(t, name);
	if (!c)
		return -ENOMEM;
	if (!m) {
		m = calloc(1, sizeof(*m));
		if (!m)
			return -ENOMEM;
		m->pid = pid;
		hmap_insert(&t->members, &m->node, pid);
	}
	unlink_member(m, now_ns);
	m->start_ns = start_ns;
	m->types = m->typed_exe = 0;
	/* As Coroot: a process's first reading counts whole (its delays since it started). */
	m->cpu_delay_ns = m->disk_delay_ns = 0;
	link_member(c, m);
	uint64_t earliest = c->head->start_ns;
	/* Its age: from the earliest start of any process it had (unknown: when it joined). */
	uint64_t since = start_ns && start_ns < now_ns ? start_ns : now_ns;
	if (!c->since_ns || (since && since < c->since_ns))
		c->since_ns = since ? since : 1;
	if (!c->started_at) {
		c->started_at = earliest ? earliest : 1;
	} else if (earliest > c->started_at) {
		c->restarts++;
		c->started_at = earliest;
	}
	return 0;
}

void ctr_table_leave(struct ctr_table *t, uint32_t pid, uint64_t now_ns)
{
	struct ctr_member *m = ctr_table_member(t, pid);
	if (!m)
		return;
	unlink_member(m, now_ns);
	hmap_unlink(&t->members, &m->node);
	free(m);
}

struct list_ctx {
	struct ctr **list;
	size_t n;
};

static void list_one(void *ctx, struct hmap_node *n)
{
	struct list_ctx *l = ctx;
	l->list[l->n++] = hmap_entry(n, struct ctr, node);
}

struct ctr **ctr_table_list(struct ctr_table *t, size_t *n)
{
	if (t->list_cap < t->ctrs.count + 1) {
		size_t cap = (t->ctrs.count + 1) * 2;
		struct ctr **l = realloc(t->list, cap * sizeof(*l));
		if (!l)
			return NULL;
		t->list = l;
		t->list_cap = cap;
	}
	struct list_ctx l = { t->list, 0 };
	hmap_foreach(&t->ctrs, list_one, &l);
	*n = l.n;
	return t->list;
}

void ctr_table_reap(struct ctr_table *t, uint64_t now_ns, uint64_t idle_ns,
		    void (*gone)(void *ctx, struct ctr *c), void *ctx)
{
	size_t n;
	struct ctr **list = ctr_table_list(t, &n);
	if (!list)
		return;
	for (size_t i = 0; i < n; i++) {
		struct ctr *c = list[i];
		if (c->n_members || c->empty_since + idle_ns > now_ns)
			continue;
		if (gone)
			gone(ctx, c);
		hmap_unlink(&t->ctrs, &c->node);
		ctr_free(c);
	}
}
