#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <jansson.h>

#include "cli.h"
#include "cli_table.h"
#include "util/glob.h"
#include "version.h"
#include "http/server.h"

#define MAX_ARGS 16

/*
 * The environment cli_parse sees in these tests: a table of its own, so a
 * test sets what it needs and the process' environment plays no part (one
 * test uses the real one, through cli_environ). Cleared before every test.
 */
#define MAX_ENV 16
static struct {
	const char *name, *value;
} fake_env[MAX_ENV];

static const char *fake_getenv(const char *name)
{
	for (int i = 0; i < MAX_ENV && fake_env[i].name; i++)
		if (!strcmp(fake_env[i].name, name))
			return fake_env[i].value;
	return NULL;
}

static void env_set(const char *name, const char *value)
{
	int i = 0;
	while (i < MAX_ENV && fake_env[i].name && strcmp(fake_env[i].name, name))
		i++;
	assert_true(i < MAX_ENV);
	fake_env[i].name = name;
	fake_env[i].value = value;
}

static int env_clear(void **state)
{
	memset(fake_env, 0, sizeof(fake_env));
	return 0;
}

/* One parse: argv is copied (getopt_long permutes it) and kept alive with the result. */
struct parsed {
	char *argv[MAX_ARGS + 1];
	struct ns_config c;
	struct strbuf out;
	enum cli_result r;
};

#define PARSE(p, ...) parse_args((p), (const char *[]){ "nodescope", __VA_ARGS__, NULL })
#define PARSE0(p) parse_args((p), (const char *[]){ "nodescope", NULL })

static enum cli_result parse_args(struct parsed *p, const char **args)
{
	int argc = 0;

	strbuf_free(&p->out);
	memset(p, 0, sizeof(*p));
	while (args[argc]) {
		assert_true(argc < MAX_ARGS);
		p->argv[argc] = (char *)args[argc];
		argc++;
	}
	p->argv[argc] = NULL;
	memset(&p->c, 0x5a, sizeof(p->c)); /* cli_parse must set every field */
	p->r = cli_parse(argc, p->argv, fake_getenv, &p->c, &p->out);
	return p->r;
}

static int setup(void **state)
{
	static struct parsed p;

	memset(&p, 0, sizeof(p));
	*state = &p;
	return 0;
}

static int teardown(void **state)
{
	struct parsed *p = *state;

	strbuf_free(&p->out);
	return 0;
}

static void assert_contains(const char *haystack, const char *needle)
{
	if (!strstr(haystack, needle))
		fail_msg("\"%s\" not found in \"%s\"", needle, haystack);
}

static void assert_defaults_except_mode(const struct ns_config *c)
{
	assert_int_equal(c->stream_mask, (1u << NS_STREAM_COUNT) - 1);
	for (int i = 0; i < NS_STREAM_COUNT; i++)
		assert_int_equal(c->ring_size[i], 0); /* 0: the built-in default */
	assert_int_equal(c->max_series, 10000);
	assert_int_equal(c->max_processes, 131072);
	assert_int_equal(c->debug_poll_ms, 0);
	assert_int_equal(c->debug_batch_ms, 0);
	assert_false(c->verbose);
}

static void test_defaults_run(void **state)
{
	struct parsed *p = *state;

	assert_int_equal(PARSE0(p), CLI_RUN);
	assert_false(p->c.trace);
	assert_non_null(p->c.listen);
	assert_string_equal(p->c.listen, "127.0.0.1:9645");
	assert_string_equal(p->c.listen, NS_DEFAULT_LISTEN);
	assert_defaults_except_mode(&p->c);
	assert_string_equal(strbuf_str(&p->out), "");

	assert_int_equal(PARSE(p, "run"), CLI_RUN);
	assert_false(p->c.trace);
	assert_string_equal(p->c.listen, "127.0.0.1:9645");
	assert_defaults_except_mode(&p->c);
	assert_string_equal(strbuf_str(&p->out), "");
}

static void test_defaults_trace(void **state)
{
	struct parsed *p = *state;

	assert_int_equal(PARSE(p, "trace"), CLI_RUN);
	assert_true(p->c.trace);
	assert_null(p->c.listen);
	assert_defaults_except_mode(&p->c);
	assert_string_equal(strbuf_str(&p->out), "");

	/* trace with an explicit listener */
	assert_int_equal(PARSE(p, "trace", "--listen", "127.0.0.1:1"), CLI_RUN);
	assert_true(p->c.trace);
	assert_string_equal(p->c.listen, "127.0.0.1:1");
}

static void test_listen(void **state)
{
	struct parsed *p = *state;

	assert_int_equal(PARSE(p, "--listen", "0.0.0.0:80"), CLI_RUN);
	assert_string_equal(p->c.listen, "0.0.0.0:80");
	assert_int_equal(PARSE(p, "--listen=[::1]:9000"), CLI_RUN);
	assert_string_equal(p->c.listen, "[::1]:9000");
	/* the last one wins */
	assert_int_equal(PARSE(p, "run", "--listen", "1.2.3.4:5", "--listen", "6.7.8.9:10"),
			 CLI_RUN);
	assert_string_equal(p->c.listen, "6.7.8.9:10");
}

static void test_listen_empty_disables_http(void **state)
{
	struct parsed *p = *state;

	assert_int_equal(PARSE(p, "--listen", ""), CLI_RUN);
	assert_null(p->c.listen);
	assert_int_equal(PARSE(p, "run", "--listen="), CLI_RUN);
	assert_null(p->c.listen);
	assert_int_equal(PARSE(p, "trace", "--listen", ""), CLI_RUN);
	assert_null(p->c.listen);
	assert_true(p->c.trace);
}

static void test_events(void **state)
{
	struct parsed *p = *state;

	assert_int_equal(PARSE(p, "trace", "--events", "proc"), CLI_RUN);
	assert_true(p->c.trace);
	assert_int_equal(p->c.stream_mask, 1u << NS_STREAM_PROC);
	assert_null(p->c.listen);
	assert_int_equal(PARSE(p, "trace", "--events=proc,proc"), CLI_RUN);
	assert_int_equal(p->c.stream_mask, 1u << NS_STREAM_PROC);
	assert_int_equal(PARSE(p, "trace", "--events", ",proc,"), CLI_RUN);
	assert_int_equal(p->c.stream_mask, 1u << NS_STREAM_PROC);
}

static void test_hold_first_runs(void **state)
{
	struct parsed *p = *state;

	assert_int_equal(PARSE(p, "trace"), CLI_RUN);
	assert_false(p->c.hold_first_runs);
	assert_int_equal(PARSE(p, "--hold-first-runs"), CLI_RUN);
	assert_true(p->c.hold_first_runs && p->c.tls);
	/* Holding for probes that never come would be all cost. */
	assert_int_equal(PARSE(p, "--hold-first-runs", "--no-tls"), CLI_ERROR);
	assert_contains(p->out.buf, "--no-tls");
}

static void test_nice(void **state)
{
	struct parsed *p = *state;

	assert_int_equal(PARSE(p, "trace"), CLI_RUN);
	assert_int_equal(p->c.nice, -20);
	assert_int_equal(p->c.batch_nice, 0);
	assert_int_equal(PARSE(p, "--nice", "0"), CLI_RUN);
	assert_int_equal(p->c.nice, 0);
	assert_int_equal(PARSE(p, "--nice=19"), CLI_RUN);
	assert_int_equal(p->c.nice, 19);
	assert_int_equal(PARSE(p, "--nice", "-21"), CLI_ERROR);
	assert_int_equal(PARSE(p, "--nice", "20"), CLI_ERROR);
	assert_int_equal(PARSE(p, "--nice", "x"), CLI_ERROR);
	assert_contains(p->out.buf, "--nice");
}

static void test_debug_kernel_lacks(void **state)
{
	struct parsed *p = *state;

	assert_int_equal(PARSE(p, "trace"), CLI_RUN);
	assert_int_equal(p->c.kernel_lacks, 0);
	assert_int_equal(PARSE(p, "--debug-kernel-lacks", "task_storage,uprobe_multi"), CLI_RUN);
	assert_int_equal(p->c.kernel_lacks, (1u << KF_TASK_STORAGE) | (1u << KF_UPROBE_MULTI));
	assert_int_equal(PARSE(p, "--debug-kernel-lacks", "task_storage,uprobe"), CLI_ERROR);
	assert_contains(p->out.buf, "unknown feature 'uprobe'");
	assert_contains(p->out.buf, "exit_group_dead"); /* the names it knows */
}

static void test_events_unknown(void **state)
{
	struct parsed *p = *state;

	assert_int_equal(PARSE(p, "trace", "--events", "bogus"), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "'bogus'");
	assert_contains(strbuf_str(&p->out), "proc"); /* lists the known ones */

	assert_int_equal(PARSE(p, "trace", "--events", "proc,netz"), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "'netz'");

	assert_int_equal(PARSE(p, "trace", "--events", "PROC"), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "'PROC'");

	/* nothing in the list */
	assert_int_equal(PARSE(p, "trace", "--events", ""), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "at least one");
	assert_int_equal(PARSE(p, "trace", "--events", ",,"), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "at least one");

	/* a very long name is cut in the message */
	char longlist[400];
	memset(longlist, 'a', sizeof(longlist) - 1);
	longlist[sizeof(longlist) - 1] = '\0';
	assert_int_equal(PARSE(p, "trace", "--events", longlist), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "unknown stream 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'");
	assert_true(strlen(strbuf_str(&p->out)) < 1000);
}

static void test_ringbuf_size_all(void **state)
{
	struct parsed *p = *state;

	assert_int_equal(PARSE(p, "--ringbuf-size", "4k"), CLI_RUN);
	for (int i = 0; i < NS_STREAM_COUNT; i++)
		assert_int_equal(p->c.ring_size[i], 4096);
	assert_int_equal(PARSE(p, "--ringbuf-size", "1M"), CLI_RUN);
	for (int i = 0; i < NS_STREAM_COUNT; i++)
		assert_int_equal(p->c.ring_size[i], 1u << 20);
	assert_int_equal(PARSE(p, "trace", "--ringbuf-size=64K"), CLI_RUN);
	assert_int_equal(p->c.ring_size[NS_STREAM_PROC], 65536);
}

static void test_ringbuf_size_one_stream(void **state)
{
	struct parsed *p = *state;

	assert_int_equal(PARSE(p, "--ringbuf-size", "proc=5000"), CLI_RUN);
	assert_int_equal(p->c.ring_size[NS_STREAM_PROC], 8192);
	/* repeatable; later ones override */
	assert_int_equal(PARSE(p, "--ringbuf-size", "4k", "--ringbuf-size", "proc=64k"), CLI_RUN);
	assert_int_equal(p->c.ring_size[NS_STREAM_PROC], 65536);
	assert_int_equal(PARSE(p, "--ringbuf-size", "proc=64k", "--ringbuf-size", "1"), CLI_RUN);
	assert_int_equal(p->c.ring_size[NS_STREAM_PROC], 4096);
}

