/*
 * Remote write without a network: the encoding (protobuf and snappy read
 * back with their own decoders), batch splitting, the spool's order and
 * cap, and Coroot's endpoint and instance rules.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "export/encode.h"
#include "export/remote_write.h"
#include "export/spool.h"
#include "metrics/registry.h"
#include "remote.pb-c.h"

#define TS 1700000000123LL

/* ---- encoding ---- */

struct batches {
	int n;
	Prometheus__WriteRequest *wr[64];
	size_t raw_len[64];
	unsigned samples[64];
};

/* The sink: each batch decompressed with snappy's own decoder and unpacked by protobuf-c. */
static int keep_batch(void *ctx, const void *data, size_t len, unsigned samples)
{
	struct batches *b = ctx;
	size_t raw_len;

	assert_true(b->n < 64);
	assert_int_equal(snappy_validate_compressed_buffer(data, len), SNAPPY_OK);
	assert_int_equal(snappy_uncompressed_length(data, len, &raw_len), SNAPPY_OK);
	char *raw = malloc(raw_len);
	assert_non_null(raw);
	assert_int_equal(snappy_uncompress(data, len, raw, &raw_len), SNAPPY_OK);
	b->wr[b->n] = prometheus__write_request__unpack(NULL, raw_len, (uint8_t *)raw);
	assert_non_null(b->wr[b->n]);
	b->raw_len[b->n] = raw_len;
	b->samples[b->n++] = samples;
	free(raw);
	return 0;
}

static void batches_free(struct batches *b)
{
	for (int i = 0; i < b->n; i++)
		prometheus__write_request__free_unpacked(b->wr[i], NULL);
}

static const char *label(const Prometheus__TimeSeries *ts, const char *name)
{
	for (size_t i = 0; i < ts->n_labels; i++)
		if (!strcmp(ts->labels[i]->name, name))
			return ts->labels[i]->value;
	return NULL;
}

/* A registry like the agent's: node labels on all, a counter, a gauge, a histogram. */
static struct metric_registry *registry(void)
{
	struct metric_registry *r = metric_registry_new();
	static const char *const node[] = { "machine_id", "system_uuid" };
	static const char *const node_v[] = { "m1", "u1" };
	static const char *const cl[] = { "container_id", "zone" };
	static const double bounds[] = { 0.1, 1 };

	assert_int_equal(metric_registry_set_const_labels(r, NULL, 2, node, node_v), 0);
	struct metric *c = metric_register(r, "c_total", "A counter.", METRIC_COUNTER, 0, 2, cl);
	struct metric *g = metric_register(r, "g", "A gauge.", METRIC_GAUGE, 0, 0, NULL);
	struct metric *h = metric_register_histogram(r, "h_seconds", "A histogram.", 0, 0, NULL,
						     bounds, 2);
	for (int i = 0; i < 5; i++) {
		char id[16];
		snprintf(id, sizeof(id), "/c%d", i);
		const char *v[] = { id, i % 2 ? "b" : "a" };
		metric_add(c, v, i + 1);
	}
	metric_set(g, NULL, 0.5);
	metric_observe(h, NULL, 0.05);
	metric_observe(h, NULL, 3);
	return r;
}

static void encode(struct metric_registry *r, unsigned max_series, size_t max_bytes,
		   struct batches *b)
{
	struct rw_encoder e;
	struct rw_encoder_opts o = { .max_series = max_series,
				     .max_bytes = max_bytes,
				     .job = "coroot-node-agent",
				     .instance = "inst",
				     .batch = keep_batch,
				     .batch_ctx = b };
	struct metric_visitor v;

	rw_encoder_init(&e, &o);
	rw_encoder_begin(&e, TS);
	rw_encoder_visitor(&e, &v);
	metric_registry_visit_at(r, 1, &v);
	assert_int_equal(rw_encoder_end(&e), 0);
	rw_encoder_free(&e);
}

/* Every sample of the text exposition, in its order: "name{labels} value" lines. */
static int text_samples(struct metric_registry *r)
{
	struct strbuf sb = STRBUF_INIT;
	int n = 0;
	metric_registry_write_at(r, &sb, 1);
	for (const char *p = strbuf_str(&sb); *p; p = strchr(p, '\n') + 1)
		n += *p != '#';
	strbuf_free(&sb);
	return n;
}

