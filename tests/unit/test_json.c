#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <inttypes.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "trace/json.h"
#include "trace/trace.h"

/* json_string(in) must give exactly expected (which includes the quotes). */
#define assert_json_string(in, expected)                                          \
	do {                                                                      \
		struct strbuf sb_ = STRBUF_INIT;                                  \
		json_string(&sb_, (in));                                          \
		assert_false(sb_.oom);                                            \
		assert_string_equal(strbuf_str(&sb_), (expected));                \
		assert_int_equal(sb_.len, strlen(expected));                      \
		strbuf_free(&sb_);                                                \
	} while (0)

static void test_plain(void **state)
{
	assert_json_string("", "\"\"");
	assert_json_string("hello world", "\"hello world\"");
	assert_json_string("/usr/bin/env -i ~`!@#$%^&*()_+={}[]|:;'<>,.?/",
			   "\"/usr/bin/env -i ~`!@#$%^&*()_+={}[]|:;'<>,.?/\"");
}

static void test_quote_backslash(void **state)
{
	assert_json_string("\"", "\"\\\"\"");
	assert_json_string("\\", "\"\\\\\"");
	assert_json_string("a\"b\\c", "\"a\\\"b\\\\c\"");
	assert_json_string("\\\"", "\"\\\\\\\"\"");
	/* '/' needs no escape */
	assert_json_string("a/b", "\"a/b\"");
}

static void test_short_escapes(void **state)
{
	assert_json_string("\n", "\"\\n\"");
	assert_json_string("\t", "\"\\t\"");
	assert_json_string("\r", "\"\\r\"");
	assert_json_string("a\r\nb\tc", "\"a\\r\\nb\\tc\"");
}

static void test_control_bytes(void **state)
{
	assert_json_string("\x01", "\"\\u0001\"");
	assert_json_string("\x08", "\"\\u0008\""); /* backspace: \u form, not \b */
	assert_json_string("\x0b", "\"\\u000b\"");
	assert_json_string("\x0c", "\"\\u000c\""); /* form feed: \u form, not \f */
	assert_json_string("\x1b[0m", "\"\\u001b[0m\"");
	assert_json_string("\x1f", "\"\\u001f\"");
	assert_json_string(" ", "\" \""); /* 0x20 is the first plain byte */
	assert_json_string("x\x02y", "\"x\\u0002y\"");
}

static void test_all_control_bytes(void **state)
{
	char in[2] = { 0, 0 };
	char expected[16];

	for (int c = 1; c < 0x20; c++) {
		in[0] = (char)c;
		if (c == '\n')
			strcpy(expected, "\"\\n\"");
		else if (c == '\t')
			strcpy(expected, "\"\\t\"");
		else if (c == '\r')
			strcpy(expected, "\"\\r\"");
		else
			snprintf(expected, sizeof(expected), "\"\\u%04x\"", c);
		assert_json_string(in, expected);
	}
}

static void test_del(void **state)
{
	assert_json_string("\x7f", "\"\\u007f\"");
	assert_json_string("a\x7f" "b", "\"a\\u007fb\"");
	assert_json_string("~", "\"~\""); /* 0x7e is plain */
}

