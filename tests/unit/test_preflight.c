#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bpf/preflight.h"
#include "exit_codes.h"

/* Runs fn with stderr captured into buf. */
static int with_stderr(int (*fn)(const char *), const char *arg, char *buf, size_t len)
{
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);
	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	int rc = fn(arg);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	size_t n = fread(buf, 1, len - 1, tmp);
	buf[n] = '\0';
	fclose(tmp);
	return rc;
}

static void test_kernel_without_btf_is_explained(void **state)
{
	char msg[1024];
	int rc = with_stderr(preflight_btf_at, "/nonexistent/btf/vmlinux", msg, sizeof(msg));
	assert_int_equal(rc, NS_EXIT_KERNEL);
	assert_non_null(strstr(msg, "has no BTF"));
	assert_non_null(strstr(msg, "/nonexistent/btf/vmlinux"));
	assert_non_null(strstr(msg, "CONFIG_DEBUG_INFO_BTF=y"));
}

static void test_btf_present(void **state)
{
	char msg[1024];
	/* Any readable file stands for the kernel's BTF here. */
	assert_int_equal(with_stderr(preflight_btf_at, "/proc/self/status", msg, sizeof(msg)), 0);
	assert_string_equal(msg, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_without_btf_is_explained),
		cmocka_unit_test(test_btf_present),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
