#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/hmap.h"
#include "util/strmap.h"

struct item {
	int id;
	struct hmap_node node; /* not first: hmap_entry must subtract the offset */
	int seen;
};

static struct item *item_of(struct hmap_node *n)
{
	return n ? hmap_entry(n, struct item, node) : NULL;
}

/* ---- hmap ---- */

static void test_init_sizes(void **state)
{
	struct hmap m;

	/* every table starts at 16 buckets; expected sets the most it grows to */
	assert_int_equal(hmap_init(&m, 0), 0);
	assert_int_equal(m.mask, 15);
	assert_int_equal(m.max_mask, 15);
	assert_int_equal(m.count, 0);
	assert_null(hmap_get(&m, 0));
	assert_null(hmap_get(&m, 12345));
	assert_null(hmap_pop(&m));
	hmap_destroy(&m);
	assert_null(m.buckets);
	assert_int_equal(m.count, 0);

	assert_int_equal(hmap_init(&m, 16), 0);
	assert_int_equal(m.max_mask, 15);
	hmap_destroy(&m);
	assert_int_equal(hmap_init(&m, 17), 0);
	assert_int_equal(m.mask, 15);
	assert_int_equal(m.max_mask, 31);
	hmap_destroy(&m);
	assert_int_equal(hmap_init(&m, 100000), 0);
	assert_int_equal(m.mask, 15);
	assert_int_equal(m.max_mask, 131071);
	hmap_destroy(&m);
}

static void test_init_too_big(void **state)
{
	struct hmap m;

	/* no power of two holds these: an error, not a hang on n *= 2 wrapping to 0 */
	assert_int_equal(hmap_init(&m, SIZE_MAX), -ENOMEM);
	assert_int_equal(hmap_init(&m, SIZE_MAX / 2 + 2), -ENOMEM);
}

static void test_insert_get(void **state)
{
	struct hmap m;
	struct item a = { .id = 1 }, b = { .id = 2 }, c = { .id = 3 };

	assert_int_equal(hmap_init(&m, 4), 0);
	hmap_insert(&m, &a.node, 10);
	hmap_insert(&m, &b.node, 20);
	hmap_insert(&m, &c.node, UINT64_MAX);
	assert_int_equal(m.count, 3);
	assert_ptr_equal(item_of(hmap_get(&m, 10)), &a);
	assert_ptr_equal(item_of(hmap_get(&m, 20)), &b);
	assert_ptr_equal(item_of(hmap_get(&m, UINT64_MAX)), &c);
	assert_int_equal(a.node.key, 10);
	assert_int_equal(c.node.key, UINT64_MAX);
	assert_null(hmap_get(&m, 30));
	assert_null(hmap_get(&m, 0));
	assert_null(hmap_next_same(&a.node));
	hmap_destroy(&m);
}

static void test_duplicates(void **state)
{
	enum { DUP = 5 };
	struct hmap m;
	struct item d[DUP], other[64];

	assert_int_equal(hmap_init(&m, 16), 0);
	/* other keys interleaved, so the duplicates share buckets with them */
	for (int i = 0; i < 64; i++) {
		other[i] = (struct item){ .id = 100 + i };
		hmap_insert(&m, &other[i].node, 1000 + i);
		if (i % 13 == 0 && i / 13 < DUP) {
			d[i / 13] = (struct item){ .id = i / 13 };
			hmap_insert(&m, &d[i / 13].node, 42);
		}
	}
	assert_int_equal(m.count, 64 + DUP);

	int n = 0;
	for (struct hmap_node *x = hmap_get(&m, 42); x; x = hmap_next_same(x)) {
		struct item *it = item_of(x);
		assert_int_equal(x->key, 42);
		assert_true(it->id >= 0 && it->id < DUP);
		it->seen++;
		n++;
	}
	assert_int_equal(n, DUP);
	for (int i = 0; i < DUP; i++)
		assert_int_equal(d[i].seen, 1);
	/* every other key still has exactly one node */
	for (int i = 0; i < 64; i++) {
		struct hmap_node *x = hmap_get(&m, 1000 + i);
		assert_ptr_equal(item_of(x), &other[i]);
		assert_null(hmap_next_same(x));
	}

	/* unlink the duplicates one by one: the rest are still walked */
	for (int k = 0; k < DUP; k++) {
		hmap_unlink(&m, &d[k].node);
		n = 0;
		for (struct hmap_node *x = hmap_get(&m, 42); x; x = hmap_next_same(x)) {
			assert_ptr_not_equal(item_of(x), &d[k]);
			assert_true(item_of(x)->id > k);
			n++;
		}
		assert_int_equal(n, DUP - 1 - k);
	}
	assert_null(hmap_get(&m, 42));
	assert_int_equal(m.count, 64);
	hmap_destroy(&m);
}

