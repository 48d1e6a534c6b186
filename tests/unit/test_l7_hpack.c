/*
 * HPACK decoding (src/l7/hpack.c) on header blocks made by Debian's
 * python3-hpack encoder (tests/unit/data/l7/hpack_blocks.txt, written by
 * hpack_blocks.py): Huffman and raw strings, indexed fields from both
 * tables, a 256-byte table evicting, a size update, never-indexed fields.
 * The first block is RFC 7541's example C.4.1 byte for byte.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "l7/hpack.h"

#define DATA "tests/unit/data/l7/"
#define MAX_BLOCKS 16

struct blocks {
	uint8_t *b[MAX_BLOCKS];
	size_t len[MAX_BLOCKS];
	char want[MAX_BLOCKS][4096];
	size_t n;
};

static void load(struct blocks *bl)
{
	FILE *f = fopen(DATA "hpack_blocks.txt", "r");
	char line[8192];
	assert_non_null(f);
	memset(bl, 0, sizeof(*bl));
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == 'B') {
			assert_true(bl->n < MAX_BLOCKS);
			size_t hl = strlen(line + 2);
			bl->b[bl->n] = malloc(hl / 2 + 1);
			for (size_t i = 0; i + 1 < hl; i += 2) {
				unsigned x;
				sscanf(line + 2 + i, "%2x", &x);
				bl->b[bl->n][i / 2] = (uint8_t)x;
			}
			bl->len[bl->n++] = hl / 2;
		} else if (line[0] == 'H') {
			char *w = bl->want[bl->n - 1];
			snprintf(w + strlen(w), 4096 - strlen(w), "%s\n", line + 2);
		}
	}
	fclose(f);
}

static void on_field(void *ctx, const char *name, size_t nlen, const char *value, size_t vlen)
{
	char *out = ctx;
	size_t k = strlen(out);
	if (!value)
		snprintf(out + k, 4096 - k, "?\n");
	else
		snprintf(out + k, 4096 - k, "%.*s: %.*s\n", (int)nlen, name, (int)vlen, value);
}

static void test_blocks(void **state)
{
	static struct blocks bl;
	struct hpack h[2];
	load(&bl);
	assert_int_equal(bl.n, 8);
	hpack_init(&h[0]);
	hpack_init(&h[1]);
	for (size_t i = 0; i < bl.n; i++) {
		char got[4096] = "";
		assert_int_equal(hpack_decode(&h[i / 4], bl.b[i], bl.len[i], on_field, got), 0);
		assert_string_equal(got, bl.want[i]);
	}
	/* the small table evicted: never over its size */
	assert_true(h[1].size <= 256);
	assert_int_equal(h[0].unknown_refs + h[1].unknown_refs + h[0].errors + h[1].errors, 0);
	hpack_free(&h[0]);
	hpack_free(&h[1]);
	for (size_t i = 0; i < bl.n; i++)
		free(bl.b[i]);
}

/*
 * Seen from the middle: a decoder that missed the first block cannot name
 * what that block inserted (counted, "?"), decodes the rest, and the
 * entries inserted from then on are right.
 */
static void test_midstream(void **state)
{
	static struct blocks bl;
	struct hpack h;
	char got[4096] = "";
	load(&bl);
	hpack_init(&h);
	assert_int_equal(hpack_decode(&h, bl.b[5], bl.len[5], on_field, got), 0);
	assert_true(h.unknown_refs > 0);
	assert_true(strstr(got, "?\n") != NULL);
	assert_true(strstr(got, ":status: 307\n") != NULL);
	hpack_free(&h);
	/* missing block 0 only: block 1 names its :authority; block 2's own insertions are known */
	hpack_init(&h);
	got[0] = '\0';
	assert_int_equal(hpack_decode(&h, bl.b[1], bl.len[1], on_field, got), 0);
	assert_string_equal(got, ":method: GET\n:scheme: http\n:path: /\n?\ncache-control: no-cache\n");
	got[0] = '\0';
	hpack_lost(&h);
	assert_int_equal(hpack_decode(&h, bl.b[2], bl.len[2], on_field, got), 0);
	got[0] = '\0';
	assert_int_equal(hpack_decode(&h, bl.b[3], bl.len[3], on_field, got), 0);
	assert_true(strstr(got, ":path: /api/v1/orders?id=43\n") != NULL);
	hpack_free(&h);
	for (size_t i = 0; i < bl.n; i++)
		free(bl.b[i]);
}

/* Malformed: cut integers and strings, index 0, bad Huffman padding, EOS; counted, table lost. */
static void test_malformed(void **state)
{
	struct hpack h;
	char got[4096] = "", out[16];
	static const uint8_t cut_string[] = { 0x40, 0x85, 'a' };
	static const uint8_t index0[] = { 0x80 };
	static const uint8_t cut_int[] = { 0xff, 0xff };
	static const uint8_t huge_update[] = { 0x3f, 0xe1, 0xff, 0x1f };
	/* "a" is 00011: padded with zeros instead of ones */
	static const uint8_t bad_pad[] = { 0x18 };
	static const uint8_t eos[] = { 0xff, 0xff, 0xff, 0xff };
	static const uint8_t www[] = { 0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff };
	hpack_init(&h);
	assert_int_equal(hpack_decode(&h, cut_string, sizeof(cut_string), on_field, got), -1);
	assert_int_equal(hpack_decode(&h, index0, sizeof(index0), on_field, got), -1);
	assert_int_equal(hpack_decode(&h, cut_int, sizeof(cut_int), on_field, got), -1);
	assert_int_equal(hpack_decode(&h, huge_update, sizeof(huge_update), on_field, got), -1);
	assert_int_equal(h.errors, 4);
	assert_int_equal(hpack_huffman(bad_pad, sizeof(bad_pad), out, sizeof(out)), -1);
	assert_int_equal(hpack_huffman(eos, sizeof(eos), out, sizeof(out)), -1);
	assert_int_equal(hpack_huffman(www, sizeof(www), out, sizeof(out)), 15);
	assert_memory_equal(out, "www.example.com", 15);
	hpack_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_blocks),
		cmocka_unit_test(test_midstream),
		cmocka_unit_test(test_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