static void test_ringbuf_size_bad(void **state)
{
	struct parsed *p = *state;
	static const char *const bad[] = {
		"",
		"0",
		"0k",
		"k",
		"abc",
		"4g",
		"4G",
		"4kb",
		"4 k",
		"1.5k",
		"-1",
		"-4096",
		"1073741825",
		"1048577k",
		"1025m",
		"proc=",
		"proc=0",
		"proc=x",
		"18014398509481985k",	 /* (2^54 + 1) << 10 wraps to 1024 in 64 bits */
		"-18446744073709551615", /* strtoull negates this to 1 */
		"99999999999999999999999",
	};
	int wrong = 0;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (PARSE(p, "--ringbuf-size", bad[i]) != CLI_ERROR) {
			print_error("--ringbuf-size '%s' accepted (ring %u)\n", bad[i],
				    p->c.ring_size[0]);
			wrong++;
			continue;
		}
		char want[64];
		snprintf(want, sizeof(want), "bad --ringbuf-size '%s'", bad[i]);
		if (!strstr(strbuf_str(&p->out), want)) {
			print_error("--ringbuf-size '%s': message \"%s\"\n", bad[i],
				    strbuf_str(&p->out));
			wrong++;
		}
	}
	assert_int_equal(wrong, 0);

	/* unknown stream names are named */
	assert_int_equal(PARSE(p, "--ringbuf-size", "nope=4k"), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "unknown stream 'nope'");
	assert_int_equal(PARSE(p, "--ringbuf-size", "=4k"), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "unknown stream ''");
	/* a very long name is cut in the message, not overflowed */
	char longname[100];
	memset(longname, 'n', 60);
	strcpy(longname + 60, "=4k");
	assert_int_equal(PARSE(p, "--ringbuf-size", longname), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "unknown stream 'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn'");
}

