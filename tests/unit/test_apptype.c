/*
 * container_application_type's rules (src/resources/apptype.c), on command
 * lines and executable paths as Coroot classifies them, and the golang and
 * rust tests on real files built here (a Go program, a C program whose
 * .comment names rustc, as rustc writes it), and Coroot's .NET rules (a
 * `dotnet NAME.dll` command line, or an apphost: a C program linked with the
 * run path "$ORIGIN/netcoredeps" stands in for one).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "fixture.h"
#include "resources/apptype.h"

/* The type of a command line given as argv strings (joined by NULs, as /proc shows it). */
static const char *by_cmdline(int argc, ...)
{
	static char buf[1024];
	size_t n = 0;
	va_list ap;
	va_start(ap, argc);
	for (int i = 0; i < argc; i++) {
		const char *a = va_arg(ap, const char *);
		size_t l = strlen(a) + 1;
		memcpy(buf + n, a, l);
		n += l;
	}
	va_end(ap);
	const char *name = apptype_name(apptype_by_cmdline(buf, n));
	return name ? name : "(none)";
}

static void test_cmdline(void **state)
{
	assert_string_equal(by_cmdline(3, "/usr/sbin/nginx", "-g", "daemon off;"), "nginx");
	/* A title rewritten by the program: the first word, ':' cut. */
	assert_string_equal(by_cmdline(1, "nginx: master process /usr/sbin/nginx"), "nginx");
	assert_string_equal(by_cmdline(1, "postgres: checkpointer"), "postgres");
	assert_string_equal(by_cmdline(2, "/usr/lib/postgresql/15/bin/postgres", "-D"), "postgres");
	assert_string_equal(by_cmdline(2, "redis-server", "*:6379"), "redis");
	assert_string_equal(by_cmdline(1, "/usr/bin/mariadbd"), "mysql");
	/* Java main classes anywhere in the command line; else java. */
	assert_string_equal(by_cmdline(3, "/usr/bin/java", "-cp", "kafka.Kafka"), "kafka");
	assert_string_equal(by_cmdline(2, "/usr/bin/java", "Main"), "java");
	assert_string_equal(by_cmdline(3, "/x/beam.smp", "--", "-rabbit"), "rabbitmq");
	assert_string_equal(by_cmdline(1, "/x/beam.smp"), "(none)");
	assert_string_equal(by_cmdline(1, "/opt/vmstorage-prod"), "victoria-metrics");
	/* Interpreters, with version digits. */
	assert_string_equal(by_cmdline(2, "python3.11", "app.py"), "python");
	assert_string_equal(by_cmdline(2, "/usr/bin/python3", "-m"), "python");
	assert_string_equal(by_cmdline(1, "php-fpm8.2"), "php");
	assert_string_equal(by_cmdline(2, "node", "server.js"), "nodejs");
	assert_string_equal(by_cmdline(1, "ruby3.1"), "ruby");
	assert_string_equal(by_cmdline(1, "python3.11.2"), "(none)"); /* one dot only, as the regexp */
	/* Order matters as in Coroot: "coroot" before anything else. */
	assert_string_equal(by_cmdline(1, "/bin/coroot"), "coroot-community-edition");
	assert_string_equal(by_cmdline(1, "/usr/bin/sleep"), "(none)");
	assert_int_equal(apptype_by_cmdline("", 0), -1);
	assert_int_equal(apptype_by_cmdline("   ", 4), -1);
}

static void test_exe(void **state)
{
	assert_string_equal(apptype_name(apptype_by_exe("/usr/bin/python3.11")), "python");
	assert_string_equal(apptype_name(apptype_by_exe("/usr/local/bin/node")), "nodejs");
	/* Only the interpreters go by the executable. */
	assert_int_equal(apptype_by_exe("/usr/sbin/nginx"), -1);
}

/* apptype_dotnet() of argv strings. */
static bool dotnet(bool apphost, int argc, ...)
{
	char buf[256];
	size_t n = 0;
	va_list ap;
	va_start(ap, argc);
	for (int i = 0; i < argc; i++) {
		const char *a = va_arg(ap, const char *);
		size_t l = strlen(a) + 1;
		memcpy(buf + n, a, l);
		n += l;
	}
	va_end(ap);
	return apptype_dotnet(buf, n, apphost);
}

