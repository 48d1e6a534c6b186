#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/event.h"
#include "proc/procfs.h"

/* ---- procfs_parse_stat ---- */

/* A /proc/PID/stat line, fields 4..52 as a real kernel prints them. */
static void make_stat(char *buf, size_t len, const char *pid_comm, char state, unsigned ppid,
		      unsigned long long start)
{
	snprintf(buf, len,
		 "%s %c %u 1234 1234 34816 1234 4194560 1190 0 0 0 1 2 0 0 20 0 1 0 %llu "
		 "8699904 1280 18446744073709551615 94000000000000 94000000100000 "
		 "140730000000000 0 0 0 65536 4 1 1 0 0 17 3 0 0 0 0 0\n",
		 pid_comm, state, ppid, start);
}

static void test_stat_simple(void **state)
{
	char buf[512];
	struct procfs_stat st;

	make_stat(buf, sizeof(buf), "1234 (bash)", 'S', 1, 98765);
	memset(&st, 0xaa, sizeof(st));
	assert_int_equal(procfs_parse_stat(buf, 100, &st), 0);
	assert_string_equal(st.comm, "bash");
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.ppid, 1);
	assert_int_equal(st.start_ns, 98765ull * 10000000ull);
}

static void test_stat_odd_comm(void **state)
{
	char buf[512];
	struct procfs_stat st;

	/* spaces and ')' inside comm: the last ')' ends it */
	make_stat(buf, sizeof(buf), "1234 (a b) c)", 'R', 4321, 5);
	assert_int_equal(procfs_parse_stat(buf, 100, &st), 0);
	assert_string_equal(st.comm, "a b) c");
	assert_int_equal(st.state, 'R');
	assert_int_equal(st.ppid, 4321);
	assert_int_equal(st.start_ns, 50000000ull);

	/* a comm that looks like more fields */
	make_stat(buf, sizeof(buf), "77 () S 1 2 3 ( x)", 'D', 9, 1);
	assert_int_equal(procfs_parse_stat(buf, 100, &st), 0);
	assert_string_equal(st.comm, ") S 1 2 3 ( x");
	assert_int_equal(st.state, 'D');
	assert_int_equal(st.ppid, 9);

	/* empty comm */
	make_stat(buf, sizeof(buf), "5 ()", 'Z', 2, 0);
	assert_int_equal(procfs_parse_stat(buf, 100, &st), 0);
	assert_string_equal(st.comm, "");
	assert_int_equal(st.state, 'Z');
	assert_int_equal(st.start_ns, 0);
}

static void test_stat_long_comm_truncated(void **state)
{
	char buf[512];
	struct procfs_stat st;

	make_stat(buf, sizeof(buf), "9 (0123456789abcdefXYZ)", 'S', 3, 1);
	assert_int_equal(procfs_parse_stat(buf, 100, &st), 0);
	assert_string_equal(st.comm, "0123456789abcdef");
	assert_int_equal(st.ppid, 3);
}

static void test_stat_start_time(void **state)
{
	char buf[512];
	struct procfs_stat st;

	make_stat(buf, sizeof(buf), "1 (init)", 'S', 0, 123456789ull);
	assert_int_equal(procfs_parse_stat(buf, 100, &st), 0);
	assert_int_equal(st.ppid, 0);
	assert_int_equal(st.start_ns, 123456789ull * 10000000ull);
	assert_int_equal(procfs_parse_stat(buf, 1000, &st), 0);
	assert_int_equal(st.start_ns, 123456789ull * 1000000ull);
	assert_int_equal(procfs_parse_stat(buf, 250, &st), 0);
	assert_int_equal(st.start_ns, 123456789ull * 4000000ull);
}