static void test_unlink(void **state)
{
	enum { N = 200 };
	struct hmap m;
	struct item it[N];

	/* 200 nodes in 16 buckets: long chains, unlinks at head, middle and tail */
	assert_int_equal(hmap_init(&m, 1), 0);
	for (int i = 0; i < N; i++) {
		it[i] = (struct item){ .id = i };
		hmap_insert(&m, &it[i].node, (uint64_t)i * 7919);
	}
	assert_int_equal(m.count, N);
	for (int i = 0; i < N; i += 3)
		hmap_unlink(&m, &it[i].node);
	int removed = (N + 2) / 3;
	assert_int_equal(m.count, N - removed);
	for (int i = 0; i < N; i++) {
		struct item *got = item_of(hmap_get(&m, (uint64_t)i * 7919));
		if (i % 3 == 0)
			assert_null(got);
		else
			assert_ptr_equal(got, &it[i]);
	}
	/* a removed node can be inserted again, under another key */
	hmap_insert(&m, &it[0].node, 5);
	assert_ptr_equal(item_of(hmap_get(&m, 5)), &it[0]);
	assert_null(hmap_get(&m, 0));
	hmap_unlink(&m, &it[0].node);
	assert_null(hmap_get(&m, 5));
	for (int i = 0; i < N; i++)
		if (i % 3)
			hmap_unlink(&m, &it[i].node);
	assert_int_equal(m.count, 0);
	for (int i = 0; i < N; i++)
		assert_null(hmap_get(&m, (uint64_t)i * 7919));
	hmap_destroy(&m);
}

static void test_pop_until_empty(void **state)
{
	enum { N = 1000 };
	struct hmap m;
	struct item *it = calloc(N, sizeof(*it));

	assert_non_null(it);
	assert_int_equal(hmap_init(&m, 64), 0);
	for (int i = 0; i < N; i++) {
		it[i].id = i;
		hmap_insert(&m, &it[i].node, (uint64_t)(i % 250)); /* 4 of each key */
	}
	struct hmap_node *n;
	size_t popped = 0;
	while ((n = hmap_pop(&m))) {
		struct item *x = item_of(n);
		assert_true(x >= it && x < it + N);
		assert_int_equal(x->seen, 0);
		x->seen = 1;
		popped++;
		assert_int_equal(m.count, N - popped);
	}
	assert_int_equal(popped, N);
	assert_int_equal(m.count, 0);
	assert_null(hmap_pop(&m));
	for (int i = 0; i < 250; i++)
		assert_null(hmap_get(&m, (uint64_t)i));
	/* usable again after being emptied */
	hmap_insert(&m, &it[0].node, 77);
	assert_ptr_equal(item_of(hmap_get(&m, 77)), &it[0]);
	assert_ptr_equal(item_of(hmap_pop(&m)), &it[0]);
	assert_null(hmap_pop(&m));
	hmap_destroy(&m);
	free(it);
}

