#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "metrics/registry.h"

#define DROPS "nodescope_metric_series_dropped_total"

static int setup(void **state)
{
	struct metric_registry *r = metric_registry_new();

	if (!r)
		return -1;
	*state = r;
	return 0;
}

static int teardown(void **state)
{
	metric_registry_free(*state);
	return 0;
}

/* Writes the registry into a fresh buffer; the caller frees it. */
static void write_all(struct metric_registry *r, struct strbuf *sb)
{
	*sb = (struct strbuf)STRBUF_INIT;
	metric_registry_write(r, sb);
	assert_false(sb->oom);
}

static void assert_output(struct metric_registry *r, const char *expected)
{
	struct strbuf sb;

	write_all(r, &sb);
	assert_string_equal(strbuf_str(&sb), expected);
	strbuf_free(&sb);
}

/* The exposition line of a single-series gauge "g" set to v. */
static void assert_value_text(struct metric_registry *r, double v, const char *text)
{
	struct metric *m = metric_register(r, "g", "h", METRIC_GAUGE, 0, 0, NULL);
	char expected[128];

	assert_non_null(m);
	metric_set(m, NULL, v);
	snprintf(expected, sizeof(expected), "# HELP g h\n# TYPE g gauge\ng %s\n", text);
	assert_output(r, expected);
}

static void test_empty_registry(void **state)
{
	assert_output(*state, "");
}

static void test_register_add_write(void **state)
{
	struct metric_registry *r = *state;
	const char *const labels[] = { "method", "code" };
	struct metric *req = metric_register(r, "http_requests_total", "Requests served.",
					     METRIC_COUNTER, 0, 2, labels);
	struct metric *up = metric_register(r, "up", "Agent is up.", METRIC_GAUGE, 0, 0, NULL);
	struct metric *empty = metric_register(r, "empty_total", "Nothing yet.", METRIC_COUNTER,
					       0, 0, NULL);

	assert_non_null(req);
	assert_non_null(up);
	assert_non_null(empty);

	metric_add(req, (const char *const[]){ "GET", "200" }, 3);
	metric_add(req, (const char *const[]){ "POST", "500" }, 1);
	metric_add(req, (const char *const[]){ "GET", "200" }, 2);
	metric_set(up, NULL, 1);

	assert_int_equal(metric_series_count(req), 2);
	assert_int_equal(metric_series_count(up), 1);
	assert_int_equal(metric_series_count(empty), 0);
	assert_true(metric_value(req, (const char *const[]){ "GET", "200" }) == 5);

	assert_output(r, "# HELP http_requests_total Requests served.\n"
			 "# TYPE http_requests_total counter\n"
			 "http_requests_total{method=\"GET\",code=\"200\"} 5\n"
			 "http_requests_total{method=\"POST\",code=\"500\"} 1\n"
			 "# HELP up Agent is up.\n"
			 "# TYPE up gauge\n"
			 "up 1\n"
			 "# HELP empty_total Nothing yet.\n"
			 "# TYPE empty_total counter\n");
}

static void test_series_handle(void **state)
{
	struct metric_registry *r = *state;
	const char *const labels[] = { "cpu" };
	struct metric *m = metric_register(r, "busy", "b", METRIC_GAUGE, 0, 1, labels);
	struct metric_series *s0 = metric_series_get(m, (const char *const[]){ "0" });
	struct metric_series *s1 = metric_series_get(m, (const char *const[]){ "1" });

	assert_non_null(s0);
	assert_non_null(s1);
	assert_ptr_not_equal(s0, s1);
	assert_ptr_equal(metric_series_get(m, (const char *const[]){ "0" }), s0);

	metric_series_set(s0, 10);
	metric_series_add(s0, 2.5);
	metric_series_add(s1, -1);
	assert_true(metric_series_value(s0) == 12.5);
	assert_true(metric_series_value(s1) == -1);
	assert_true(metric_value(m, (const char *const[]){ "0" }) == 12.5);
}

static void test_label_values_are_copied(void **state)
{
	struct metric_registry *r = *state;
	const char *const labels[] = { "comm" };
	struct metric *m = metric_register(r, "procs", "p", METRIC_GAUGE, 0, 1, labels);
	char value[16];

	strcpy(value, "bash");
	metric_set(m, (const char *const[]){ value }, 1);
	strcpy(value, "zsh");
	assert_true(metric_value(m, (const char *const[]){ "bash" }) == 1);
	assert_true(metric_value(m, (const char *const[]){ "zsh" }) == 0);
	assert_output(r, "# HELP procs p\n# TYPE procs gauge\nprocs{comm=\"bash\"} 1\n");
}

static void test_names_are_copied(void **state)
{
	struct metric_registry *r = *state;
	char name[16], help[16], label[16];
	const char *const labels[] = { label };

	strcpy(name, "m");
	strcpy(help, "help");
	strcpy(label, "l");
	struct metric *m = metric_register(r, name, help, METRIC_GAUGE, 0, 1, labels);

	memset(name, 'x', sizeof(name) - 1);
	memset(help, 'x', sizeof(help) - 1);
	memset(label, 'x', sizeof(label) - 1);
	metric_set(m, (const char *const[]){ "v" }, 1);
	assert_output(r, "# HELP m help\n# TYPE m gauge\nm{l=\"v\"} 1\n");
}

static void test_label_escaping(void **state)
{
	struct metric_registry *r = *state;
	const char *const labels[] = { "path", "other" };
	struct metric *m = metric_register(r, "files", "f", METRIC_GAUGE, 0, 2, labels);

	metric_set(m, (const char *const[]){ "C:\\dir\\\"q\"\nend", "" }, 1);
	metric_set(m, (const char *const[]){ "plain {}=,'", "\\" }, 2);
	assert_output(r, "# HELP files f\n"
			 "# TYPE files gauge\n"
			 "files{path=\"C:\\\\dir\\\\\\\"q\\\"\\nend\",other=\"\"} 1\n"
			 "files{path=\"plain {}=,'\",other=\"\\\\\"} 2\n");
}

static void test_help_escaping(void **state)
{
	struct metric_registry *r = *state;

	assert_non_null(metric_register(r, "a", "back\\slash \"quotes\"\nline two", METRIC_GAUGE,
					0, 0, NULL));
	assert_non_null(metric_register(r, "b", NULL, METRIC_COUNTER, 0, 0, NULL));
	assert_output(r, "# HELP a back\\\\slash \"quotes\"\\nline two\n"
			 "# TYPE a gauge\n"
			 "# HELP b \n"
			 "# TYPE b counter\n");
}

static void test_value_integers(void **state)
{
	struct metric_registry *r = *state;

	assert_value_text(r, 0, "0");
	assert_value_text(r, -0.0, "0");
	assert_value_text(r, 3, "3");
	assert_value_text(r, -42, "-42");
	assert_value_text(r, 1e15, "1000000000000000");
	assert_value_text(r, 9007199254740991.0, "9007199254740991");
	assert_value_text(r, -9007199254740991.0, "-9007199254740991");
	/* From 2^53 on, %.17g. */
	assert_value_text(r, 9007199254740992.0, "9007199254740992");
	assert_value_text(r, 1e20, "1e+20");
	assert_value_text(r, -1e300, "-1.0000000000000001e+300");
}

static void test_value_fractional(void **state)
{
	struct metric_registry *r = *state;

	assert_value_text(r, 0.5, "0.5");
	assert_value_text(r, -2.25, "-2.25");
	assert_value_text(r, 0.1, "0.10000000000000001");
	assert_value_text(r, 1.0 / 3.0, "0.33333333333333331");
	assert_value_text(r, 1e-300, "1e-300");
	assert_value_text(r, 2.5e-7, "2.4999999999999999e-07");
	assert_value_text(r, 4503599627370495.5, "4503599627370495.5");
}

static void test_value_special(void **state)
{
	struct metric_registry *r = *state;

	assert_value_text(r, NAN, "NaN");
	assert_value_text(r, -NAN, "NaN");
	assert_value_text(r, INFINITY, "+Inf");
	assert_value_text(r, -INFINITY, "-Inf");
}

static void test_series_cap(void **state)
{
	struct metric_registry *r = *state;
	const char *const labels[] = { "pid" };
	struct metric *m = metric_register(r, "capped", "c", METRIC_GAUGE, 3, 1, labels);
	struct metric *other = metric_register(r, "free", "f", METRIC_GAUGE, 0, 0, NULL);

	assert_non_null(m);
	metric_set(other, NULL, 7);
	assert_non_null(metric_series_get(m, (const char *const[]){ "1" }));
	assert_non_null(metric_series_get(m, (const char *const[]){ "2" }));
	assert_non_null(metric_series_get(m, (const char *const[]){ "3" }));
	assert_int_equal(metric_dropped(m), 0);

	/* No drops yet: the drop family stays out of the output. */
	assert_output(r, "# HELP capped c\n"
			 "# TYPE capped gauge\n"
			 "capped{pid=\"1\"} 0\n"
			 "capped{pid=\"2\"} 0\n"
			 "capped{pid=\"3\"} 0\n"
			 "# HELP free f\n"
			 "# TYPE free gauge\n"
			 "free 7\n");

	assert_null(metric_series_get(m, (const char *const[]){ "4" }));
	assert_int_equal(metric_dropped(m), 1);
	assert_int_equal(metric_series_count(m), 3);
	/* Existing series are still reachable at the cap. */
	assert_non_null(metric_series_get(m, (const char *const[]){ "2" }));
	assert_int_equal(metric_dropped(m), 1);

	metric_set(m, (const char *const[]){ "5" }, 1);
	metric_add(m, (const char *const[]){ "4" }, 1);
	assert_int_equal(metric_dropped(m), 3);
	assert_int_equal(metric_series_count(m), 3);
	assert_true(metric_value(m, (const char *const[]){ "5" }) == 0);
	assert_int_equal(metric_dropped(other), 0);

	struct strbuf sb;

	write_all(r, &sb);
	assert_string_equal(strbuf_str(&sb),
			    "# HELP " DROPS " Series not created because the metric reached its "
			    "series cap.\n"
			    "# TYPE " DROPS " counter\n" DROPS "{metric=\"capped\"} 3\n"
			    "# HELP capped c\n"
			    "# TYPE capped gauge\n"
			    "capped{pid=\"1\"} 0\n"
			    "capped{pid=\"2\"} 0\n"
			    "capped{pid=\"3\"} 0\n"
			    "# HELP free f\n"
			    "# TYPE free gauge\n"
			    "free 7\n");
	strbuf_free(&sb);

	/* Removing a series frees a slot under the cap. */
	metric_remove(m, (const char *const[]){ "1" });
	assert_non_null(metric_series_get(m, (const char *const[]){ "4" }));
	assert_null(metric_series_get(m, (const char *const[]){ "6" }));
	assert_int_equal(metric_dropped(m), 4);
}