static void test_stat_minimal_fields(void **state)
{
	struct procfs_stat st;

	/* up to starttime (field 22) is enough; negative fields parse */
	assert_int_equal(procfs_parse_stat("3 (x) S 2 0 0 0 -1 0 0 0 0 0 0 0 0 0 -100 -20 1 0 7",
					   100, &st),
			 0);
	assert_int_equal(st.ppid, 2);
	assert_int_equal(st.start_ns, 70000000ull);
	/* and not read past the string (exact heap copy, ASan) */
	static const char text[] = "3 (x) S 2 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 8";
	char *heap = malloc(sizeof(text));
	assert_non_null(heap);
	memcpy(heap, text, sizeof(text));
	assert_int_equal(procfs_parse_stat(heap, 100, &st), 0);
	assert_int_equal(st.start_ns, 80000000ull);
	free(heap);
}

static void test_stat_malformed(void **state)
{
	struct procfs_stat st;
	char buf[512];

	assert_int_equal(procfs_parse_stat("", 100, &st), -EINVAL);
	assert_int_equal(procfs_parse_stat("garbage", 100, &st), -EINVAL);
	assert_int_equal(procfs_parse_stat("1 (x S 1 2 3", 100, &st), -EINVAL);
	assert_int_equal(procfs_parse_stat("1 x) S 1 2 3", 100, &st), -EINVAL);
	assert_int_equal(procfs_parse_stat("1 )x( S 1 2 3", 100, &st), -EINVAL);
	assert_int_equal(procfs_parse_stat("1 (x)", 100, &st), -EINVAL);
	assert_int_equal(procfs_parse_stat("1 (x) ", 100, &st), -EINVAL);
	assert_int_equal(procfs_parse_stat("1 (x) S", 100, &st), -EINVAL);
	assert_int_equal(procfs_parse_stat("1 (x) S 1 2 3", 100, &st), -EINVAL);
	/* 21 fields: starttime missing */
	assert_int_equal(procfs_parse_stat("3 (x) S 2 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0", 100,
					   &st),
			 -EINVAL);
	/* a non-number where ppid should be */
	assert_int_equal(procfs_parse_stat("3 (x) S abc 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 7",
					   100, &st),
			 -EINVAL);
	/* a good line with a bad clock */
	make_stat(buf, sizeof(buf), "1 (x)", 'S', 1, 1);
	assert_int_equal(procfs_parse_stat(buf, 0, &st), -EINVAL);
	assert_int_equal(procfs_parse_stat(buf, -1, &st), -EINVAL);
}

static void test_stat_read_self(void **state)
{
	/* not pure, but cheap: our own /proc entry agrees with getppid() */
	struct procfs_stat st;

	assert_int_equal(procfs_read_stat(getpid(), &st), 0);
	assert_int_equal(st.ppid, (uint32_t)getppid());
	assert_true(st.comm[0] != '\0');
	assert_int_equal(st.state, 'R');
}

/* ---- proc_event_decode ---- */

/* Decodes a copy of rec of exactly len bytes on the heap, so ASan sees overreads. */
static int decode(const void *rec, size_t len, struct proc_event *out)
{
	void *copy = malloc(len ? len : 1);
	assert_non_null(copy);
	memcpy(copy, rec, len);
	int err = proc_event_decode(copy, len, out);
	free(copy);
	return err;
}

/* Fills out with junk so stale fields would show. */
static void junk(struct proc_event *e)
{
	memset(e, 0x5a, sizeof(*e));
	e->comm[NS_COMM_LEN] = e->exe[NS_PATH_LEN] = e->args[NS_ARGS_LEN] = '\0';
}