static void test_pop_interleaved(void **state)
{
	enum { N = 600 };
	struct hmap m;
	struct item it[N];

	/* pops, then inserts (landing in buckets already emptied), then pops again */
	assert_int_equal(hmap_init(&m, 256), 0);
	for (int i = 0; i < N; i++)
		it[i] = (struct item){ .id = i };
	for (int i = 0; i < N / 2; i++)
		hmap_insert(&m, &it[i].node, (uint64_t)i);
	for (int i = 0; i < N / 4; i++) {
		struct item *x = item_of(hmap_pop(&m));
		assert_non_null(x);
		x->seen++;
	}
	for (int i = N / 2; i < N; i++)
		hmap_insert(&m, &it[i].node, (uint64_t)i);
	/* an unlink in between */
	if (!it[N - 1].seen)
		hmap_unlink(&m, &it[N - 1].node);
	struct hmap_node *n;
	while ((n = hmap_pop(&m))) {
		item_of(n)->seen++;
		/* a node popped from the map is no longer found in it */
		for (struct hmap_node *x = hmap_get(&m, n->key); x; x = hmap_next_same(x))
			assert_ptr_not_equal(x, n);
	}
	for (int i = 0; i < N - 1; i++)
		assert_int_equal(it[i].seen, 1);
	assert_int_equal(it[N - 1].seen, 0);
	assert_int_equal(m.count, 0);
	hmap_destroy(&m);
}

static void test_pop_all_is_linear(void **state)
{
	/* Tear-down of a full default-sized connection table (262144) once
	 * rescanned from bucket 0 on each pop (~15 s). Pops must only move the
	 * scan start forward, so all of them together visit each bucket once. */
	enum { N = 262144 };
	struct hmap m;
	struct hmap_node *nodes = calloc(N, sizeof(*nodes));

	assert_non_null(nodes);
	assert_int_equal(hmap_init(&m, N), 0);
	for (size_t i = 0; i < N; i++)
		hmap_insert(&m, &nodes[i], 0xffff888000000000ull + i * 0x940);
	size_t popped = 0, last = m.pop_from;
	while (hmap_pop(&m)) {
		assert_true(m.pop_from >= last);
		last = m.pop_from;
		popped++;
	}
	assert_int_equal(popped, N);
	assert_true(last <= m.mask);
	hmap_destroy(&m);
	free(nodes);
}

struct count_ctx {
	size_t calls;
	uint64_t key_sum;
};

static void count_fn(void *ctx, struct hmap_node *n)
{
	struct count_ctx *c = ctx;

	c->calls++;
	c->key_sum += n->key;
	item_of(n)->seen++;
}

static void free_fn(void *ctx, struct hmap_node *n)
{
	(*(size_t *)ctx)++;
	free(item_of(n));
}

static void test_foreach(void **state)
{
	enum { N = 500 };
	struct hmap m;
	struct item it[N];
	struct count_ctx c = { 0 };

	assert_int_equal(hmap_init(&m, 32), 0);
	hmap_foreach(&m, count_fn, &c);
	assert_int_equal(c.calls, 0);

	uint64_t sum = 0;
	for (int i = 0; i < N; i++) {
		it[i] = (struct item){ .id = i };
		hmap_insert(&m, &it[i].node, (uint64_t)(i / 2) << 20); /* pairs of duplicates */
		sum += (uint64_t)(i / 2) << 20;
	}
	hmap_unlink(&m, &it[7].node);
	sum -= (uint64_t)(7 / 2) << 20;
	hmap_foreach(&m, count_fn, &c);
	assert_int_equal(c.calls, N - 1);
	assert_int_equal(c.key_sum, sum);
	for (int i = 0; i < N; i++)
		assert_int_equal(it[i].seen, i == 7 ? 0 : 1);
	hmap_destroy(&m);

	/* fn may free the node it is given (tear-down without unlinking) */
	assert_int_equal(hmap_init(&m, 8), 0);
	for (int i = 0; i < 100; i++) {
		struct item *x = calloc(1, sizeof(*x));
		assert_non_null(x);
		hmap_insert(&m, &x->node, (uint64_t)i % 10);
	}
	size_t freed = 0;
	hmap_foreach(&m, free_fn, &freed);
	assert_int_equal(freed, 100);
	hmap_destroy(&m);
}

