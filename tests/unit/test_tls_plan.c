/*
 * tls_plan against the system's TLS libraries (Debian's libssl3 and
 * libgnutls30 are build dependencies, so they are always there), a stripped
 * Go HTTPS client built here with Debian's go, a program with no TLS code,
 * and files that are not ELF; and the plan key that lets copies share a plan.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tls/elf_syms.h"
#include "tls/go_binary.h"
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
				assert_int_equal(plan.sites[j].cookie, fns[i]);
				assert_int_equal(plan.sites[j].prog, TLS_PROG_ENTRY);
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
		if (plan.sites[j].prog != TLS_PROG_RET && plan.sites[j].prog != TLS_PROG_GO_RET)
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

static char go_dir[] = "/tmp/nodescope-plan-go-XXXXXX";

static const char go_client[] =
	"package main\n"
	"import (\"crypto/tls\"; \"net/http\"; \"os\")\n"
	"func main() {\n"
	"	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}\n"
	"	r, err := (&http.Client{Transport: tr}).Get(os.Args[1])\n"
	"	if err == nil { r.Body.Close() }\n"
	"}\n";

/*
 * Builds go_dir/client (stripped), go_dir/other (a different program) and
 * go_dir/client_arm64 (the client cross-compiled by Go itself for arm64).
 */
static int build_go(void **state)
{
	char cmd[1024];
	if (!mkdtemp(go_dir))
		return -1;
	snprintf(cmd, sizeof(cmd), "%s/main.go", go_dir);
	FILE *f = fopen(cmd, "w");
	if (!f)
		return -1;
	fputs(go_client, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "cd %s && export HOME=%s GOCACHE=%s/cache GO111MODULE=off GOFLAGS= && "
		 "go build -ldflags='-s -w' -o client main.go && "
		 "go build -ldflags='-s -w -X main.unused=1' -o other main.go && cp client copy && "
		 "GOARCH=arm64 go build -ldflags='-s -w' -o client_arm64 main.go",
		 go_dir, go_dir, go_dir);
	if (system(cmd) != 0) {
		fprintf(stderr, "cannot build the Go client (is golang-go installed? "
				"scripts/install-deps.sh installs it)\n");
		return -1;
	}
	return 0;
}

