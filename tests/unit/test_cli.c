#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "cli.h"
#include "version.h"
#include "http/server.h"

#define MAX_ARGS 16

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
	p->r = cli_parse(argc, p->argv, &p->c, &p->out);
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

	/* a list too long for the parser's buffer */
	char longlist[400];
	memset(longlist, 'a', sizeof(longlist) - 1);
	longlist[sizeof(longlist) - 1] = '\0';
	assert_int_equal(PARSE(p, "trace", "--events", longlist), CLI_ERROR);
	assert_contains(strbuf_str(&p->out), "too long");
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
		"", "0", "0k", "k", "abc", "4g", "4G", "4kb", "4 k", "1.5k", "-1", "-4096",
		"1073741825", "1048577k", "1025m", "proc=", "proc=0", "proc=x",
		"18014398509481985k", /* (2^54 + 1) << 10 wraps to 1024 in 64 bits */
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

	assert_int_equal(PARSE(p, "--max-series", "5", "--max-processes", "1000",
			       "--debug-poll-ms", "10", "--verbose"),
			 CLI_RUN);
	assert_int_equal(p->c.max_series, 5);
	assert_int_equal(p->c.max_processes, 1000);
	assert_int_equal(p->c.debug_poll_ms, 10);
	assert_true(p->c.verbose);
	assert_int_equal(PARSE(p, "--max-series", "0", "--max-processes", "4194304"), CLI_RUN);
	assert_int_equal(p->c.max_series, 0);
	assert_int_equal(p->c.max_processes, 4194304);

	static const char *const bad[][2] = {
		{ "--max-series", "abc" },	  { "--max-series", "" },
		{ "--max-series", "10000001" },	  { "--max-series", "-1" },
		{ "--max-series", "5x" },	  { "--max-processes", "0" },
		{ "--max-processes", "4194305" }, { "--debug-poll-ms", "10001" },
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_run),
		cmocka_unit_test(test_defaults_trace),
		cmocka_unit_test(test_listen),
		cmocka_unit_test(test_listen_empty_disables_http),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_events_unknown),
		cmocka_unit_test(test_hold_first_runs),
		cmocka_unit_test(test_nice),
		cmocka_unit_test(test_debug_kernel_lacks),
		cmocka_unit_test(test_ringbuf_size_all),
		cmocka_unit_test(test_ringbuf_size_one_stream),
		cmocka_unit_test(test_ringbuf_size_bad),
		cmocka_unit_test(test_parse_ring_size),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_help_version),
		cmocka_unit_test(test_unknown_option),
		cmocka_unit_test(test_unknown_short_in_cluster),
		cmocka_unit_test(test_missing_value),
		cmocka_unit_test(test_stray_argument),
		cmocka_unit_test(test_repeated_parses_independent),
		cmocka_unit_test(test_listen_ipv4),
		cmocka_unit_test(test_listen_all_ipv4),
		cmocka_unit_test(test_listen_ipv6),
		cmocka_unit_test(test_listen_bad),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