static void test_round_trip(void **state)
{
	struct metric_registry *r = registry();
	struct batches b = { 0 };

	encode(r, 1000, 0, &b);
	assert_int_equal(b.n, 1);
	Prometheus__WriteRequest *wr = b.wr[0];
	assert_int_equal((int)wr->n_timeseries, text_samples(r));
	assert_int_equal(b.samples[0], wr->n_timeseries);
	for (size_t i = 0; i < wr->n_timeseries; i++) {
		const Prometheus__TimeSeries *ts = wr->timeseries[i];
		/* Sorted by name, each once; one sample at the collection's time. */
		for (size_t j = 1; j < ts->n_labels; j++)
			assert_true(strcmp(ts->labels[j - 1]->name, ts->labels[j]->name) < 0);
		assert_int_equal(ts->n_samples, 1);
		assert_int_equal(ts->samples[0]->timestamp, TS);
		assert_string_equal(label(ts, "job"), "coroot-node-agent");
		assert_string_equal(label(ts, "instance"), "inst");
		assert_string_equal(label(ts, "machine_id"), "m1");
		assert_string_equal(label(ts, "system_uuid"), "u1");
	}
	/* The counter's third series, labels and value as set. */
	const Prometheus__TimeSeries *c2 = wr->timeseries[2];
	assert_string_equal(label(c2, "__name__"), "c_total");
	assert_string_equal(label(c2, "container_id"), "/c2");
	assert_string_equal(label(c2, "zone"), "a");
	assert_true(c2->samples[0]->value == 3);
	/* The histogram: cumulative buckets with le, then _sum and _count. */
	size_t hi = 6;
	assert_string_equal(label(wr->timeseries[hi], "__name__"), "h_seconds_bucket");
	assert_string_equal(label(wr->timeseries[hi], "le"), "0.1");
	assert_true(wr->timeseries[hi]->samples[0]->value == 1);
	assert_string_equal(label(wr->timeseries[hi + 2], "le"), "+Inf");
	assert_true(wr->timeseries[hi + 2]->samples[0]->value == 2);
	assert_string_equal(label(wr->timeseries[hi + 3], "__name__"), "h_seconds_sum");
	assert_true(wr->timeseries[hi + 3]->samples[0]->value == 3.05);
	assert_string_equal(label(wr->timeseries[hi + 4], "__name__"), "h_seconds_count");
	assert_null(label(wr->timeseries[hi + 4], "le"));
	/* Each family's type and help once. */
	assert_int_equal(wr->n_metadata, 3);
	assert_string_equal(wr->metadata[0]->metric_family_name, "c_total");
	assert_int_equal(wr->metadata[0]->type, PROMETHEUS__METRIC_METADATA__METRIC_TYPE__COUNTER);
	assert_string_equal(wr->metadata[2]->metric_family_name, "h_seconds");
	assert_int_equal(wr->metadata[2]->type, PROMETHEUS__METRIC_METADATA__METRIC_TYPE__HISTOGRAM);
	assert_string_equal(wr->metadata[2]->help, "A histogram.");
	batches_free(&b);
	metric_registry_free(r);
}

/* A series' own label wins over the job and instance the encoder adds; empty ones go. */
static void test_own_label_wins(void **state)
{
	struct metric_registry *r = metric_registry_new();
	static const char *const names[] = { "instance", "empty" };
	static const char *const values[] = { "mine", "" };
	struct batches b = { 0 };

	metric_set(metric_register(r, "x", "X.", METRIC_GAUGE, 0, 2, names), values, 1);
	encode(r, 10, 0, &b);
	const Prometheus__TimeSeries *ts = b.wr[0]->timeseries[0];
	assert_int_equal(ts->n_labels, 3); /* __name__, instance, job: "empty" is no label */
	assert_string_equal(label(ts, "instance"), "mine");
	batches_free(&b);
	metric_registry_free(r);
}

/* The samples of all batches, in order, are those of one unsplit request. */
static void assert_same_samples(struct batches *whole, struct batches *parts)
{
	size_t k = 0;
	for (int i = 0; i < parts->n; i++) {
		for (size_t j = 0; j < parts->wr[i]->n_timeseries; j++, k++) {
			const Prometheus__TimeSeries *a = whole->wr[0]->timeseries[k];
			const Prometheus__TimeSeries *p = parts->wr[i]->timeseries[j];
			assert_string_equal(label(a, "__name__"), label(p, "__name__"));
			assert_int_equal(a->n_labels, p->n_labels);
			for (size_t l = 0; l < a->n_labels; l++)
				assert_string_equal(a->labels[l]->value, p->labels[l]->value);
			assert_true(a->samples[0]->value == p->samples[0]->value);
		}
		/* Each batch says the type of every family it has samples of. */
		for (size_t j = 0; j < parts->wr[i]->n_timeseries; j++) {
			const char *name = label(parts->wr[i]->timeseries[j], "__name__");
			bool found = false;
			for (size_t m = 0; m < parts->wr[i]->n_metadata; m++)
				found |= !strncmp(name, parts->wr[i]->metadata[m]->metric_family_name,
						  strlen(parts->wr[i]->metadata[m]->metric_family_name));
			assert_true(found);
		}
	}
	assert_int_equal(k, whole->wr[0]->n_timeseries);
}

