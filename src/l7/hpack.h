/*
 * HPACK (RFC 7541) header block decoding, pure: one decoder per direction
 * of an HTTP/2 connection, holding that direction's dynamic table.
 *
 * A connection seen from its middle, or a header block not captured whole,
 * leaves the table's older entries unknown: hpack_lost() forgets them, and
 * a field that names one (an index past what is known) is reported with
 * HPACK_UNKNOWN and counted, while the rest of its block, and the entries
 * it inserts, are decoded as usual. Entries inserted since are exactly the
 * newest, so indexing them stays right.
 */
#ifndef NODESCOPE_L7_HPACK_H
#define NODESCOPE_L7_HPACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HPACK_STATIC 61
#define HPACK_DEFAULT_SIZE 4096
#define HPACK_MAX_SIZE 65536 /* the largest table a size update may set */
#define HPACK_STRING_MAX 8192 /* a longer name or value is kept cut (counted) */

struct hpack_entry {
	uint32_t nlen, vlen;
	char *name, *value; /* one allocation, name first */
};

struct hpack {
	struct hpack_entry *e; /* a ring, newest at head */
	unsigned cap, head, n;
	uint32_t size, max_size; /* RFC 7541 sizes: name + value + 32 each */
	/* counters */
	uint64_t unknown_refs; /* fields naming entries lost with the table's past */
	uint64_t errors;       /* malformed blocks (the table then lost) */
	uint64_t cut;	       /* names or values longer than HPACK_STRING_MAX */
	uint64_t no_memory;
};

/* One decoded field; value NULL when the field named an entry not known (HPACK_UNKNOWN). */
typedef void (*hpack_field_fn)(void *ctx, const char *name, size_t nlen, const char *value,
			       size_t vlen);

void hpack_init(struct hpack *h);
void hpack_free(struct hpack *h);
/* The older entries are unknown from here (a block lost or cut). */
void hpack_lost(struct hpack *h);
/*
 * Decodes one whole header block. Returns 0, or -1 when it is malformed
 * (counted; the table is then lost: hpack_lost()).
 */
int hpack_decode(struct hpack *h, const uint8_t *p, size_t n, hpack_field_fn fn, void *ctx);
/* Huffman-decodes in[0..n) into out (cap bytes); returns the length, or -1 when invalid. */
long hpack_huffman(const uint8_t *in, size_t n, char *out, size_t cap);

#endif