static void test_cap_of_one_without_labels(void **state)
{
	struct metric_registry *r = *state;
	struct metric *m = metric_register(r, "single", "s", METRIC_COUNTER, 1, 0, NULL);

	metric_add(m, NULL, 1);
	metric_add(m, NULL, 1);
	assert_int_equal(metric_dropped(m), 0);
	assert_true(metric_value(m, NULL) == 2);
}

static void test_drops_per_family(void **state)
{
	struct metric_registry *r = *state;
	const char *const labels[] = { "k" };
	struct metric *a = metric_register(r, "a", "a", METRIC_GAUGE, 1, 1, labels);
	struct metric *b = metric_register(r, "b", "b", METRIC_GAUGE, 2, 1, labels);
	struct metric *drops;

	for (int i = 0; i < 10; i++) {
		char v[16];

		snprintf(v, sizeof(v), "%d", i);
		metric_set(a, (const char *const[]){ v }, i);
		metric_set(b, (const char *const[]){ v }, i);
	}
	assert_int_equal(metric_dropped(a), 9);
	assert_int_equal(metric_dropped(b), 8);

	/* The drop family is an ordinary, uncapped, registered family. */
	drops = metric_register(r, DROPS, "", METRIC_COUNTER, 0, 1,
				(const char *const[]){ "metric" });
	assert_non_null(drops);
	assert_int_equal(metric_series_count(drops), 2);
	assert_true(metric_value(drops, (const char *const[]){ "a" }) == 9);
	assert_true(metric_value(drops, (const char *const[]){ "b" }) == 8);
	assert_null(metric_register(r, DROPS, "", METRIC_GAUGE, 0, 1,
				    (const char *const[]){ "metric" }));
	assert_null(metric_register(r, DROPS, "", METRIC_COUNTER, 0, 0, NULL));

	/* Even if its series is removed, the next write restores the count. */
	metric_remove(drops, (const char *const[]){ "a" });
	struct strbuf sb;

	write_all(r, &sb);
	assert_non_null(strstr(strbuf_str(&sb), DROPS "{metric=\"a\"} 9\n"));
	assert_non_null(strstr(strbuf_str(&sb), DROPS "{metric=\"b\"} 8\n"));
	strbuf_free(&sb);
}

static void test_drop_series_named_after_family(void **state)
{
	struct metric_registry *r = *state;
	/* The drop series carries the family name verbatim, colons included. */
	struct metric *m = metric_register(r, "ns:sub:x", "x", METRIC_GAUGE, 1, 1,
					   (const char *const[]){ "k" });

	metric_set(m, (const char *const[]){ "1" }, 1);
	metric_set(m, (const char *const[]){ "2" }, 1);

	struct strbuf sb;

	write_all(r, &sb);
	assert_non_null(strstr(strbuf_str(&sb), DROPS "{metric=\"ns:sub:x\"} 1\n"));
	strbuf_free(&sb);
}

static void test_remove(void **state)
{
	struct metric_registry *r = *state;
	const char *const labels[] = { "dev" };
	struct metric *m = metric_register(r, "disk", "d", METRIC_GAUGE, 0, 1, labels);

	metric_set(m, (const char *const[]){ "sda" }, 1);
	metric_set(m, (const char *const[]){ "sdb" }, 2);
	metric_set(m, (const char *const[]){ "sdc" }, 3);
	metric_set(m, (const char *const[]){ "sdd" }, 4);

	metric_remove(m, (const char *const[]){ "sdb" });
	assert_int_equal(metric_series_count(m), 3);
	assert_true(metric_value(m, (const char *const[]){ "sdb" }) == 0);
	assert_output(r, "# HELP disk d\n# TYPE disk gauge\n"
			 "disk{dev=\"sda\"} 1\ndisk{dev=\"sdc\"} 3\ndisk{dev=\"sdd\"} 4\n");

	/* Absent: no-op. */
	metric_remove(m, (const char *const[]){ "sdb" });
	metric_remove(m, (const char *const[]){ "nvme0n1" });
	metric_remove(m, NULL);
	metric_remove(NULL, (const char *const[]){ "sda" });
	assert_int_equal(metric_series_count(m), 3);

	/* Head and tail. */
	metric_remove(m, (const char *const[]){ "sda" });
	metric_remove(m, (const char *const[]){ "sdd" });
	assert_output(r, "# HELP disk d\n# TYPE disk gauge\ndisk{dev=\"sdc\"} 3\n");

	/* Re-created series start from 0 and go to the end. */
	metric_add(m, (const char *const[]){ "sdb" }, 5);
	metric_add(m, (const char *const[]){ "sda" }, 0);
	assert_output(r, "# HELP disk d\n# TYPE disk gauge\n"
			 "disk{dev=\"sdc\"} 3\ndisk{dev=\"sdb\"} 5\ndisk{dev=\"sda\"} 0\n");

	metric_remove(m, (const char *const[]){ "sdc" });
	metric_remove(m, (const char *const[]){ "sdb" });
	metric_remove(m, (const char *const[]){ "sda" });
	assert_int_equal(metric_series_count(m), 0);
	assert_output(r, "# HELP disk d\n# TYPE disk gauge\n");
	metric_set(m, (const char *const[]){ "sde" }, 9);
	assert_output(r, "# HELP disk d\n# TYPE disk gauge\ndisk{dev=\"sde\"} 9\n");
}

/* A family rebuilt at each scrape: cleared, then only what exists now. */
static void test_clear(void **state)
{
	struct metric_registry *r = *state;
	const char *const labels[] = { "dev" };
	struct metric *m = metric_register(r, "disk", "d", METRIC_COUNTER, 0, 1, labels);

	metric_set(m, (const char *const[]){ "sda" }, 1);
	metric_set(m, (const char *const[]){ "sdb" }, 2);
	metric_clear(m);
	metric_clear(NULL);
	assert_int_equal(metric_series_count(m), 0);
	assert_output(r, "# HELP disk d\n# TYPE disk counter\n");
	metric_set(m, (const char *const[]){ "sdb" }, 3);
	assert_true(metric_value(m, (const char *const[]){ "sda" }) == 0);
	assert_output(r, "# HELP disk d\n# TYPE disk counter\ndisk{dev=\"sdb\"} 3\n");
}

static void test_remove_unlabelled(void **state)
{
	struct metric_registry *r = *state;
	struct metric *m = metric_register(r, "g", "h", METRIC_GAUGE, 0, 0, NULL);

	metric_set(m, NULL, 4);
	metric_remove(m, NULL);
	assert_int_equal(metric_series_count(m), 0);
	assert_output(r, "# HELP g h\n# TYPE g gauge\n");
}

static void test_reregister(void **state)
{
	struct metric_registry *r = *state;
	const char *const ab[] = { "a", "b" };
	const char *const ab_copy[] = { "a", "b" };
	const char *const ba[] = { "b", "a" };
	const char *const ac[] = { "a", "c" };
	struct metric *m = metric_register(r, "fam", "first", METRIC_COUNTER, 5, 2, ab);

	assert_non_null(m);
	metric_add(m, (const char *const[]){ "1", "2" }, 1);

	assert_ptr_equal(metric_register(r, "fam", "first", METRIC_COUNTER, 5, 2, ab), m);
	assert_ptr_equal(metric_register(r, "fam", "other help", METRIC_COUNTER, 5, 2, ab_copy),
			 m);
	assert_null(metric_register(r, "fam", "first", METRIC_GAUGE, 5, 2, ab));
	assert_null(metric_register(r, "fam", "first", METRIC_COUNTER, 5, 2, ba));
	assert_null(metric_register(r, "fam", "first", METRIC_COUNTER, 5, 2, ac));
	assert_null(metric_register(r, "fam", "first", METRIC_COUNTER, 5, 1, ab));
	assert_null(metric_register(r, "fam", "first", METRIC_COUNTER, 5, 0, NULL));

	/* Still one family, its series intact, first help kept. */
	assert_int_equal(metric_series_count(m), 1);
	assert_output(r, "# HELP fam first\n# TYPE fam counter\nfam{a=\"1\",b=\"2\"} 1\n");

	struct metric *g = metric_register(r, "plain", "p", METRIC_GAUGE, 0, 0, NULL);

	assert_ptr_equal(metric_register(r, "plain", "p", METRIC_GAUGE, 0, 0, NULL), g);
	assert_null(metric_register(r, "plain", "p", METRIC_GAUGE, 0, 1,
				    (const char *const[]){ "x" }));
	assert_null(metric_register(r, "plain", "p", METRIC_COUNTER, 0, 0, NULL));
}

