#include "strmap.h"

#include <stdlib.h>
#include <string.h>

struct strmap_node {
	struct hmap_node node;
	int64_t value;
	char key[];
};

int strmap_init(struct strmap *m, size_t cap)
{
	m->cap = cap;
	return hmap_init(&m->map, cap);
}

void strmap_destroy(struct strmap *m)
{
	struct hmap_node *n;
	while ((n = hmap_pop(&m->map)))
		free(hmap_entry(n, struct strmap_node, node));
	hmap_destroy(&m->map);
}

static struct strmap_node *find(struct strmap *m, const char *key, uint64_t h)
{
	for (struct hmap_node *n = hmap_get(&m->map, h); n; n = hmap_next_same(n)) {
		struct strmap_node *s = hmap_entry(n, struct strmap_node, node);
		if (!strcmp(s->key, key))
			return s;
	}
	return NULL;
}

int64_t *strmap_get(struct strmap *m, const char *key)
{
	struct strmap_node *s = find(m, key, hmap_hash_str(key));
	return s ? &s->value : NULL;
}

int64_t *strmap_upsert(struct strmap *m, const char *key)
{
	uint64_t h = hmap_hash_str(key);
	struct strmap_node *s = find(m, key, h);
	if (s)
		return &s->value;
	if (m->map.count >= m->cap)
		return NULL;
	size_t n = strlen(key);
	s = calloc(1, sizeof(*s) + n + 1);
	if (!s)
		return NULL;
	memcpy(s->key, key, n + 1);
	hmap_insert(&m->map, &s->node, h);
	return &s->value;
}

void strmap_del(struct strmap *m, const char *key)
{
	struct strmap_node *s = find(m, key, hmap_hash_str(key));
	if (!s)
		return;
	hmap_unlink(&m->map, &s->node);
	free(s);
}

size_t strmap_count(const struct strmap *m)
{
	return m->map.count;
}
