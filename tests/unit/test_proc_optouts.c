/*
 * Coroot's per-process opt-outs read from an environment as /proc/PID/environ
 * lays it out, and from a real process's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc/optouts.h"
#include "proc/table.h"

#define ENV(s) s, sizeof(s) - 1 /* with its inner NULs, without the literal's own */

static void test_parse(void **state)
{
	assert_int_equal(proc_optouts_parse(ENV("PATH=/bin\0HOME=/\0")), 0);
	assert_int_equal(proc_optouts_parse(ENV("COROOT_EBPF_TRACES=disabled\0")), PROC_OPTOUT_TRACES);
	assert_int_equal(proc_optouts_parse(ENV("A=1\0COROOT_LOG_MONITORING=disabled\0"
						"COROOT_EBPF_PROFILING=disabled\0")),
			 PROC_OPTOUT_LOGS | PROC_OPTOUT_PROFILING);
	/* "contains", as Coroot's strings.Contains */
	assert_int_equal(proc_optouts_parse(ENV("COROOT_EBPF_TRACES=all-disabled-now\0")),
			 PROC_OPTOUT_TRACES);
	assert_int_equal(proc_optouts_parse(ENV("COROOT_EBPF_TRACES=enabled\0")), 0);
	assert_int_equal(proc_optouts_parse(ENV("COROOT_EBPF_TRACES=Disabled\0")), 0);
	assert_int_equal(proc_optouts_parse(ENV("COROOT_EBPF_TRACES\0")), 0);
	assert_int_equal(proc_optouts_parse(ENV("COROOT_EBPF_TRACESX=disabled\0")), 0);
	assert_int_equal(proc_optouts_parse(ENV("X_COROOT_EBPF_TRACES=disabled\0")), 0);
	/* the last assignment counts */
	assert_int_equal(proc_optouts_parse(ENV("COROOT_EBPF_TRACES=disabled\0COROOT_EBPF_TRACES=on\0")), 0);
	/* a last variable without its NUL (an environment cut at the read's bound) */
	assert_int_equal(proc_optouts_parse(ENV("A=1\0COROOT_EBPF_TRACES=disabled")), PROC_OPTOUT_TRACES);
	assert_int_equal(proc_optouts_parse(ENV("COROOT_EBPF_TRACES=disab")), 0);
	assert_int_equal(proc_optouts_parse("", 0), 0);
}

static void test_read_a_process(void **state)
{
	uint8_t bits = 0xff;
	int fds[2];

	assert_int_equal(pipe(fds), 0);
	pid_t pid = fork();
	if (!pid) {
		char *const argv[] = { "sleep", "30", NULL };
		char *const envp[] = { "PATH=/bin:/usr/bin", "COROOT_EBPF_PROFILING=disabled", NULL };
		close(fds[0]);
		fcntl(fds[1], F_SETFD, FD_CLOEXEC); /* closed by the exec: the parent then reads */
		execve("/bin/sleep", argv, envp);
		_exit(127);
	}
	close(fds[1]);
	char c;
	assert_int_equal(read(fds[0], &c, 1), 0); /* EOF: the exec happened */
	close(fds[0]);
	assert_int_equal(proc_optouts_read(pid, &bits), 0);
	assert_int_equal(bits, PROC_OPTOUT_PROFILING);

	/* The table reads them when first asked, once; a process gone keeps what it inherited. */
	struct proc_table *t = proc_table_new(16);
	bool created;
	struct proc_entry *e = proc_table_upsert(t, (uint32_t)pid, &created);
	assert_non_null(e);
	e->optouts = PROC_OPTOUT_TRACES; /* inherited, until its own are read */
	assert_int_equal(proc_table_optouts_of(t, (uint32_t)pid), PROC_OPTOUT_PROFILING);
	assert_true(e->optouts_read);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	e->optouts = PROC_OPTOUT_LOGS; /* read already: not read again */
	assert_int_equal(proc_table_optouts_of(t, (uint32_t)pid), PROC_OPTOUT_LOGS);
	e->optouts_read = false; /* as after an exec, but the process is gone now */
	assert_int_equal(proc_table_optouts_of(t, (uint32_t)pid), PROC_OPTOUT_LOGS);
	assert_int_equal(proc_table_optouts_of(t, 1u << 30), 0); /* not in the table */
	proc_table_free(t);
	assert_true(proc_optouts_read(pid, &bits) < 0); /* gone */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_read_a_process),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