static void test_split_by_series(void **state)
{
	struct metric_registry *r = registry();
	struct batches whole = { 0 }, parts = { 0 };

	encode(r, 1000, 0, &whole);
	encode(r, 3, 0, &parts);
	int n = (int)whole.wr[0]->n_timeseries;
	assert_int_equal(parts.n, (n + 2) / 3);
	for (int i = 0; i < parts.n; i++) {
		assert_true(parts.wr[i]->n_timeseries <= 3);
		assert_int_equal(parts.samples[i], parts.wr[i]->n_timeseries);
	}
	assert_same_samples(&whole, &parts);
	batches_free(&whole);
	batches_free(&parts);
	metric_registry_free(r);
}

static void test_split_by_bytes(void **state)
{
	struct metric_registry *r = registry();
	struct batches whole = { 0 }, parts = { 0 };

	encode(r, 1000, 0, &whole);
	encode(r, 1000, 300, &parts);
	assert_true(parts.n > 2);
	for (int i = 0; i < parts.n; i++)
		assert_true(parts.raw_len[i] <= 300);
	assert_same_samples(&whole, &parts);
	batches_free(&whole);
	batches_free(&parts);
	metric_registry_free(r);
}

/* ---- spool ---- */

static char spool_dir[64];

static int spool_setup(void **state)
{
	strcpy(spool_dir, "/tmp/test_spool.XXXXXX");
	return mkdtemp(spool_dir) ? 0 : -1;
}

static int spool_teardown(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", spool_dir);
	return system(cmd);
}

static void push(struct spool *s, int i, size_t len)
{
	char data[256];
	memset(data, 'a' + i, sizeof(data));
	assert_true(len <= sizeof(data));
	assert_int_equal(spool_push(s, data, len, (unsigned)i), 0);
}

/* The oldest's first byte names which batch it is ('a' + i). */
static int oldest(struct spool *s)
{
	struct strbuf sb = STRBUF_INIT;
	assert_int_equal(spool_read_oldest(s, &sb), 0);
	int i = sb.buf[0] - 'a';
	assert_int_equal(spool_oldest(s)->samples, (unsigned)i);
	strbuf_free(&sb);
	return i;
}

static void test_spool_order_across_restarts(void **state)
{
	struct spool s;
	char path[128];

	assert_int_equal(spool_open(&s, spool_dir, 1 << 20), 0);
	for (int i = 0; i < 12; i++) /* past 9 and 0xf: names sort as numbers */
		push(&s, i, 100);
	assert_int_equal(s.n, 12);
	assert_int_equal(s.bytes, 1200);
	spool_pop(&s);
	spool_close(&s);
	/* What a crash mid-write leaves, and a file of someone else's. */
	snprintf(path, sizeof(path), "%s/00000000000000ff.3.tmp", spool_dir);
	fclose(fopen(path, "w"));
	snprintf(path, sizeof(path), "%s/spool-1.done", spool_dir);
	fclose(fopen(path, "w"));

	assert_int_equal(spool_open(&s, spool_dir, 1 << 20), 0);
	assert_int_equal(s.n, 11);
	assert_int_equal(s.bytes, 1100);
	snprintf(path, sizeof(path), "%s/00000000000000ff.3.tmp", spool_dir);
	assert_int_equal(access(path, F_OK), -1);
	for (int i = 1; i < 12; i++) {
		assert_int_equal(oldest(&s), i);
		spool_pop(&s);
	}
	assert_null(spool_oldest(&s));
	push(&s, 3, 10); /* numbered after what the earlier run had */
	assert_true(spool_oldest(&s)->seq >= 12);
	spool_close(&s);
}

