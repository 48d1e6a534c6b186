/*
 * tls_plan against the system's TLS libraries (Debian's libssl3 and
 * libgnutls30 are build dependencies, so they are always there), a program
 * with no TLS code, and files that are not ELF.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tls/elf_syms.h"
#include "tls/plan.h"

#define LIBSSL "/usr/lib/x86_64-linux-gnu/libssl.so.3"
#define LIBGNUTLS "/usr/lib/x86_64-linux-gnu/libgnutls.so.30"

static struct tls_plan plan;

static int plan_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fail_msg("cannot open %s: %s", path, strerror(errno));
	int rc = tls_plan_fd(fd, &plan);
	close(fd);
	return rc;
}

/* Each entry site sits at the symbol's offset; every return site's byte is a ret. */
static void check_sites(const char *path, const char *const *names, const uint32_t *fns,
			size_t n)
{
	struct elf_syms *e;
	assert_int_equal(elf_syms_open(path, &e), 0);
	for (size_t i = 0; i < n; i++) {
		struct elf_sym s;
		bool found = false;
		assert_int_equal(elf_syms_find(e, names[i], &s), 0);
		for (size_t j = 0; j < plan.n; j++)
			if (plan.sites[j].offset == s.offset) {
				assert_int_equal(plan.sites[j].fn, fns[i]);
				found = true;
			}
		if (!found)
			fail_msg("no entry probe planned for %s", names[i]);
	}
	elf_syms_close(e);

	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	size_t rets = 0;
	for (size_t j = 0; j < plan.n; j++) {
		if (plan.sites[j].fn != NS_TLS_RET)
			continue;
		unsigned char b[2];
		assert_int_equal(fseek(f, (long)plan.sites[j].offset, SEEK_SET), 0);
		assert_int_equal(fread(b, 1, 2, f), 2);
		/* ret, or a ret behind a rep/bnd prefix */
		assert_true(b[0] == 0xc3 || b[0] == 0xc2 ||
			    ((b[0] == 0xf3 || b[0] == 0xf2) && (b[1] == 0xc3 || b[1] == 0xc2)));
		rets++;
	}
	fclose(f);
	assert_true(rets >= n); /* every function returns somewhere */
}

static void test_libssl(void **state)
{
	static const char *const names[] = { "SSL_write", "SSL_read", "SSL_write_ex", "SSL_read_ex" };
	static const uint32_t fns[] = { NS_TLS_SSL_WRITE, NS_TLS_SSL_READ, NS_TLS_SSL_WRITE_EX,
					NS_TLS_SSL_READ_EX };

	assert_int_equal(plan_path(LIBSSL), 0);
	assert_string_equal(plan.library, "openssl");
	assert_int_equal(plan.functions, 4);
	assert_int_equal(plan.skipped, 0);
	assert_string_equal(plan.error, "");
	check_sites(LIBSSL, names, fns, 4);
}

static void test_libgnutls_send2_stands_for_send(void **state)
{
	static const char *const names[] = { "gnutls_record_send2", "gnutls_record_recv" };
	static const uint32_t fns[] = { NS_TLS_GNUTLS_SEND, NS_TLS_GNUTLS_RECV };

	assert_int_equal(plan_path(LIBGNUTLS), 0);
	assert_string_equal(plan.library, "gnutls");
	/* gnutls_record_send tail-calls send2 through the PLT: probing send2 covers it. */
	assert_int_equal(plan.functions, 2);
	assert_int_equal(plan.skipped, 0);
	check_sites(LIBGNUTLS, names, fns, 2);
}

static void test_program_without_tls(void **state)
{
	assert_int_equal(plan_path("/bin/true"), 0);
	assert_null(plan.library);
	assert_int_equal(plan.n, 0);
	assert_int_equal(plan.functions, 0);
}

static void test_not_elf(void **state)
{
	char path[] = "/tmp/nodescope-plan-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "#!/bin/sh\necho hi\n", 18), 18);
	close(fd);
	assert_int_equal(plan_path(path), -ENOEXEC);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_libssl),
		cmocka_unit_test(test_libgnutls_send2_stands_for_send),
		cmocka_unit_test(test_program_without_tls),
		cmocka_unit_test(test_not_elf),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
