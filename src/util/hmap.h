/*
 * Intrusive chained hash table keyed by a u64: the one hash table of the
 * user side (process table, connection table, string maps). Users embed a
 * struct hmap_node and own the memory. It starts small and doubles its
 * buckets as entries arrive, up to the size given at init: a node with 300
 * processes keeps its process table in a few pages instead of touching a
 * random page of a 1 MiB array (a page fault at first, a TLB miss after) on
 * every lookup. It never shrinks. No insert may run inside hmap_foreach (a
 * growth would move the nodes under the walk).
 */
#ifndef NODESCOPE_UTIL_HMAP_H
#define NODESCOPE_UTIL_HMAP_H

#include <stddef.h>
#include <stdint.h>

struct hmap_node {
	struct hmap_node *next;
	uint64_t key;
};

struct hmap {
	struct hmap_node **buckets;
	size_t mask;
	size_t count;
	size_t pop_from; /* buckets below this are empty (hmap_pop resumes here) */
	size_t max_mask; /* the mask of the largest bucket array it grows to */
};

/* expected: the most entries it will hold (the most buckets: the next power
 * of two). A growth that cannot allocate keeps the table as it is. */
int hmap_init(struct hmap *m, size_t expected);
void hmap_destroy(struct hmap *m); /* frees the buckets, not the nodes */

/* First node with key (walk on with hmap_next_same for duplicates). */
struct hmap_node *hmap_get(const struct hmap *m, uint64_t key);
struct hmap_node *hmap_next_same(const struct hmap_node *n);
void hmap_insert(struct hmap *m, struct hmap_node *n, uint64_t key);
/* Unlinks n (which must be in m). */
void hmap_unlink(struct hmap *m, struct hmap_node *n);
/* Unlinks and returns any node, NULL when empty (for tear-down). */
struct hmap_node *hmap_pop(struct hmap *m);
void hmap_foreach(const struct hmap *m, void (*fn)(void *ctx, struct hmap_node *n), void *ctx);

uint64_t hmap_hash_str(const char *s);
uint64_t hmap_hash_bytes(const void *p, size_t n);

#define hmap_entry(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

#endif