static void test_invalid_names(void **state)
{
	struct metric_registry *r = *state;
	static const char *const bad_metric[] = { "",	  "1abc", "a-b", "a b", "a.b",
						  "é",	  "a\n",  "{x}", "a=b", "ab\"",
						  "9",	  " a" };
	static const char *const good_metric[] = { "a", "_", ":", "a:b_c9", "A_Z:z_0",
						   "__internal", "::x", "_1" };
	static const char *const bad_label[] = { "",   "1x", "a:b", "a-b", "__x",
						 "__", "x y", "é",  "a.b", "a\"" };
	static const char *const good_label[] = { "a", "_", "_x", "A9", "x__y", "a_" };
	const size_t n_bad_metric = sizeof(bad_metric) / sizeof(bad_metric[0]);
	const size_t n_good_metric = sizeof(good_metric) / sizeof(good_metric[0]);
	const size_t n_bad_label = sizeof(bad_label) / sizeof(bad_label[0]);
	const size_t n_good_label = sizeof(good_label) / sizeof(good_label[0]);

	for (size_t i = 0; i < n_bad_metric; i++)
		assert_null(metric_register(r, bad_metric[i], "h", METRIC_GAUGE, 0, 0, NULL));
	for (size_t i = 0; i < n_good_metric; i++)
		assert_non_null(metric_register(r, good_metric[i], "h", METRIC_GAUGE, 0, 0, NULL));
	assert_null(metric_register(r, NULL, "h", METRIC_GAUGE, 0, 0, NULL));

	for (size_t i = 0; i < n_bad_label; i++) {
		char name[32];
		const char *const labels[] = { "ok", bad_label[i] };

		snprintf(name, sizeof(name), "bad_label_%zu", i);
		assert_null(metric_register(r, name, "h", METRIC_GAUGE, 0, 2, labels));
	}
	for (size_t i = 0; i < n_good_label; i++) {
		char name[32];
		const char *const labels[] = { good_label[i] };

		snprintf(name, sizeof(name), "good_label_%zu", i);
		assert_non_null(metric_register(r, name, "h", METRIC_GAUGE, 0, 1, labels));
	}

	/* Duplicate, NULL and too many labels. */
	assert_null(metric_register(r, "dup", "h", METRIC_GAUGE, 0, 2,
				    (const char *const[]){ "x", "x" }));
	assert_null(metric_register(r, "nul", "h", METRIC_GAUGE, 0, 2,
				    (const char *const[]){ "x", NULL }));
	assert_null(metric_register(r, "nolabels", "h", METRIC_GAUGE, 0, 1, NULL));

	const char *const many[] = { "l0", "l1", "l2", "l3", "l4",  "l5", "l6",
				     "l7", "l8", "l9", "l10", "l11", "l12" };

	assert_int_equal(sizeof(many) / sizeof(many[0]), METRIC_MAX_LABELS + 1);
	assert_non_null(metric_register(r, "most", "h", METRIC_GAUGE, 0, METRIC_MAX_LABELS,
					many));
	assert_null(metric_register(r, "toomany", "h", METRIC_GAUGE, 0, METRIC_MAX_LABELS + 1,
				    many));

	/* Bad type, NULL registry. */
	assert_null(metric_register(r, "badtype", "h", (enum metric_type)42, 0, 0, NULL));
	assert_null(metric_register(NULL, "x", "h", METRIC_GAUGE, 0, 0, NULL));

	/* Rejected names left nothing behind. */
	struct strbuf sb;

	write_all(r, &sb);
	assert_null(strstr(strbuf_str(&sb), "bad_label_"));
	assert_null(strstr(strbuf_str(&sb), "dup"));
	assert_null(strstr(strbuf_str(&sb), "toomany"));
	assert_non_null(strstr(strbuf_str(&sb), "# TYPE most gauge\n"));
	strbuf_free(&sb);
}

static void test_max_labels_exposition(void **state)
{
	struct metric_registry *r = *state;
	const char *const names[] = { "a", "b", "c", "d", "e", "f", "g", "h" };
	const char *const values[] = { "1", "2", "3", "4", "5", "6", "7", "8" };
	struct metric *m = metric_register(r, "wide", "w", METRIC_GAUGE, 0, 8, names);

	metric_set(m, values, 1);
	assert_output(r, "# HELP wide w\n# TYPE wide gauge\n"
			 "wide{a=\"1\",b=\"2\",c=\"3\",d=\"4\",e=\"5\",f=\"6\",g=\"7\",h=\"8\"} 1\n");
}

static void test_label_value_boundaries(void **state)
{
	struct metric_registry *r = *state;
	const char *const labels[] = { "x", "y" };
	struct metric *m = metric_register(r, "split", "s", METRIC_GAUGE, 0, 2, labels);

	/* Same concatenation, different split: distinct series. */
	metric_set(m, (const char *const[]){ "ab", "c" }, 1);
	metric_set(m, (const char *const[]){ "a", "bc" }, 2);
	metric_set(m, (const char *const[]){ "abc", "" }, 3);
	metric_set(m, (const char *const[]){ "", "abc" }, 4);
	metric_set(m, (const char *const[]){ "", "" }, 5);
	assert_int_equal(metric_series_count(m), 5);
	assert_true(metric_value(m, (const char *const[]){ "ab", "c" }) == 1);
	assert_true(metric_value(m, (const char *const[]){ "a", "bc" }) == 2);
	assert_true(metric_value(m, (const char *const[]){ "abc", "" }) == 3);
	assert_true(metric_value(m, (const char *const[]){ "", "abc" }) == 4);
	assert_true(metric_value(m, (const char *const[]){ "", "" }) == 5);

	/* Labels with a NULL value are refused, not counted as drops. */
	assert_null(metric_series_get(m, (const char *const[]){ "a", NULL }));
	assert_null(metric_series_get(m, NULL));
	assert_int_equal(metric_dropped(m), 0);
	assert_int_equal(metric_series_count(m), 5);
}

#define MANY 10000

static void test_many_series(void **state)
{
	struct metric_registry *r = *state;
	const char *const labels[] = { "id", "kind" };
	struct metric *m = metric_register(r, "many", "m", METRIC_GAUGE, 0, 2, labels);
	char id[16];

	for (int i = 0; i < MANY; i++) {
		snprintf(id, sizeof(id), "%d", i);
		metric_set(m, (const char *const[]){ id, i % 2 ? "odd" : "even" }, i);
	}
	assert_int_equal(metric_series_count(m), MANY);
	for (int i = 0; i < MANY; i++) {
		snprintf(id, sizeof(id), "%d", i);
		assert_true(metric_value(m, (const char *const[]){ id, i % 2 ? "odd" : "even" }) ==
			    i);
		assert_true(metric_value(m, (const char *const[]){ id, i % 2 ? "even" : "odd" }) ==
			    0);
	}
	/* Lookups found, not created. */
	assert_int_equal(metric_series_count(m), MANY);

	for (int i = 0; i < MANY; i += 2) {
		snprintf(id, sizeof(id), "%d", i);
		metric_remove(m, (const char *const[]){ id, "even" });
	}
	assert_int_equal(metric_series_count(m), MANY / 2);
	for (int i = 0; i < MANY; i++) {
		snprintf(id, sizeof(id), "%d", i);
		struct metric_series *s =
			metric_series_get(m, (const char *const[]){ id, i % 2 ? "odd" : "even" });

		assert_non_null(s);
		assert_true(metric_series_value(s) == (i % 2 ? i : 0));
	}
	assert_int_equal(metric_series_count(m), MANY);

	/* Exposition: odd ids in creation order, then re-created even ids. */
	struct strbuf expected = STRBUF_INIT;
	struct strbuf sb;

	strbuf_puts(&expected, "# HELP many m\n# TYPE many gauge\n");
	for (int i = 1; i < MANY; i += 2)
		strbuf_printf(&expected, "many{id=\"%d\",kind=\"odd\"} %d\n", i, i);
	for (int i = 0; i < MANY; i += 2)
		strbuf_printf(&expected, "many{id=\"%d\",kind=\"even\"} 0\n", i);
	write_all(r, &sb);
	assert_false(expected.oom);
	assert_string_equal(strbuf_str(&sb), strbuf_str(&expected));
	strbuf_free(&sb);
	strbuf_free(&expected);
}

static void test_many_series_capped(void **state)
{
	struct metric_registry *r = *state;
	const char *const labels[] = { "id" };
	struct metric *m = metric_register(r, "capped_many", "c", METRIC_COUNTER, 5000, 1, labels);
	char id[16];

	for (int i = 0; i < MANY; i++) {
		snprintf(id, sizeof(id), "%d", i);
		metric_add(m, (const char *const[]){ id }, 1);
	}
	assert_int_equal(metric_series_count(m), 5000);
	assert_int_equal(metric_dropped(m), MANY - 5000);

	struct strbuf sb;

	write_all(r, &sb);
	assert_non_null(strstr(strbuf_str(&sb), DROPS "{metric=\"capped_many\"} 5000\n"));
	strbuf_free(&sb);
}

struct collector_state {
	struct metric *gauge;
	struct metric *capped;
	int calls;
	int *order;
	int *n_order;
	int id;
};

static void collect(void *ctx)
{
	struct collector_state *c = ctx;

	c->calls++;
	c->order[(*c->n_order)++] = c->id;
	if (c->gauge)
		metric_set(c->gauge, NULL, c->calls * 10);
	if (c->capped) {
		char v[16];

		snprintf(v, sizeof(v), "%d", c->calls);
		metric_set(c->capped, (const char *const[]){ v }, c->calls);
	}
}

static void test_collectors(void **state)
{
	struct metric_registry *r = *state;
	struct metric *g = metric_register(r, "fresh", "f", METRIC_GAUGE, 0, 0, NULL);
	int order[8];
	int n_order = 0;
	struct collector_state a = { .gauge = g, .order = order, .n_order = &n_order, .id = 1 };
	struct collector_state b = { .order = order, .n_order = &n_order, .id = 2 };

	metric_registry_add_collector(r, collect, &a);
	metric_registry_add_collector(r, collect, &b);
	metric_registry_add_collector(r, NULL, &b); /* ignored */
	assert_int_equal(a.calls, 0);

	assert_output(r, "# HELP fresh f\n# TYPE fresh gauge\nfresh 10\n");
	assert_int_equal(a.calls, 1);
	assert_int_equal(b.calls, 1);
	assert_output(r, "# HELP fresh f\n# TYPE fresh gauge\nfresh 20\n");
	assert_int_equal(a.calls, 2);
	assert_int_equal(b.calls, 2);

	/* Registration order. */
	assert_int_equal(n_order, 4);
	assert_int_equal(order[0], 1);
	assert_int_equal(order[1], 2);
	assert_int_equal(order[2], 1);
	assert_int_equal(order[3], 2);
}

static void test_collector_drops_show_in_same_write(void **state)
{
	struct metric_registry *r = *state;
	const char *const labels[] = { "n" };
	struct metric *m = metric_register(r, "pulled", "p", METRIC_GAUGE, 1, 1, labels);
	int order[8];
	int n_order = 0;
	struct collector_state c = { .capped = m, .order = order, .n_order = &n_order };

	metric_registry_add_collector(r, collect, &c);
	assert_output(r, "# HELP pulled p\n# TYPE pulled gauge\npulled{n=\"1\"} 1\n");
	assert_output(r, "# HELP " DROPS " Series not created because the metric reached its "
			 "series cap.\n"
			 "# TYPE " DROPS " counter\n" DROPS "{metric=\"pulled\"} 1\n"
			 "# HELP pulled p\n# TYPE pulled gauge\npulled{n=\"1\"} 1\n");
}

static void test_many_collectors(void **state)
{
	struct metric_registry *r = *state;
	struct collector_state c[20];
	int order[40];
	int n_order = 0;

	for (int i = 0; i < 20; i++) {
		c[i] = (struct collector_state){ .order = order, .n_order = &n_order, .id = i };
		metric_registry_add_collector(r, collect, &c[i]);
	}
	assert_output(r, "");
	assert_int_equal(n_order, 20);
	for (int i = 0; i < 20; i++)
		assert_int_equal(order[i], i);
}

static void test_write_appends(void **state)
{
	struct metric_registry *r = *state;
	struct strbuf sb = STRBUF_INIT;

	metric_set(metric_register(r, "g", "h", METRIC_GAUGE, 0, 0, NULL), NULL, 1);
	strbuf_puts(&sb, "prefix\n");
	metric_registry_write(r, &sb);
	assert_string_equal(strbuf_str(&sb), "prefix\n# HELP g h\n# TYPE g gauge\ng 1\n");
	strbuf_free(&sb);
}