static void test_decode_exec(void **state)
{
	struct ns_proc_exec r;
	struct proc_event e;

	memset(&r, 0, sizeof(r));
	r.h.type = NS_PROC_EXEC;
	r.h.pid = 1234;
	r.h.ts_ns = 987654321012ull;
	r.ppid = 1;
	r.uid = 1000;
	r.cgroups = (struct ns_cgroup_ids){ 0x1122334455667788ull, 41, 42 };
	strcpy(r.comm, "ls");
	strcpy(r.filename, "/usr/bin/ls");
	r.filename_len = 11;
	static const char args[] = "ls\0-l\0/tmp\0";
	memcpy(r.args, args, sizeof(args) - 1);
	r.args_len = sizeof(args) - 1;

	junk(&e);
	assert_int_equal(decode(&r, sizeof(r), &e), 0);
	assert_int_equal(e.type, NS_PROC_EXEC);
	assert_int_equal(e.pid, 1234);
	assert_int_equal(e.ts_ns, 987654321012ull);
	assert_int_equal(e.ppid, 1);
	assert_int_equal(e.uid, 1000);
	assert_int_equal(e.cgroups.v2, 0x1122334455667788ull);
	assert_int_equal(e.cgroups.cpu, 41);
	assert_int_equal(e.cgroups.memory, 42);
	assert_string_equal(e.comm, "ls");
	assert_string_equal(e.exe, "/usr/bin/ls");
	assert_string_equal(e.args, "ls -l /tmp");
	/* fields of other types are zeroed */
	assert_int_equal(e.exit_code, 0);
	assert_int_equal(e.signal, 0);
	assert_int_equal(e.duration_ns, 0);
	assert_int_equal(e.trigger_pid, 0);

	/* a record with trailing padding (ring buffer records are 8-aligned) */
	unsigned char big[sizeof(r) + 8];
	memcpy(big, &r, sizeof(r));
	memset(big + sizeof(r), 0xee, 8);
	assert_int_equal(decode(big, sizeof(big), &e), 0);
	assert_string_equal(e.args, "ls -l /tmp");
}

static void test_decode_exec_args(void **state)
{
	struct ns_proc_exec r;
	struct proc_event e;

	memset(&r, 0, sizeof(r));
	r.h.type = NS_PROC_EXEC;

	/* several trailing NULs are all dropped; an empty argument in between stays */
	memcpy(r.args, "a\0\0b\0\0\0", 7);
	r.args_len = 7;
	assert_int_equal(decode(&r, sizeof(r), &e), 0);
	assert_string_equal(e.args, "a  b");

	/* no final NUL (argv cut by the BPF side) */
	memset(r.args, 0, sizeof(r.args));
	memcpy(r.args, "sh\0-c\0echo hi", 13);
	r.args_len = 13;
	assert_int_equal(decode(&r, sizeof(r), &e), 0);
	assert_string_equal(e.args, "sh -c echo hi");

	/* args_len shorter than the data: only args_len bytes are used */
	memcpy(r.args, "one\0two\0three\0", 14);
	r.args_len = 7;
	assert_int_equal(decode(&r, sizeof(r), &e), 0);
	assert_string_equal(e.args, "one two");

	/* nothing at all, or only NULs */
	r.args_len = 0;
	assert_int_equal(decode(&r, sizeof(r), &e), 0);
	assert_string_equal(e.args, "");
	memset(r.args, 0, sizeof(r.args));
	r.args_len = 5;
	assert_int_equal(decode(&r, sizeof(r), &e), 0);
	assert_string_equal(e.args, "");

	/* args_len past the buffer is clamped to NS_ARGS_LEN */
	memset(r.args, 'x', sizeof(r.args));
	r.args[10] = '\0';
	r.args_len = 100000;
	assert_int_equal(decode(&r, sizeof(r), &e), 0);
	assert_int_equal(strlen(e.args), NS_ARGS_LEN);
	assert_int_equal(e.args[10], ' ');
	assert_int_equal(e.args[NS_ARGS_LEN - 1], 'x');
	r.args_len = UINT32_MAX;
	assert_int_equal(decode(&r, sizeof(r), &e), 0);
	assert_int_equal(strlen(e.args), NS_ARGS_LEN);
}

