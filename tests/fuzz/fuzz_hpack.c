/*
 * libFuzzer target for HPACK decoding (src/l7/hpack.c). The input is header
 * blocks, each a length byte and its bytes, decoded in order by one
 * decoder (its dynamic table carried over), with a loss of the table
 * (hpack_lost) where a length byte is 0xff. Checks, besides no crash or
 * leak: every field's name and value fit HPACK_STRING_MAX, an unknown field
 * has no value and no name, the table never holds more than its size, and
 * a second decoder fed the same blocks gives the same fields.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "l7/hpack.h"

#include "fuzz_check.h"

struct out {
	uint64_t hash;
	unsigned n;
};

static void on_field(void *ctx, const char *name, size_t nlen, const char *value, size_t vlen)
{
	struct out *o = ctx;
	CHECK(nlen <= HPACK_STRING_MAX && vlen <= HPACK_STRING_MAX);
	CHECK(value || (!nlen && !vlen));
	for (size_t i = 0; i < nlen; i++)
		o->hash = o->hash * 31 + (uint8_t)name[i];
	for (size_t i = 0; i < vlen; i++)
		o->hash = o->hash * 37 + (uint8_t)value[i];
	o->hash += value ? 1 : 7;
	o->n++;
}

static struct out run(const uint8_t *data, size_t size)
{
	struct hpack h;
	struct out o = { 0 };
	size_t off = 0;
	hpack_init(&h);
	while (off < size) {
		size_t len = data[off++];
		if (len == 0xff) {
			hpack_lost(&h);
			continue;
		}
		if (len > size - off)
			len = size - off;
		uint8_t *b = malloc(len ? len : 1);
		CHECK(b);
		memcpy(b, data + off, len);
		int r = hpack_decode(&h, b, len, on_field, &o);
		CHECK(r == 0 || r == -1);
		CHECK(h.size <= h.max_size && h.max_size <= HPACK_MAX_SIZE);
		free(b);
		off += len;
	}
	hpack_free(&h);
	return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct out a = run(data, size), b = run(data, size);
	CHECK(a.hash == b.hash && a.n == b.n);
	return 0;
}