static void test_null_safe(void **state)
{
	struct metric_registry *r = *state;
	const char *const labels[] = { "k" };
	struct metric *m = metric_register(r, "m", "h", METRIC_GAUGE, 0, 1, labels);
	struct strbuf sb = STRBUF_INIT;

	metric_series_add(NULL, 1);
	metric_series_set(NULL, 1);
	assert_true(metric_series_value(NULL) == 0);

	assert_null(metric_series_get(NULL, (const char *const[]){ "v" }));
	metric_add(NULL, (const char *const[]){ "v" }, 1);
	metric_set(NULL, (const char *const[]){ "v" }, 1);
	metric_remove(NULL, NULL);
	assert_true(metric_value(NULL, NULL) == 0);
	assert_int_equal(metric_series_count(NULL), 0);
	assert_int_equal(metric_dropped(NULL), 0);

	/* metric_value on an absent series does not create it. */
	assert_true(metric_value(m, (const char *const[]){ "absent" }) == 0);
	assert_true(metric_value(m, NULL) == 0);
	assert_int_equal(metric_series_count(m), 0);
	metric_add(m, NULL, 1);
	metric_set(m, (const char *const[]){ NULL }, 1);
	assert_int_equal(metric_series_count(m), 0);

	metric_registry_add_collector(NULL, collect, NULL);
	metric_registry_write(NULL, &sb);
	metric_registry_write(r, NULL);
	assert_int_equal(sb.len, 0);
	metric_registry_free(NULL);
}

static void test_independent_registries(void **state)
{
	struct metric_registry *r = *state;
	struct metric_registry *r2 = metric_registry_new();
	struct metric *a = metric_register(r, "same", "one", METRIC_GAUGE, 0, 0, NULL);
	struct metric *b = metric_register(r2, "same", "two", METRIC_COUNTER, 0, 0, NULL);

	assert_non_null(r2);
	assert_non_null(a);
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	metric_set(a, NULL, 1);
	metric_add(b, NULL, 2);
	assert_output(r, "# HELP same one\n# TYPE same gauge\nsame 1\n");
	assert_output(r2, "# HELP same two\n# TYPE same counter\nsame 2\n");
	metric_registry_free(r2);
}

/* ---- histograms ---- */

static const double coroot_bounds[] = { 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
					0.5,   1,    2.5,   5,    10 };
#define N_COROOT (sizeof(coroot_bounds) / sizeof(coroot_bounds[0]))

static void test_histogram_exposition_labels(void **state)
{
	struct metric_registry *r = *state;
	const char *const labels[] = { "service", "path" };
	const double bounds[] = { 0.1, 1, 10 };
	struct metric *h = metric_register_histogram(r, "rpc_seconds", "RPC latency.", 0, 2, labels,
						     bounds, 3);
	struct metric *g = metric_register(r, "after", "a", METRIC_GAUGE, 0, 0, NULL);

	assert_non_null(h);
	metric_set(g, NULL, 1);
	metric_observe(h, (const char *const[]){ "api", "/a" }, 0.0625);
	metric_observe(h, (const char *const[]){ "api", "/a" }, 0.5);
	metric_observe(h, (const char *const[]){ "db", "q\"1\"" }, 2);
	metric_observe(h, (const char *const[]){ "api", "/a" }, 0.5);
	metric_observe(h, (const char *const[]){ "api", "/a" }, 20);
	assert_int_equal(metric_series_count(h), 2);

	assert_output(r, "# HELP rpc_seconds RPC latency.\n"
			 "# TYPE rpc_seconds histogram\n"
			 "rpc_seconds_bucket{service=\"api\",path=\"/a\",le=\"0.1\"} 1\n"
			 "rpc_seconds_bucket{service=\"api\",path=\"/a\",le=\"1\"} 3\n"
			 "rpc_seconds_bucket{service=\"api\",path=\"/a\",le=\"10\"} 3\n"
			 "rpc_seconds_bucket{service=\"api\",path=\"/a\",le=\"+Inf\"} 4\n"
			 "rpc_seconds_sum{service=\"api\",path=\"/a\"} 21.0625\n"
			 "rpc_seconds_count{service=\"api\",path=\"/a\"} 4\n"
			 "rpc_seconds_bucket{service=\"db\",path=\"q\\\"1\\\"\",le=\"0.1\"} 0\n"
			 "rpc_seconds_bucket{service=\"db\",path=\"q\\\"1\\\"\",le=\"1\"} 0\n"
			 "rpc_seconds_bucket{service=\"db\",path=\"q\\\"1\\\"\",le=\"10\"} 1\n"
			 "rpc_seconds_bucket{service=\"db\",path=\"q\\\"1\\\"\",le=\"+Inf\"} 1\n"
			 "rpc_seconds_sum{service=\"db\",path=\"q\\\"1\\\"\"} 2\n"
			 "rpc_seconds_count{service=\"db\",path=\"q\\\"1\\\"\"} 1\n"
			 "# HELP after a\n"
			 "# TYPE after gauge\n"
			 "after 1\n");
}

static void test_histogram_exposition_unlabelled(void **state)
{
	struct metric_registry *r = *state;
	const double bounds[] = { 0.25, 0.5 };
	/* Coroot-style name: suffixes go after whatever name is given. */
	struct metric *h = metric_register_histogram(
		r, "container_http_requests_duration_seconds_total", "Durations.", 0, 0, NULL,
		bounds, 2);

	assert_non_null(h);
	/* No series yet: HELP and TYPE only. */
	assert_output(r, "# HELP container_http_requests_duration_seconds_total Durations.\n"
			 "# TYPE container_http_requests_duration_seconds_total histogram\n");

	metric_observe(h, NULL, 0.375);
	metric_observe(h, NULL, 0.125);
	assert_output(r, "# HELP container_http_requests_duration_seconds_total Durations.\n"
			 "# TYPE container_http_requests_duration_seconds_total histogram\n"
			 "container_http_requests_duration_seconds_total_bucket{le=\"0.25\"} 1\n"
			 "container_http_requests_duration_seconds_total_bucket{le=\"0.5\"} 2\n"
			 "container_http_requests_duration_seconds_total_bucket{le=\"+Inf\"} 2\n"
			 "container_http_requests_duration_seconds_total_sum 0.5\n"
			 "container_http_requests_duration_seconds_total_count 2\n");
}

static void test_histogram_empty_series_and_no_bounds(void **state)
{
	struct metric_registry *r = *state;
	const double bounds[] = { 1 };
	struct metric *h = metric_register_histogram(r, "h", "h", 0, 1,
						     (const char *const[]){ "k" }, bounds, 1);
	/* n_bounds 0: only the implied +Inf bucket. */
	struct metric *inf = metric_register_histogram(r, "inf", "i", 0, 0, NULL, NULL, 0);

	assert_non_null(h);
	assert_non_null(inf);
	/* A series obtained with metric_series_get is an empty histogram. */
	assert_non_null(metric_series_get(h, (const char *const[]){ "v" }));
	metric_observe(inf, NULL, 3);
	metric_observe(inf, NULL, -1);
	assert_output(r, "# HELP h h\n# TYPE h histogram\n"
			 "h_bucket{k=\"v\",le=\"1\"} 0\n"
			 "h_bucket{k=\"v\",le=\"+Inf\"} 0\n"
			 "h_sum{k=\"v\"} 0\n"
			 "h_count{k=\"v\"} 0\n"
			 "# HELP inf i\n# TYPE inf histogram\n"
			 "inf_bucket{le=\"+Inf\"} 2\n"
			 "inf_sum 2\n"
			 "inf_count 2\n");
}

static void test_histogram_boundaries(void **state)
{
	struct metric_registry *r = *state;
	const double bounds[] = { -1, 0, 0.1, 2.5 };
	struct metric *h = metric_register_histogram(r, "b", "b", 0, 1,
						     (const char *const[]){ "case" }, bounds, 4);

	assert_non_null(h);
	/* Equal to a bound: that bucket. Just above: the next one. */
	metric_observe(h, (const char *const[]){ "eq" }, -1);
	metric_observe(h, (const char *const[]){ "eq" }, 0);
	metric_observe(h, (const char *const[]){ "eq" }, -0.0);
	metric_observe(h, (const char *const[]){ "eq" }, 0.1);
	metric_observe(h, (const char *const[]){ "eq" }, 2.5);
	metric_observe(h, (const char *const[]){ "above" }, nextafter(-1, 0));
	metric_observe(h, (const char *const[]){ "above" }, nextafter(0.1, 1));
	metric_observe(h, (const char *const[]){ "above" }, nextafter(2.5, 3));
	metric_observe(h, (const char *const[]){ "above" }, 1e300);
	metric_observe(h, (const char *const[]){ "inf" }, INFINITY);
	metric_observe(h, (const char *const[]){ "ninf" }, -INFINITY);
	metric_observe(h, (const char *const[]){ "ninf" }, -2);
	metric_observe(h, (const char *const[]){ "nan" }, NAN);

	assert_output(r, "# HELP b b\n# TYPE b histogram\n"
			 "b_bucket{case=\"eq\",le=\"-1\"} 1\n"
			 "b_bucket{case=\"eq\",le=\"0\"} 3\n"
			 "b_bucket{case=\"eq\",le=\"0.1\"} 4\n"
			 "b_bucket{case=\"eq\",le=\"2.5\"} 5\n"
			 "b_bucket{case=\"eq\",le=\"+Inf\"} 5\n"
			 "b_sum{case=\"eq\"} 1.6000000000000001\n"
			 "b_count{case=\"eq\"} 5\n"
			 "b_bucket{case=\"above\",le=\"-1\"} 0\n"
			 "b_bucket{case=\"above\",le=\"0\"} 1\n"
			 "b_bucket{case=\"above\",le=\"0.1\"} 1\n"
			 "b_bucket{case=\"above\",le=\"2.5\"} 2\n"
			 "b_bucket{case=\"above\",le=\"+Inf\"} 4\n"
			 "b_sum{case=\"above\"} 1.0000000000000001e+300\n"
			 "b_count{case=\"above\"} 4\n"
			 "b_bucket{case=\"inf\",le=\"-1\"} 0\n"
			 "b_bucket{case=\"inf\",le=\"0\"} 0\n"
			 "b_bucket{case=\"inf\",le=\"0.1\"} 0\n"
			 "b_bucket{case=\"inf\",le=\"2.5\"} 0\n"
			 "b_bucket{case=\"inf\",le=\"+Inf\"} 1\n"
			 "b_sum{case=\"inf\"} +Inf\n"
			 "b_count{case=\"inf\"} 1\n"
			 "b_bucket{case=\"ninf\",le=\"-1\"} 2\n"
			 "b_bucket{case=\"ninf\",le=\"0\"} 2\n"
			 "b_bucket{case=\"ninf\",le=\"0.1\"} 2\n"
			 "b_bucket{case=\"ninf\",le=\"2.5\"} 2\n"
			 "b_bucket{case=\"ninf\",le=\"+Inf\"} 2\n"
			 "b_sum{case=\"ninf\"} -Inf\n"
			 "b_count{case=\"ninf\"} 2\n"
			 /* NaN is above no bound: counted in +Inf only (as client_golang). */
			 "b_bucket{case=\"nan\",le=\"-1\"} 0\n"
			 "b_bucket{case=\"nan\",le=\"0\"} 0\n"
			 "b_bucket{case=\"nan\",le=\"0.1\"} 0\n"
			 "b_bucket{case=\"nan\",le=\"2.5\"} 0\n"
			 "b_bucket{case=\"nan\",le=\"+Inf\"} 1\n"
			 "b_sum{case=\"nan\"} NaN\n"
			 "b_count{case=\"nan\"} 1\n");
}