static void test_spool_cap_drops_oldest(void **state)
{
	struct spool s;

	assert_int_equal(spool_open(&s, spool_dir, 350), 0);
	for (int i = 0; i < 5; i++)
		push(&s, i, 100);
	/* 3 fit: 0 and 1 went, oldest first, counted with their samples. */
	assert_int_equal(s.n, 3);
	assert_int_equal(s.bytes, 300);
	assert_int_equal(s.dropped_batches[SPOOL_DROP_FULL], 2);
	assert_int_equal(s.dropped_samples[SPOOL_DROP_FULL], 0 + 1);
	assert_int_equal(oldest(&s), 2);
	/* The batch being sent stays: the one after it goes. */
	s.busy = true;
	push(&s, 5, 100);
	assert_int_equal(s.dropped_batches[SPOOL_DROP_FULL], 3);
	assert_int_equal(oldest(&s), 2);
	spool_pop(&s);
	assert_int_equal(oldest(&s), 4);
	spool_pop(&s);
	assert_int_equal(oldest(&s), 5);
	/* Larger than the whole cap: that one is dropped, and counted. */
	char big[400] = { 0 };
	assert_int_equal(spool_push(&s, big, sizeof(big), 7), -ENOSPC);
	assert_int_equal(s.dropped_batches[SPOOL_DROP_FULL], 4);
	assert_int_equal(s.dropped_samples[SPOOL_DROP_FULL], 0 + 1 + 3 + 7);
	assert_int_equal(s.n, 1); /* nothing else went for it */
	spool_close(&s);
}

/* A file gone under the spool's feet: counted and skipped. */
static void test_spool_unreadable(void **state)
{
	struct spool s;
	char path[128];

	assert_int_equal(spool_open(&s, spool_dir, 1 << 20), 0);
	push(&s, 1, 10);
	push(&s, 2, 10);
	snprintf(path, sizeof(path), "%s/%016llx.1.rw", spool_dir,
		 (unsigned long long)spool_oldest(&s)->seq);
	assert_int_equal(unlink(path), 0);
	struct strbuf sb = STRBUF_INIT;
	assert_true(spool_read_oldest(&s, &sb) < 0);
	assert_int_equal(s.dropped_batches[SPOOL_DROP_ERROR], 1);
	assert_int_equal(s.dropped_samples[SPOOL_DROP_ERROR], 1);
	assert_int_equal(oldest(&s), 2);
	strbuf_free(&sb);
	spool_close(&s);
}

/* ---- Coroot's rules ---- */

static void test_url(void **state)
{
	char out[128];
	assert_string_equal(remote_write_url("http://p/api/v1/write", "http://c", out, sizeof(out)),
			    "http://p/api/v1/write");
	assert_string_equal(remote_write_url(NULL, "https://coroot:8080/", out, sizeof(out)),
			    "https://coroot:8080/v1/metrics");
	assert_null(remote_write_url(NULL, NULL, out, sizeof(out)));
	assert_null(remote_write_url("", "", out, sizeof(out)));
}

static void test_instance(void **state)
{
	char out[160];
	remote_write_instance("abc123", "", out, sizeof(out));
	assert_string_equal(out, "abc123");
	remote_write_instance("abc123", "abc-123", out, sizeof(out));
	assert_string_equal(out, "abc123");
	/* md5("abc123" "1111222233334444") */
	remote_write_instance("abc123", "11112222-3333-4444", out, sizeof(out));
	assert_string_equal(out, "1753d1ddb2de6b99bb6156f23c3bf73c");
}

static void test_parse_bytes(void **state)
{
	unsigned long long v;
	assert_int_equal(cli_parse_bytes("500MB", 0, 1ull << 40, &v), 0);
	assert_int_equal(v, 500ull << 20);
	assert_int_equal(cli_parse_bytes("2gib", 0, 1ull << 40, &v), 0);
	assert_int_equal(v, 2ull << 30);
	assert_int_equal(cli_parse_bytes("4096", 0, 1ull << 40, &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(cli_parse_bytes("1K", 0, 1ull << 40, &v), 0);
	assert_int_equal(v, 1024);
	assert_int_equal(cli_parse_bytes("1MB", 2 << 20, 1ull << 40, &v), -EINVAL);
	assert_int_equal(cli_parse_bytes("2048GB", 0, 1ull << 40, &v), -EINVAL);
	assert_int_equal(cli_parse_bytes("5 MB", 0, 1ull << 40, &v), -EINVAL);
	assert_int_equal(cli_parse_bytes("5TB", 0, 1ull << 40, &v), -EINVAL);
	assert_int_equal(cli_parse_bytes("-1", 0, 1ull << 40, &v), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_own_label_wins),
		cmocka_unit_test(test_split_by_series),
		cmocka_unit_test(test_split_by_bytes),
		cmocka_unit_test_setup_teardown(test_spool_order_across_restarts, spool_setup,
						spool_teardown),
		cmocka_unit_test_setup_teardown(test_spool_cap_drops_oldest, spool_setup,
						spool_teardown),
		cmocka_unit_test_setup_teardown(test_spool_unreadable, spool_setup, spool_teardown),
		cmocka_unit_test(test_url),
		cmocka_unit_test(test_instance),
		cmocka_unit_test(test_parse_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