static void test_parse_ring_size(void **state)
{
	uint32_t v;

	assert_int_equal(cli_parse_ring_size("1", 4096, &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(cli_parse_ring_size("4096", 4096, &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(cli_parse_ring_size("4097", 4096, &v), 0);
	assert_int_equal(v, 8192);
	assert_int_equal(cli_parse_ring_size("5000", 4096, &v), 0);
	assert_int_equal(v, 8192);
	assert_int_equal(cli_parse_ring_size("100000", 4096, &v), 0);
	assert_int_equal(v, 131072);
	assert_int_equal(cli_parse_ring_size("256k", 4096, &v), 0);
	assert_int_equal(v, 262144);
	assert_int_equal(cli_parse_ring_size("3m", 4096, &v), 0);
	assert_int_equal(v, 4u << 20);
	assert_int_equal(cli_parse_ring_size("1024m", 4096, &v), 0);
	assert_int_equal(v, 1u << 30);
	assert_int_equal(cli_parse_ring_size("1073741824", 4096, &v), 0);
	assert_int_equal(v, 1u << 30);
	/* 64k pages */
	assert_int_equal(cli_parse_ring_size("4k", 65536, &v), 0);
	assert_int_equal(v, 65536);
	assert_int_equal(cli_parse_ring_size("65537", 65536, &v), 0);
	assert_int_equal(v, 131072);

	v = 12345;
	assert_int_equal(cli_parse_ring_size("0", 4096, &v), -EINVAL);
	assert_int_equal(cli_parse_ring_size("", 4096, &v), -EINVAL);
	assert_int_equal(cli_parse_ring_size("1025m", 4096, &v), -EINVAL);
	assert_int_equal(cli_parse_ring_size("4t", 4096, &v), -EINVAL);
	assert_int_equal(cli_parse_ring_size(" 4096", 4096, &v), -EINVAL);
	assert_int_equal(cli_parse_ring_size("+4096", 4096, &v), -EINVAL);
	assert_int_equal(cli_parse_ring_size("-1", 4096, &v), -EINVAL);
	assert_int_equal(cli_parse_ring_size("-18446744073709551615", 4096, &v), -EINVAL);
	assert_int_equal(cli_parse_ring_size("18014398509481985k", 4096, &v), -EINVAL);
	assert_int_equal(cli_parse_ring_size("17592186044417m", 4096, &v), -EINVAL);
	assert_int_equal(v, 12345); /* untouched on error */
}

static void test_numbers(void **state)
{
	struct parsed *p = *state;

	assert_int_equal(PARSE(p, "--max-series", "5", "--max-processes", "1000", "--debug-poll-ms",
			       "10", "--verbose"),
			 CLI_RUN);
	assert_int_equal(p->c.max_series, 5);
	assert_int_equal(p->c.max_processes, 1000);
	assert_int_equal(p->c.debug_poll_ms, 10);
	assert_true(p->c.verbose);
	assert_int_equal(PARSE(p, "--max-series", "0", "--max-processes", "4194304"), CLI_RUN);
	assert_int_equal(p->c.max_series, 0);
	assert_int_equal(p->c.max_processes, 4194304);

	static const char *const bad[][2] = {
		{ "--max-series", "abc" },
		{ "--max-series", "" },
		{ "--max-series", "10000001" },
		{ "--max-series", "-1" },
		{ "--max-series", "5x" },
		{ "--max-processes", "0" },
		{ "--max-processes", "4194305" },
		{ "--debug-poll-ms", "10001" },
		{ "--max-series", "-18446744073709551615" }, /* negated by strtoull to 1 */
		{ "--max-processes", "-18446744073709551615" },
	};
	int wrong = 0;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (PARSE(p, bad[i][0], bad[i][1]) != CLI_ERROR) {
			print_error("%s '%s' accepted\n", bad[i][0], bad[i][1]);
			wrong++;
			continue;
		}
		if (!strstr(strbuf_str(&p->out), bad[i][0])) {
			print_error("%s '%s': message \"%s\"\n", bad[i][0], bad[i][1],
				    strbuf_str(&p->out));
			wrong++;
		}
	}
	assert_int_equal(wrong, 0);
}

static void test_help_version(void **state)
{
	struct parsed *p = *state;

	assert_int_equal(PARSE(p, "--help"), CLI_EXIT_OK);
	assert_contains(strbuf_str(&p->out), "usage: nodescope");
	assert_int_equal(PARSE(p, "-h"), CLI_EXIT_OK);
	assert_contains(strbuf_str(&p->out), "usage: nodescope");
	assert_int_equal(PARSE(p, "trace", "--help"), CLI_EXIT_OK);
	assert_contains(strbuf_str(&p->out), "--events");
	assert_int_equal(PARSE(p, "--listen", "1.2.3.4:5", "-h"), CLI_EXIT_OK);

	char expected_version[128];
	snprintf(expected_version, sizeof(expected_version), "nodescope %s\n", nodescope_version);
	assert_true(nodescope_version[0] != '\0');
	assert_int_equal(PARSE(p, "--version"), CLI_EXIT_OK);
	assert_string_equal(strbuf_str(&p->out), expected_version);
	assert_int_equal(PARSE(p, "run", "--version"), CLI_EXIT_OK);
	assert_string_equal(strbuf_str(&p->out), expected_version);
}

static void test_unknown_option(void **state)
{
	struct parsed *p = *state;

	assert_int_equal(PARSE(p, "--bogus"), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "unknown option '--bogus'");
	assert_contains(strbuf_str(&p->out), "usage:");
	assert_int_equal(PARSE(p, "trace", "--bogus=1"), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "unknown option '--bogus=1'");
	assert_int_equal(PARSE(p, "-x"), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "unknown option '-x'");
	assert_int_equal(PARSE(p, "--verbose", "-q"), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "unknown option '-q'");
	/* --version takes no value */
	assert_int_equal(PARSE(p, "--version=1"), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "nodescope: --version takes no value\n");
	assert_int_equal(PARSE(p, "--no-tls=1"), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "nodescope: --no-tls takes no value\n");
}

static void test_unknown_short_in_cluster(void **state)
{
	struct parsed *p = *state;

	/* getopt stops in the middle of "-xy": the message must still name -x */
	assert_int_equal(PARSE(p, "-xy"), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "unknown option '-x'");
	/* and the next parse starts afresh */
	assert_int_equal(PARSE(p, "trace", "--events", "proc"), CLI_RUN);
	assert_true(p->c.trace);
	assert_int_equal(p->c.stream_mask, 1u << NS_STREAM_PROC);
	assert_int_equal(PARSE(p, "-hx"), CLI_EXIT_OK);
	assert_int_equal(PARSE0(p), CLI_RUN);
	assert_string_equal(p->c.listen, NS_DEFAULT_LISTEN);
}

static void test_missing_value(void **state)
{
	struct parsed *p = *state;

	assert_int_equal(PARSE(p, "--listen"), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "--listen needs a value");
	assert_int_equal(PARSE(p, "trace", "--events"), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "--events needs a value");
	assert_int_equal(PARSE(p, "--verbose", "--ringbuf-size"), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "--ringbuf-size needs a value");
}

static void test_stray_argument(void **state)
{
	struct parsed *p = *state;

	assert_int_equal(PARSE(p, "foo"), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "unexpected argument 'foo'");
	assert_int_equal(PARSE(p, "run", "foo"), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "unexpected argument 'foo'");
	assert_int_equal(PARSE(p, "trace", "--events", "proc", "extra"), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "unexpected argument 'extra'");
	/* a stray argument before options (GNU getopt permutes) */
	assert_int_equal(PARSE(p, "run", "stray", "--verbose"), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "unexpected argument 'stray'");
	/* the mode word only counts first */
	assert_int_equal(PARSE(p, "--verbose", "trace"), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "unexpected argument 'trace'");
	assert_int_equal(PARSE(p, "run", "trace"), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "unexpected argument 'trace'");
	assert_int_equal(PARSE(p, "trace", "run"), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "unexpected argument 'run'");
	/* after "--" everything is an argument */
	assert_int_equal(PARSE(p, "--", "--verbose"), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "unexpected argument '--verbose'");
}

static void test_repeated_parses_independent(void **state)
{
	struct parsed *p = *state;

	/* getopt keeps state between calls; each cli_parse must start clean */
	for (int i = 0; i < 3; i++) {
		assert_int_equal(PARSE(p, "stray"), CLI_ERROR);
		assert_int_equal(PARSE(p, "trace", "--events", "proc"), CLI_RUN);
		assert_true(p->c.trace);
		assert_int_equal(PARSE(p, "run", "x", "--verbose", "y"), CLI_ERROR);
		assert_contains(strbuf_str(&p->out), "unexpected argument 'x'");
		assert_int_equal(PARSE(p, "--verbose"), CLI_RUN);
		assert_true(p->c.verbose);
		assert_false(p->c.trace);
		assert_int_equal(PARSE(p, "trace"), CLI_RUN);
		assert_int_equal(PARSE(p, "run", "--ringbuf-size", "4k"), CLI_RUN);
		assert_int_equal(p->c.ring_size[0], 4096);
	}
}

/* ---- every option, by flag and by environment ---- */

static void check_listen(const struct ns_config *c)
{
	assert_string_equal(c->listen, "0.0.0.0:80");
}
static void check_events(const struct ns_config *c)
{
	assert_int_equal(c->stream_mask, (1u << NS_STREAM_PROC) | (1u << NS_STREAM_TCP));
}
static void check_ring(const struct ns_config *c)
{
	for (int i = 0; i < NS_STREAM_COUNT; i++)
		assert_int_equal(c->ring_size[i], i == NS_STREAM_TCP ? 65536 : 0);
}
static void check_http_per_client(const struct ns_config *c)
{
	assert_int_equal(c->http_max_per_client, 2);
}
static void check_http_conns(const struct ns_config *c)
{
	assert_int_equal(c->http_max_connections, 3);
}
static void check_http_head(const struct ns_config *c)
{
	assert_int_equal(c->http_head_timeout_s, 90);
}
static void check_http_idle(const struct ns_config *c)
{
	assert_int_equal(c->http_idle_timeout_s, 1);
}
static void check_series(const struct ns_config *c)
{
	assert_int_equal(c->max_series, 5);
}
static void check_procs(const struct ns_config *c)
{
	assert_int_equal(c->max_processes, 1000);
}
static void check_conns(const struct ns_config *c)
{
	assert_int_equal(c->max_connections, 77);
}
static void check_dests(const struct ns_config *c)
{
	assert_int_equal(c->max_destinations, 9);
}
static void check_label(const struct ns_config *c)
{
	assert_int_equal(c->max_label_length, 100);
}
static void check_fqdns(const struct ns_config *c)
{
	assert_int_equal(c->max_fqdns, 7);
}
static void check_cgroup(const struct ns_config *c)
{
	assert_string_equal(c->cgroup, "/sys/fs/cgroup/x");
}
static void check_cgroupfs(const struct ns_config *c)
{
	assert_string_equal(c->cgroupfs_root, "/host/sys/fs/cgroup");
}
static void check_age(const struct ns_config *c)
{
	assert_int_equal(c->min_container_age_ms, 90000);
}
static void check_ports(const struct ns_config *c)
{
	assert_int_equal(c->ephemeral_ports.n, 2);
	assert_int_equal(c->ephemeral_ports.r[0].lo, 1024);
	assert_int_equal(c->ephemeral_ports.r[0].hi, 2048);
	assert_int_equal(c->ephemeral_ports.r[1].lo, 30000);
	assert_int_equal(c->ephemeral_ports.r[1].hi, 65535);
}
static void check_public(const struct ns_config *c)
{
	const struct ns_cidrs *l = &c->public_networks;
	static const uint8_t v6[16] = { 0x20, 0x01, 0x0d, 0xb8 };
	assert_int_equal(l->n, 2);
	assert_int_equal(l->v[0].family, AF_INET);
	assert_int_equal(l->v[0].bits, 24);
	assert_memory_equal(l->v[0].addr, ((uint8_t[]){ 203, 0, 113, 0 }), 4);
	assert_int_equal(l->v[1].family, AF_INET6);
	assert_int_equal(l->v[1].bits, 32);
	assert_memory_equal(l->v[1].addr, v6, 16);
}
static void check_http_exclude(const struct ns_config *c)
{
	const struct ns_globs *g = &c->http_exclude;
	assert_int_equal(g->n, 2);
	assert_int_equal(g->v[0].len, 8);
	assert_memory_equal(g->v[0].p, "/health*", 8);
	assert_int_equal(g->v[1].len, 13);
	assert_memory_equal(g->v[1].p, "/{ready,live}", 13);
}
static void check_no_l7(const struct ns_config *c)
{
	assert_false(c->l7);
}
static void check_log_rate(const struct ns_config *c)
{
	assert_true(c->log_per_second == 2.5);
}
static void check_log_burst(const struct ns_config *c)
{
	assert_int_equal(c->log_burst, 7);
}
static void check_no_tls(const struct ns_config *c)
{
	assert_false(c->tls);
}
static void check_release(const struct ns_config *c)
{
	assert_int_equal(c->tls_release_after_s, 3600);
}
static void check_hold(const struct ns_config *c)
{
	assert_true(c->hold_first_runs);
}
static void check_series_idle(const struct ns_config *c)
{
	assert_int_equal(c->series_idle_s, 2);
}
static void check_keep_standalone(const struct ns_config *c)
{
	assert_true(c->keep_standalone);
}
static void check_allowlist(const struct ns_config *c)
{
	assert_int_equal(c->container_allowlist.n, 1);
	assert_string_equal(c->container_allowlist.v[0], "^/k8s/prod/");
	assert_int_equal(c->container_denylist.n, 0);
}
static void check_denylist(const struct ns_config *c)
{
	assert_int_equal(c->container_denylist.n, 1);
	assert_string_equal(c->container_denylist.v[0], "canary|debug");
	assert_int_equal(c->container_allowlist.n, 0);
}
static void check_skip_systemd(const struct ns_config *c)
{
	assert_true(c->skip_systemd_system_services); /* the default too: see test_container_filters */
}
static void check_provider(const struct ns_config *c)
{
	assert_string_equal(c->provider, "aws");
}
static void check_region(const struct ns_config *c)
{
	assert_string_equal(c->region, "eu-west-1");
}
static void check_zone(const struct ns_config *c)
{
	assert_string_equal(c->availability_zone, "eu-west-1a");
}
static void check_itype(const struct ns_config *c)
{
	assert_string_equal(c->instance_type, "m5.large");
}
static void check_cycle(const struct ns_config *c)
{
	assert_string_equal(c->instance_life_cycle, "spot");
}
static void check_metrics_endpoint(const struct ns_config *c)
{
	assert_string_equal(c->metrics_endpoint, "http://127.0.0.1:9090/api/v1/write");
}
static void check_collector(const struct ns_config *c)
{
	assert_string_equal(c->collector_endpoint, "https://coroot:8080");
}
static void check_api_key(const struct ns_config *c)
{
	assert_string_equal(c->api_key, "k3y");
}
static void check_interval(const struct ns_config *c)
{
	assert_int_equal(c->scrape_interval_ms, 500);
}
static void check_wal(const struct ns_config *c)
{
	assert_string_equal(c->wal_dir, "/data/wal");
}
static void check_spool(const struct ns_config *c)
{
	assert_int_equal(c->max_spool_size, 2ull << 30);
}
static void check_ca(const struct ns_config *c)
{
	assert_string_equal(c->ca_file, "/etc/ca.pem");
}
static void check_insecure(const struct ns_config *c)
{
	assert_true(c->insecure_skip_verify);
}
static void check_per_write(const struct ns_config *c)
{
	assert_int_equal(c->max_series_per_write, 500);
}
static void check_nice(const struct ns_config *c)
{
	assert_int_equal(c->nice, -5);
}
static void check_batch_nice(const struct ns_config *c)
{
	assert_int_equal(c->batch_nice, 7);
}
static void check_verbose(const struct ns_config *c)
{
	assert_true(c->verbose);
}
static void check_l7_discard(const struct ns_config *c)
{
	assert_true(c->debug_l7_discard);
}
static void check_hook_signals(const struct ns_config *c)
{
	assert_true(c->debug_hook_signals);
}
static void check_syscall_hooks(const struct ns_config *c)
{
	assert_true(c->debug_syscall_hooks);
}
static void check_poll(const struct ns_config *c)
{
	assert_int_equal(c->debug_poll_ms, 10);
}
static void check_batch(const struct ns_config *c)
{
	assert_int_equal(c->debug_batch_ms, 3000);
}
static void check_lacks(const struct ns_config *c)
{
	assert_int_equal(c->kernel_lacks, 1u << KF_TASK_STORAGE);
}

/*
 * One case per option: its variable's name (spelled out here, so a renamed
 * variable fails), a good value (NULL: a flag) and what it must set (NULL:
 * Coroot's not implemented, whose warning is checked instead), and a bad
 * value (NULL: none, any text is good) with the form the message names.
 */
static const struct option_case {
	const char *name, *env, *good;
	void (*check)(const struct ns_config *c);
	const char *bad, *form;
} option_cases[] = {
	{ "listen", "LISTEN", "0.0.0.0:80", check_listen, "localhost:80", "HOST:PORT" },
	{ "http-max-per-client", "NODESCOPE_HTTP_MAX_PER_CLIENT", "2", check_http_per_client, "0",
	  "(1..65536)" },
	{ "http-max-connections", "NODESCOPE_HTTP_MAX_CONNECTIONS", "3", check_http_conns, "65537",
	  "(1..65536)" },
	{ "http-head-timeout", "NODESCOPE_HTTP_HEAD_TIMEOUT", "1m30s", check_http_head, "0",
	  "1..3600 seconds" },
	{ "http-idle-timeout", "NODESCOPE_HTTP_IDLE_TIMEOUT", "1s", check_http_idle, "1h1s",
	  "1..3600 seconds" },
	{ "events", "NODESCOPE_EVENTS", "proc,tcp", check_events, "proc,nope",
	  "unknown stream 'nope'" },
	{ "ringbuf-size", "NODESCOPE_RINGBUF_SIZE", "tcp=64k", check_ring, "tcp=2g",
	  "SIZE or STREAM=SIZE" },
	{ "max-series", "NODESCOPE_MAX_SERIES", "5", check_series, "x", "(0..10000000)" },
	{ "max-processes", "NODESCOPE_MAX_PROCESSES", "1000", check_procs, "0", "(1..4194304)" },
	{ "max-connections", "NODESCOPE_MAX_CONNECTIONS", "77", check_conns, "0", "(1..16777216)" },
	{ "max-destinations", "NODESCOPE_MAX_DESTINATIONS", "9", check_dests, "1000001",
	  "(1..1000000)" },
	{ "max-label-length", "MAX_LABEL_LENGTH", "100", check_label, "0", "(1..1048576)" },
	{ "max-fqdns-per-container", "MAX_FQDNS_PER_CONTAINER", "7", check_fqdns, "0",
	  "(1..1000000)" },
	{ "cgroup", "NODESCOPE_CGROUP", "/sys/fs/cgroup/x", check_cgroup },
	{ "cgroupfs-root", "CGROUPFS_ROOT", "/host/sys/fs/cgroup", check_cgroupfs, "sys/fs",
	  "absolute path" },
	{ "min-container-age", "MIN_CONTAINER_AGE", "1m30s", check_age, "30 s",
	  "(0s..8760h, Go's form" },
	{ "ephemeral-port-range", "EPHEMERAL_PORT_RANGE", "1024-2048 30000-65535", check_ports,
	  "2048-1024", "LO <= HI" },
	{ "track-public-network", "TRACK_PUBLIC_NETWORK", "203.0.113.7/24 2001:db8::/32",
	  check_public, "10.0.0.0/33", "'10.0.0.0/33' is no network" },
	{ "exclude-http-requests-by-path", "EXCLUDE_HTTP_REQUESTS_BY_PATH", "/health* /{ready,live}",
	  check_http_exclude, "/a[b", "left open" },
	{ "disable-l7-tracing", "DISABLE_L7_TRACING", NULL, check_no_l7, "on", "yes or no" },
	{ "no-tls", "NODESCOPE_NO_TLS", NULL, check_no_tls, "maybe",
	  "(1, 0, t, f, true, false, yes or no)" },
	{ "tls-release-after", "NODESCOPE_TLS_RELEASE_AFTER", "1h", check_release, "1.5s",
	  "10m, 1h30m" },
	{ "hold-first-runs", "NODESCOPE_HOLD_FIRST_RUNS", NULL, check_hold, "2", "yes or no" },
	{ "keep-standalone-processes", "NODESCOPE_KEEP_STANDALONE_PROCESSES", NULL,
	  check_keep_standalone, "2", "yes or no" },
	{ "container-allowlist", "CONTAINER_ALLOWLIST", "^/k8s/prod/", check_allowlist, "(",
	  "bad regular expression '('" },
	{ "container-denylist", "CONTAINER_DENYLIST", "canary|debug", check_denylist, "a[",
	  "bad regular expression 'a['" },
	{ "skip-systemd-system-services", "SKIP_SYSTEMD_SYSTEM_SERVICES", NULL, check_skip_systemd,
	  "sometimes", "yes or no" },
	{ "provider", "PROVIDER", "aws", check_provider },
	{ "region", "REGION", "eu-west-1", check_region },
	{ "availability-zone", "AVAILABILITY_ZONE", "eu-west-1a", check_zone },
	{ "instance-type", "INSTANCE_TYPE", "m5.large", check_itype },
	{ "instance-life-cycle", "INSTANCE_LIFE_CYCLE", "spot", check_cycle },
	{ "metrics-endpoint", "METRICS_ENDPOINT", "http://127.0.0.1:9090/api/v1/write",
	  check_metrics_endpoint, "127.0.0.1:9090", "http:// or https://" },
	{ "collector-endpoint", "COLLECTOR_ENDPOINT", "https://coroot:8080", check_collector,
	  "coroot:8080", "http:// or https://" },
	{ "api-key", "API_KEY", "k3y", check_api_key },
	{ "scrape-interval", "SCRAPE_INTERVAL", "500ms", check_interval, "50ms", "(100ms..24h, Go's form" },
	{ "wal-dir", "WAL_DIR", "/data/wal", check_wal, "wal", "an absolute path" },
	{ "max-spool-size", "MAX_SPOOL_SIZE", "2GB", check_spool, "1KB", "4KB..1024GB" },
	{ "ca-file", "CA_FILE", "/etc/ca.pem", check_ca },
	{ "insecure-skip-verify", "INSECURE_SKIP_VERIFY", NULL, check_insecure, "2", "yes or no" },
	{ "max-series-per-write", "NODESCOPE_MAX_SERIES_PER_WRITE", "500", check_per_write, "0",
	  "(1..1000000)" },
	{ "nice", "NODESCOPE_NICE", "-5", check_nice, "20", "(-20..19)" },
	{ "batch-nice", "NODESCOPE_BATCH_NICE", "7", check_batch_nice, "-21", "(-20..19)" },
	{ "verbose", "NODESCOPE_VERBOSE", NULL, check_verbose, "on", "yes or no" },
	{ "log-per-second", "LOG_PER_SECOND", "2.5", check_log_rate, "nan", "a number 0..1e9" },
	{ "log-burst", "LOG_BURST", "7", check_log_burst, "-1", "(0..1000000)" },
	/* Coroot's, not implemented yet: checked, and warned about */
	{ "disable-log-parsing", "DISABLE_LOG_PARSING", NULL, NULL, "on", "yes or no" },
	{ "disable-json-log-parsing", "DISABLE_JSON_LOG_PARSING", NULL, NULL, "on", "yes or no" },
	{ "log-patterns-per-container", "LOG_PATTERNS_PER_CONTAINER", "100", NULL, "x",
	  "(0..1000000)" },
	{ "logs-endpoint", "LOGS_ENDPOINT", "http://coroot/v1/logs", NULL, "coroot",
	  "http:// or https://" },
	{ "traces-endpoint", "TRACES_ENDPOINT", "http://coroot/v1/traces", NULL, "coroot",
	  "http:// or https://" },
	{ "traces-sampling", "TRACES_SAMPLING", "0.5", NULL, "2", "a number 0..1" },
	{ "profiles-endpoint", "PROFILES_ENDPOINT", "https://coroot/v1/profiles", NULL, "x",
	  "http:// or https://" },
	{ "profiles-prune-fraction", "PROFILES_PRUNE_FRACTION", "0.01", NULL, "-1",
	  "a number 0..1" },
	{ "disable-gpu-monitoring", "DISABLE_GPU_MONITORING", NULL, NULL, "on", "yes or no" },
	{ "disable-pinger", "DISABLE_PINGER", NULL, NULL, "on", "yes or no" },
	{ "enable-java-tls", "ENABLE_JAVA_TLS", NULL, NULL, "on", "yes or no" },
	{ "enable-java-async-profiler", "ENABLE_JAVA_ASYNC_PROFILER", NULL, NULL, "on",
	  "yes or no" },
	{ "java-async-profiler-delay", "JAVA_ASYNC_PROFILER_DELAY", "1m30s", NULL, "30x",
	  "Go's form" },
	{ "go-heap-profiler", "GO_HEAP_PROFILER", "force", NULL, "always",
	  "disabled, enabled or force" },
	{ "instrumentation-delay", "INSTRUMENTATION_DELAY", "250ms", NULL, "-1s", "Go's form" },
	{ "debug-l7-discard", "NODESCOPE_DEBUG_L7_DISCARD", NULL, check_l7_discard, "on", "yes or no" },
	{ "debug-hook-signals", "NODESCOPE_DEBUG_HOOK_SIGNALS", NULL, check_hook_signals, "on",
	  "yes or no" },
	{ "debug-syscall-hooks", "NODESCOPE_DEBUG_SYSCALL_HOOKS", NULL, check_syscall_hooks, "on",
	  "yes or no" },
	{ "debug-poll-ms", "NODESCOPE_DEBUG_POLL_MS", "10", check_poll, "10001", "(0..10000)" },
	{ "debug-batch-ms", "NODESCOPE_DEBUG_BATCH_MS", "3000", check_batch, "60001", "(0..60000)" },
	{ "debug-series-idle", "NODESCOPE_DEBUG_SERIES_IDLE", "2s", check_series_idle, "0",
	  "1..31536000 seconds" },
	{ "debug-kernel-lacks", "NODESCOPE_DEBUG_KERNEL_LACKS", "task_storage", check_lacks, "warp",
	  "unknown feature 'warp'" },
};
#define N_CASES (sizeof(option_cases) / sizeof(option_cases[0]))

static const struct option_case *case_of(const char *name)
{
	for (size_t i = 0; i < N_CASES; i++)
		if (!strcmp(option_cases[i].name, name))
			return &option_cases[i];
	return NULL;
}

static bool has_value(const struct cli_opt *o)
{
	return o->kind != CLI_HEADING && o->kind != CLI_HELP && o->kind != CLI_VERSION;
}

/* Each case names a row, and each row with a value has its case: a new option needs one. */
static void test_cases_cover_the_table(void **state)
{
	int wrong = 0;

	for (size_t i = 0; i < cli_opts_count; i++)
		if (has_value(&cli_opts[i]) && !case_of(cli_opts[i].name)) {
			print_error("option --%s has no case in option_cases\n", cli_opts[i].name);
			wrong++;
		}
	for (size_t i = 0; i < N_CASES; i++) {
		const struct cli_opt *o = cli_opt_find(option_cases[i].name);
		if (!o || !has_value(o)) {
			print_error("case %s is no option\n", option_cases[i].name);
			wrong++;
		} else if (!o->env || strcmp(o->env, option_cases[i].env)) {
			print_error("--%s: variable %s, want %s\n", o->name,
				    o->env ? o->env : "none", option_cases[i].env);
			wrong++;
		}
	}
	assert_int_equal(wrong, 0);
}

/*
 * What a good value must do: set its field, and say nothing; or, for
 * Coroot's not implemented yet, one warning naming how it was given.
 */
static void check_case(const struct option_case *k, struct parsed *p, const char *given)
{
	const char *out = strbuf_str(&p->out);
	const struct cli_opt *o = cli_opt_find(k->name);
	char want[128];

	assert_non_null(o);
	assert_int_equal(!k->check, !!(o->flags & CLI_NOT_IMPLEMENTED));
	if (k->check) {
		k->check(&p->c);
		if (*out)
			fail_msg("%s: said \"%s\"", given, out);
		return;
	}
	snprintf(want, sizeof(want), "%s: not implemented yet, ignored (Coroot's --%s: ", given,
		 k->name);
	const char *at = strstr(out, want);
	if (!at || strncmp(out, want, strlen(want)) || strchr(out, '\n')[1])
		fail_msg("%s: said \"%s\", want one line \"%s...\"", given, out, want);
}

static void test_every_option_by_flag(void **state)
{
	struct parsed *p = *state;

	for (size_t i = 0; i < N_CASES; i++) {
		const struct option_case *k = &option_cases[i];
		char flag[64];
		snprintf(flag, sizeof(flag), "--%s", k->name);
		if (k->good)
			PARSE(p, flag, k->good);
		else
			PARSE(p, flag);
		if (p->r != CLI_RUN)
			fail_msg("%s %s: %s", flag, k->good ? k->good : "", strbuf_str(&p->out));
		check_case(k, p, flag);
		if (k->good) { /* and as --name=value */
			char both[128];
			snprintf(both, sizeof(both), "--%s=%s", k->name, k->good);
			assert_int_equal(PARSE(p, both), CLI_RUN);
			check_case(k, p, flag);
		}
	}
}

static void test_every_option_by_env(void **state)
{
	struct parsed *p = *state;

	for (size_t i = 0; i < N_CASES; i++) {
		const struct option_case *k = &option_cases[i];
		env_clear(NULL);
		env_set(k->env, k->good ? k->good : "1");
		if (PARSE0(p) != CLI_RUN)
			fail_msg("%s=%s: %s", k->env, k->good ? k->good : "1", strbuf_str(&p->out));
		check_case(k, p, k->env);
	}
}

/* "nodescope: bad --NAME 'V' (FORM)" and "nodescope: bad ENV='V' (FORM)", one line, exit 2. */
static void test_every_bad_value_has_a_message(void **state)
{
	struct parsed *p = *state;
	int wrong = 0;

	for (size_t i = 0; i < N_CASES; i++) {
		const struct option_case *k = &option_cases[i];
		char flag[64], want[256];
		if (!k->bad)
			continue;
		for (int by_env = 0; by_env < 2; by_env++) {
			env_clear(NULL);
			snprintf(flag, sizeof(flag), "--%s", k->name);
			if (by_env) {
				env_set(k->env, k->bad);
				PARSE0(p);
				snprintf(want, sizeof(want), "nodescope: bad %s='%s' (", k->env,
					 k->bad);
			} else {
				if (k->good)
					PARSE(p, flag, k->bad);
				else /* a flag takes no value on the command line */
					PARSE(p, "--verbose", flag, k->bad);
				snprintf(want, sizeof(want), "nodescope: bad %s '%s' (", flag,
					 k->bad);
			}
			if (!k->good && !by_env) {
				if (p->r != CLI_ERROR ||
				    !strstr(p->out.buf, "unexpected argument")) {
					print_error("%s %s: %s\n", flag, k->bad,
						    strbuf_str(&p->out));
					wrong++;
				}
				continue;
			}
			const char *msg = strbuf_str(&p->out);
			const char *nl = strchr(msg, '\n');
			if (p->r != CLI_ERROR || strncmp(msg, want, strlen(want)) ||
			    !strstr(msg, k->form) || !nl || nl[1] || nl[-1] != ')') {
				print_error("%s '%s': result %d, message \"%s\", want "
					    "\"%s...%s...)\"\n",
					    by_env ? k->env : flag, k->bad, p->r, msg, want,
					    k->form);
				wrong++;
			}
		}
	}
	assert_int_equal(wrong, 0);
}

static void test_message_forms(void **state)
{
	struct parsed *p = *state;

	/* the issue's own examples, whole */
	assert_int_equal(PARSE(p, "--max-connections", "0"), CLI_ERROR);
	assert_string_equal(strbuf_str(&p->out),
			    "nodescope: bad --max-connections '0' (1..16777216)\n");
	env_set("NODESCOPE_MAX_SERIES", "x");
	assert_int_equal(PARSE0(p), CLI_ERROR);
	assert_string_equal(strbuf_str(&p->out),
			    "nodescope: bad NODESCOPE_MAX_SERIES='x' (0..10000000)\n");
	env_clear(NULL);

	assert_int_equal(PARSE(p, "--tls-release-after", "5ms"), CLI_ERROR);
	assert_string_equal(
		strbuf_str(&p->out),
		"nodescope: bad --tls-release-after '5ms' (0..31536000 seconds, whole: 90, or "
		"Go's form: 90s, 10m, 1h30m)\n");
	env_set("EPHEMERAL_PORT_RANGE", "32768");
	assert_int_equal(PARSE0(p), CLI_ERROR);
	assert_string_equal(strbuf_str(&p->out),
			    "nodescope: bad EPHEMERAL_PORT_RANGE='32768' (LO-HI ranges separated by "
			    "blanks or commas (\"1024-23768 30000-65535\"), at most 16, ports 1..65535, "
			    "LO <= HI; \"\" for none)\n");
	env_clear(NULL);
	env_set("NODESCOPE_NO_TLS", "on");
	assert_int_equal(PARSE0(p), CLI_ERROR);
	assert_string_equal(
		strbuf_str(&p->out),
		"nodescope: bad NODESCOPE_NO_TLS='on' (1, 0, t, f, true, false, yes or no)\n");
	env_clear(NULL);
	assert_int_equal(PARSE(p, "--ringbuf-size", "nope=4k"), CLI_ERROR);
	assert_string_equal(strbuf_str(&p->out),
			    "nodescope: bad --ringbuf-size 'nope=4k' (unknown stream 'nope'; "
			    "streams: proc, tcp, l7, files)\n");
	assert_int_equal(PARSE(p, "--listen", "localhost:80"), CLI_ERROR);
	assert_string_equal(
		strbuf_str(&p->out),
		"nodescope: bad --listen 'localhost:80' (HOST:PORT, [IPV6]:PORT or :PORT, "
		"numeric; \"\" for none)\n");
}

/* Coroot's container filters: repeatable lists, a variable's lines, a default-on flag's negation. */
static void test_container_filters(void **state)
{
	struct parsed *p = *state;

	env_clear(NULL);
	assert_int_equal(PARSE0(p), CLI_RUN);
	assert_true(p->c.skip_systemd_system_services);
	assert_int_equal(p->c.container_allowlist.n + p->c.container_denylist.n, 0);

	assert_int_equal(PARSE(p, "--no-skip-systemd-system-services"), CLI_RUN);
	assert_false(p->c.skip_systemd_system_services);
	assert_int_equal(PARSE(p, "--no-skip-systemd-system-services=1"), CLI_ERROR);
	assert_non_null(strstr(p->out.buf, "--no-skip-systemd-system-services takes no value"));
	env_set("SKIP_SYSTEMD_SYSTEM_SERVICES", "false");
	assert_int_equal(PARSE0(p), CLI_RUN);
	assert_false(p->c.skip_systemd_system_services);
	assert_int_equal(PARSE(p, "--skip-systemd-system-services"), CLI_RUN); /* the flag wins */
	assert_true(p->c.skip_systemd_system_services);
	env_clear(NULL);

	assert_int_equal(PARSE(p, "--container-denylist", "a", "--container-denylist=b",
			       "--container-allowlist", "c"), CLI_RUN);
	assert_int_equal(p->c.container_denylist.n, 2);
	assert_string_equal(p->c.container_denylist.v[0], "a");
	assert_string_equal(p->c.container_denylist.v[1], "b");
	assert_int_equal(p->c.container_allowlist.n, 1);
	/* a variable holds one pattern a line, each checked (the filter splits them) */
	env_set("CONTAINER_DENYLIST", "ok\nalso(ok)\n");
	assert_int_equal(PARSE0(p), CLI_RUN);
	assert_int_equal(p->c.container_denylist.n, 1);
	env_set("CONTAINER_DENYLIST", "ok\n(bad");
	assert_int_equal(PARSE0(p), CLI_ERROR);
	assert_non_null(strstr(p->out.buf, "'(bad'"));
	env_clear(NULL);
	/* bounded */
	char *many[NS_LIST_MAX + 3] = { "nodescope" };
	struct ns_config c;
	struct strbuf out = STRBUF_INIT;
	for (int i = 0; i <= NS_LIST_MAX; i++)
		many[1 + i] = "--container-allowlist=x";
	assert_int_equal(cli_parse(NS_LIST_MAX + 2, many, fake_getenv, &c, &out), CLI_ERROR);
	assert_non_null(strstr(strbuf_str(&out), "at most 32 values"));
	strbuf_free(&out);
}

static void test_new_options_defaults(void **state)
{
	struct parsed *p = *state;

	assert_int_equal(PARSE0(p), CLI_RUN);
	assert_string_equal(p->c.cgroupfs_root, "/sys/fs/cgroup");
	assert_int_equal(p->c.ephemeral_ports.n, 1);
	assert_int_equal(p->c.ephemeral_ports.r[0].lo, 32768);
	assert_int_equal(p->c.ephemeral_ports.r[0].hi, 60999);
	assert_int_equal(p->c.min_container_age_ms, 0); /* Coroot's is 30 s: see --help */
	assert_int_equal(p->c.scrape_interval_ms, 15000);
	/* Coroot's 0.0.0.0/0: every IPv4 destination, no public IPv6 one */
	assert_int_equal(p->c.public_networks.n, 1);
	assert_int_equal(p->c.public_networks.v[0].family, AF_INET);
	assert_int_equal(p->c.public_networks.v[0].bits, 0);
	assert_int_equal(p->c.http_exclude.n, 0);
	assert_true(p->c.l7);
	assert_true(p->c.log_per_second == 10);
	assert_int_equal(p->c.log_burst, 100);
	assert_int_equal(p->c.max_label_length, 4096);
	assert_null(p->c.provider);
	assert_null(p->c.region);
	assert_null(p->c.availability_zone);
	assert_null(p->c.instance_type);
	assert_null(p->c.instance_life_cycle);
	assert_null(p->c.cgroup);
	assert_true(p->c.tls);
	assert_false(p->c.hold_first_runs);
	assert_int_equal(p->c.tls_release_after_s, 600);
	assert_int_equal(p->c.max_connections, 262144);
	assert_int_equal(p->c.max_destinations, 1000);
	assert_int_equal(p->c.max_l7_connections, 16384);
	assert_int_equal(p->c.kernel_lacks, 0);
	/* /metrics' limits (README "Operations") */
	assert_int_equal(p->c.http_max_per_client, 8);
	assert_int_equal(p->c.http_max_connections, 256);
	assert_int_equal(p->c.http_head_timeout_s, 5);
	assert_int_equal(p->c.http_idle_timeout_s, 10);
	/* Coroot turns the port filter off with an empty flag */
	assert_int_equal(PARSE(p, "--ephemeral-port-range", ""), CLI_RUN);
	assert_int_equal(p->c.ephemeral_ports.n, 0); /* none */
	assert_int_equal(PARSE(p, "--ephemeral-port-range", "1-65535"), CLI_RUN);
	assert_int_equal(p->c.ephemeral_ports.r[0].hi, 65535);
	assert_int_equal(PARSE(p, "--provider", ""), CLI_RUN); /* empty text: not given */
	assert_null(p->c.provider);
}

static void test_precedence(void **state)
{
	struct parsed *p = *state;

	/* the command line wins over the environment, which wins over the default */
	env_set("LISTEN", "0.0.0.0:1");
	env_set("NODESCOPE_MAX_SERIES", "7");
	assert_int_equal(PARSE0(p), CLI_RUN);
	assert_string_equal(p->c.listen, "0.0.0.0:1");
	assert_int_equal(p->c.max_series, 7);
	assert_int_equal(PARSE(p, "--listen", "127.0.0.1:2", "--max-series", "8"), CLI_RUN);
	assert_string_equal(p->c.listen, "127.0.0.1:2");
	assert_int_equal(p->c.max_series, 8);
	/* a flag given: its variable is not read, so not checked either */
	env_set("NODESCOPE_MAX_SERIES", "bogus");
	assert_int_equal(PARSE(p, "--max-series", "8"), CLI_RUN);
	assert_int_equal(p->c.max_series, 8);
	assert_int_equal(PARSE0(p), CLI_ERROR);
	/* per option: the environment still fills the others */
	env_set("NODESCOPE_MAX_SERIES", "7");
	assert_int_equal(PARSE(p, "--listen", "127.0.0.1:2"), CLI_RUN);
	assert_int_equal(p->c.max_series, 7);
	/* a repeatable option given on the command line takes nothing from its variable */
	env_set("NODESCOPE_RINGBUF_SIZE", "proc=64k,l7=16m");
	assert_int_equal(PARSE0(p), CLI_RUN);
	assert_int_equal(p->c.ring_size[NS_STREAM_PROC], 65536);
	assert_int_equal(p->c.ring_size[NS_STREAM_L7], 16u << 20);
	assert_int_equal(p->c.ring_size[NS_STREAM_TCP], 0);
	assert_int_equal(PARSE(p, "--ringbuf-size", "tcp=8k"), CLI_RUN);
	assert_int_equal(p->c.ring_size[NS_STREAM_PROC], 0);
	assert_int_equal(p->c.ring_size[NS_STREAM_TCP], 8192);
	/* a flag on the command line wins over its variable saying no */
	env_set("NODESCOPE_VERBOSE", "no");
	assert_int_equal(PARSE(p, "--verbose"), CLI_RUN);
	assert_true(p->c.verbose);
	/* trace serves HTTP when LISTEN gives an address, as when --listen does */
	assert_int_equal(PARSE(p, "trace"), CLI_RUN);
	assert_string_equal(p->c.listen, "0.0.0.0:1");
	env_clear(NULL);
	assert_int_equal(PARSE(p, "trace"), CLI_RUN);
	assert_null(p->c.listen);
}

static void test_env_empty(void **state)
{
	struct parsed *p = *state;

	/* set but empty: unset, as Coroot (kingpin) has it */
	static const char *const names[] = { "NODESCOPE_MAX_SERIES",
					     "CGROUPFS_ROOT",
					     "EPHEMERAL_PORT_RANGE",
					     "NODESCOPE_NO_TLS",
					     "NODESCOPE_EVENTS",
					     "NODESCOPE_RINGBUF_SIZE",
					     "PROVIDER",
					     "MIN_CONTAINER_AGE" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		env_set(names[i], "");
	assert_int_equal(PARSE0(p), CLI_RUN);
	assert_defaults_except_mode(&p->c);
	assert_string_equal(p->c.cgroupfs_root, "/sys/fs/cgroup");
	assert_int_equal(p->c.ephemeral_ports.r[0].lo, 32768);
	assert_true(p->c.tls);
	assert_null(p->c.provider);
	assert_string_equal(p->c.listen, NS_DEFAULT_LISTEN);
	/* except LISTEN="", which turns HTTP off as --listen "" does */
	env_set("LISTEN", "");
	assert_int_equal(PARSE0(p), CLI_RUN);
	assert_null(p->c.listen);
	assert_int_equal(PARSE(p, "trace"), CLI_RUN);
	assert_null(p->c.listen);
	assert_int_equal(PARSE(p, "--listen", "127.0.0.1:3"), CLI_RUN);
	assert_string_equal(p->c.listen, "127.0.0.1:3");
}

static void test_env_booleans(void **state)
{
	struct parsed *p = *state;
	/* Go's strconv.ParseBool's (Coroot's kingpin), and yes/no, any case */
	static const char *const yes[] = { "1", "t", "T", "true", "TRUE", "True", "yes", "YES", "yEs" };
	static const char *const no[] = { "0", "f", "F", "false", "FALSE", "False", "no", "No" };
	static const char *const bad[] = { "2", "on", "off", "y",     "n",
					   "tr", " 1", "1 ",  "truee", "-1" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		env_set("NODESCOPE_VERBOSE", yes[i]);
		env_set("NODESCOPE_NO_TLS", yes[i]);
		assert_int_equal(PARSE0(p), CLI_RUN);
		assert_true(p->c.verbose);
		assert_false(p->c.tls);
	}
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		env_set("NODESCOPE_VERBOSE", no[i]);
		env_set("NODESCOPE_NO_TLS", no[i]);
		assert_int_equal(PARSE0(p), CLI_RUN);
		assert_false(p->c.verbose);
		assert_true(p->c.tls);
	}
	env_clear(NULL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[128];
		env_set("NODESCOPE_HOLD_FIRST_RUNS", bad[i]);
		assert_int_equal(PARSE0(p), CLI_ERROR);
		snprintf(want, sizeof(want),
			 "nodescope: bad NODESCOPE_HOLD_FIRST_RUNS='%s' (1, 0, t, f, true, false, yes "
			 "or no)\n",
			 bad[i]);
		assert_string_equal(strbuf_str(&p->out), want);
	}
}

static void test_hold_conflict_names_its_sources(void **state)
{
	struct parsed *p = *state;

	env_set("NODESCOPE_NO_TLS", "1");
	assert_int_equal(PARSE(p, "--hold-first-runs"), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "--hold-first-runs holds processes");
	assert_contains(strbuf_str(&p->out), "(drop NODESCOPE_NO_TLS)");
	env_set("NODESCOPE_HOLD_FIRST_RUNS", "yes");
	assert_int_equal(PARSE0(p), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "NODESCOPE_HOLD_FIRST_RUNS holds processes");
	env_clear(NULL);
	env_set("NODESCOPE_HOLD_FIRST_RUNS", "yes");
	assert_int_equal(PARSE(p, "--no-tls"), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "(drop --no-tls)");
	/* NODESCOPE_NO_TLS=0 is no --no-tls */
	env_set("NODESCOPE_NO_TLS", "0");
	assert_int_equal(PARSE0(p), CLI_RUN);
	assert_true(p->c.hold_first_runs && p->c.tls);
}

/* The process' own environment, as main gives it: set here, and put back. */
static void test_real_environment(void **state)
{
	struct parsed *p = *state;
	const char *old = getenv("NODESCOPE_MAX_SERIES");
	char *saved = old ? strdup(old) : NULL;
	char *argv[] = { "nodescope", NULL };

	assert_int_equal(setenv("NODESCOPE_MAX_SERIES", "42", 1), 0);
	strbuf_reset(&p->out);
	assert_int_equal(cli_parse(1, argv, cli_environ, &p->c, &p->out), CLI_RUN);
	assert_int_equal(p->c.max_series, 42);
	assert_int_equal(setenv("NODESCOPE_MAX_SERIES", "-1", 1), 0);
	assert_int_equal(cli_parse(1, argv, cli_environ, &p->c, &p->out), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "bad NODESCOPE_MAX_SERIES='-1'");
	/* and none at all */
	strbuf_reset(&p->out);
	assert_int_equal(cli_parse(1, argv, NULL, &p->c, &p->out), CLI_RUN);
	assert_int_equal(p->c.max_series, 10000);
	if (saved)
		setenv("NODESCOPE_MAX_SERIES", saved, 1);
	else
		unsetenv("NODESCOPE_MAX_SERIES");
	free(saved);
}

/* Coroot's options, as facts from its source: the data file the e2e tests read too. */
#define COROOT_FLAGS "tests/e2e/data/coroot_flags.json"

static json_t *coroot_flags(void)
{
	json_error_t e;
	json_t *j = json_load_file(COROOT_FLAGS, 0, &e);
	if (!j)
		fail_msg("%s:%d: %s (run from the repository's top)", COROOT_FLAGS, e.line, e.text);
	return j;
}

static bool is_coroot(json_t *flags, const char *name)
{
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(flags, "flags"), i, f)
		if (!strcmp(json_string_value(json_object_get(f, "flag")), name))
			return true;
	return false;
}

/* Coroot's variables are Coroot's: its name in upper case; ours have NODESCOPE_ before it. */
static void test_env_names_follow_the_rule(void **state)
{
	json_t *flags = coroot_flags();
	int wrong = 0;

	for (size_t i = 0; i < cli_opts_count; i++) {
		const struct cli_opt *o = &cli_opts[i];
		char want[96];
		size_t n;
		if (!has_value(o))
			continue;
		n = (size_t)snprintf(want, sizeof(want), "%s",
				     is_coroot(flags, o->name) ? "" : "NODESCOPE_");
		for (const char *s = o->name; *s && n < sizeof(want) - 1; s++)
			want[n++] = *s == '-' ? '_' : (char)(*s >= 'a' && *s <= 'z' ? *s - 32 : *s);
		want[n] = '\0';
		if (!o->env || strcmp(o->env, want)) {
			print_error("--%s: variable %s, want %s\n", o->name,
				    o->env ? o->env : "none", want);
			wrong++;
		}
	}
	json_decref(flags);
	assert_int_equal(wrong, 0);
}

/* One warning line, naming how it was given, for Coroot's not implemented; else silence. */
static int coroot_said(const struct parsed *p, const char *given, bool not_implemented)
{
	const char *out = p->out.buf ? p->out.buf : "";
	char want[128];

	snprintf(want, sizeof(want), "%s: not implemented yet, ignored", given);
	if (not_implemented ? strncmp(out, want, strlen(want)) || strchr(out, '\n')[1] : !!*out) {
		print_error("%s: said \"%s\"\n", given, out);
		return 1;
	}
	return 0;
}

/*
 * Every option of Coroot's agent is accepted by its name and by its
 * variable, never refused as unknown (exit 2): implemented ones silently,
 * the others with their one warning. The table's not-implemented rows are
 * exactly the data's.
 */
static void test_coroot_flags(void **state)
{
	struct parsed *p = *state;
	json_t *flags = coroot_flags(), *f, *v;
	json_t *bools = json_object_get(flags, "bool_env_values");
	int wrong = 0, n = 0;
	size_t i, k;

	json_array_foreach(json_object_get(flags, "flags"), i, f) {
		const char *name = json_string_value(json_object_get(f, "flag"));
		const char *env = json_string_value(json_object_get(f, "env"));
		const char *sample = json_string_value(json_object_get(f, "sample"));
		const char *kind = json_string_value(json_object_get(f, "nodescope"));
		const struct cli_opt *o = cli_opt_find(name);
		char flag[80], neg[80];
		n++;
		if (!o) {
			print_error("--%s: no row\n", name), wrong++;
			continue;
		}
		bool not_impl = !strcmp(kind, "not_implemented");
		if (!!(o->flags & CLI_NOT_IMPLEMENTED) != not_impl)
			print_error("--%s: row and data disagree on implemented\n", name), wrong++;
		if ((env == NULL) != (o->env == NULL) || (env && strcmp(env, o->env)))
			print_error("--%s: variable %s, Coroot's %s\n", name, o->env, env), wrong++;
		snprintf(flag, sizeof(flag), "--%s", name);
		if (o->kind == CLI_VERSION) {
			if (PARSE(p, flag) != CLI_EXIT_OK)
				print_error("%s refused\n", flag), wrong++;
			continue;
		}
		if ((sample ? PARSE(p, flag, sample) : PARSE(p, flag)) != CLI_RUN)
			print_error("%s %s: %s", flag, sample ? sample : "", strbuf_str(&p->out)),
				wrong++;
		else
			wrong += coroot_said(p, flag, not_impl);
		if (!sample) { /* kingpin's --no-NAME */
			snprintf(neg, sizeof(neg), "--no-%s", name);
			if (PARSE(p, neg) != CLI_RUN)
				print_error("%s: %s", neg, strbuf_str(&p->out)), wrong++;
		}
		env_clear(NULL);
		env_set(env, sample ? sample : "true");
		if (PARSE0(p) != CLI_RUN)
			print_error("%s: %s", env, strbuf_str(&p->out)), wrong++;
		else
			wrong += coroot_said(p, env, not_impl);
		for (k = 0; !sample && k < json_array_size(bools); k++) {
			env_set(env, json_string_value(json_array_get(bools, k)));
			if (PARSE0(p) != CLI_RUN)
				print_error("%s: %s", env, strbuf_str(&p->out)), wrong++;
		}
		env_clear(NULL);
	}
	/* and no row is "not implemented" that the data does not say is Coroot's so */
	for (i = 0; i < cli_opts_count; i++) {
		if (!(cli_opts[i].flags & CLI_NOT_IMPLEMENTED))
			continue;
		bool found = false;
		json_array_foreach(json_object_get(flags, "flags"), k, v)
			found |= !strcmp(json_string_value(json_object_get(v, "flag")),
					 cli_opts[i].name) &&
				 !strcmp(json_string_value(json_object_get(v, "nodescope")),
					 "not_implemented");
		if (!found)
			print_error("--%s: not implemented, but not so in the data\n",
				    cli_opts[i].name), wrong++;
	}
	json_decref(flags);
	assert_int_equal(n, 43); /* Coroot's count */
	assert_int_equal(wrong, 0);
}

/* Our own unknown options still exit 2, and --no- exists only for options without a value. */
static void test_unknown_and_negated(void **state)
{
	struct parsed *p = *state;

	assert_int_equal(PARSE(p, "--no-such-option"), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "unknown option '--no-such-option'");
	assert_int_equal(PARSE(p, "--disable-l7-tracing", "--no-disable-l7-tracing"), CLI_RUN);
	assert_true(p->c.l7);
	assert_int_equal(PARSE(p, "--no-disable-l7-tracing", "--disable-l7-tracing"), CLI_RUN);
	assert_false(p->c.l7);
	assert_int_equal(PARSE(p, "--verbose", "--no-verbose"), CLI_RUN);
	assert_false(p->c.verbose);
	assert_int_equal(PARSE(p, "--no-verbose=1"), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "--no-verbose takes no value");
	assert_int_equal(PARSE(p, "--no-listen"), CLI_ERROR);
	assert_int_equal(PARSE(p, "--no-no-tls"), CLI_ERROR);
	/* a negated one given is still given: Coroot's not implemented warns */
	assert_int_equal(PARSE(p, "--no-disable-pinger"), CLI_RUN);
	assert_contains(strbuf_str(&p->out), "--no-disable-pinger: not implemented yet");
	/* one warning each, however often given */
	assert_int_equal(PARSE(p, "--disable-pinger", "--disable-pinger", "--traces-sampling", "1",
			       "--traces-sampling", "0"),
			 CLI_RUN);
	const char *out = strbuf_str(&p->out);
	static const char *const once[] = { "--disable-pinger: not", "--traces-sampling: not" };
	for (size_t i = 0; i < 2; i++) {
		assert_non_null(strstr(out, once[i]));
		assert_null(strstr(strstr(out, once[i]) + 1, once[i]));
	}
}

/* A repeatable option: given values add up, the first replaces the default; its variable splits. */
static void test_repeatable(void **state)
{
	struct parsed *p = *state;

	assert_int_equal(PARSE(p, "--track-public-network", "1.0.0.0/8", "--track-public-network",
			       "2.0.0.0/8"),
			 CLI_RUN);
	assert_int_equal(p->c.public_networks.n, 2);
	assert_int_equal(p->c.public_networks.v[1].addr[0], 2);
	/* as the Coroot operator passes it: newline-separated, blanks too */
	env_set("TRACK_PUBLIC_NETWORK", "1.0.0.0/8\n2.0.0.0/8 3.0.0.0/8\n");
	assert_int_equal(PARSE0(p), CLI_RUN);
	assert_int_equal(p->c.public_networks.n, 3);
	assert_int_equal(PARSE(p, "--track-public-network", "9.0.0.0/8"), CLI_RUN);
	assert_int_equal(p->c.public_networks.n, 1); /* the command line wins */
	assert_int_equal(p->c.public_networks.v[0].addr[0], 9);
	assert_int_equal(PARSE(p, "--track-public-network", ""), CLI_RUN);
	assert_int_equal(p->c.public_networks.n, 0); /* Coroot's "": no public network kept */
	env_set("EXCLUDE_HTTP_REQUESTS_BY_PATH", "/a\n/b*");
	assert_int_equal(PARSE0(p), CLI_RUN);
	assert_int_equal(p->c.http_exclude.n, 2);
	assert_memory_equal(p->c.http_exclude.v[1].p, "/b*", 3);
	env_clear(NULL);
	/* bounded, and said so */
	static char many[65 * 12];
	size_t at = 0;
	for (int i = 0; i < 65; i++)
		at += (size_t)snprintf(many + at, sizeof(many) - at, "%d.0.0.0/8 ", i + 1);
	env_set("TRACK_PUBLIC_NETWORK", many);
	assert_int_equal(PARSE0(p), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "(at most 64 networks)");
}

/* --help lists every option not hidden, with its variable, and nothing else. */
static void test_help_and_table_agree(void **state)
{
	struct strbuf help = STRBUF_INIT;
	int wrong = 0, listed = 0, shown = 0;

	cli_help(&help);
	for (size_t i = 0; i < cli_opts_count; i++) {
		const struct cli_opt *o = &cli_opts[i];
		char name[64], env[80];
		if (o->kind == CLI_HEADING) {
			snprintf(name, sizeof(name), "\n%s:\n", o->name);
			if (!strstr(help.buf, name))
				print_error("heading '%s' missing\n", o->name), wrong++;
			continue;
		}
		snprintf(name, sizeof(name), "--%s%s", o->name, o->metavar ? " " : "");
		snprintf(env, sizeof(env), " env %s\n", o->env ? o->env : "");
		bool hidden = o->flags & CLI_HIDDEN;
		shown += !hidden;
		if (hidden == !!strstr(help.buf, name))
			print_error("--%s %s\n", o->name, hidden ? "shown" : "missing"), wrong++;
		if (o->env && hidden == !!strstr(help.buf, env))
			print_error("%s %s\n", o->env, hidden ? "shown" : "missing"), wrong++;
		if (o->def && !hidden && !strstr(help.buf, o->def))
			print_error("--%s: default %s missing\n", o->name, o->def), wrong++;
	}
	/* every option line of the help is a row of the table */
	for (const char *line = help.buf; line && *line;
	     line = strchr(line, '\n'), line += !!line) {
		const char *dd = NULL;
		if (!strncmp(line, "  --", 4))
			dd = line + 4;
		else if (!strncmp(line, "  -h, --", 8))
			dd = line + 8;
		if (!dd)
			continue;
		char name[64];
		if (!strncmp(dd, "[no-]", 5))
			dd += 5;
		size_t n = strcspn(dd, " \n");
		snprintf(name, sizeof(name), "%.*s", (int)n, dd);
		const struct cli_opt *o = cli_opt_find(name);
		if (!o || (o->flags & CLI_HIDDEN))
			print_error("help lists --%s\n", name), wrong++;
		listed++;
	}
	assert_int_equal(listed, shown);
	/* aligned and within 80 columns */
	for (const char *line = help.buf; *line;) {
		size_t n = strcspn(line, "\n");
		if (n > 80)
			print_error("line too long: %.*s\n", (int)n, line), wrong++;
		line += n + (line[n] == '\n');
	}
	/* the text column is where the longest "--name VALUE" leaves room for it */
	assert_contains(help.buf, "\n  --ephemeral-port-range RANGES\n"
				  "                                TCP destinations");
	assert_contains(help.buf, "\n  --max-connections N           connection table size");
	assert_contains(help.buf,
			"\n                                env NODESCOPE_MAX_CONNECTIONS\n");
	assert_int_equal(wrong, 0);
	strbuf_free(&help);
}

/* ---- the value forms ---- */

static void test_parse_seconds(void **state)
{
	static const struct {
		const char *s;
		long long v;
	} good[] = {
		{ "0", 0 },
		{ "90", 90 },
		{ "90s", 90 },
		{ "10m", 600 },
		{ "1h", 3600 },
		{ "1h30m", 5400 },
		{ "2h45m10s", 9910 },
		{ "0s", 0 },
		{ "1m1m", 120 },
		{ "8760h", 31536000 },
		{ "31536000", 31536000 },
		{ "1.5h", 5400 },
		{ "2000ms", 2 },
		{ "0.5m", 30 },
	};
	static const char *const bad[] = {
		"",
		"s",
		"500ms",
		"1.5",
		".s",
		"1us",
		"1d",
		"-1",
		"+1",
		"1h-",
		" 1",
		"1 ",
		"10 m",
		"1H",
		"31536001",
		"8761h",
		"525601m",
		"99999999999999999999999s",
		"1h1",
	};
	long long v;
	int wrong = 0;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (cli_parse_seconds(good[i].s, 0, 31536000, &v) || v != good[i].v)
			print_error("'%s' -> %lld\n", good[i].s, v), wrong++;
	v = 12345;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (cli_parse_seconds(bad[i], 0, 31536000, &v) != -EINVAL)
			print_error("'%s' accepted\n", bad[i]), wrong++;
	assert_int_equal(v, 12345);
	assert_int_equal(cli_parse_seconds("9s", 10, 20, &v), -EINVAL);
	assert_int_equal(wrong, 0);
}

static void test_parse_int_and_ports(void **state)
{
	long long v;
	struct ns_port_range r = { 1, 2 };

	assert_int_equal(cli_parse_int("-20", -20, 19, &v), 0);
	assert_int_equal(v, -20);
	assert_int_equal(cli_parse_int("19", -20, 19, &v), 0);
	assert_int_equal(cli_parse_int("-21", -20, 19, &v), -EINVAL);
	assert_int_equal(cli_parse_int("-1", 0, 19, &v), -EINVAL);
	assert_int_equal(cli_parse_int("+1", 0, 19, &v), -EINVAL);
	assert_int_equal(cli_parse_int("-", -5, 19, &v), -EINVAL);
	assert_int_equal(cli_parse_int("", 0, 19, &v), -EINVAL);
	assert_int_equal(cli_parse_int("-18446744073709551615", 0, 100, &v), -EINVAL);
	assert_int_equal(cli_parse_int("99999999999999999999999", 0, 100, &v), -EINVAL);

	assert_int_equal(cli_parse_port_range("32768-60999", &r), 0);
	assert_int_equal(r.lo, 32768);
	assert_int_equal(r.hi, 60999);
	assert_int_equal(cli_parse_port_range("80-80", &r), 0);
	static const char *const bad[] = { "",	     "80",	 "80-",	     "-80",
					   "0-80",   "80-65536", "90-80",    "80 - 90",
					   "80-90x", "a-b",	 "80-90-100" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (cli_parse_port_range(bad[i], &r) != -EINVAL)
			fail_msg("port range '%s' accepted", bad[i]);
	assert_int_equal(r.lo, 80);
}

static void test_parse_duration(void **state)
{
	static const struct {
		const char *s;
		unsigned long long ns;
	} good[] = {
		{ "500ms", 500000000ull },   { "1.5s", 1500000000ull },   { "1m30s", 90000000000ull },
		{ "250ms", 250000000ull },   { "1h", 3600000000000ull },  { "1.5h", 5400000000000ull },
		{ "100us", 100000ull },	     { "100\u00b5s", 100000ull }, { "100\u03bcs", 100000ull },
		{ "3ns", 3 },		     { ".5s", 500000000ull },	  { "1.s", 1000000000ull },
		{ "+5s", 5000000000ull },    { "0", 0 },		  { "90", 90000000000ull },
		{ "1h1m1s1ms1us1ns", 3661001001001ull }, { "0.000000001s", 1 },
		{ "1.0000000001s", 1000000000ull }, /* finer than a nanosecond: dropped, as Go */
		{ "2562047h", 2562047ull * 3600000000000ull },
	};
	static const char *const bad[] = { "",	   "s",	   "1.5",     ".",	"-1s",	 "1x",
					   "1 s",  "1s ",  " 1s",     "1S",	"1d",	 "2562048h",
					   "9223372037s",	   "+",	"1h-",	 "ms",
					   "1..5s" };
	unsigned long long ns;
	int wrong = 0;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (cli_parse_duration(good[i].s, &ns) || ns != good[i].ns)
			print_error("'%s' -> %llu\n", good[i].s, ns), wrong++;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (cli_parse_duration(bad[i], &ns) != -EINVAL)
			print_error("'%s' accepted\n", bad[i]), wrong++;
	assert_int_equal(wrong, 0);

	/* milliseconds: whole ones only, in bounds */
	long long ms;
	assert_int_equal(cli_parse_millis("500ms", 100, 86400000, &ms), 0);
	assert_int_equal(ms, 500);
	assert_int_equal(cli_parse_millis("1.5s", 100, 86400000, &ms), 0);
	assert_int_equal(ms, 1500);
	assert_int_equal(cli_parse_millis("2", 100, 86400000, &ms), 0);
	assert_int_equal(ms, 2000);
	assert_int_equal(cli_parse_millis("1500us", 100, 86400000, &ms), -EINVAL);
	assert_int_equal(cli_parse_millis("99ms", 100, 86400000, &ms), -EINVAL);
	assert_int_equal(cli_parse_millis("24h1ms", 100, 86400000, &ms), -EINVAL);
	assert_int_equal(cli_parse_millis("24h", 100, 86400000, &ms), 0);
	assert_int_equal(ms, 86400000);
}

static void test_parse_floats(void **state)
{
	double v;

	assert_int_equal(cli_parse_float("10.0", 0, 1e9, &v), 0);
	assert_true(v == 10);
	assert_int_equal(cli_parse_float("0.0025", 0, 1, &v), 0);
	assert_true(v == 0.0025);
	assert_int_equal(cli_parse_float("1e3", 0, 1e9, &v), 0);
	assert_true(v == 1000);
	assert_int_equal(cli_parse_float(".5", 0, 1, &v), 0);
	static const char *const bad[] = { "", "x", "nan", "inf", "0x10", " 1", "1 ", "-0.1", "1.5", "1,5", "+1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (cli_parse_float(bad[i], 0, 1, &v) != -EINVAL)
			fail_msg("'%s' accepted", bad[i]);
}

static void test_parse_port_ranges(void **state)
{
	struct ns_port_ranges r;

	assert_int_equal(cli_parse_port_ranges("1024-23768 30000-65535", &r), 0);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.r[0].lo, 1024);
	assert_int_equal(r.r[0].hi, 23768);
	assert_int_equal(r.r[1].lo, 30000);
	assert_int_equal(r.r[1].hi, 65535);
	assert_int_equal(cli_parse_port_ranges(" 1-2,3-4\n\t5-6 ", &r), 0); /* commas too, as Coroot */
	assert_int_equal(r.n, 3);
	assert_int_equal(r.r[2].hi, 6);
	static const char *const bad[] = { "", " ", ",", "1-2 x", "2-1", "1-2 3", "1-2-3", "0-5",
					   "1-65536",
					   "1-1 2-2 3-3 4-4 5-5 6-6 7-7 8-8 9-9 10-10 11-11 12-12 13-13 "
					   "14-14 15-15 16-16 17-17" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (cli_parse_port_ranges(bad[i], &r) != -EINVAL)
			fail_msg("'%s' accepted", bad[i]);
}

static void test_parse_cidr(void **state)
{
	static const struct {
		const char *s;
		uint16_t family;
		uint8_t bits;
		uint8_t addr[16];
	} good[] = {
		{ "10.1.2.3/8", AF_INET, 8, { 10 } },
		{ "1.2.3.4", AF_INET, 32, { 1, 2, 3, 4 } },
		{ "0.0.0.0/0", AF_INET, 0, { 0 } },
		{ "203.0.113.77/25", AF_INET, 25, { 203, 0, 113, 0 } },
		{ "::/0", AF_INET6, 0, { 0 } },
		{ "2001:db8::1/32", AF_INET6, 32, { 0x20, 0x01, 0x0d, 0xb8 } },
		{ "::1", AF_INET6, 128, { [15] = 1 } },
	};
	static const char *const bad[] = { "1.2.3.4/33", "::/129", "1.2.3/8", "x", "/8",
					   "1.2.3.4/", "1.2.3.4/8x", "1.2.3.4/-1", "" };
	struct ns_cidr c;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (cli_parse_cidr(good[i].s, strlen(good[i].s), &c))
			fail_msg("'%s' refused", good[i].s);
		assert_int_equal(c.family, good[i].family);
		assert_int_equal(c.bits, good[i].bits);
		assert_memory_equal(c.addr, good[i].addr, 16);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (cli_parse_cidr(bad[i], strlen(bad[i]), &c) != -EINVAL)
			fail_msg("'%s' accepted", bad[i]);
	/* a piece of a longer value */
	assert_int_equal(cli_parse_cidr("1.0.0.0/8 2.0.0.0/8", 9, &c), 0);
	assert_int_equal(c.addr[0], 1);
}

/* gobwas/glob's forms without separators, as Coroot compiles the patterns. */
static void test_globs(void **state)
{
	static const struct {
		const char *pat, *path;
		bool match;
	} cases[] = {
		{ "/health*", "/healthz", true },
		{ "/health*", "/health", true },
		{ "/health*", "/api/health", false },
		{ "*", "/a/b", true }, /* '*' takes '/' too */
		{ "/api/*/status", "/api/x/y/status", true },
		{ "/api/*/status", "/api/x/y/statuses", false },
		{ "*/metrics", "/a/metrics", true },
		{ "/a?c", "/abc", true },
		{ "/a?c", "/ac", false },
		{ "/[ab]x", "/bx", true },
		{ "/[!ab]x", "/bx", false },
		{ "/[!ab]x", "/cx", true },
		{ "/[a-c]x", "/cx", true },
		{ "/[a-c]x", "/dx", false },
		{ "/{ready,live}", "/live", true },
		{ "/{ready,live}", "/lively", false },
		{ "/{ready,live}z", "/readyz", true },
		{ "/{a,b{c,d}}", "/bd", true },
		{ "/{a,b{c,d}}", "/b", false },
		{ "/{x*,y}/z", "/xyz/z", true },
		{ "/\\*", "/*", true },
		{ "/\\*", "/a", false },
		{ "", "", true },
		{ "/x", "/x/", false },
		{ "*a*b*c*", "/aXbXc", true },
		{ "*a*b*c*", "/aXcXb", false },
		{ "/{a,b}/{c,d}", "/b/c", true },
		{ "/{a,b}/{c,d}", "/b/e", false },
		{ "{a*,*b}", "xb", true },
		{ "/a,b", "/a,b", true },
		{ "/[,]", "/,", true },
		{ "/[a\\]]", "/]", true },
	};
	static const char *const invalid[] = { "[a", "{a", "a}", "/x\\", "{a,[b}",
					       "{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}" /* 128 */ };
	int wrong = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *pat = cases[i].pat, *path = cases[i].path;
		if (!glob_valid(pat, strlen(pat)))
			print_error("'%s' invalid\n", pat), wrong++;
		else if (glob_match(pat, strlen(pat), path, strlen(path)) != cases[i].match)
			print_error("'%s' on '%s': want %d\n", pat, path, cases[i].match), wrong++;
	}
	for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++)
		if (glob_valid(invalid[i], strlen(invalid[i])))
			print_error("'%s' valid\n", invalid[i]), wrong++;
	assert_true(glob_valid("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}", 30)); /* 64 */
	/* a path from the network cannot make a pattern of many stars backtrack without end */
	char path[256];
	memset(path, 'a', sizeof(path) - 1);
	path[255] = '\0';
	const char *stars = "*a*a*a*a*a*a*a*a*b";
	assert_false(glob_match(stars, strlen(stars), path, 255));
	path[254] = 'b';
	assert_true(glob_match(stars, strlen(stars), path, 255));
	assert_int_equal(wrong, 0);
}

/* ---- http_parse_listen ---- */

static void test_listen_ipv4(void **state)
{
	struct sockaddr_storage ss;
	unsigned len = 0;
	const struct sockaddr_in *sin = (const struct sockaddr_in *)&ss;

	assert_int_equal(http_parse_listen("127.0.0.1:9645", &ss, &len), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(len, sizeof(struct sockaddr_in));
	assert_int_equal(ntohs(sin->sin_port), 9645);
	assert_int_equal(ntohl(sin->sin_addr.s_addr), INADDR_LOOPBACK);

	assert_int_equal(http_parse_listen("10.1.2.3:0", &ss, &len), 0);
	assert_int_equal(ntohs(sin->sin_port), 0);
	assert_int_equal(ntohl(sin->sin_addr.s_addr), 0x0a010203);

	assert_int_equal(http_parse_listen("0.0.0.0:65535", &ss, &len), 0);
	assert_int_equal(ntohs(sin->sin_port), 65535);
	assert_int_equal(sin->sin_addr.s_addr, htonl(INADDR_ANY));
}

static void test_listen_all_ipv4(void **state)
{
	struct sockaddr_storage ss;
	unsigned len = 0;
	const struct sockaddr_in *sin = (const struct sockaddr_in *)&ss;

	memset(&ss, 0xff, sizeof(ss));
	assert_int_equal(http_parse_listen(":8080", &ss, &len), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(len, sizeof(struct sockaddr_in));
	assert_int_equal(ntohs(sin->sin_port), 8080);
	assert_int_equal(sin->sin_addr.s_addr, htonl(INADDR_ANY));
}

static void test_listen_ipv6(void **state)
{
	struct sockaddr_storage ss;
	unsigned len = 0;
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)&ss;

	assert_int_equal(http_parse_listen("[::1]:80", &ss, &len), 0);
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_int_equal(len, sizeof(struct sockaddr_in6));
	assert_int_equal(ntohs(sin6->sin6_port), 80);
	assert_memory_equal(&sin6->sin6_addr, &in6addr_loopback, sizeof(struct in6_addr));

	assert_int_equal(http_parse_listen("[::]:443", &ss, &len), 0);
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_int_equal(ntohs(sin6->sin6_port), 443);
	assert_memory_equal(&sin6->sin6_addr, &in6addr_any, sizeof(struct in6_addr));

	struct in6_addr want;
	assert_int_equal(inet_pton(AF_INET6, "fe80::1:2", &want), 1);
	assert_int_equal(http_parse_listen("[fe80::1:2]:9645", &ss, &len), 0);
	assert_int_equal(ntohs(sin6->sin6_port), 9645);
	assert_memory_equal(&sin6->sin6_addr, &want, sizeof(want));
	assert_int_equal(sin6->sin6_flowinfo, 0);
	assert_int_equal(sin6->sin6_scope_id, 0);
}

static void test_listen_bad(void **state)
{
	static const char *const bad[] = {
		"",
		":",
		"127.0.0.1",
		"127.0.0.1:",
		"127.0.0.1:65536",
		"127.0.0.1:99999999999999999999999",
		"127.0.0.1:abc",
		"127.0.0.1:80x",
		"127.0.0.1:-1",
		"127.0.0.1:+80",
		"127.0.0.1: 80",
		"127.0.0.1:-18446744073709551615", /* strtoul negates this to 1 */
		"localhost:80",
		"256.0.0.1:80",
		"1.2.3:80x",
		"[::1]",
		"[::1]80",
		"[::1:80",
		"[::1]:",
		"[::1]:65536",
		"[nothex]:80",
		"[:::]:80",
		"::1",
		"0000000000000000000000000000000000000000000000000000000000000000000000000"
		"0000000000000000000000000000000000000000000000000000000000001.2.3.4:80",
		"[00000000000000000000000000000000000000000000000000000000000000000000000"
		"00000000000000000000000000000000000000000000000000000000000000::1]:80",
	};
	int wrong = 0;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sockaddr_storage ss;
		unsigned len = 0;
		int err = http_parse_listen(bad[i], &ss, &len);
		if (err != -EINVAL) {
			print_error("http_parse_listen(\"%s\") = %d, want -EINVAL\n", bad[i], err);
			wrong++;
		}
	}
	assert_int_equal(wrong, 0);
}

#define T(f) cmocka_unit_test_setup(f, env_clear)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_defaults_run),
		T(test_defaults_trace),
		T(test_listen),
		T(test_listen_empty_disables_http),
		T(test_events),
		T(test_events_unknown),
		T(test_hold_first_runs),
		T(test_nice),
		T(test_debug_kernel_lacks),
		T(test_ringbuf_size_all),
		T(test_ringbuf_size_one_stream),
		T(test_ringbuf_size_bad),
		T(test_parse_ring_size),
		T(test_numbers),
		T(test_help_version),
		T(test_unknown_option),
		T(test_unknown_short_in_cluster),
		T(test_missing_value),
		T(test_stray_argument),
		T(test_repeated_parses_independent),
		T(test_cases_cover_the_table),
		T(test_every_option_by_flag),
		T(test_every_option_by_env),
		T(test_every_bad_value_has_a_message),
		T(test_message_forms),
		T(test_new_options_defaults),
		T(test_container_filters),
		T(test_precedence),
		T(test_env_empty),
		T(test_env_booleans),
		T(test_hold_conflict_names_its_sources),
		T(test_real_environment),
		T(test_env_names_follow_the_rule),
		T(test_coroot_flags),
		T(test_unknown_and_negated),
		T(test_repeatable),
		T(test_help_and_table_agree),
		T(test_parse_seconds),
		T(test_parse_int_and_ports),
		T(test_parse_duration),
		T(test_parse_floats),
		T(test_parse_port_ranges),
		T(test_parse_cidr),
		T(test_globs),
		T(test_listen_ipv4),
		T(test_listen_all_ipv4),
		T(test_listen_ipv6),
		T(test_listen_bad),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