static void test_histogram_sum_and_count(void **state)
{
	struct metric_registry *r = *state;
	const char *const labels[] = { "k" };
	struct metric *h = metric_register_histogram(r, "sc", "s", 0, 1, labels, coroot_bounds,
						     N_COROOT);
	const char *const a[] = { "a" };
	const char *const b[] = { "b" };

	assert_non_null(h);
	assert_int_equal(metric_histogram_count(h, a), 0);
	for (int i = 1; i <= 1000; i++)
		metric_observe(h, a, i / 64.0); /* exact in binary */
	metric_observe(h, b, 7);
	assert_int_equal(metric_histogram_count(h, a), 1000);
	assert_int_equal(metric_histogram_count(h, b), 1);
	assert_int_equal(metric_histogram_count(h, (const char *const[]){ "absent" }), 0);
	assert_int_equal(metric_series_count(h), 2); /* the lookup created nothing */
	/* metric_value of a histogram series is its sum. */
	assert_true(metric_value(h, a) == 1000.0 * 1001 / 2 / 64);
	assert_true(metric_value(h, b) == 7);

	struct strbuf sb;

	write_all(r, &sb);
	/* i/64 <= 10 for i <= 640; <= 0.005 for none; <= 0.025 for i = 1. */
	assert_non_null(strstr(strbuf_str(&sb), "sc_bucket{k=\"a\",le=\"0.005\"} 0\n"
						"sc_bucket{k=\"a\",le=\"0.01\"} 0\n"
						"sc_bucket{k=\"a\",le=\"0.025\"} 1\n"
						"sc_bucket{k=\"a\",le=\"0.05\"} 3\n"
						"sc_bucket{k=\"a\",le=\"0.1\"} 6\n"
						"sc_bucket{k=\"a\",le=\"0.25\"} 16\n"
						"sc_bucket{k=\"a\",le=\"0.5\"} 32\n"
						"sc_bucket{k=\"a\",le=\"1\"} 64\n"
						"sc_bucket{k=\"a\",le=\"2.5\"} 160\n"
						"sc_bucket{k=\"a\",le=\"5\"} 320\n"
						"sc_bucket{k=\"a\",le=\"10\"} 640\n"
						"sc_bucket{k=\"a\",le=\"+Inf\"} 1000\n"
						"sc_sum{k=\"a\"} 7820.3125\n"
						"sc_count{k=\"a\"} 1000\n"));
	strbuf_free(&sb);

	/* NULL-safe, wrong arity and non-histograms: 0. */
	struct metric *c = metric_register(r, "ctr", "c", METRIC_COUNTER, 0, 1, labels);

	metric_add(c, a, 5);
	assert_int_equal(metric_histogram_count(c, a), 0);
	assert_int_equal(metric_histogram_count(NULL, a), 0);
	assert_int_equal(metric_histogram_count(h, NULL), 0);
	assert_int_equal(metric_histogram_count(h, (const char *const[]){ NULL }), 0);
	metric_observe(NULL, a, 1);
	metric_observe(h, NULL, 1);
	assert_int_equal(metric_series_count(h), 2);
}

static void test_histogram_type_isolation(void **state)
{
	struct metric_registry *r = *state;
	const char *const labels[] = { "k" };
	const double bounds[] = { 1 };
	struct metric *h = metric_register_histogram(r, "iso", "i", 1, 1, labels, bounds, 1);
	struct metric *c = metric_register(r, "iso_c", "c", METRIC_COUNTER, 0, 1, labels);
	struct metric *g = metric_register(r, "iso_g", "g", METRIC_GAUGE, 1, 1, labels);

	/* add/set on a histogram: no series, no drop, no change. */
	metric_add(h, (const char *const[]){ "x" }, 1);
	metric_set(h, (const char *const[]){ "x" }, 1);
	assert_int_equal(metric_series_count(h), 0);
	metric_observe(h, (const char *const[]){ "x" }, 0.5);
	metric_add(h, (const char *const[]){ "x" }, 100);
	metric_set(h, (const char *const[]){ "x" }, 100);
	metric_add(h, (const char *const[]){ "y" }, 1); /* would be over the cap */
	assert_int_equal(metric_dropped(h), 0);
	assert_true(metric_value(h, (const char *const[]){ "x" }) == 0.5);

	/* The series handle of a histogram ignores add/set too. */
	struct metric_series *s = metric_series_get(h, (const char *const[]){ "x" });

	assert_non_null(s);
	metric_series_add(s, 1);
	metric_series_set(s, 9);
	assert_true(metric_series_value(s) == 0.5);
	assert_int_equal(metric_histogram_count(h, (const char *const[]){ "x" }), 1);

	/* observe on a counter or gauge: no series, no drop. */
	metric_observe(c, (const char *const[]){ "x" }, 1);
	metric_add(g, (const char *const[]){ "x" }, 2);
	metric_observe(g, (const char *const[]){ "x" }, 1);
	metric_observe(g, (const char *const[]){ "y" }, 1);
	assert_int_equal(metric_series_count(c), 0);
	assert_int_equal(metric_dropped(g), 0);
	assert_true(metric_value(g, (const char *const[]){ "x" }) == 2);

	/* le stays a valid label name outside histograms. */
	assert_non_null(metric_register(r, "le_gauge", "l", METRIC_GAUGE, 0, 1,
					(const char *const[]){ "le" }));

	assert_output(r, "# HELP iso i\n# TYPE iso histogram\n"
			 "iso_bucket{k=\"x\",le=\"1\"} 1\n"
			 "iso_bucket{k=\"x\",le=\"+Inf\"} 1\n"
			 "iso_sum{k=\"x\"} 0.5\n"
			 "iso_count{k=\"x\"} 1\n"
			 "# HELP iso_c c\n# TYPE iso_c counter\n"
			 "# HELP iso_g g\n# TYPE iso_g gauge\n"
			 "iso_g{k=\"x\"} 2\n"
			 "# HELP le_gauge l\n# TYPE le_gauge gauge\n");
}

static void test_histogram_cap_and_drops(void **state)
{
	struct metric_registry *r = *state;
	const char *const labels[] = { "pid" };
	const double bounds[] = { 1 };
	struct metric *h = metric_register_histogram(r, "lat", "l", 2, 1, labels, bounds, 1);

	assert_non_null(h);
	metric_observe(h, (const char *const[]){ "1" }, 0.5);
	metric_observe(h, (const char *const[]){ "2" }, 2);
	metric_observe(h, (const char *const[]){ "3" }, 0.5);
	metric_observe(h, (const char *const[]){ "4" }, 0.5);
	assert_null(metric_series_get(h, (const char *const[]){ "5" }));
	/* Existing series still take observations at the cap. */
	metric_observe(h, (const char *const[]){ "1" }, 0.25);
	assert_int_equal(metric_series_count(h), 2);
	assert_int_equal(metric_dropped(h), 3);
	assert_int_equal(metric_histogram_count(h, (const char *const[]){ "1" }), 2);
	assert_int_equal(metric_histogram_count(h, (const char *const[]){ "3" }), 0);

	assert_output(r, "# HELP " DROPS " Series not created because the metric reached its "
			 "series cap.\n"
			 "# TYPE " DROPS " counter\n" DROPS "{metric=\"lat\"} 3\n"
			 "# HELP lat l\n# TYPE lat histogram\n"
			 "lat_bucket{pid=\"1\",le=\"1\"} 2\n"
			 "lat_bucket{pid=\"1\",le=\"+Inf\"} 2\n"
			 "lat_sum{pid=\"1\"} 0.75\n"
			 "lat_count{pid=\"1\"} 2\n"
			 "lat_bucket{pid=\"2\",le=\"1\"} 0\n"
			 "lat_bucket{pid=\"2\",le=\"+Inf\"} 1\n"
			 "lat_sum{pid=\"2\"} 2\n"
			 "lat_count{pid=\"2\"} 1\n");

	/* Removing a histogram series frees its slot; re-created ones start empty. */
	metric_remove(h, (const char *const[]){ "1" });
	assert_int_equal(metric_series_count(h), 1);
	assert_int_equal(metric_histogram_count(h, (const char *const[]){ "1" }), 0);
	metric_observe(h, (const char *const[]){ "3" }, 3);
	metric_observe(h, (const char *const[]){ "1" }, 0.5);
	assert_int_equal(metric_dropped(h), 4);
	metric_remove(h, (const char *const[]){ "2" });
	metric_observe(h, (const char *const[]){ "1" }, 0.5);
	assert_int_equal(metric_series_count(h), 2);
	assert_int_equal(metric_dropped(h), 4);
	assert_output(r, "# HELP " DROPS " Series not created because the metric reached its "
			 "series cap.\n"
			 "# TYPE " DROPS " counter\n" DROPS "{metric=\"lat\"} 4\n"
			 "# HELP lat l\n# TYPE lat histogram\n"
			 "lat_bucket{pid=\"3\",le=\"1\"} 0\n"
			 "lat_bucket{pid=\"3\",le=\"+Inf\"} 1\n"
			 "lat_sum{pid=\"3\"} 3\n"
			 "lat_count{pid=\"3\"} 1\n"
			 "lat_bucket{pid=\"1\",le=\"1\"} 1\n"
			 "lat_bucket{pid=\"1\",le=\"+Inf\"} 1\n"
			 "lat_sum{pid=\"1\"} 0.5\n"
			 "lat_count{pid=\"1\"} 1\n");
}