static void test_many(void **state)
{
	enum { N = 100000 };
	struct hmap m;
	struct item *it = calloc(N, sizeof(*it));

	assert_non_null(it);
	assert_int_equal(hmap_init(&m, N), 0);
	/* keys that differ only in high bits, like kernel pointers */
	for (int i = 0; i < N; i++) {
		it[i].id = i;
		hmap_insert(&m, &it[i].node, 0xffff888000000000ull + ((uint64_t)i << 12));
	}
	for (int i = 0; i < N; i++) {
		struct hmap_node *x = hmap_get(&m, 0xffff888000000000ull + ((uint64_t)i << 12));
		assert_ptr_equal(item_of(x), &it[i]);
		assert_null(hmap_next_same(x));
	}
	for (int i = 0; i < N; i += 2)
		hmap_unlink(&m, &it[i].node);
	assert_int_equal(m.count, N / 2);
	struct count_ctx c = { 0 };
	hmap_foreach(&m, count_fn, &c);
	assert_int_equal(c.calls, N / 2);
	hmap_destroy(&m);
	free(it);
}

/* Doubling as entries arrive, up to max_mask: every node still found, nodes of
 * one key still newest first, pops and foreach still see each node once. */
static void test_grows(void **state)
{
	enum { N = 5000, DUP = 4 };
	struct hmap m;
	struct item *it = calloc(N, sizeof(*it));
	struct item d[DUP];

	assert_non_null(it);
	assert_int_equal(hmap_init(&m, 1024), 0);
	for (int k = 0; k < DUP; k++) {
		d[k] = (struct item){ .id = k };
		hmap_insert(&m, &d[k].node, 77);
	}
	for (int i = 0; i < N; i++) {
		it[i].id = i;
		hmap_insert(&m, &it[i].node, 0xffff888000000000ull + ((uint64_t)i << 12));
		size_t buckets = m.mask + 1;
		/* grows once count passes the bucket count, and only then */
		assert_true(m.count <= buckets || m.mask == m.max_mask);
		assert_true(buckets == 16 || m.count > buckets / 2);
	}
	assert_int_equal(m.mask, 1023); /* stopped at the size given: chains grow instead */
	for (int i = 0; i < N; i++) {
		struct hmap_node *x = hmap_get(&m, 0xffff888000000000ull + ((uint64_t)i << 12));
		assert_ptr_equal(item_of(x), &it[i]);
		assert_null(hmap_next_same(x));
	}
	int want = DUP - 1; /* the newest first, as inserted at the head */
	for (struct hmap_node *x = hmap_get(&m, 77); x; x = hmap_next_same(x))
		assert_int_equal(item_of(x)->id, want--);
	assert_int_equal(want, -1);

	struct count_ctx c = { 0 };
	hmap_foreach(&m, count_fn, &c);
	assert_int_equal(c.calls, N + DUP);
	size_t popped = 0;
	while (hmap_pop(&m))
		popped++;
	assert_int_equal(popped, N + DUP);
	assert_int_equal(m.count, 0);
	hmap_destroy(&m);
	free(it);
}

