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

#include "cli.h"
#include "cli_table.h"
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
	assert_int_equal(c->min_container_age_s, 90);
}
static void check_ports(const struct ns_config *c)
{
	assert_int_equal(c->ephemeral_ports.lo, 1024);
	assert_int_equal(c->ephemeral_ports.hi, 2048);
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
	assert_int_equal(c->scrape_interval_s, 30);
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
 * variable fails), a good value (NULL: a flag) and what it must set, and a
 * bad value (NULL: none, any text is good) with the form the message names.
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
	  "(0..31536000 seconds" },
	{ "ephemeral-port-range", "EPHEMERAL_PORT_RANGE", "1024-2048", check_ports, "2048-1024",
	  "LO <= HI" },
	{ "no-tls", "NODESCOPE_NO_TLS", NULL, check_no_tls, "maybe",
	  "(1, 0, true, false, yes or no)" },
	{ "tls-release-after", "NODESCOPE_TLS_RELEASE_AFTER", "1h", check_release, "1.5h",
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
	{ "scrape-interval", "SCRAPE_INTERVAL", "30s", check_interval, "0", "1..86400 seconds" },
	{ "wal-dir", "WAL_DIR", "/data/wal", check_wal, "wal", "an absolute path" },
	{ "max-spool-size", "MAX_SPOOL_SIZE", "2GB", check_spool, "1KB", "4KB..1024GB" },
	{ "ca-file", "CA_FILE", "/etc/ca.pem", check_ca },
	{ "insecure-skip-verify", "INSECURE_SKIP_VERIFY", NULL, check_insecure, "2", "yes or no" },
	{ "max-series-per-write", "NODESCOPE_MAX_SERIES_PER_WRITE", "500", check_per_write, "0",
	  "(1..1000000)" },
	{ "nice", "NODESCOPE_NICE", "-5", check_nice, "20", "(-20..19)" },
	{ "batch-nice", "NODESCOPE_BATCH_NICE", "7", check_batch_nice, "-21", "(-20..19)" },
	{ "verbose", "NODESCOPE_VERBOSE", NULL, check_verbose, "on", "yes or no" },
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
		k->check(&p->c);
		if (k->good) { /* and as --name=value */
			char both[128];
			snprintf(both, sizeof(both), "--%s=%s", k->name, k->good);
			assert_int_equal(PARSE(p, both), CLI_RUN);
			k->check(&p->c);
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
		k->check(&p->c);
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
		"nodescope: bad --tls-release-after '5ms' (0..31536000 seconds, or with "
		"units: 90s, 10m, 1h30m)\n");
	env_set("EPHEMERAL_PORT_RANGE", "32768");
	assert_int_equal(PARSE0(p), CLI_ERROR);
	assert_string_equal(strbuf_str(&p->out),
			    "nodescope: bad EPHEMERAL_PORT_RANGE='32768' (LO-HI, ports 1..65535, "
			    "LO <= HI; \"\" for none)\n");
	env_clear(NULL);
	env_set("NODESCOPE_NO_TLS", "on");
	assert_int_equal(PARSE0(p), CLI_ERROR);
	assert_string_equal(
		strbuf_str(&p->out),
		"nodescope: bad NODESCOPE_NO_TLS='on' (1, 0, true, false, yes or no)\n");
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
	assert_int_equal(p->c.ephemeral_ports.lo, 32768);
	assert_int_equal(p->c.ephemeral_ports.hi, 60999);
	assert_int_equal(p->c.min_container_age_s, 0); /* Coroot's is 30 s: see --help */
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
	assert_true(p->c.ephemeral_ports.lo > p->c.ephemeral_ports.hi); /* none */
	assert_int_equal(PARSE(p, "--ephemeral-port-range", "1-65535"), CLI_RUN);
	assert_int_equal(p->c.ephemeral_ports.hi, 65535);
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
	assert_int_equal(p->c.ephemeral_ports.lo, 32768);
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
	static const char *const yes[] = { "1", "true", "TRUE", "True", "yes", "YES", "yEs" };
	static const char *const no[] = { "0", "false", "FALSE", "no", "No" };
	static const char *const bad[] = { "2", "on", "off", "y",     "n",
					   "t", " 1", "1 ",  "truee", "-1" };

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
			 "nodescope: bad NODESCOPE_HOLD_FIRST_RUNS='%s' (1, 0, true, false, yes or "
			 "no)\n",
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

/* Coroot's variables are Coroot's: its name in upper case; ours have NODESCOPE_ before it. */
static void test_env_names_follow_the_rule(void **state)
{
	static const char *const coroot[] = {
		"listen",
		"cgroupfs-root",
		"ephemeral-port-range",
		"min-container-age",
		"max-label-length",
		"max-fqdns-per-container",
		"provider",
		"region",
		"availability-zone",
		"instance-type",
		"instance-life-cycle",
		"metrics-endpoint",
		"collector-endpoint",
		"api-key",
		"scrape-interval",
		"wal-dir",
		"max-spool-size",
		"ca-file",
		"insecure-skip-verify",
		"container-allowlist",
		"container-denylist",
		"skip-systemd-system-services",
	};
	int wrong = 0;

	for (size_t i = 0; i < cli_opts_count; i++) {
		const struct cli_opt *o = &cli_opts[i];
		char want[96];
		size_t n;
		bool is_coroot = false;
		if (!has_value(o))
			continue;
		for (size_t k = 0; k < sizeof(coroot) / sizeof(coroot[0]); k++)
			is_coroot |= !strcmp(coroot[k], o->name);
		n = (size_t)snprintf(want, sizeof(want), "%s", is_coroot ? "" : "NODESCOPE_");
		for (const char *s = o->name; *s && n < sizeof(want) - 1; s++)
			want[n++] = *s == '-' ? '_' : (char)(*s >= 'a' && *s <= 'z' ? *s - 32 : *s);
		want[n] = '\0';
		if (!o->env || strcmp(o->env, want)) {
			print_error("--%s: variable %s, want %s\n", o->name,
				    o->env ? o->env : "none", want);
			wrong++;
		}
	}
	assert_int_equal(wrong, 0);
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
		snprintf(name, sizeof(name), "--%s%s%s", o->flags & CLI_NEGATABLE ? "[no-]" : "",
			 o->name, o->metavar ? " " : "");
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
	assert_contains(help.buf, "\n  --ephemeral-port-range LO-HI  TCP destinations");
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
	};
	static const char *const bad[] = {
		"",
		"s",
		"1.5h",
		"500ms",
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
		T(test_help_and_table_agree),
		T(test_parse_seconds),
		T(test_parse_int_and_ports),
		T(test_listen_ipv4),
		T(test_listen_all_ipv4),
		T(test_listen_ipv6),
		T(test_listen_bad),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