static void test_histogram_many_series(void **state)
{
	struct metric_registry *r = *state;
	const char *const labels[] = { "id" };
	struct metric *h = metric_register_histogram(r, "hm", "h", 0, 1, labels, coroot_bounds,
						     N_COROOT);
	char id[16];

	for (int i = 0; i < MANY; i++) {
		snprintf(id, sizeof(id), "%d", i);
		for (int j = 0; j <= i % 3; j++)
			metric_observe(h, (const char *const[]){ id }, i / 1000.0);
	}
	assert_int_equal(metric_series_count(h), MANY);
	for (int i = 0; i < MANY; i += 2) {
		snprintf(id, sizeof(id), "%d", i);
		metric_remove(h, (const char *const[]){ id });
	}
	for (int i = 0; i < MANY; i++) {
		snprintf(id, sizeof(id), "%d", i);
		assert_int_equal(metric_histogram_count(h, (const char *const[]){ id }),
				 i % 2 ? i % 3 + 1 : 0);
	}
}

static void test_histogram_invalid(void **state)
{
	struct metric_registry *r = *state;
	const char *const labels[] = { "a", "b" };
	const double ok[] = { 1, 2 };
	double many[METRIC_MAX_BUCKETS + 1];

	for (unsigned i = 0; i <= METRIC_MAX_BUCKETS; i++)
		many[i] = i;

	/* le as a label name, anywhere. */
	assert_null(metric_register_histogram(r, "h1", "h", 0, 1, (const char *const[]){ "le" },
					      ok, 2));
	assert_null(metric_register_histogram(r, "h2", "h", 0, 2,
					      (const char *const[]){ "a", "le" }, ok, 2));
	/* Bounds not strictly increasing, or not finite. */
	assert_null(metric_register_histogram(r, "h3", "h", 0, 0, NULL, (const double[]){ 2, 1 },
					      2));
	assert_null(metric_register_histogram(r, "h4", "h", 0, 0, NULL,
					      (const double[]){ 1, 1 }, 2));
	assert_null(metric_register_histogram(r, "h5", "h", 0, 0, NULL,
					      (const double[]){ -0.0, 0.0 }, 2));
	assert_null(metric_register_histogram(r, "h6", "h", 0, 0, NULL,
					      (const double[]){ 1, NAN }, 2));
	assert_null(metric_register_histogram(r, "h7", "h", 0, 0, NULL,
					      (const double[]){ NAN }, 1));
	assert_null(metric_register_histogram(r, "h8", "h", 0, 0, NULL,
					      (const double[]){ 1, INFINITY }, 2));
	assert_null(metric_register_histogram(r, "h9", "h", 0, 0, NULL,
					      (const double[]){ -INFINITY, 1 }, 2));
	/* Too many bounds, NULL bounds. */
	assert_null(metric_register_histogram(r, "h10", "h", 0, 0, NULL, many,
					      METRIC_MAX_BUCKETS + 1));
	assert_null(metric_register_histogram(r, "h11", "h", 0, 0, NULL, NULL, 1));
	/* The usual name and label checks. */
	assert_null(metric_register_histogram(r, "1bad", "h", 0, 0, NULL, ok, 2));
	assert_null(metric_register_histogram(r, NULL, "h", 0, 0, NULL, ok, 2));
	assert_null(metric_register_histogram(NULL, "h12", "h", 0, 0, NULL, ok, 2));
	assert_null(metric_register_histogram(r, "h13", "h", 0, 2,
					      (const char *const[]){ "x", "x" }, ok, 2));
	assert_null(metric_register_histogram(r, "h14", "h", 0, 1,
					      (const char *const[]){ "__x" }, ok, 2));
	assert_null(metric_register_histogram(r, "h15", "h", 0, 1, NULL, ok, 2));
	assert_null(metric_register_histogram(r, "h16", "h", 0, METRIC_MAX_LABELS + 1,
					      (const char *const[]){ "a", "b", "c", "d", "e", "f",
								     "g", "h", "i", "j", "k", "l",
								     "m" },
					      ok, 2));
	/* metric_register() does not make histograms. */
	assert_null(metric_register(r, "h17", "h", METRIC_HISTOGRAM, 0, 0, NULL));

	/* The limit itself is fine. */
	assert_non_null(metric_register_histogram(r, "sixteen", "h", 0, 0, NULL, many,
						  METRIC_MAX_BUCKETS));

	/* Re-registration: same everything returns the family, else NULL. */
	struct metric *h = metric_register_histogram(r, "fam", "h", 0, 2, labels, ok, 2);

	assert_non_null(h);
	assert_ptr_equal(metric_register_histogram(r, "fam", "other", 5, 2, labels,
						   (const double[]){ 1, 2 }, 2),
			 h);
	assert_null(metric_register_histogram(r, "fam", "h", 0, 2, labels,
					      (const double[]){ 1, 3 }, 2));
	assert_null(metric_register_histogram(r, "fam", "h", 0, 2, labels, ok, 1));
	assert_null(metric_register_histogram(r, "fam", "h", 0, 1, labels, ok, 2));
	assert_null(metric_register_histogram(r, "fam", "h", 0, 2,
					      (const char *const[]){ "b", "a" }, ok, 2));
	assert_null(metric_register(r, "fam", "h", METRIC_COUNTER, 0, 2, labels));
	assert_null(metric_register(r, "fam", "h", METRIC_GAUGE, 0, 2, labels));
	assert_non_null(metric_register(r, "gauge", "g", METRIC_GAUGE, 0, 0, NULL));
	assert_null(metric_register_histogram(r, "gauge", "g", 0, 0, NULL, ok, 2));

	/* Rejected registrations left nothing behind. */
	struct strbuf sb;

	write_all(r, &sb);
	assert_string_equal(strbuf_str(&sb), "# HELP sixteen h\n# TYPE sixteen histogram\n"
					     "# HELP fam h\n# TYPE fam histogram\n"
					     "# HELP gauge g\n# TYPE gauge gauge\n");
	strbuf_free(&sb);
}

/* The le values a one-observation unlabelled histogram with these bounds prints. */
static void assert_le_text(struct metric_registry *r, const double *bounds, unsigned n,
			   const char *const *texts)
{
	struct metric *h = metric_register_histogram(r, "le_fmt", "h", 0, 0, NULL, bounds, n);
	struct strbuf expected = STRBUF_INIT;

	assert_non_null(h);
	metric_observe(h, NULL, 0);
	strbuf_puts(&expected, "# HELP le_fmt h\n# TYPE le_fmt histogram\n");
	for (unsigned i = 0; i < n; i++)
		strbuf_printf(&expected, "le_fmt_bucket{le=\"%s\"} %d\n", texts[i],
			      bounds[i] >= 0 ? 1 : 0);
	strbuf_puts(&expected, "le_fmt_bucket{le=\"+Inf\"} 1\nle_fmt_sum 0\nle_fmt_count 1\n");
	assert_false(expected.oom);
	assert_output(r, strbuf_str(&expected));
	strbuf_free(&expected);
}

static void test_histogram_le_coroot_defaults(void **state)
{
	static const char *const texts[] = { "0.005", "0.01", "0.025", "0.05", "0.1", "0.25",
					     "0.5",   "1",    "2.5",   "5",    "10" };

	assert_le_text(*state, coroot_bounds, N_COROOT, texts);
}

static void test_histogram_le_formatting(void **state)
{
	/* As Go's strconv.FormatFloat(v, 'g', -1, 64): shortest round trip, exponent
	 * form below 1e-4 and from 1e6 on. */
	static const double bounds[] = { -1e6,	  -2.5, -0.0,  1e-5,   0.0001, 0.3,
					 1.0 / 3, 100,	123456, 999999, 1e6,	1234567 };
	static const char *const texts[] = { "-1e+06", "-2.5",	 "0",	   "1e-05",
					     "0.0001", "0.3",	 "0.3333333333333333",
					     "100",    "123456", "999999", "1e+06",
					     "1.234567e+06" };

	assert_le_text(*state, bounds, sizeof(bounds) / sizeof(bounds[0]), texts);
}