static void test_hash_stable(void **state)
{
	char a[32], b[32];

	strcpy(a, "nodescope");
	strcpy(b, "nodescope");
	assert_ptr_not_equal(a, b);
	assert_int_equal(hmap_hash_str(a), hmap_hash_str(b));
	assert_int_equal(hmap_hash_bytes(a, 9), hmap_hash_bytes(b, 9));
	/* the string hash is the byte hash of its text */
	assert_int_equal(hmap_hash_str(a), hmap_hash_bytes(a, strlen(a)));
	assert_int_equal(hmap_hash_str(""), hmap_hash_bytes(a, 0));
	/* FNV-1a 64: the same values in every build and on every run */
	assert_int_equal(hmap_hash_str(""), 0xcbf29ce484222325ull);
	assert_int_equal(hmap_hash_str("a"), 0xaf63dc4c8601ec8cull);
	assert_int_equal(hmap_hash_str("foobar"), 0x85944171f73967e8ull);
	/* only the bytes hashed count, not what follows them */
	memset(a, 0, sizeof(a));
	memset(b, 0xff, sizeof(b));
	memcpy(a, "abc", 3);
	memcpy(b, "abc", 3);
	assert_int_equal(hmap_hash_bytes(a, 3), hmap_hash_bytes(b, 3));
	assert_int_not_equal(hmap_hash_bytes(a, 4), hmap_hash_bytes(b, 4));
	/* high bytes are hashed as unsigned, the same from either function */
	const char hi[] = "\xff\x80\x7f";
	assert_int_equal(hmap_hash_str(hi), hmap_hash_bytes(hi, 3));
	/* near-equal inputs differ */
	assert_int_not_equal(hmap_hash_str("ab"), hmap_hash_str("ba"));
	assert_int_not_equal(hmap_hash_str("a"), hmap_hash_str("a "));
	uint8_t z1[16] = { 0 }, z2[16] = { 0 };
	z2[15] = 1;
	assert_int_not_equal(hmap_hash_bytes(z1, 16), hmap_hash_bytes(z2, 16));
	assert_int_not_equal(hmap_hash_bytes(z1, 16), hmap_hash_bytes(z1, 15));
}

/* ---- strmap ---- */

static void test_strmap_upsert_get(void **state)
{
	struct strmap m;

	assert_int_equal(strmap_init(&m, 16), 0);
	assert_int_equal(strmap_count(&m), 0);
	assert_null(strmap_get(&m, "a"));

	int64_t *v = strmap_upsert(&m, "a");
	assert_non_null(v);
	assert_int_equal(*v, 0); /* created as 0 */
	assert_int_equal(strmap_count(&m), 1);
	*v += 5;
	assert_ptr_equal(strmap_get(&m, "a"), v);
	assert_int_equal(*strmap_get(&m, "a"), 5);
	/* upsert of an existing key returns it unchanged */
	int64_t *again = strmap_upsert(&m, "a");
	assert_ptr_equal(again, v);
	assert_int_equal(*again, 5);
	assert_int_equal(strmap_count(&m), 1);

	int64_t *w = strmap_upsert(&m, "b");
	assert_non_null(w);
	assert_ptr_not_equal(w, v);
	assert_int_equal(*w, 0);
	*w = -7;
	assert_int_equal(*strmap_get(&m, "b"), -7);
	assert_int_equal(*strmap_get(&m, "a"), 5);
	assert_int_equal(strmap_count(&m), 2);

	/* prefixes and case are different keys */
	assert_null(strmap_get(&m, "A"));
	assert_null(strmap_get(&m, "a "));
	assert_null(strmap_get(&m, ""));
	int64_t *e = strmap_upsert(&m, "");
	assert_non_null(e);
	assert_int_equal(*e, 0);
	assert_ptr_equal(strmap_get(&m, ""), e);
	assert_int_equal(strmap_count(&m), 3);
	strmap_destroy(&m);
}

static void test_strmap_del(void **state)
{
	struct strmap m;

	assert_int_equal(strmap_init(&m, 16), 0);
	*strmap_upsert(&m, "x") = 1;
	*strmap_upsert(&m, "y") = 2;
	strmap_del(&m, "x");
	assert_null(strmap_get(&m, "x"));
	assert_int_equal(*strmap_get(&m, "y"), 2);
	assert_int_equal(strmap_count(&m), 1);
	strmap_del(&m, "x"); /* twice */
	strmap_del(&m, "never");
	assert_int_equal(strmap_count(&m), 1);
	/* re-adding starts again from 0 */
	int64_t *v = strmap_upsert(&m, "x");
	assert_non_null(v);
	assert_int_equal(*v, 0);
	strmap_del(&m, "y");
	strmap_del(&m, "x");
	assert_int_equal(strmap_count(&m), 0);
	strmap_destroy(&m);
}