static void test_utf8_valid(void **state)
{
	/* 2 bytes: U+00E9, U+0080 (lowest), U+07FF (highest) */
	assert_json_string("caf\xc3\xa9", "\"caf\xc3\xa9\"");
	assert_json_string("\xc2\x80", "\"\xc2\x80\"");
	assert_json_string("\xdf\xbf", "\"\xdf\xbf\"");
	/* 3 bytes: U+20AC, U+0800 (lowest), U+FFFF, U+D7FF and U+E000 around the surrogates */
	assert_json_string("\xe2\x82\xac", "\"\xe2\x82\xac\"");
	assert_json_string("\xe0\xa0\x80", "\"\xe0\xa0\x80\"");
	assert_json_string("\xef\xbf\xbf", "\"\xef\xbf\xbf\"");
	assert_json_string("\xed\x9f\xbf", "\"\xed\x9f\xbf\"");
	assert_json_string("\xee\x80\x80", "\"\xee\x80\x80\"");
	/* 4 bytes: U+1F600, U+10000 (lowest), U+10FFFF (highest) */
	assert_json_string("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"");
	assert_json_string("\xf0\x90\x80\x80", "\"\xf0\x90\x80\x80\"");
	assert_json_string("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"");
	/* mixed with ASCII and escapes */
	assert_json_string("\xe6\x97\xa5\"\xd0\x96\n\xf0\x9f\x98\x80",
			   "\"\xe6\x97\xa5\\\"\xd0\x96\\n\xf0\x9f\x98\x80\"");
}

static void test_utf8_invalid(void **state)
{
	/* lone bytes that never start a sequence */
	assert_json_string("\xff", "\"\\u00ff\"");
	assert_json_string("\xfe", "\"\\u00fe\"");
	assert_json_string("a\xff" "b", "\"a\\u00ffb\"");
	/* a lone continuation byte */
	assert_json_string("\x80", "\"\\u0080\"");
	assert_json_string("\xbf", "\"\\u00bf\"");
	/* overlong "/" (0xc0 0xaf) and 0xc1 lead */
	assert_json_string("\xc0\xaf", "\"\\u00c0\\u00af\"");
	assert_json_string("\xc1\xbf", "\"\\u00c1\\u00bf\"");
	/* overlong 3- and 4-byte forms */
	assert_json_string("\xe0\x80\xaf", "\"\\u00e0\\u0080\\u00af\"");
	assert_json_string("\xf0\x80\x80\xaf", "\"\\u00f0\\u0080\\u0080\\u00af\"");
	/* surrogate U+D800 and U+DFFF */
	assert_json_string("\xed\xa0\x80", "\"\\u00ed\\u00a0\\u0080\"");
	assert_json_string("\xed\xbf\xbf", "\"\\u00ed\\u00bf\\u00bf\"");
	/* above U+10FFFF, and the f5..f7 leads */
	assert_json_string("\xf4\x90\x80\x80", "\"\\u00f4\\u0090\\u0080\\u0080\"");
	assert_json_string("\xf5\x80\x80\x80", "\"\\u00f5\\u0080\\u0080\\u0080\"");
}

static void test_utf8_truncated(void **state)
{
	/* sequences cut by the end of the string */
	assert_json_string("\xc3", "\"\\u00c3\"");
	assert_json_string("ab\xe2\x82", "\"ab\\u00e2\\u0082\"");
	assert_json_string("\xf0\x9f\x98", "\"\\u00f0\\u009f\\u0098\"");
	assert_json_string("\xf0", "\"\\u00f0\"");
	/* cut by an ASCII byte: the lead is escaped, the rest goes on normally */
	assert_json_string("\xe2\x82x", "\"\\u00e2\\u0082x\"");
	assert_json_string("\xc3\"", "\"\\u00c3\\\"\"");
	/* a valid sequence right after an invalid lead */
	assert_json_string("\xe2\xc3\xa9", "\"\\u00e2\xc3\xa9\"");
}

static void test_helpers(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	json_begin(&sb, "t");
	json_key_str(&sb, "s", "v\"");
	json_key_u64(&sb, "u", UINT64_MAX);
	json_key_i64(&sb, "i", INT64_MIN);
	json_key_i64(&sb, "j", 7);
	json_key_bool(&sb, "yes", 1);
	json_key_bool(&sb, "no", 0);
	json_key_str(&sb, "k", "\x01\x7f~ ");
	json_end(&sb);
	assert_string_equal(strbuf_str(&sb),
			    "{\"type\":\"t\",\"s\":\"v\\\"\",\"u\":18446744073709551615,"
			    "\"i\":-9223372036854775808,\"j\":7,\"yes\":true,\"no\":false,"
			    "\"k\":\"\\u0001\\u007f~ \"}\n");
	strbuf_free(&sb);
}

/* Every digit count, each power of ten and its neighbours, and a spread of others, as printf writes them. */
static void test_u64_as_printf(void **state)
{
	uint64_t vals[4096];
	size_t n = 0;
	uint64_t p = 1, x = 88172645463325252ull;

	for (int d = 0; d < 20; d++, p *= 10) {
		vals[n++] = p;
		vals[n++] = p - 1;
		vals[n++] = p + 1;
	}
	vals[n++] = UINT64_MAX;
	while (n < sizeof(vals) / sizeof(vals[0])) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift: any width of number */
		vals[n++] = x >> (x % 64);
	}
	for (size_t i = 0; i < n; i++) {
		struct strbuf sb = STRBUF_INIT;
		char want[32];
		json_u64(&sb, vals[i]);
		snprintf(want, sizeof(want), "%" PRIu64, vals[i]);
		assert_string_equal(strbuf_str(&sb), want);
		strbuf_free(&sb);
	}
}

/* Formats e and compares with the whole expected line. */
static void assert_line(const struct proc_event *e, const char *container, int64_t off,
			const char *expected)
{
	struct strbuf sb = STRBUF_INIT;

	trace_format_proc(&sb, e, container, off);
	assert_false(sb.oom);
	assert_string_equal(strbuf_str(&sb), expected);
	strbuf_free(&sb);
}

static void test_exec_line_plain(void **state)
{
	struct proc_event e = {
		.type = NS_PROC_EXEC,
		.pid = 4242,
		.ppid = 1,
		.uid = 1000,
		.ts_ns = 5000000000ull,
		.cgroups.v2 = 12345,
	};
	strcpy(e.comm, "bash");
	strcpy(e.exe, "/usr/bin/bash");
	strcpy(e.args, "bash -c true");
	assert_line(&e, "/docker/abc", 1700000000000000000ll,
		    "{\"type\":\"exec\",\"ts\":1700000005000000000,\"pid\":4242,\"ppid\":1,"
		    "\"uid\":1000,\"comm\":\"bash\",\"exe\":\"/usr/bin/bash\","
		    "\"args\":\"bash -c true\",\"cgroup_id\":12345,\"container\":\"/docker/abc\"}\n");
}

static void test_exec_line_odd_strings(void **state)
{
	struct proc_event e = {
		.type = NS_PROC_EXEC,
		.pid = 7,
		.ppid = 6,
		.uid = 0,
		.ts_ns = 10,
		.cgroups.v2 = 1,
	};
	/* 15 bytes, as the kernel's comm: quote, backslash, controls, DEL, bad UTF-8 */
	strcpy(e.comm, "a\"b\\c\n\t\x01\x7f\xff\xc3\xa9z");
	/* an exe with a valid 3-byte char, overlong, surrogate and a truncated tail */
	strcpy(e.exe, "/tmp/\xe2\x98\x83 d/\xc0\xaf/\xed\xa0\x80/x\xf0\x9f\x98");
	strcpy(e.args, "sh -c \"echo\\t\r\"");
	assert_line(&e, "/k8s/\xe2\x82\xac\"", 0,
		    "{\"type\":\"exec\",\"ts\":10,\"pid\":7,\"ppid\":6,\"uid\":0,"
		    "\"comm\":\"a\\\"b\\\\c\\n\\t\\u0001\\u007f\\u00ff\xc3\xa9z\","
		    "\"exe\":\"/tmp/\xe2\x98\x83 d/\\u00c0\\u00af/\\u00ed\\u00a0\\u0080/"
		    "x\\u00f0\\u009f\\u0098\","
		    "\"args\":\"sh -c \\\"echo\\\\t\\r\\\"\",\"cgroup_id\":1,"
		    "\"container\":\"/k8s/\xe2\x82\xac\\\"\"}\n");
}

static void test_exec_line_from_record(void **state)
{
	/* the whole path: a raw BPF record, decoded, then formatted */
	struct ns_proc_exec r;
	struct proc_event e;

	memset(&r, 0, sizeof(r));
	r.h.type = NS_PROC_EXEC;
	r.h.pid = 100;
	r.h.ts_ns = 2000;
	r.ppid = 99;
	r.uid = 33;
	r.cgroups.v2 = 77;
	memcpy(r.comm, "we\"ird\x1b", 7);
	static const char fn[] = "/bin/\xff";
	memcpy(r.filename, fn, sizeof(fn) - 1);
	r.filename_len = sizeof(fn) - 1;
	static const char args[] = "prog\0a b\0\"q\"\0";
	memcpy(r.args, args, sizeof(args) - 1);
	r.args_len = sizeof(args) - 1;
	assert_int_equal(proc_event_decode(&r, sizeof(r), &e), 0);
	assert_line(&e, NULL, -1000,
		    "{\"type\":\"exec\",\"ts\":1000,\"pid\":100,\"ppid\":99,\"uid\":33,"
		    "\"comm\":\"we\\\"ird\\u001b\",\"exe\":\"/bin/\\u00ff\","
		    "\"args\":\"prog a b \\\"q\\\"\",\"cgroup_id\":77}\n");
}

static void test_exec_line_empty_strings(void **state)
{
	struct proc_event e = { .type = NS_PROC_EXEC, .pid = 1 };

	assert_line(&e, "", 0,
		    "{\"type\":\"exec\",\"ts\":0,\"pid\":1,\"ppid\":0,\"uid\":0,\"comm\":\"\","
		    "\"exe\":\"\",\"args\":\"\",\"cgroup_id\":0,\"container\":\"\"}\n");
}

static void test_exit_line(void **state)
{
	struct proc_event e = {
		.type = NS_PROC_EXIT,
		.pid = 555,
		.ts_ns = 123456789,
		.cgroups.v2 = 9, /* not printed for exit */
		.exit_code = 1,
		.signal = 9,
		.duration_ns = 3000000001ull,
	};
	strcpy(e.comm, "sleep");
	assert_line(&e, "/", 1000,
		    "{\"type\":\"exit\",\"ts\":123457789,\"pid\":555,\"comm\":\"sleep\","
		    "\"code\":1,\"signal\":9,\"duration_ns\":3000000001,\"container\":\"/\"}\n");
	assert_line(&e, NULL, 0,
		    "{\"type\":\"exit\",\"ts\":123456789,\"pid\":555,\"comm\":\"sleep\","
		    "\"code\":1,\"signal\":9,\"duration_ns\":3000000001}\n");
}

static void test_fork_line(void **state)
{
	struct proc_event e = {
		.type = NS_PROC_FORK,
		.pid = 4294967295u,
		.ppid = 4294967294u,
		.ts_ns = 1,
	};
	strcpy(e.comm, "kworker/0:1");
	assert_line(&e, NULL, 1,
		    "{\"type\":\"fork\",\"ts\":2,\"pid\":4294967295,\"ppid\":4294967294,"
		    "\"comm\":\"kworker/0:1\"}\n");
	assert_line(&e, "/system.slice/x.service", 1,
		    "{\"type\":\"fork\",\"ts\":2,\"pid\":4294967295,\"ppid\":4294967294,"
		    "\"comm\":\"kworker/0:1\",\"container\":\"/system.slice/x.service\"}\n");
}

static void test_oom_kill_line(void **state)
{
	struct proc_event e = {
		.type = NS_PROC_OOM_KILL,
		.pid = 800,
		.ts_ns = 50,
		.trigger_pid = 801,
	};
	strcpy(e.comm, "ignored");
	assert_line(&e, NULL, 0,
		    "{\"type\":\"oom_kill\",\"ts\":50,\"pid\":800,\"trigger_pid\":801}\n");
	assert_line(&e, "/docker/c1", 0,
		    "{\"type\":\"oom_kill\",\"ts\":50,\"pid\":800,\"trigger_pid\":801,"
		    "\"container\":\"/docker/c1\"}\n");
}

/* Formats e and compares with the whole expected line. */
static void assert_tcp_line(const struct ns_tcp_event *e, uint32_t pid, const char *container,
			    const char *expected)
{
	struct strbuf sb = STRBUF_INIT;

	trace_format_tcp(&sb, e, pid, container, 0);
	assert_false(sb.oom);
	assert_string_equal(strbuf_str(&sb), expected);
	strbuf_free(&sb);
}

static struct ns_tcp_event tcp_v4_event(enum ns_tcp_event_type type)
{
	struct ns_tcp_event e = {
		.type = type,
		.ts_ns = 7,
		.fd = 3,
		.family = AF_INET,
		.sport = 40000,
		.dport = 5432,
		.saddr = { 10, 0, 0, 1 },
		.daddr = { 10, 0, 0, 2 },
	};
	return e;
}

static void test_tcp_retransmit_line(void **state)
{
	struct ns_tcp_event e = tcp_v4_event(NS_TCP_RETRANSMIT);

	e.segs = 3; /* one event for a retransmit of three segments */
	assert_tcp_line(&e, 42, "/c",
			"{\"type\":\"retransmit\",\"ts\":7,\"pid\":42,\"fd\":3,"
			"\"src\":\"10.0.0.1:40000\",\"dst\":\"10.0.0.2:5432\",\"dir\":\"out\","
			"\"segments\":3,\"container\":\"/c\"}\n");
	e.flags = NS_TCP_F_INBOUND; /* the server's side: src is the peer */
	e.segs = 1;
	assert_tcp_line(&e, 42, NULL,
			"{\"type\":\"retransmit\",\"ts\":7,\"pid\":42,\"fd\":3,"
			"\"src\":\"10.0.0.2:5432\",\"dst\":\"10.0.0.1:40000\",\"dir\":\"in\","
			"\"segments\":1}\n");
}

static void test_tcp_connect_error_line(void **state)
{
	struct ns_tcp_event e = tcp_v4_event(NS_TCP_CONNECT_ERROR);

	e.err = ECONNREFUSED;
	e.duration_ns = 1000;
	assert_tcp_line(&e, 9, NULL,
			"{\"type\":\"connect_error\",\"ts\":7,\"pid\":9,\"fd\":3,"
			"\"dst\":\"10.0.0.2:5432\",\"error\":\"refused\",\"errno\":111,"
			"\"duration_ns\":1000}\n");
}

static void test_lines_append(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct proc_event a = { .type = NS_PROC_OOM_KILL, .pid = 1, .trigger_pid = 2 };
	struct proc_event b = { .type = NS_PROC_FORK, .pid = 3, .ppid = 1 };

	trace_format_proc(&sb, &a, NULL, 0);
	trace_format_proc(&sb, &b, NULL, 0);
	assert_string_equal(strbuf_str(&sb),
			    "{\"type\":\"oom_kill\",\"ts\":0,\"pid\":1,\"trigger_pid\":2}\n"
			    "{\"type\":\"fork\",\"ts\":0,\"pid\":3,\"ppid\":1,\"comm\":\"\"}\n");
	strbuf_free(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_quote_backslash),
		cmocka_unit_test(test_short_escapes),
		cmocka_unit_test(test_control_bytes),
		cmocka_unit_test(test_all_control_bytes),
		cmocka_unit_test(test_del),
		cmocka_unit_test(test_utf8_valid),
		cmocka_unit_test(test_utf8_invalid),
		cmocka_unit_test(test_utf8_truncated),
		cmocka_unit_test(test_helpers),
		cmocka_unit_test(test_u64_as_printf),
		cmocka_unit_test(test_exec_line_plain),
		cmocka_unit_test(test_exec_line_odd_strings),
		cmocka_unit_test(test_exec_line_from_record),
		cmocka_unit_test(test_exec_line_empty_strings),
		cmocka_unit_test(test_exit_line),
		cmocka_unit_test(test_fork_line),
		cmocka_unit_test(test_oom_kill_line),
		cmocka_unit_test(test_tcp_retransmit_line),
		cmocka_unit_test(test_tcp_connect_error_line),
		cmocka_unit_test(test_lines_append),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