static int remove_go(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", go_dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_stripped_go_client(void **state)
{
	char path[128];
	struct go_binary *g;
	struct go_func w, r;

	snprintf(path, sizeof(path), "%s/client", go_dir);
	assert_int_equal(plan_path(path), 0);
	assert_string_equal(plan.library, "go");
	assert_true(!strncmp(plan.go_version, "go1.", 4));
	assert_int_equal(plan.functions, 2);
	assert_int_equal(plan.skipped, 0);
	assert_int_equal(go_binary_open(path, &g), 0);
	assert_int_equal(go_binary_find_func(g, "crypto/tls.(*Conn).Write", &w), 0);
	assert_int_equal(go_binary_find_func(g, "crypto/tls.(*Conn).Read", &r), 0);
	go_binary_close(g);
	/* Write: its entry only, first. Read: its return sites, then its entry. */
	assert_true(plan.n >= 3);
	assert_int_equal(plan.sites[0].offset, w.offset);
	assert_int_equal(plan.sites[0].prog, TLS_PROG_GO_ENTRY);
	assert_int_equal(plan.sites[0].cookie, NS_TLS_GO_WRITE);
	assert_int_equal(plan.sites[plan.n - 1].offset, r.offset);
	assert_int_equal(plan.sites[plan.n - 1].prog, TLS_PROG_GO_ENTRY);
	assert_int_equal(plan.sites[plan.n - 1].cookie, NS_TLS_GO_READ);
	for (size_t i = 1; i + 1 < plan.n; i++) {
		assert_int_equal(plan.sites[i].prog, TLS_PROG_GO_RET);
		assert_int_equal(plan.sites[i].cookie, NS_TLS_GO_READ | NS_TLS_COOKIE_RET);
		assert_true(plan.sites[i].offset > r.offset && plan.sites[i].offset < r.offset + r.size);
	}
	static const char *const none[1];
	static const uint32_t nofn[1];
	check_sites(path, none, nofn, 0); /* every return site is a ret */
}

/* The same client built for arm64: register ABI, return sites that are rets. */
static void test_stripped_go_client_arm64(void **state)
{
	char path[128];
	struct go_binary *g;
	struct go_func r;
	struct go_binary_info info;

	snprintf(path, sizeof(path), "%s/client_arm64", go_dir);
	assert_int_equal(plan_path(path), 0);
	assert_string_equal(plan.library, "go");
	assert_int_equal(plan.functions, 2);
	assert_int_equal(plan.skipped, 0);
	assert_int_equal(go_binary_open(path, &g), 0);
	go_binary_info(g, &info);
	assert_int_equal(info.machine, EM_AARCH64);
	assert_true(go_binary_regabi(g)); /* Debian's Go is 1.18 or newer */
	assert_int_equal(go_binary_find_func(g, "crypto/tls.(*Conn).Read", &r), 0);
	go_binary_close(g);
	assert_true(plan.n >= 3);
	assert_int_equal(plan.sites[0].cookie, NS_TLS_GO_WRITE);
	assert_int_equal(plan.sites[plan.n - 1].offset, r.offset);
	assert_int_equal(plan.sites[plan.n - 1].cookie, NS_TLS_GO_READ);

	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	for (size_t i = 1; i + 1 < plan.n; i++) {
		uint32_t insn = 0;

		assert_int_equal(plan.sites[i].prog, TLS_PROG_GO_RET);
		assert_int_equal(plan.sites[i].cookie, NS_TLS_GO_READ | NS_TLS_COOKIE_RET);
		assert_true(plan.sites[i].offset > r.offset && plan.sites[i].offset < r.offset + r.size);
		assert_int_equal(pread(fd, &insn, 4, (off_t)plan.sites[i].offset), 4);
		assert_int_equal(insn & 0xfffffc1f, 0xd65f0000); /* ret */
	}
	close(fd);
}

static void test_plan_key_same_for_copies_only(void **state)
{
	struct tls_plan_key a, b, c;
	char p[128];
	int fd;

	snprintf(p, sizeof(p), "%s/client", go_dir);
	assert_true((fd = open(p, O_RDONLY)) >= 0);
	assert_int_equal(tls_plan_key_fd(fd, &a), 0);
	close(fd);
	snprintf(p, sizeof(p), "%s/copy", go_dir);
	assert_true((fd = open(p, O_RDONLY)) >= 0);
	assert_int_equal(tls_plan_key_fd(fd, &b), 0);
	close(fd);
	snprintf(p, sizeof(p), "%s/other", go_dir);
	assert_true((fd = open(p, O_RDONLY)) >= 0);
	assert_int_equal(tls_plan_key_fd(fd, &c), 0);
	close(fd);
	assert_true(a.id_len > 0); /* the Go build id note */
	assert_true(a.size == b.size && a.id_len == b.id_len && !memcmp(a.id, b.id, a.id_len));
	assert_true(a.id_len != c.id_len || memcmp(a.id, c.id, a.id_len));
	assert_true((fd = open(LIBSSL, O_RDONLY)) >= 0);
	assert_int_equal(tls_plan_key_fd(fd, &c), 0); /* the GNU build id */
	close(fd);
	assert_int_equal(c.id_len, 20);
	assert_true((fd = open("/etc/passwd", O_RDONLY)) >= 0);
	assert_int_equal(tls_plan_key_fd(fd, &c), -ENOEXEC);
	close(fd);
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
		cmocka_unit_test(test_stripped_go_client),
		cmocka_unit_test(test_stripped_go_client_arm64),
		cmocka_unit_test(test_plan_key_same_for_copies_only),
		cmocka_unit_test(test_program_without_tls),
		cmocka_unit_test(test_not_elf),
	};
	return cmocka_run_group_tests(tests, build_go, remove_go);
}
