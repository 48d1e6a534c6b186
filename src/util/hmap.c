#include "hmap.h"

#include <errno.h>
#include <stdlib.h>

static size_t slot(const struct hmap *m, uint64_t key)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (size_t)key & m->mask;
}

enum { HMAP_MIN_BUCKETS = 16 };

int hmap_init(struct hmap *m, size_t expected)
{
	size_t n = HMAP_MIN_BUCKETS;
	while (n < expected) {
		if (n > SIZE_MAX / 2 / sizeof(*m->buckets))
			return -ENOMEM; /* n *= 2 would wrap (to 0, looping forever) */
		n *= 2;
	}
	m->buckets = calloc(HMAP_MIN_BUCKETS, sizeof(*m->buckets));
	if (!m->buckets)
		return -ENOMEM;
	m->mask = HMAP_MIN_BUCKETS - 1;
	m->max_mask = n - 1;
	m->count = 0;
	m->pop_from = 0;
	return 0;
}

/*
 * Doubling splits bucket i into i and i + old size; each chain is walked in
 * order and appended, so nodes of one key keep their order (hmap_get still
 * finds the newest first).
 */
static void grow(struct hmap *m)
{
	size_t old = m->mask + 1;
	struct hmap_node **b = calloc(old * 2, sizeof(*b));
	if (!b)
		return; /* longer chains, still correct */
	m->mask = old * 2 - 1;
	for (size_t i = 0; i < old; i++) {
		struct hmap_node **tail[2] = { &b[i], &b[i + old] };
		for (struct hmap_node *n = m->buckets[i], *next; n; n = next) {
			next = n->next;
			struct hmap_node ***t = &tail[slot(m, n->key) != i];
			**t = n;
			*t = &n->next;
		}
		*tail[0] = NULL;
		*tail[1] = NULL;
	}
	free(m->buckets);
	m->buckets = b;
	m->pop_from = 0;
}

void hmap_destroy(struct hmap *m)
{
	free(m->buckets);
	m->buckets = NULL;
	m->count = 0;
}

struct hmap_node *hmap_get(const struct hmap *m, uint64_t key)
{
	for (struct hmap_node *n = m->buckets[slot(m, key)]; n; n = n->next)
		if (n->key == key)
			return n;
	return NULL;
}

struct hmap_node *hmap_next_same(const struct hmap_node *n)
{
	for (struct hmap_node *x = n->next; x; x = x->next)
		if (x->key == n->key)
			return x;
	return NULL;
}

void hmap_insert(struct hmap *m, struct hmap_node *n, uint64_t key)
{
	size_t s = slot(m, key);
	n->key = key;
	n->next = m->buckets[s];
	m->buckets[s] = n;
	m->count++;
	if (s < m->pop_from)
		m->pop_from = s;
	if (m->count > m->mask + 1 && m->mask < m->max_mask)
		grow(m);
}

void hmap_unlink(struct hmap *m, struct hmap_node *n)
{
	for (struct hmap_node **p = &m->buckets[slot(m, n->key)]; *p; p = &(*p)->next) {
		if (*p == n) {
			*p = n->next;
			m->count--;
			return;
		}
	}
}

struct hmap_node *hmap_pop(struct hmap *m)
{
	if (!m->count)
		return NULL;
	/* Resuming the scan keeps popping everything O(buckets + count), not O(buckets * count). */
	for (size_t i = m->pop_from; i <= m->mask; i++) {
		struct hmap_node *n = m->buckets[i];
		if (n) {
			m->buckets[i] = n->next;
			m->count--;
			m->pop_from = i;
			return n;
		}
	}
	return NULL;
}

void hmap_foreach(const struct hmap *m, void (*fn)(void *ctx, struct hmap_node *n), void *ctx)
{
	for (size_t i = 0; i <= m->mask; i++) {
		struct hmap_node *n = m->buckets[i];
		while (n) {
			struct hmap_node *next = n->next; /* fn may free n if it does not unlink */
			fn(ctx, n);
			n = next;
		}
	}
}

uint64_t hmap_hash_bytes(const void *p, size_t len)
{
	const unsigned char *s = p;
	uint64_t h = 14695981039346656037ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ s[i]) * 1099511628211ull;
	return h;
}

uint64_t hmap_hash_str(const char *s)
{
	uint64_t h = 14695981039346656037ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}
