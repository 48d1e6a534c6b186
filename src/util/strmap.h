/* A bounded map from strings (copied) to 64-bit counts. */
#ifndef NODESCOPE_UTIL_STRMAP_H
#define NODESCOPE_UTIL_STRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hmap.h"

struct strmap {
	struct hmap map;
	size_t cap;
};

int strmap_init(struct strmap *m, size_t cap);
void strmap_destroy(struct strmap *m);
/* Pointer to key's value, or NULL if absent. */
int64_t *strmap_get(struct strmap *m, const char *key);
/* Pointer to key's value, added as 0 if absent; NULL when full or out of memory. */
int64_t *strmap_upsert(struct strmap *m, const char *key);
void strmap_del(struct strmap *m, const char *key);
size_t strmap_count(const struct strmap *m);

#endif