static void test_histogram_le_extremes(void **state)
{
	/* 2^-24: the nearest 16-digit decimal does not round-trip, its neighbour does. */
	static const double bounds[] = { 5e-324, 2.2250738585072014e-308, 5.9604644775390625e-08,
					 0.1 + 0.2, 1e21, 1.7976931348623157e308 };
	static const char *const texts[] = { "5e-324",
					     "2.2250738585072014e-308",
					     "5.960464477539063e-08",
					     "0.30000000000000004",
					     "1e+21",
					     "1.7976931348623157e+308" };

	assert_le_text(*state, bounds, sizeof(bounds) / sizeof(bounds[0]), texts);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

/* A bound counter shows its variable's value at each exposition. */
static void test_register_u64(void **state)
{
	struct metric_registry *r = *state;
	uint64_t n = 3;

	assert_int_equal(metric_register_u64(r, "x_total", "X.", METRIC_COUNTER, &n), 0);
	assert_output(r, "# HELP x_total X.\n# TYPE x_total counter\nx_total 3\n");
	n = 12345678901ull;
	assert_output(r, "# HELP x_total X.\n# TYPE x_total counter\nx_total 12345678901\n");
	assert_int_equal(metric_register_u64(r, "y", "Y.", METRIC_COUNTER, NULL), -EINVAL);
	assert_int_equal(metric_register_u64(r, "bad name", "Y.", METRIC_GAUGE, &n), -EINVAL);
	assert_int_equal(metric_register_u64(r, "h", "H.", METRIC_HISTOGRAM, &n), -EINVAL);
}

/* The node's identity on every series: plain, labelled and histogram ones. */
static void test_const_labels(void **state)
{
	struct metric_registry *r = *state;
	const char *const names[] = { "machine_id", "system_uuid" };
	const char *const values[] = { "ab12", "x\"y" };
	const char *const label[] = { "code" };
	const double bounds[] = { 1 };

	assert_int_equal(metric_registry_set_const_labels(r, NULL, 2, names, values), 0);
	metric_set(metric_register(r, "up", "Up.", METRIC_GAUGE, 0, 0, NULL), NULL, 1);
	metric_add(metric_register(r, "req_total", "R.", METRIC_COUNTER, 0, 1, label),
		   (const char *const[]){ "200" }, 2);
	metric_observe(metric_register_histogram(r, "d", "D.", 0, 0, NULL, bounds, 1), NULL, 0.5);
	assert_output(r, "# HELP up Up.\n# TYPE up gauge\n"
			 "up{machine_id=\"ab12\",system_uuid=\"x\\\"y\"} 1\n"
			 "# HELP req_total R.\n# TYPE req_total counter\n"
			 "req_total{machine_id=\"ab12\",system_uuid=\"x\\\"y\",code=\"200\"} 2\n"
			 "# HELP d D.\n# TYPE d histogram\n"
			 "d_bucket{machine_id=\"ab12\",system_uuid=\"x\\\"y\",le=\"1\"} 1\n"
			 "d_bucket{machine_id=\"ab12\",system_uuid=\"x\\\"y\",le=\"+Inf\"} 1\n"
			 "d_sum{machine_id=\"ab12\",system_uuid=\"x\\\"y\"} 0.5\n"
			 "d_count{machine_id=\"ab12\",system_uuid=\"x\\\"y\"} 1\n");
	assert_int_equal(metric_registry_set_const_labels(r, NULL, 1, (const char *const[]){ "bad-name" },
							  values), -EINVAL);
	assert_int_equal(metric_registry_set_const_labels(r, NULL, 0, NULL, NULL), 0);
	assert_output(r, "# HELP up Up.\n# TYPE up gauge\nup 1\n"
			 "# HELP req_total R.\n# TYPE req_total counter\nreq_total{code=\"200\"} 2\n"
			 "# HELP d D.\n# TYPE d histogram\nd_bucket{le=\"1\"} 1\n"
			 "d_bucket{le=\"+Inf\"} 1\nd_sum 0.5\nd_count 1\n");
}

/* A second set for some prefixes only (az, region on container_ series and ip_to_fqdn). */
static void test_prefix_labels(void **state)
{
	struct metric_registry *r = *state;
	const char *const node[] = { "machine_id" }, *const node_v[] = { "m" };
	const char *const zone[] = { "az", "region" }, *const zone_v[] = { "a1", "r1" };

	assert_int_equal(metric_registry_set_const_labels(r, NULL, 1, node, node_v), 0);
	const char *const zoned[] = { "container_", "ip_to_fqdn", NULL };
	assert_int_equal(metric_registry_set_const_labels(r, zoned, 2, zone, zone_v), 0);
	metric_set(metric_register(r, "node_x", "N.", METRIC_GAUGE, 0, 0, NULL), NULL, 1);
	metric_set(metric_register(r, "container_y", "C.", METRIC_GAUGE, 0, 1,
				   (const char *const[]){ "container_id" }),
		   (const char *const[]){ "/a" }, 2);
	metric_set(metric_register(r, "ip_to_fqdn", "F.", METRIC_GAUGE, 0, 1,
				   (const char *const[]){ "ip" }),
		   (const char *const[]){ "10.0.0.1" }, 1);
	assert_output(r, "# HELP node_x N.\n# TYPE node_x gauge\nnode_x{machine_id=\"m\"} 1\n"
			 "# HELP container_y C.\n# TYPE container_y gauge\n"
			 "container_y{machine_id=\"m\",az=\"a1\",region=\"r1\",container_id=\"/a\"} 2\n"
			 "# HELP ip_to_fqdn F.\n# TYPE ip_to_fqdn gauge\n"
			 "ip_to_fqdn{machine_id=\"m\",az=\"a1\",region=\"r1\",ip=\"10.0.0.1\"} 1\n");
}

static void app_of(const char *container, char *out, size_t len)
{
	snprintf(out, len, "%s", !strncmp(container, "/k8s/", 5) ? "/k8s/app" : "");
}

/* app_id written from container_id at exposition, in every family that has container_id. */
static void test_derived_label(void **state)
{
	struct metric_registry *r = *state;

	assert_int_equal(metric_registry_derive_label(r, "container_id", "app_id", app_of), 0);
	struct metric *m = metric_register(r, "c_total", "C.", METRIC_COUNTER, 0, 2,
					   (const char *const[]){ "container_id", "status" });
	metric_add(m, (const char *const[]){ "/k8s/ns/pod/c", "ok" }, 1);
	metric_add(m, (const char *const[]){ "/", "ok" }, 2);
	metric_set(metric_register(r, "n", "N.", METRIC_GAUGE, 0, 0, NULL), NULL, 3);
	assert_output(r, "# HELP c_total C.\n# TYPE c_total counter\n"
			 "c_total{container_id=\"/k8s/ns/pod/c\",app_id=\"/k8s/app\",status=\"ok\"} 1\n"
			 "c_total{container_id=\"/\",app_id=\"\",status=\"ok\"} 2\n"
			 "# HELP n N.\n# TYPE n gauge\nn 3\n");
	assert_int_equal(metric_registry_derive_label(r, "bad-name", "app_id", app_of), -EINVAL);
}

static bool admit_not_root(void *ctx, const char *v)
{
	(*(int *)ctx)++;
	return strcmp(v, "/");
}

static bool show_not_young(void *ctx, const char *v, uint64_t now_ns)
{
	return strcmp(v, "/young") || now_ns >= 100;
}

/* The label policy: refused values make no series (counted); hidden ones stay but are not written. */
static void test_label_policy(void **state)
{
	struct metric_registry *r = *state;
	int asked = 0;
	struct metric_label_policy p = { admit_not_root, show_not_young, &asked };

	struct metric *m = metric_register(r, "c_total", "C.", METRIC_COUNTER, 0, 2,
					   (const char *const[]){ "d", "container_id" });
	struct metric *other = metric_register(r, "o", "O.", METRIC_GAUGE, 0, 1,
					       (const char *const[]){ "d" });
	assert_int_equal(metric_registry_set_label_policy(r, "container_id", &p), 0);
	assert_int_equal(metric_registry_set_label_policy(r, "container_id", &p), -EINVAL);
	metric_add(m, (const char *const[]){ "x", "/" }, 1);
	metric_add(m, (const char *const[]){ "x", "/" }, 1);
	metric_add(m, (const char *const[]){ "x", "/young" }, 2);
	metric_add(m, (const char *const[]){ "x", "/young" }, 2);
	metric_set(other, (const char *const[]){ "/" }, 5); /* no container_id: not asked */
	assert_int_equal(metric_series_count(m), 1);
	metric_add(m, (const char *const[]){ "y", "/" }, 1); /* another series of a value refused */
	assert_int_equal(asked, 2); /* once per value (admit answers the same every time) */
	assert_int_equal(metric_value(m, (const char *const[]){ "x", "/young" }), 4);
	struct strbuf out = { 0 };
	metric_registry_write_at(r, &out, 50);
	assert_non_null(strstr(strbuf_str(&out), "nodescope_metric_updates_unreported_total 3\n"));
	assert_null(strstr(strbuf_str(&out), "/young"));
	assert_non_null(strstr(strbuf_str(&out), "o{d=\"/\"} 5\n"));
	strbuf_reset(&out);
	metric_registry_write_at(r, &out, 100);
	assert_non_null(strstr(strbuf_str(&out), "c_total{d=\"x\",container_id=\"/young\"} 4\n"));
	/* A value cut to one the policy refused is refused, asked nothing more. */
	metric_registry_set_max_label_length(r, 1);
	metric_add(m, (const char *const[]){ "x", "/abc" }, 1);
	assert_int_equal(metric_series_count(m), 1);
	assert_int_equal(asked, 2);
	strbuf_reset(&out);
	metric_registry_write_at(r, &out, 100);
	assert_non_null(strstr(strbuf_str(&out), "nodescope_metric_updates_unreported_total 4\n"));
	strbuf_free(&out);
}

static bool show_named(void *ctx, const char *v, uint64_t now_ns)
{
	return strncmp(v, "/cg/", 4);
}

/*
 * A container named after its first events: its series (hidden under its
 * cgroup path) become its name's, merged with what the name had (values
 * add up), and later updates that still name the path land there too.
 */
static void test_rename(void **state)
{
	struct metric_registry *r = *state;
	struct metric_label_policy p = { NULL, show_named, NULL };
	struct metric *c = metric_register(r, "c_total", "C.", METRIC_COUNTER, 0, 2,
					   (const char *const[]){ "container_id", "d" });
	struct metric *g = metric_register(r, "g", "G.", METRIC_GAUGE, 0, 1,
					   (const char *const[]){ "container_id" });
	static const double bounds[] = { 1 };
	struct metric *h = metric_register_histogram(r, "h", "H.", 0, 1,
						     (const char *const[]){ "container_id" }, bounds, 1);

	assert_int_equal(metric_registry_rename(r, "/cg/a", "/docker/a"), -EINVAL); /* no policy */
	assert_int_equal(metric_registry_set_label_policy(r, "container_id", &p), 0);
	metric_add(c, (const char *const[]){ "/cg/a", "x" }, 2);
	metric_add(c, (const char *const[]){ "/cg/a", "y" }, 1);
	metric_add(c, (const char *const[]){ "/docker/a", "x" }, 5);
	metric_set(g, (const char *const[]){ "/cg/a" }, 7);
	metric_set(g, (const char *const[]){ "/docker/a" }, 1);
	metric_observe(h, (const char *const[]){ "/cg/a" }, 0.5);
	metric_observe(h, (const char *const[]){ "/docker/a" }, 3);
	metric_add(c, (const char *const[]){ "/cg/b", "x" }, 1);
	assert_output(r, "# HELP c_total C.\n# TYPE c_total counter\n"
			 "c_total{container_id=\"/docker/a\",d=\"x\"} 5\n"
			 "# HELP g G.\n# TYPE g gauge\n"
			 "g{container_id=\"/docker/a\"} 1\n"
			 "# HELP h H.\n# TYPE h histogram\n"
			 "h_bucket{container_id=\"/docker/a\",le=\"1\"} 0\n"
			 "h_bucket{container_id=\"/docker/a\",le=\"+Inf\"} 1\n"
			 "h_sum{container_id=\"/docker/a\"} 3\n"
			 "h_count{container_id=\"/docker/a\"} 1\n");

	assert_int_equal(metric_registry_rename(r, "/cg/a", "/docker/a"), 0);
	assert_int_equal(metric_registry_rename(r, "/cg/a", "/cg/a"), -EINVAL);
	metric_add(c, (const char *const[]){ "/cg/a", "y" }, 10); /* a connection opened before */
	assert_int_equal(metric_value(c, (const char *const[]){ "/docker/a", "x" }), 7);
	assert_int_equal(metric_value(c, (const char *const[]){ "/docker/a", "y" }), 11);
	assert_int_equal(metric_value(c, (const char *const[]){ "/cg/a", "x" }), 0);
	assert_int_equal(metric_value(c, (const char *const[]){ "/cg/b", "x" }), 1);
	assert_int_equal(metric_series_count(c), 3);
	assert_int_equal(metric_value(g, (const char *const[]){ "/docker/a" }), 8);
	metric_add(g, (const char *const[]){ "/cg/a" }, -1); /* closed under its new name */
	assert_int_equal(metric_value(g, (const char *const[]){ "/docker/a" }), 7);
	assert_int_equal(metric_histogram_count(h, (const char *const[]){ "/docker/a" }), 2);
	assert_int_equal(metric_series_count(h), 1);
	/* renamed back and forth: an update follows one rename only, never loops */
	assert_int_equal(metric_registry_rename(r, "/docker/a", "/cg/a"), 0);
	metric_add(c, (const char *const[]){ "/docker/a", "z" }, 1);
	assert_int_equal(metric_value(c, (const char *const[]){ "/cg/a", "z" }), 1);
}

/* --max-label-length: values cut at a character boundary; cut values key one series. */
static void test_max_label_length(void **state)
{
	struct metric_registry *r = *state;
	struct metric *m = metric_register(r, "c_total", "C.", METRIC_COUNTER, 0, 1,
					   (const char *const[]){ "path" });

	metric_registry_set_max_label_length(r, 4);
	metric_add(m, (const char *const[]){ "abcdef" }, 1);
	metric_add(m, (const char *const[]){ "abcdXY" }, 1);
	metric_add(m, (const char *const[]){ "abc" }, 1);
	/* "ab" then U+00E9 (2 bytes) then U+20AC (3 bytes): 4 bytes would split the euro sign */
	metric_add(m, (const char *const[]){ "ab\xc3\xa9\xe2\x82\xac" }, 1);
	metric_add(m, (const char *const[]){ "a\xe2\x82\xacz" }, 1); /* exactly 4 bytes + 1 */
	assert_int_equal(metric_series_count(m), 4);
	assert_int_equal(metric_value(m, (const char *const[]){ "abcd" }), 2);
	assert_int_equal(metric_value(m, (const char *const[]){ "abcdZZZ" }), 2);
	assert_int_equal(metric_value(m, (const char *const[]){ "ab\xc3\xa9" }), 1);
	assert_int_equal(metric_value(m, (const char *const[]){ "a\xe2\x82\xac" }), 1);
	metric_remove(m, (const char *const[]){ "abcdQ" });
	assert_int_equal(metric_series_count(m), 3);
	metric_registry_set_max_label_length(r, 0);
	metric_add(m, (const char *const[]){ "abcdef" }, 1);
	assert_int_equal(metric_value(m, (const char *const[]){ "abcdef" }), 1);
}

static void sum_values(void *ctx, const char *const *values, double value)
{
	double *sum = ctx;
	*sum += value * (values[0][0] == 'a' ? 1 : 100);
}

/* A touched series counts as changed for the idle expiry; foreach sees every series. */
static void test_touch_and_foreach(void **state)
{
	struct metric_registry *r = *state;
	const uint64_t sec = 1000000000ull;
	struct touched {
		struct metric *c;
	} o;
	const struct metric_def defs[] = {
		{ "c_total", "C.", METRIC_COUNTER, METRIC_LABELS("d"), .expires = true,
		  METRIC_HANDLE(struct touched, c) },
	};
	assert_int_equal(metric_register_defs(r, defs, 1, &o, 0), 0);
	metric_registry_set_idle_expiry(r, 10 * sec);
	metric_add(o.c, (const char *const[]){ "a" }, 1);
	metric_add(o.c, (const char *const[]){ "b" }, 2);
	double sum = 0;
	metric_foreach_series(o.c, sum_values, &sum);
	assert_true(sum == 201);
	struct strbuf out = { 0 };
	metric_registry_write_at(r, &out, 1 * sec);
	metric_touch(o.c, (const char *const[]){ "a" });
	metric_touch(o.c, (const char *const[]){ "zz" }); /* absent: not created */
	metric_registry_write_at(r, &out, 5 * sec);
	metric_registry_write_at(r, &out, 12 * sec);
	assert_int_equal(metric_series_count(o.c), 1); /* b idle 11 s; a only 7 s */
	assert_int_equal(metric_value(o.c, (const char *const[]){ "a" }), 1);
	metric_registry_write_at(r, &out, 16 * sec);
	assert_int_equal(metric_series_count(o.c), 0);
	strbuf_free(&out);
}

/* Idle series of expiring families go at an exposition; busy ones, other families and held gauges stay. */
static void test_idle_expiry(void **state)
{
	struct metric_registry *r = *state;
	const uint64_t min = 60ull * 1000000000ull;
	struct expiring {
		struct metric *c, *g, *keep;
	} o;
	const struct metric_def defs[] = {
		{ "c_total", "C.", METRIC_COUNTER, METRIC_LABELS("d"), .expires = true,
		  METRIC_HANDLE(struct expiring, c) },
		{ "g", "G.", METRIC_GAUGE, METRIC_LABELS("d"), .expires = true,
		  METRIC_HANDLE(struct expiring, g) },
		{ "keep_total", "K.", METRIC_COUNTER, METRIC_LABELS("d"),
		  METRIC_HANDLE(struct expiring, keep) },
	};
	struct strbuf sb = STRBUF_INIT;

	assert_int_equal(metric_register_defs(r, defs, METRIC_DEFS_COUNT(defs), &o, 0), 0);
	metric_registry_set_idle_expiry(r, 10 * min);
	metric_add(o.c, (const char *const[]){ "idle" }, 1);
	metric_add(o.c, (const char *const[]){ "busy" }, 1);
	metric_set(o.g, (const char *const[]){ "open" }, 1);
	metric_set(o.g, (const char *const[]){ "closed" }, 0);
	metric_add(o.keep, (const char *const[]){ "idle" }, 1);
	for (uint64_t t = 1; t <= 12; t++) { /* a scrape a minute; "busy" moves every time */
		metric_add(o.c, (const char *const[]){ "busy" }, 1);
		strbuf_reset(&sb);
		metric_registry_write_at(r, &sb, t * min);
		assert_int_equal(metric_series_count(o.c), t <= 10 ? 2 : 1);
	}
	assert_int_equal(metric_value(o.c, (const char *const[]){ "busy" }), 13);
	assert_int_equal(metric_series_count(o.g), 1); /* "open" held at 1, "closed" gone */
	assert_int_equal(metric_value(o.g, (const char *const[]){ "open" }), 1);
	assert_int_equal(metric_series_count(o.keep), 1);
	/* Back after it went: a new series from 0. */
	metric_add(o.c, (const char *const[]){ "idle" }, 2);
	assert_int_equal(metric_value(o.c, (const char *const[]){ "idle" }), 2);
	strbuf_free(&sb);
}

/* A module's table: handles filled in, plain values exported as they are, caps where asked. */
struct defs_owner {
	struct metric *req, *lat;
	uint64_t refused;
};

static void test_register_defs(void **state)
{
	struct metric_registry *r = *state;
	static const double bounds[] = { 1 };
	const struct metric_def defs[] = {
		{ "req_total", "R.", METRIC_COUNTER, METRIC_LABELS("container_id", "status"),
		  .capped = true, METRIC_HANDLE(struct defs_owner, req) },
		{ "lat_seconds", "L.", METRIC_HISTOGRAM, METRIC_BOUNDS(bounds),
		  METRIC_HANDLE(struct defs_owner, lat) },
		{ "refused_total", "F.", METRIC_COUNTER, METRIC_VALUE(struct defs_owner, refused) },
	};
	struct defs_owner o = { .refused = 7 };

	assert_int_equal(metric_register_defs(r, defs, METRIC_DEFS_COUNT(defs), &o, 1), 0);
	assert_non_null(o.req);
	assert_non_null(o.lat);
	metric_add(o.req, (const char *const[]){ "/a", "2xx" }, 1);
	metric_add(o.req, (const char *const[]){ "/b", "2xx" }, 1); /* over the cap of 1 */
	metric_observe(o.lat, NULL, 0.5);
	o.refused = 9;
	assert_output(r, "# HELP " DROPS " Series not created because the metric reached its series "
			 "cap.\n# TYPE " DROPS " counter\n" DROPS "{metric=\"req_total\"} 1\n"
			 "# HELP req_total R.\n# TYPE req_total counter\n"
			 "req_total{container_id=\"/a\",status=\"2xx\"} 1\n"
			 "# HELP lat_seconds L.\n# TYPE lat_seconds histogram\n"
			 "lat_seconds_bucket{le=\"1\"} 1\nlat_seconds_bucket{le=\"+Inf\"} 1\n"
			 "lat_seconds_sum 0.5\nlat_seconds_count 1\n"
			 "# HELP refused_total F.\n# TYPE refused_total counter\nrefused_total 9\n");

	/* A value with labels cannot be: it has one series. */
	const struct metric_def bad[] = {
		{ "bad_total", "B.", METRIC_COUNTER, METRIC_LABELS("x"),
		  METRIC_VALUE(struct defs_owner, refused) },
	};
	assert_int_equal(metric_register_defs(r, bad, 1, &o, 0), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_empty_registry),
		T(test_register_u64),
		T(test_const_labels),
		T(test_register_defs),
		T(test_prefix_labels),
		T(test_derived_label),
		T(test_label_policy),
		T(test_rename),
		T(test_touch_and_foreach),
		T(test_max_label_length),
		T(test_idle_expiry),
		T(test_register_add_write),
		T(test_series_handle),
		T(test_label_values_are_copied),
		T(test_names_are_copied),
		T(test_label_escaping),
		T(test_help_escaping),
		T(test_value_integers),
		T(test_value_fractional),
		T(test_value_special),
		T(test_series_cap),
		T(test_cap_of_one_without_labels),
		T(test_drops_per_family),
		T(test_drop_series_named_after_family),
		T(test_remove),
		T(test_clear),
		T(test_remove_unlabelled),
		T(test_reregister),
		T(test_invalid_names),
		T(test_max_labels_exposition),
		T(test_label_value_boundaries),
		T(test_many_series),
		T(test_many_series_capped),
		T(test_collectors),
		T(test_collector_drops_show_in_same_write),
		T(test_many_collectors),
		T(test_write_appends),
		T(test_null_safe),
		T(test_independent_registries),
		T(test_histogram_exposition_labels),
		T(test_histogram_exposition_unlabelled),
		T(test_histogram_empty_series_and_no_bounds),
		T(test_histogram_boundaries),
		T(test_histogram_sum_and_count),
		T(test_histogram_type_isolation),
		T(test_histogram_cap_and_drops),
		T(test_histogram_many_series),
		T(test_histogram_invalid),
		T(test_histogram_le_coroot_defaults),
		T(test_histogram_le_formatting),
		T(test_histogram_le_extremes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