static void test_dotnet(void **state)
{
	assert_string_equal(apptype_name(apptype_dotnet_bit()), "dotnet");
	/* dotnet NAME.dll, wherever dotnet is. */
	assert_true(dotnet(false, 2, "dotnet", "Accounting.dll"));
	assert_true(dotnet(false, 3, "/usr/share/dotnet/dotnet", "/app/Api.dll", "--urls"));
	assert_false(dotnet(false, 2, "dotnet", "Accounting.exe"));
	assert_false(dotnet(false, 1, "dotnet"));
	assert_false(dotnet(false, 3, "dotnet", "exec", "App.dll")); /* argv[1] only */
	assert_false(dotnet(false, 2, "python3", "App.dll"));
	/* An apphost: its argv[0] names the application. */
	assert_true(dotnet(true, 1, "/app/Accounting"));
	assert_true(dotnet(true, 1, "Accounting"));
	assert_false(dotnet(true, 1, "/app/"));
	assert_false(dotnet(true, 1, ""));
	/* A JVM never is (Coroot asks the JVM first). */
	assert_false(dotnet(true, 2, "/usr/bin/java", "-jar"));
	assert_false(dotnet(false, 2, "/opt/dotnet/java", "x.dll"));
	assert_true(dotnet(false, 2, "/opt/java/dotnet", "x.dll"));
	/* No NUL at all (a rewritten title): no argv[1]; a JVM needs a NUL in Coroot's test. */
	assert_false(apptype_dotnet("dotnet x.dll", 12, false));
	assert_true(apptype_dotnet("java", 4, true));
	assert_false(apptype_dotnet("", 0, true));
}

static void test_names(void **state)
{
	/* Each name once; golang and rust have bits of their own; all fit in 64. */
	int n = 0;
	while (apptype_name(n))
		n++;
	assert_true(n <= APPTYPE_MAX);
	assert_string_equal(apptype_name(apptype_golang()), "golang");
	assert_string_equal(apptype_name(apptype_rust()), "rust");
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			assert_string_not_equal(apptype_name(i), apptype_name(j));
}

static int setup(void **state)
{
	strcpy(dir, "/tmp/ns-apptype-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static uint64_t file_bits(const char *name)
{
	int fd = open(P(name), O_RDONLY);
	assert_true(fd >= 0);
	uint64_t bits = apptype_file(fd);
	close(fd);
	return bits;
}

static void test_files(void **state)
{
	assert_int_equal(write_text("rust.c", "__asm__(\".pushsection .comment,\\\"MS\\\",@progbits,1\\n"
					      ".asciz \\\"rustc version 1.70.0 (90c541806 2023-05-31)\\\"\\n"
					      ".popsection\");\nint main(void) { return 0; }\n"),
			 0);
	assert_int_equal(write_text("plain.c", "int main(void) { return 0; }\n"), 0);
	assert_int_equal(run("cc -o rust rust.c && cc -o plain plain.c"), 0);
	assert_int_equal(file_bits("rust"), 1ull << apptype_rust());
	assert_int_equal(file_bits("plain"), 0);
	assert_int_equal(write_text("main.go", "package main\nfunc main() {}\n"), 0);
	assert_int_equal(run("export GOCACHE=\"$PWD/gocache\" HOME=\"$PWD\" GO111MODULE=off GOFLAGS= "
			     "GOTOOLCHAIN=local; go build -ldflags='-s -w' -o gobin main.go"),
			 0);
	assert_int_equal(file_bits("gobin"), 1ull << apptype_golang());
	/* The .NET apphost's run path, as DT_RPATH or DT_RUNPATH; not with another entry. */
	assert_int_equal(run("cc -o apphost plain.c -Wl,--disable-new-dtags,-rpath,'$ORIGIN/netcoredeps' && "
			     "cc -o apphost2 plain.c -Wl,--enable-new-dtags,-rpath,'$ORIGIN/netcoredeps' && "
			     "cc -o notapphost plain.c -Wl,-rpath,'$ORIGIN/netcoredeps:/opt/lib'"),
			 0);
	assert_int_equal(file_bits("apphost"), APPTYPE_FILE_APPHOST);
	assert_int_equal(file_bits("apphost2"), APPTYPE_FILE_APPHOST);
	assert_int_equal(file_bits("notapphost"), 0);
	/* Not an ELF file at all. */
	assert_int_equal(write_text("text", "#!/bin/sh\n"), 0);
	assert_int_equal(file_bits("text"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cmdline),
		cmocka_unit_test(test_exe),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_dotnet),
		cmocka_unit_test_setup_teardown(test_files, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