static void test_decode_exec_filename_clamp(void **state)
{
	struct ns_proc_exec r;
	struct proc_event e;

	memset(&r, 0, sizeof(r));
	r.h.type = NS_PROC_EXEC;

	/* filename_len larger than the buffer, and no NUL in it */
	memset(r.filename, 'f', sizeof(r.filename));
	r.filename_len = 5000;
	assert_int_equal(decode(&r, sizeof(r), &e), 0);
	assert_int_equal(strlen(e.exe), NS_PATH_LEN);
	assert_int_equal(e.exe[NS_PATH_LEN - 1], 'f');
	r.filename_len = UINT32_MAX;
	assert_int_equal(decode(&r, sizeof(r), &e), 0);
	assert_int_equal(strlen(e.exe), NS_PATH_LEN);

	/* filename_len shorter than the string: only that much is used */
	memset(r.filename, 0, sizeof(r.filename));
	strcpy(r.filename, "/bin/lsXXXX");
	r.filename_len = 7;
	assert_int_equal(decode(&r, sizeof(r), &e), 0);
	assert_string_equal(e.exe, "/bin/ls");

	/* a NUL before filename_len ends it */
	r.filename_len = 200;
	assert_int_equal(decode(&r, sizeof(r), &e), 0);
	assert_string_equal(e.exe, "/bin/lsXXXX");

	r.filename_len = 0;
	assert_int_equal(decode(&r, sizeof(r), &e), 0);
	assert_string_equal(e.exe, "");

	/* comm filling all 16 bytes with no NUL */
	memcpy(r.comm, "0123456789abcdef", NS_COMM_LEN);
	assert_int_equal(decode(&r, sizeof(r), &e), 0);
	assert_string_equal(e.comm, "0123456789abcdef");
}

static void test_decode_exit(void **state)
{
	struct ns_proc_exit r;
	struct proc_event e;

	memset(&r, 0, sizeof(r));
	r.h.type = NS_PROC_EXIT;
	r.h.pid = 42;
	r.h.ts_ns = 777;
	r.exit_code = 3;
	r.signal = 15;
	r.duration_ns = 123456789ull;
	r.cgroups = (struct ns_cgroup_ids){ 99, 98, 97 };
	memcpy(r.comm, "abcdefghijklmnop", NS_COMM_LEN); /* no NUL */

	junk(&e);
	assert_int_equal(decode(&r, sizeof(r), &e), 0);
	assert_int_equal(e.type, NS_PROC_EXIT);
	assert_int_equal(e.pid, 42);
	assert_int_equal(e.ts_ns, 777);
	assert_int_equal(e.exit_code, 3);
	assert_int_equal(e.signal, 15);
	assert_int_equal(e.duration_ns, 123456789ull);
	assert_int_equal(e.cgroups.v2, 99);
	assert_int_equal(e.cgroups.cpu, 98);
	assert_int_equal(e.cgroups.memory, 97);
	assert_string_equal(e.comm, "abcdefghijklmnop");
	assert_int_equal(e.ppid, 0);
	assert_int_equal(e.uid, 0);
	assert_int_equal(e.trigger_pid, 0);
	assert_string_equal(e.exe, "");
	assert_string_equal(e.args, "");
}

static void test_decode_fork(void **state)
{
	struct ns_proc_fork r;
	struct proc_event e;

	memset(&r, 0, sizeof(r));
	r.h.type = NS_PROC_FORK;
	r.h.pid = 500;
	r.h.ts_ns = 1;
	r.ppid = 499;
	r.cgroup_id = 7;
	strcpy(r.comm, "make");

	junk(&e);
	assert_int_equal(decode(&r, sizeof(r), &e), 0);
	assert_int_equal(e.type, NS_PROC_FORK);
	assert_int_equal(e.pid, 500);
	assert_int_equal(e.ts_ns, 1);
	assert_int_equal(e.ppid, 499);
	assert_int_equal(e.cgroups.v2, 7);
	assert_string_equal(e.comm, "make");
	assert_int_equal(e.uid, 0);
	assert_int_equal(e.exit_code, 0);
	assert_string_equal(e.exe, "");
	assert_string_equal(e.args, "");
}