static void test_strmap_cap(void **state)
{
	struct strmap m;
	char key[16];

	assert_int_equal(strmap_init(&m, 3), 0);
	for (int i = 0; i < 3; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		assert_non_null(strmap_upsert(&m, key));
	}
	assert_null(strmap_upsert(&m, "k3"));
	assert_null(strmap_get(&m, "k3"));
	assert_int_equal(strmap_count(&m), 3);
	/* existing keys are still found when full */
	int64_t *v = strmap_upsert(&m, "k1");
	assert_non_null(v);
	*v = 9;
	assert_int_equal(*strmap_get(&m, "k1"), 9);
	/* room again after a delete */
	strmap_del(&m, "k0");
	assert_non_null(strmap_upsert(&m, "k3"));
	assert_null(strmap_upsert(&m, "k4"));
	assert_int_equal(strmap_count(&m), 3);
	strmap_destroy(&m);

	/* cap 0 holds nothing */
	assert_int_equal(strmap_init(&m, 0), 0);
	assert_null(strmap_upsert(&m, "a"));
	assert_int_equal(strmap_count(&m), 0);
	strmap_destroy(&m);
}

static void test_strmap_keys_copied(void **state)
{
	struct strmap m;
	char key[64];
	char big[5000];

	assert_int_equal(strmap_init(&m, 16), 0);
	strcpy(key, "10.0.0.1:5432");
	*strmap_upsert(&m, key) = 3;
	strcpy(key, "10.0.0.2:5432"); /* the caller's buffer is reused */
	assert_null(strmap_get(&m, key));
	*strmap_upsert(&m, key) = 4;
	assert_int_equal(*strmap_get(&m, "10.0.0.1:5432"), 3);
	assert_int_equal(*strmap_get(&m, "10.0.0.2:5432"), 4);
	memset(key, 0, sizeof(key));
	assert_int_equal(strmap_count(&m), 2);

	memset(big, 'k', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	*strmap_upsert(&m, big) = 11;
	big[sizeof(big) - 2] = 'j';
	assert_null(strmap_get(&m, big));
	big[sizeof(big) - 2] = 'k';
	assert_int_equal(*strmap_get(&m, big), 11);
	strmap_destroy(&m); /* frees every key (checked under ASan) */
}

static void test_strmap_many(void **state)
{
	enum { N = 20000 };
	struct strmap m;
	char key[32];

	assert_int_equal(strmap_init(&m, N), 0);
	for (int i = 0; i < N; i++) {
		snprintf(key, sizeof(key), "/c/%d", i);
		int64_t *v = strmap_upsert(&m, key);
		assert_non_null(v);
		*v = i * 3;
	}
	assert_int_equal(strmap_count(&m), N);
	assert_null(strmap_upsert(&m, "one more"));
	for (int i = 0; i < N; i++) {
		snprintf(key, sizeof(key), "/c/%d", i);
		assert_int_equal(*strmap_get(&m, key), i * 3);
		if (i % 2)
			strmap_del(&m, key);
	}
	assert_int_equal(strmap_count(&m), N / 2);
	for (int i = 0; i < N; i++) {
		snprintf(key, sizeof(key), "/c/%d", i);
		int64_t *v = strmap_get(&m, key);
		if (i % 2)
			assert_null(v);
		else
			assert_int_equal(*v, i * 3);
	}
	strmap_destroy(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_sizes),
		cmocka_unit_test(test_init_too_big),
		cmocka_unit_test(test_insert_get),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_unlink),
		cmocka_unit_test(test_pop_until_empty),
		cmocka_unit_test(test_pop_interleaved),
		cmocka_unit_test(test_pop_all_is_linear),
		cmocka_unit_test(test_foreach),
		cmocka_unit_test(test_many),
		cmocka_unit_test(test_grows),
		cmocka_unit_test(test_hash_stable),
		cmocka_unit_test(test_strmap_upsert_get),
		cmocka_unit_test(test_strmap_del),
		cmocka_unit_test(test_strmap_cap),
		cmocka_unit_test(test_strmap_keys_copied),
		cmocka_unit_test(test_strmap_many),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