static void test_decode_oom(void **state)
{
	struct ns_proc_oom r;
	struct proc_event e;

	memset(&r, 0, sizeof(r));
	r.h.type = NS_PROC_OOM_KILL;
	r.h.pid = 600;
	r.h.ts_ns = 2;
	r.trigger_pid = 601;

	junk(&e);
	assert_int_equal(decode(&r, sizeof(r), &e), 0);
	assert_int_equal(e.type, NS_PROC_OOM_KILL);
	assert_int_equal(e.pid, 600);
	assert_int_equal(e.ts_ns, 2);
	assert_int_equal(e.trigger_pid, 601);
	assert_int_equal(e.ppid, 0);
	assert_int_equal(e.cgroups.v2, 0);
	assert_string_equal(e.comm, "");
	assert_string_equal(e.exe, "");
	assert_string_equal(e.args, "");
}

static void test_decode_short(void **state)
{
	union {
		struct ns_proc_exec exec;
		struct ns_proc_exit exit;
		struct ns_proc_fork fork;
		struct ns_proc_oom oom;
		unsigned char bytes[1024];
	} r;
	struct proc_event e;
	static const struct {
		uint32_t type;
		size_t size;
	} types[] = {
		{ NS_PROC_EXEC, sizeof(struct ns_proc_exec) },
		{ NS_PROC_EXIT, sizeof(struct ns_proc_exit) },
		{ NS_PROC_FORK, sizeof(struct ns_proc_fork) },
		{ NS_PROC_OOM_KILL, sizeof(struct ns_proc_oom) },
	};

	memset(&r, 0, sizeof(r));
	assert_int_equal(decode(&r, 0, &e), -EINVAL);
	r.exec.h.type = NS_PROC_EXEC;
	assert_int_equal(decode(&r, sizeof(struct ns_proc_head) - 1, &e), -EINVAL);
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		r.exec.h.type = types[i].type;
		assert_int_equal(decode(&r, types[i].size, &e), 0);
		assert_int_equal(decode(&r, types[i].size - 1, &e), -EINVAL);
		assert_int_equal(decode(&r, sizeof(struct ns_proc_head), &e), -EINVAL);
		assert_int_equal(decode(&r, 1, &e), -EINVAL);
	}
}

static void test_decode_unknown_type(void **state)
{
	unsigned char r[1024];
	struct ns_proc_head h = { .pid = 1, .ts_ns = 2 };
	struct proc_event e;
	static const uint32_t bad[] = { 0, 5, 100, UINT32_MAX };

	memset(r, 0, sizeof(r));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		h.type = bad[i];
		memcpy(r, &h, sizeof(h));
		assert_int_equal(decode(r, sizeof(r), &e), -EINVAL);
		assert_int_equal(decode(r, sizeof(h), &e), -EINVAL);
	}
}

static void test_type_names(void **state)
{
	assert_string_equal(proc_event_type_name(NS_PROC_EXEC), "exec");
	assert_string_equal(proc_event_type_name(NS_PROC_EXIT), "exit");
	assert_string_equal(proc_event_type_name(NS_PROC_FORK), "fork");
	assert_string_equal(proc_event_type_name(NS_PROC_OOM_KILL), "oom_kill");
	assert_string_equal(proc_event_type_name((enum ns_proc_event_type)0), "unknown");
	assert_string_equal(proc_event_type_name((enum ns_proc_event_type)99), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stat_simple),
		cmocka_unit_test(test_stat_odd_comm),
		cmocka_unit_test(test_stat_long_comm_truncated),
		cmocka_unit_test(test_stat_start_time),
		cmocka_unit_test(test_stat_minimal_fields),
		cmocka_unit_test(test_stat_malformed),
		cmocka_unit_test(test_stat_read_self),
		cmocka_unit_test(test_decode_exec),
		cmocka_unit_test(test_decode_exec_args),
		cmocka_unit_test(test_decode_exec_filename_clamp),
		cmocka_unit_test(test_decode_exit),
		cmocka_unit_test(test_decode_fork),
		cmocka_unit_test(test_decode_oom),
		cmocka_unit_test(test_decode_short),
		cmocka_unit_test(test_decode_unknown_type),
		cmocka_unit_test(test_type_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
