/*
 * elf_syms against ELF files built here with cc/ld at test time (a versioned
 * shared library, executables with, without and stripped of symbols, 32-bit
 * files, importers), the system's libssl/libgnutls/libc when present, and
 * corrupt files (truncated, patched, mutated) that must fail cleanly.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tls/elf_syms.h"

#include "fixture.h"

#define SYS_LIBDIR "/usr/lib/x86_64-linux-gnu"

static bool have_m32;



static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}



static uint64_t file_size(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return (uint64_t)st.st_size;
}

static void read_at(const char *path, uint64_t off, void *buf, size_t n)
{
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, n, (off_t)off), (ssize_t)n);
	close(fd);
}

static struct elf_syms *open_ok(const char *path)
{
	struct elf_syms *e = NULL;
	int rc = elf_syms_open(path, &e);

	if (rc)
		fail_msg("elf_syms_open(%s) = %d: %s", path, rc, elf_syms_last_error());
	assert_non_null(e);
	return e;
}

static struct elf_sym find_ok(struct elf_syms *e, const char *name)
{
	struct elf_sym s;
	int rc = elf_syms_find(e, name, &s);

	if (rc)
		fail_msg("elf_syms_find(%s) = %d: %s", name, rc, elf_syms_last_error());
	return s;
}

static int find_rc(struct elf_syms *e, const char *name)
{
	struct elf_sym s;

	return elf_syms_find(e, name, &s);
}

/* ---- fixtures ---------------------------------------------------------- */

/* The bytes the hand-written (asm) functions consist of, one pattern each. */
enum { MARK_OLD, MARK_NEW, MARK_READ, MARK_EXE_WRITE, MARK_EXE_READ, MARK_COUNT };
#define MARK_LEN 16

static void mark_bytes(int which, unsigned char *out)
{
	for (int i = 0; i < MARK_LEN; i++)
		out[i] = (unsigned char)(0xa0 + which * 0x10 + i) ^ (i & 1 ? 0x5a : 0);
}

/* asm for a function made of one marker followed by a ret. */
static void asm_fn(char *buf, size_t size, const char *name, int which)
{
	unsigned char m[MARK_LEN];
	size_t n;

	mark_bytes(which, m);
	n = (size_t)snprintf(buf, size, ".globl %s\n.type %s,@function\n%s:\n.byte ", name, name,
			     name);
	for (int i = 0; i < MARK_LEN; i++)
		n += (size_t)snprintf(buf + n, size - n, "0x%02x%s", m[i], i + 1 < MARK_LEN ? "," : "\n");
	snprintf(buf + n, size - n, "ret\n.size %s,.-%s\n", name, name);
}

static int write_marker_sources(void)
{
	char a[512], b[512], c[512], src[4096];

	asm_fn(a, sizeof(a), "SSL_write_old", MARK_OLD);
	asm_fn(b, sizeof(b), "SSL_write_new", MARK_NEW);
	asm_fn(c, sizeof(c), "SSL_read", MARK_READ);
	/* A .s file: no C, so no libc or multilib needed for -m32. */
	snprintf(src, sizeof(src),
		 ".text\n%s%s%s"
		 ".symver SSL_write_old,SSL_write@OPENSSL_1.1.0\n"
		 ".symver SSL_write_new,SSL_write@@OPENSSL_3.0.0\n"
		 ".section .note.GNU-stack,\"\",@progbits\n",
		 a, b, c);
	if (write_text("marks.s", src))
		return -1;
	asm_fn(a, sizeof(a), "SSL_write", MARK_EXE_WRITE);
	asm_fn(b, sizeof(b), "SSL_read", MARK_EXE_READ);
	snprintf(src, sizeof(src), ".text\n%s%s.section .note.GNU-stack,\"\",@progbits\n", a, b);
	return write_text("emarks.s", src);
}

static const char lib_c[] =
	"#define F __attribute__((noinline, used))\n"
	"F int SSL_write_new(void *s, const void *b, int n) { volatile int x = n; return x * 3 + 1; }\n"
	"F int SSL_write_old(void *s, const void *b, int n) { volatile int x = n; return x * 5 + 2; }\n"
	"F int SSL_read(void *s, void *b, int n) { volatile int x = n; return x * 7 + 3; }\n"
	"F int SSL_write_ex(void *s, const void *b, unsigned long n, unsigned long *w)\n"
	"{ volatile unsigned long x = n; *w = x; return 11; }\n"
	"F int SSL_read_ex(void *s, void *b, unsigned long n, unsigned long *r)\n"
	"{ volatile unsigned long x = n; *r = x * 2; return 13; }\n"
	"static int real_peek(void) { return 5; }\n"
	"static int (*resolve_peek(void))(void) { return real_peek; }\n"
	"int SSL_peek_ifunc(void) __attribute__((ifunc(\"resolve_peek\")));\n"
	"int SSL_pending_data = 42;\n"
	"__asm__(\".symver SSL_write_old,SSL_write@OPENSSL_1.1.0\");\n"
	"__asm__(\".symver SSL_write_new,SSL_write@@OPENSSL_3.0.0\");\n";

static const char tls_map[] =
	"OPENSSL_1.1.0 { global: SSL_write; local: *; };\n"
	"OPENSSL_3.0.0 { global: SSL_write; SSL_read; SSL_write_ex; SSL_read_ex;\n"
	"                SSL_peek_ifunc; SSL_pending_data; } OPENSSL_1.1.0;\n";

static const char marks_map[] =
	"OPENSSL_1.1.0 { global: SSL_write; local: *; };\n"
	"OPENSSL_3.0.0 { global: SSL_write; SSL_read; } OPENSSL_1.1.0;\n";

static const char gnutls_c[] =
	"__attribute__((noinline)) long gnutls_record_send(void *s, const void *b, unsigned long n)\n"
	"{ volatile long x = (long)n; return x + 17; }\n"
	"__attribute__((noinline)) long gnutls_record_recv(void *s, void *b, unsigned long n)\n"
	"{ volatile long x = (long)n; return x + 19; }\n";

/* An executable with TLS linked in statically (like BoringSSL in a binary). */
static const char prog_c[] =
	"#include <stdio.h>\n"
	"#include <stdint.h>\n"
	"#include <string.h>\n"
	"#ifdef HIDDEN\n"
	"#define VIS __attribute__((visibility(\"hidden\")))\n"
	"#else\n"
	"#define VIS\n"
	"#endif\n"
	"VIS __attribute__((noinline, used)) int SSL_write(void *s, const void *b, int n)\n"
	"{ volatile int x = n; return x * 3 + 1; }\n"
	"VIS __attribute__((noinline, used)) int SSL_read(void *s, void *b, int n)\n"
	"{ volatile int x = n; return x * 7 + 3; }\n"
	"int other(int);\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	if (argc > 1 && strcmp(argv[1], \"dump\") == 0) {\n"
	"		const unsigned char *p = (const unsigned char *)(uintptr_t)&SSL_write;\n"
	"		for (int i = 0; i < 16; i++)\n"
	"			printf(\"%02x\", p[i]);\n"
	"		printf(\"\\n\");\n"
	"		return 0;\n"
	"	}\n"
	"	return SSL_write(0, 0, argc) + SSL_read(0, 0, argc) + other(argc) == 12345;\n"
	"}\n";

/* A second translation unit with a *local* SSL_write: the global one must win. */
static const char other_c[] =
	"static __attribute__((noinline, used)) int SSL_write(int n)\n"
	"{ volatile int x = n; return x * 11 + 9; }\n"
	"int other(int n) { return SSL_write(n); }\n";
static const char other_hidden_c[] = "int other(int n) { return n; }\n";

/* A program that imports SSL_write from libtls.so, taking its address. */
static const char imp_c[] =
	"int SSL_write(void *s, const void *b, int n);\n"
	"int (*volatile fp)(void *, const void *, int) = SSL_write;\n"
	"int main(void) { return fp(0, 0, 1) == 4 ? 0 : 1; }\n";

static int group_setup(void **state)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/test_elf_syms.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return -1;
	if (write_text("lib.c", lib_c) || write_text("tls.map", tls_map) ||
	    write_text("marks.map", marks_map) || write_text("gnutls.c", gnutls_c) ||
	    write_text("prog.c", prog_c) || write_text("other.c", other_c) ||
	    write_text("other_hidden.c", other_hidden_c) || write_text("imp.c", imp_c) ||
	    write_text("hello.txt", "#!/bin/sh\necho this is not an ELF file\n") ||
	    write_marker_sources())
		return -1;

	if (run("cc -shared -fPIC -O1 -o libtls.so lib.c -Wl,--version-script=tls.map") ||
	    run("cp libtls.so libtls_stripped.so && strip --strip-all libtls_stripped.so") ||
	    run("cc -shared -fPIC -O1 -o libgnutls_t.so gnutls.c") ||
	    run("cc -O1 -o prog prog.c other.c") ||
	    run("cc -O1 -g -o prog_g prog.c other.c") ||
	    run("cp prog prog_stripped && strip --strip-all prog_stripped") ||
	    run("cc -O1 -rdynamic -o prog_rdyn prog.c other.c && strip --strip-all prog_rdyn") ||
	    run("cc -O1 -DHIDDEN -o prog_hidden prog.c other_hidden.c") ||
	    run("cc -O1 -no-pie -fno-pie -o prog_nopie prog.c other.c") ||
	    run("cc -O1 -o imp imp.c -L. -ltls -Wl,-rpath,'%s'", dir) ||
	    run("cc -O1 -no-pie -fno-pie -o imp_nopie imp.c -L. -ltls -Wl,-rpath,'%s'", dir) ||
	    run("cc -c -o m64.o marks.s && cc -c -o em64.o emarks.s") ||
	    run("ld -m elf_x86_64 -shared --version-script=marks.map -o libm64.so m64.o") ||
	    run("ld -m elf_x86_64 -e SSL_read -o exe64 em64.o") ||
	    run("ar rcs libm64.a m64.o"))
		return -1;
	have_m32 = run("cc -m32 -c -o m32.o marks.s && cc -m32 -c -o em32.o emarks.s && "
		       "ld -m elf_i386 -shared --version-script=marks.map -o libm32.so m32.o && "
		       "ld -m elf_i386 -e SSL_read -o exe32 em32.o") == 0;
	return 0;
}

static int group_teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	if (dir[0] && !getenv("KEEP_FIXTURES")) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			return -1;
	}
	return 0;
}

/* ---- helpers on results ------------------------------------------------- */

static void assert_offset_has(const char *path, const struct elf_sym *s, int which)
{
	unsigned char want[MARK_LEN], got[MARK_LEN];

	mark_bytes(which, want);
	assert_true(s->offset + MARK_LEN <= file_size(path));
	read_at(path, s->offset, got, MARK_LEN);
	assert_memory_equal(got, want, MARK_LEN);
}

/* The function's bytes in a loaded copy equal the file's bytes at the offset. */
static void assert_offset_matches_memory(const char *path, const struct elf_sym *s,
					 const void *fn, uintptr_t load_bias)
{
	unsigned char got[16];

	assert_non_null(fn);
	assert_true(s->offset < file_size(path));
	assert_int_equal((uintptr_t)fn, load_bias + (uintptr_t)s->addr);
	read_at(path, s->offset, got, sizeof(got));
	/* A uprobe (a nodescope running on this machine) shows as int3 in memory. */
	const unsigned char *mem = fn;
	for (size_t i = 0; i < sizeof(got); i++)
		if (mem[i] != got[i] && mem[i] != 0xcc)
			fail_msg("byte %zu: memory 0x%02x, file 0x%02x", i, mem[i], got[i]);
}

static uintptr_t load_bias(void *h)
{
	struct link_map *lm = NULL;

	assert_int_equal(dlinfo(h, RTLD_DI_LINKMAP, &lm), 0);
	return (uintptr_t)lm->l_addr;
}

/* Runs `path dump`, which prints the first 16 bytes of its SSL_write in hex. */
static void assert_offset_matches_running(const char *path, const struct elf_sym *s)
{
	char cmd[PATH_MAX + 16], line[64] = "", hex[40];
	unsigned char got[16];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "'%s' dump", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(line, sizeof(line), p));
	assert_int_equal(pclose(p), 0);
	read_at(path, s->offset, got, sizeof(got));
	line[strcspn(line, "\n")] = '\0';
	assert_int_equal(strlen(line), 32);
	for (int i = 0; i < 16; i++) {
		unsigned int b;
		assert_int_equal(sscanf(line + 2 * i, "%2x", &b), 1);
		/* A uprobe (a nodescope running on this machine) shows as int3. */
		if (b != got[i] && b != 0xcc) {
			for (int j = 0; j < 16; j++)
				snprintf(hex + 2 * j, 3, "%02x", got[j]);
			fail_msg("running %s != file %s", line, hex);
		}
	}
}

/* ---- the versioned shared library -------------------------------------- */

static void test_lib_default_version(void **state)
{
	struct elf_syms *e = open_ok(P("libtls.so"));
	struct elf_sym s = find_ok(e, "SSL_write"), neu, old;
	void *h;

	assert_true(s.dynamic);
	assert_non_null(s.version);
	assert_string_equal(s.version, "OPENSSL_3.0.0");
	assert_true(s.default_version);
	assert_int_equal(s.binding, STB_GLOBAL);
	assert_true(s.size > 0);
	assert_false(elf_syms_stripped(e));
	assert_int_equal(elf_syms_class(e), ELFCLASS64);
	assert_int_equal(elf_syms_machine(e), EM_X86_64);

	/* The local implementation names from .symtab are the same two functions. */
	neu = find_ok(e, "SSL_write_new");
	old = find_ok(e, "SSL_write_old");
	assert_false(neu.dynamic);
	assert_int_equal(neu.binding, STB_LOCAL);
	assert_null(neu.version);
	assert_int_equal(s.offset, neu.offset);
	assert_int_not_equal(s.offset, old.offset);

	h = dlopen(P("libtls.so"), RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	assert_offset_matches_memory(P("libtls.so"), &s, dlsym(h, "SSL_write"), load_bias(h));
	dlclose(h);
	elf_syms_close(e);
}

static void test_lib_explicit_versions(void **state)
{
	const char *libs[] = { "libtls.so", "libtls_stripped.so" };

	for (size_t i = 0; i < 2; i++) {
		const char *path = P(libs[i]);
		struct elf_syms *e = open_ok(path);
		struct elf_sym def = find_ok(e, "SSL_write");
		struct elf_sym old = find_ok(e, "SSL_write@OPENSSL_1.1.0");
		struct elf_sym neu = find_ok(e, "SSL_write@@OPENSSL_3.0.0");
		struct elf_sym neu1 = find_ok(e, "SSL_write@OPENSSL_3.0.0");
		void *h;

		assert_true(old.dynamic);
		assert_string_equal(old.version, "OPENSSL_1.1.0");
		assert_false(old.default_version);
		assert_int_equal(neu.offset, def.offset);
		assert_int_equal(neu1.offset, def.offset);
		assert_int_not_equal(old.offset, def.offset);
		assert_int_equal(find_rc(e, "SSL_write@@OPENSSL_1.1.0"), -ENOENT);
		assert_int_equal(find_rc(e, "SSL_write@OPENSSL_9"), -ENOENT);
		assert_int_equal(find_ok(e, "SSL_read@OPENSSL_3.0.0").offset,
				 find_ok(e, "SSL_read").offset);

		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		assert_non_null(h);
		assert_offset_matches_memory(path, &old, dlvsym(h, "SSL_write", "OPENSSL_1.1.0"),
					     load_bias(h));
		assert_offset_matches_memory(path, &neu, dlvsym(h, "SSL_write", "OPENSSL_3.0.0"),
					     load_bias(h));
		dlclose(h);
		elf_syms_close(e);
	}
}

static void test_lib_all_tls_names(void **state)
{
	const char *names[] = { "SSL_write", "SSL_read", "SSL_write_ex", "SSL_read_ex",
				"gnutls_record_send", "gnutls_record_recv" };
	struct elf_sym out[6];
	int rc[6];
	struct elf_syms *e = open_ok(P("libtls.so"));
	void *h = dlopen(P("libtls.so"), RTLD_NOW | RTLD_LOCAL);

	assert_non_null(h);
	assert_int_equal(elf_syms_find_many(e, names, 6, out, rc), 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(rc[i], 0);
		assert_string_equal(out[i].version, "OPENSSL_3.0.0");
		assert_offset_matches_memory(P("libtls.so"), &out[i], dlsym(h, names[i]),
					     load_bias(h));
	}
	assert_int_equal(rc[4], -ENOENT);
	assert_int_equal(rc[5], -ENOENT);
	/* "SSL_write" must not have matched "SSL_write_ex" (or the reverse). */
	assert_int_not_equal(out[0].offset, out[2].offset);
	dlclose(h);
	elf_syms_close(e);
}

static void test_lib_stripped(void **state)
{
	struct elf_syms *e = open_ok(P("libtls_stripped.so"));
	struct elf_syms *full = open_ok(P("libtls.so"));
	struct elf_sym s = find_ok(e, "SSL_write");

	assert_true(elf_syms_stripped(e));
	assert_true(s.dynamic);
	assert_string_equal(s.version, "OPENSSL_3.0.0");
	/* strip does not move .text */
	assert_int_equal(s.offset, find_ok(full, "SSL_write").offset);
	assert_int_equal(find_rc(e, "SSL_write_new"), -ENOENT); /* was only in .symtab */
	elf_syms_close(full);
	elf_syms_close(e);
}

static void test_lib_not_functions(void **state)
{
	struct elf_syms *e = open_ok(P("libtls.so"));

	assert_int_equal(find_rc(e, "SSL_pending_data"), -ENOENT); /* an object */
	assert_int_equal(find_rc(e, "OPENSSL_3.0.0"), -ENOENT);    /* a version symbol */
	assert_int_equal(find_rc(e, "SSL_peek_ifunc"), -EOPNOTSUPP);
	assert_int_equal(find_rc(e, "SSL_wri"), -ENOENT);	      /* prefixes do not match */
	assert_int_equal(find_rc(e, "SSL_write_exx"), -ENOENT);
	assert_int_equal(find_rc(e, ""), -EINVAL);
	assert_int_equal(find_rc(e, "@OPENSSL_3.0.0"), -EINVAL);
	assert_int_equal(find_rc(e, NULL), -EINVAL);
	assert_true(strlen(elf_syms_last_error()) > 0);
	elf_syms_close(e);
}

static void test_unversioned_lib(void **state)
{
	const char *names[] = { "gnutls_record_send", "gnutls_record_recv" };
	struct elf_sym out[2];
	int rc[2];
	struct elf_syms *e = open_ok(P("libgnutls_t.so"));
	void *h = dlopen(P("libgnutls_t.so"), RTLD_NOW | RTLD_LOCAL);

	assert_non_null(h);
	assert_int_equal(elf_syms_find_many(e, names, 2, out, rc), 2);
	for (int i = 0; i < 2; i++) {
		assert_true(out[i].dynamic);
		assert_null(out[i].version);
		assert_true(out[i].default_version);
		assert_offset_matches_memory(P("libgnutls_t.so"), &out[i], dlsym(h, names[i]),
					     load_bias(h));
	}
	assert_int_equal(find_rc(e, "gnutls_record_send@GNUTLS_3_4"), -ENOENT);
	dlclose(h);
	elf_syms_close(e);
}

static void test_find_many_large(void **state)
{
	const char *names[12] = { "SSL_write", "nope1", "SSL_read", "nope2", "SSL_write_ex",
				  "nope3", "SSL_read_ex", "", "SSL_write@OPENSSL_1.1.0", "x",
				  "SSL_peek_ifunc", "SSL_write_old" };
	struct elf_sym out[12];
	int rc[12];
	struct elf_syms *e = open_ok(P("libtls.so"));

	assert_int_equal(elf_syms_find_many(e, names, 12, out, rc), 6);
	assert_int_equal(rc[0], 0);
	assert_int_equal(rc[1], -ENOENT);
	assert_int_equal(rc[7], -EINVAL);
	assert_int_equal(rc[10], -EOPNOTSUPP);
	assert_int_equal(out[8].offset, out[11].offset);
	for (int i = 0; i < 12; i++) {
		struct elf_sym one;

		assert_int_equal(elf_syms_find(e, names[i], &one), rc[i]);
		if (rc[i] == 0)
			assert_int_equal(one.offset, out[i].offset);
	}
	elf_syms_close(e);
}

/* ---- executables --------------------------------------------------------- */

static void check_prog(const char *name, bool stripped, uint8_t binding)
{
	const char *path = P(name);
	struct elf_syms *e = open_ok(path);
	struct elf_sym s = find_ok(e, "SSL_write");

	assert_int_equal(elf_syms_stripped(e), stripped);
	assert_int_equal(s.binding, binding);
	assert_null(s.version);
	assert_offset_matches_running(path, &s);
	find_ok(e, "SSL_read");
	elf_syms_close(e);
}

static void test_exe_static_tls(void **state)
{
	check_prog("prog", false, STB_GLOBAL);
	check_prog("prog_g", false, STB_GLOBAL);
	check_prog("prog_nopie", false, STB_GLOBAL);
	/* hidden visibility: the link made them local in .symtab */
	check_prog("prog_hidden", false, STB_LOCAL);
	/* exported with -rdynamic, so .dynsym keeps them after strip */
	check_prog("prog_rdyn", true, STB_GLOBAL);
}

static void test_exe_same_offset_with_debug_info(void **state)
{
	struct elf_syms *a = open_ok(P("prog")), *b = open_ok(P("prog_g"));

	assert_false(find_ok(a, "SSL_write").dynamic);
	assert_int_equal(find_ok(a, "SSL_write").offset, find_ok(b, "SSL_write").offset);
	elf_syms_close(a);
	elf_syms_close(b);
}

static void test_exe_stripped(void **state)
{
	struct elf_syms *e = open_ok(P("prog_stripped"));

	assert_true(elf_syms_stripped(e));
	assert_int_equal(find_rc(e, "SSL_write"), -ENOENT);
	assert_int_equal(find_rc(e, "main"), -ENOENT);
	elf_syms_close(e);
}

static void test_exe_nopie_addresses(void **state)
{
	struct elf_syms *e = open_ok(P("prog_nopie"));
	struct elf_sym s = find_ok(e, "SSL_write");

	/* ET_EXEC: the address is absolute (0x400000 up), the offset is not. */
	assert_true(s.addr >= 0x400000);
	assert_true(s.offset < s.addr);
	elf_syms_close(e);
}

static void test_undefined_import(void **state)
{
	const char *progs[] = { "imp", "imp_nopie" };

	for (int i = 0; i < 2; i++) {
		struct elf_syms *e = open_ok(P(progs[i]));

		assert_int_equal(find_rc(e, "SSL_write"), -ENOENT);
		assert_int_equal(find_rc(e, "SSL_write@OPENSSL_3.0.0"), -ENOENT);
		find_ok(e, "main");
		elf_syms_close(e);
	}
	/* it really does call the library's default SSL_write */
	assert_int_equal(run("./imp && ./imp_nopie"), 0);
}

static void test_open_fd_dups(void **state)
{
	struct elf_syms *e = NULL;
	int fd = open(P("libtls.so"), O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(elf_syms_open_fd(fd, &e), 0);
	close(fd); /* ours; the handle has its own */
	assert_non_null(e);
	assert_string_equal(find_ok(e, "SSL_write").version, "OPENSSL_3.0.0");
	elf_syms_close(e);
	elf_syms_close(NULL);
	assert_int_equal(elf_syms_open_fd(-1, &e), -EBADF);
	assert_null(e);
}

static void test_open_mem(void **state)
{
	size_t len;
	unsigned char *img = slurp(P("libtls.so"), &len);
	struct elf_syms *e = NULL, *f = open_ok(P("libtls.so"));

	assert_int_equal(elf_syms_open_mem(img, len, &e), 0);
	memset(img, 0, len); /* the handle has its own copy */
	free(img);
	assert_int_equal(find_ok(e, "SSL_write@OPENSSL_1.1.0").offset,
			 find_ok(f, "SSL_write@OPENSSL_1.1.0").offset);
	elf_syms_close(e);
	elf_syms_close(f);
}

/* ---- hand-written marker functions: 64- and 32-bit ---------------------- */

static void check_marker_lib(const char *name, int elf_class)
{
	const char *path = P(name);
	struct elf_syms *e = open_ok(path);
	struct elf_sym s;

	assert_int_equal(elf_syms_class(e), elf_class);
	s = find_ok(e, "SSL_write");
	assert_string_equal(s.version, "OPENSSL_3.0.0");
	assert_int_equal(s.size, MARK_LEN + 1);
	assert_offset_has(path, &s, MARK_NEW);
	s = find_ok(e, "SSL_write@OPENSSL_1.1.0");
	assert_false(s.default_version);
	assert_offset_has(path, &s, MARK_OLD);
	assert_offset_has(path, &s, MARK_OLD);
	s = find_ok(e, "SSL_read");
	assert_offset_has(path, &s, MARK_READ);
	elf_syms_close(e);
}

static void check_marker_exe(const char *name, int elf_class)
{
	const char *path = P(name);
	struct elf_syms *e = open_ok(path);
	struct elf_sym s;

	assert_int_equal(elf_syms_class(e), elf_class);
	s = find_ok(e, "SSL_write");
	assert_false(s.dynamic);
	assert_offset_has(path, &s, MARK_EXE_WRITE);
	s = find_ok(e, "SSL_read");
	assert_offset_has(path, &s, MARK_EXE_READ);
	elf_syms_close(e);
}

static void test_markers_64(void **state)
{
	check_marker_lib("libm64.so", ELFCLASS64);
	check_marker_exe("exe64", ELFCLASS64);
}

static void test_markers_32(void **state)
{
	if (!have_m32)
		skip();
	check_marker_lib("libm32.so", ELFCLASS32);
	check_marker_exe("exe32", ELFCLASS32);
	{
		struct elf_syms *e = open_ok(P("libm32.so"));

		assert_int_equal(elf_syms_machine(e), EM_386);
		elf_syms_close(e);
	}
}

/* ---- system libraries ---------------------------------------------------- */

static void test_system_libssl(void **state)
{
	const char *path = SYS_LIBDIR "/libssl.so.3";
	const char *names[] = { "SSL_write", "SSL_read", "SSL_write_ex", "SSL_read_ex" };
	struct elf_sym out[4];
	int rc[4];
	struct elf_syms *e;
	void *h;

	if (access(path, R_OK) != 0)
		skip();
	e = open_ok(path);
	assert_int_equal(elf_syms_find_many(e, names, 4, out, rc), 4);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	for (int i = 0; i < 4; i++) {
		assert_true(out[i].dynamic);
		assert_string_equal(out[i].version, "OPENSSL_3.0.0");
		assert_offset_matches_memory(path, &out[i], dlsym(h, names[i]), load_bias(h));
	}
	dlclose(h);
	assert_int_equal(find_rc(e, "gnutls_record_send"), -ENOENT);
	elf_syms_close(e);
}

static void test_system_libgnutls(void **state)
{
	const char *path = SYS_LIBDIR "/libgnutls.so.30";
	const char *names[] = { "gnutls_record_send", "gnutls_record_recv" };
	struct elf_sym out[2];
	int rc[2];
	struct elf_syms *e;
	void *h;

	if (access(path, R_OK) != 0)
		skip();
	e = open_ok(path);
	assert_int_equal(elf_syms_find_many(e, names, 2, out, rc), 2);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	for (int i = 0; i < 2; i++) {
		assert_non_null(out[i].version); /* GNUTLS_3_4 */
		assert_offset_matches_memory(path, &out[i], dlsym(h, names[i]), load_bias(h));
	}
	dlclose(h);
	assert_int_equal(find_rc(e, "SSL_write"), -ENOENT);
	elf_syms_close(e);
}

static void test_system_libc(void **state)
{
	const char *path = SYS_LIBDIR "/libc.so.6";
	struct elf_syms *e;
	struct elf_sym s;
	void *h;

	if (access(path, R_OK) != 0)
		skip();
	e = open_ok(path);
	assert_int_equal(find_rc(e, "SSL_write"), -ENOENT);
	assert_int_equal(find_rc(e, "SSL_read"), -ENOENT);
	s = find_ok(e, "write");
	assert_string_equal(s.version, "GLIBC_2.2.5");
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	assert_non_null(h);
	assert_offset_matches_memory(path, &s, dlsym(h, "write"), load_bias(h));
	dlclose(h);
	/* memcpy@@GLIBC_2.14 is an ifunc: no falling back to memcpy@GLIBC_2.2.5 */
	assert_int_equal(find_rc(e, "memcpy"), -EOPNOTSUPP);
	s = find_ok(e, "memcpy@GLIBC_2.2.5");
	assert_false(s.default_version);
	elf_syms_close(e);
}

/* ---- files that are not ELF, or not usable ELF --------------------------- */

static void expect_open_fails(const char *path, int want)
{
	struct elf_syms *e = (struct elf_syms *)1;
	int rc = elf_syms_open(path, &e);

	if (rc != want)
		fail_msg("elf_syms_open(%s) = %d, want %d (%s)", path, rc, want,
			 elf_syms_last_error());
	assert_null(e);
	assert_true(strlen(elf_syms_last_error()) > 0);
}

static void expect_mem_fails(const void *buf, size_t len, int want)
{
	struct elf_syms *e = (struct elf_syms *)1;
	int rc = elf_syms_open_mem(buf, len, &e);

	if (rc != want)
		fail_msg("elf_syms_open_mem(%zu bytes) = %d, want %d (%s)", len, rc, want,
			 elf_syms_last_error());
	assert_null(e);
}

static uint64_t rng_state;

static uint32_t rnd(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng_state >> 33);
}

static void test_not_elf(void **state)
{
	unsigned char junk[4096];

	write_file(P("empty"), "", 0);
	expect_open_fails(P("empty"), -ENOEXEC);
	expect_mem_fails("", 0, -ENOEXEC);
	expect_open_fails(P("hello.txt"), -ENOEXEC);
	expect_open_fails(P("does-not-exist"), -ENOENT);
	expect_open_fails(dir, -ENOEXEC); /* a directory */
	assert_int_equal(mkfifo(P("fifo"), 0600), 0);
	expect_open_fails(P("fifo"), -ENOEXEC); /* and no hang waiting for a writer */
	expect_open_fails("/dev/null", -ENOEXEC);
	expect_open_fails(P("libm64.a"), -ENOEXEC); /* an ar archive */
	expect_open_fails(P("m64.o"), -ENOEXEC);    /* relocatable: no segments */

	rng_state = 1;
	for (int round = 0; round < 50; round++) {
		for (size_t i = 0; i < sizeof(junk); i++)
			junk[i] = (unsigned char)rnd();
		if (junk[0] == 0x7f)
			junk[0] = 0;
		expect_mem_fails(junk, sizeof(junk), -ENOEXEC);
	}
	write_file(P("junk"), junk, sizeof(junk));
	expect_open_fails(P("junk"), -ENOEXEC);
}

static void test_random_after_magic(void **state)
{
	size_t len;
	unsigned char *img = slurp(P("libtls.so"), &len);
	unsigned char junk[4096];

	rng_state = 2;
	for (int round = 0; round < 500; round++) {
		struct elf_syms *e = NULL;
		int rc;

		for (size_t i = 0; i < sizeof(junk); i++)
			junk[i] = (unsigned char)rnd();
		/* a good e_ident (or just the magic), then noise */
		memcpy(junk, img, round % 2 ? EI_NIDENT : SELFMAG);
		rc = elf_syms_open_mem(junk, sizeof(junk), &e);
		assert_true(rc == -EINVAL || rc == -ENOEXEC);
		assert_null(e);
	}
	free(img);
}

/* Every truncation of a valid ELF fails to open: its section headers are at the end. */
static void check_truncations(const char *name)
{
	size_t len;
	unsigned char *img = slurp(P(name), &len);
	const char *tpath = P("truncated");
	size_t cut = 0, step;

	step = len / 97 > 4096 ? len / 97 : 4096;
	while (cut < len) {
		int want = cut < SELFMAG ? -ENOEXEC : -EINVAL;

		expect_mem_fails(img, cut, want);
		write_file(tpath, img, cut);
		expect_open_fails(tpath, want);
		if (cut < 16)
			cut++;
		else if (cut < 4096)
			cut += 64;
		else if (cut + step < len)
			cut += step;
		else
			cut = cut == len - 1 ? len : len - 1;
	}
	free(img);
}

static void test_truncated(void **state)
{
	check_truncations("libtls.so");
	check_truncations("prog_g");
	check_truncations("exe64");
	if (have_m32) {
		check_truncations("libm32.so");
		check_truncations("exe32");
	}
}

/* ---- patched headers (64-bit little-endian images) ----------------------- */

struct image {
	unsigned char *buf;
	size_t len;
};

static struct image load_image(const char *name)
{
	struct image im;

	im.buf = slurp(P(name), &im.len);
	assert_true(im.len >= sizeof(Elf64_Ehdr));
	return im;
}

static Elf64_Ehdr *ehdr(struct image *im)
{
	return (Elf64_Ehdr *)im->buf;
}

static Elf64_Shdr *shdr_at(struct image *im, size_t i)
{
	Elf64_Ehdr *eh = ehdr(im);

	assert_true(eh->e_shoff + (i + 1) * sizeof(Elf64_Shdr) <= im->len);
	return (Elf64_Shdr *)(im->buf + eh->e_shoff) + i;
}

static Elf64_Shdr *shdr_of_type(struct image *im, uint32_t type, size_t *index)
{
	for (size_t i = 1; i < ehdr(im)->e_shnum; i++) {
		if (shdr_at(im, i)->sh_type == type) {
			if (index)
				*index = i;
			return shdr_at(im, i);
		}
	}
	fail_msg("no section of type %u", type);
	return NULL;
}

static Elf64_Sym *dynsym_named(struct image *im, const char *name)
{
	Elf64_Shdr *sh = shdr_of_type(im, SHT_DYNSYM, NULL);
	Elf64_Shdr *str = shdr_at(im, sh->sh_link);
	Elf64_Sym *syms = (Elf64_Sym *)(im->buf + sh->sh_offset);

	for (size_t i = 1; i < sh->sh_size / sizeof(*syms); i++)
		if (strcmp((char *)im->buf + str->sh_offset + syms[i].st_name, name) == 0)
			return &syms[i];
	fail_msg("no dynamic symbol %s", name);
	return NULL;
}

static Elf64_Phdr *exec_load(struct image *im)
{
	Elf64_Phdr *ph = (Elf64_Phdr *)(im->buf + ehdr(im)->e_phoff);

	for (size_t i = 0; i < ehdr(im)->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X))
			return &ph[i];
	fail_msg("no executable PT_LOAD");
	return NULL;
}

static int open_image(struct image *im, struct elf_syms **e)
{
	return elf_syms_open_mem(im->buf, im->len, e);
}

static void expect_image_fails(struct image *im, int want)
{
	expect_mem_fails(im->buf, im->len, want);
	/* and the same through a file (the mmap path) */
	write_file(P("patched"), im->buf, im->len);
	expect_open_fails(P("patched"), want);
}

static void expect_find(struct image *im, const char *name, int want)
{
	struct elf_syms *e = NULL;
	int rc = open_image(im, &e);

	if (rc)
		fail_msg("open = %d: %s", rc, elf_syms_last_error());
	assert_int_equal(find_rc(e, name), want);
	elf_syms_close(e);
}

static void test_corrupt_elf_header(void **state)
{
	struct image im = load_image("libtls.so");
	Elf64_Ehdr saved = *ehdr(&im);

	ehdr(&im)->e_shoff = im.len + 4096; /* section headers past the end */
	expect_image_fails(&im, -EINVAL);
	ehdr(&im)->e_shoff = UINT64_MAX - 100;
	expect_image_fails(&im, -EINVAL);
	*ehdr(&im) = saved;
	ehdr(&im)->e_shnum = 0xfff0; /* more sections than the file holds */
	expect_image_fails(&im, -EINVAL);
	*ehdr(&im) = saved;
	ehdr(&im)->e_phoff = im.len - 8; /* program headers past the end */
	expect_image_fails(&im, -EINVAL);
	*ehdr(&im) = saved;
	ehdr(&im)->e_phnum = 0xfff0;
	expect_image_fails(&im, -EINVAL);
	*ehdr(&im) = saved;
	ehdr(&im)->e_ident[EI_CLASS] = 7;
	expect_image_fails(&im, -EINVAL);
	*ehdr(&im) = saved;
	ehdr(&im)->e_type = ET_REL;
	expect_image_fails(&im, -ENOEXEC);
	*ehdr(&im) = saved;
	ehdr(&im)->e_type = ET_CORE;
	expect_image_fails(&im, -ENOEXEC);

	/* section names are never needed: a bad e_shstrndx does not matter */
	*ehdr(&im) = saved;
	ehdr(&im)->e_shstrndx = 0xfff0;
	expect_find(&im, "SSL_write", 0);
	free(im.buf);
}

static void test_corrupt_symbol_sections(void **state)
{
	struct image im = load_image("libtls.so");
	size_t dyn_index;
	Elf64_Shdr *dyn = shdr_of_type(&im, SHT_DYNSYM, &dyn_index), saved = *dyn;
	Elf64_Shdr *sym = shdr_of_type(&im, SHT_SYMTAB, NULL), saved_sym = *sym;

	dyn->sh_link = 0xfff0; /* string table out of range */
	expect_image_fails(&im, -EINVAL);
	dyn->sh_link = 0;
	expect_image_fails(&im, -EINVAL);
	dyn->sh_link = (Elf64_Word)dyn_index; /* itself: not a string table */
	expect_image_fails(&im, -EINVAL);
	*dyn = saved;
	dyn->sh_size = 1ull << 40; /* far past the end */
	expect_image_fails(&im, -EINVAL);
	*dyn = saved;
	dyn->sh_offset = im.len + 1;
	expect_image_fails(&im, -EINVAL);
	*dyn = saved;
	dyn->sh_offset = UINT64_MAX - 8;
	expect_image_fails(&im, -EINVAL);
	*dyn = saved;
	dyn->sh_entsize = 7;
	expect_image_fails(&im, -EINVAL);
	*dyn = saved;
	dyn->sh_flags |= SHF_COMPRESSED;
	expect_image_fails(&im, -EINVAL);
	*dyn = saved;
	sym->sh_size = 0xffffffffffffull;
	expect_image_fails(&im, -EINVAL);
	*sym = saved_sym;
	sym->sh_size = im.len - sym->sh_offset + sizeof(Elf64_Sym); /* one entry too many */
	expect_image_fails(&im, -EINVAL);
	*sym = saved_sym;
	expect_find(&im, "SSL_write", 0);
	free(im.buf);
}

static void test_corrupt_versions(void **state)
{
	struct image im = load_image("libtls.so");
	Elf64_Shdr *vs = shdr_of_type(&im, SHT_GNU_versym, NULL), saved = *vs;
	Elf64_Shdr *vd = shdr_of_type(&im, SHT_GNU_verdef, NULL), saved_vd = *vd;
	Elf64_Verdef *first = (Elf64_Verdef *)(im.buf + vd->sh_offset), saved_first = *first;
	struct elf_syms *e;

	vs->sh_size = 2; /* fewer version entries than symbols */
	expect_image_fails(&im, -EINVAL);
	vs->sh_size = saved.sh_size * 4;
	expect_image_fails(&im, -EINVAL);
	*vs = saved;
	vd->sh_info = 0xffffffff; /* record count: bounded by the data anyway */
	assert_int_equal(open_image(&im, &e), 0);
	assert_string_equal(find_ok(e, "SSL_write").version, "OPENSSL_3.0.0");
	elf_syms_close(e);
	*vd = saved_vd;
	vd->sh_link = 0xfff0;
	expect_image_fails(&im, -EINVAL);
	*vd = saved_vd;
	first->vd_next = 0xfffffff0;
	expect_image_fails(&im, -EINVAL);
	*first = saved_first;
	first->vd_aux = 0xfffffff0;
	first->vd_flags = 0; /* so its name is read */
	expect_image_fails(&im, -EINVAL);
	*first = saved_first;

	/* the 3.0.0 record names a string out of range: the version is unknown */
	{
		Elf64_Verdef *v = first;
		Elf64_Verdaux *aux;

		while (v->vd_ndx != 3) {
			assert_int_not_equal(v->vd_next, 0);
			v = (Elf64_Verdef *)((unsigned char *)v + v->vd_next);
		}
		aux = (Elf64_Verdaux *)((unsigned char *)v + v->vd_aux);
		aux->vda_name = 0x7fffffff;
		assert_int_equal(open_image(&im, &e), 0);
		assert_null(find_ok(e, "SSL_write").version);
		assert_true(find_ok(e, "SSL_write").default_version);
		assert_int_equal(find_rc(e, "SSL_write@@OPENSSL_3.0.0"), 0); /* from .symtab */
		assert_false(find_ok(e, "SSL_write@@OPENSSL_3.0.0").dynamic);
		elf_syms_close(e);
	}
	free(im.buf);
}

/* With .dynsym gone, the versions come from the .symtab spelling (name@@VER). */
static void test_symtab_version_spelling(void **state)
{
	struct image im = load_image("libtls.so");
	struct elf_syms *e, *ref = open_ok(P("libtls.so"));
	struct elf_sym s;

	shdr_of_type(&im, SHT_DYNSYM, NULL)->sh_type = SHT_PROGBITS;
	assert_int_equal(open_image(&im, &e), 0);
	s = find_ok(e, "SSL_write");
	assert_false(s.dynamic);
	assert_string_equal(s.version, "OPENSSL_3.0.0");
	assert_true(s.default_version);
	assert_int_equal(s.offset, find_ok(ref, "SSL_write").offset);
	s = find_ok(e, "SSL_write@OPENSSL_1.1.0");
	assert_false(s.default_version);
	assert_int_equal(s.offset, find_ok(ref, "SSL_write@OPENSSL_1.1.0").offset);
	assert_int_equal(find_rc(e, "SSL_write@@OPENSSL_1.1.0"), -ENOENT);
	/* SSL_read is unversioned in .symtab (the version script tagged only .dynsym) */
	assert_null(find_ok(e, "SSL_read").version);
	elf_syms_close(e);
	elf_syms_close(ref);
	free(im.buf);
}

static void test_corrupt_symbols(void **state)
{
	struct image im = load_image("libtls_stripped.so");
	struct image full = load_image("libtls.so");
	Elf64_Sym *rd = dynsym_named(&im, "SSL_read"), saved = *rd;
	Elf64_Phdr *ph, saved_ph;

	rd->st_name = 0xffffffff; /* name outside .dynstr: just that entry is skipped */
	expect_find(&im, "SSL_read", -ENOENT);
	expect_find(&im, "SSL_write", 0);
	dynsym_named(&full, "SSL_read")->st_name = 0xffffffff;
	expect_find(&full, "SSL_read", 0); /* still in .symtab */
	*rd = saved;
	rd->st_shndx = SHN_UNDEF;
	expect_find(&im, "SSL_read", -ENOENT);
	*rd = saved;
	rd->st_value = 0x7fff0000; /* outside every executable segment */
	expect_find(&im, "SSL_read", -EINVAL);
	*rd = saved;
	rd->st_value = 0; /* the ELF header: mapped, but not executable */
	expect_find(&im, "SSL_read", -EINVAL);
	*rd = saved;
	rd->st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT);
	expect_find(&im, "SSL_read", -ENOENT);
	*rd = saved;

	/* the last string of .dynstr loses its terminator */
	{
		Elf64_Shdr *dyn = shdr_of_type(&im, SHT_DYNSYM, NULL);
		Elf64_Shdr *str = shdr_at(&im, dyn->sh_link);

		im.buf[str->sh_offset + str->sh_size - 1] = 'X';
		expect_find(&im, "SSL_write", 0);
		im.buf[str->sh_offset + str->sh_size - 1] = '\0';
	}

	ph = exec_load(&im);
	saved_ph = *ph;
	ph->p_offset = im.len + 0x10000; /* the segment's bytes are past the end */
	expect_find(&im, "SSL_write", -EINVAL);
	ph->p_offset = UINT64_MAX - 0x100;
	expect_find(&im, "SSL_write", -EINVAL);
	*ph = saved_ph;
	ph->p_filesz = 1; /* the function is in the segment's memory, not its file part */
	expect_find(&im, "SSL_write", -EINVAL);
	*ph = saved_ph;
	ph->p_flags &= ~(Elf64_Word)PF_X;
	expect_find(&im, "SSL_write", -EINVAL);
	*ph = saved_ph;
	expect_find(&im, "SSL_write", 0);
	free(im.buf);
	free(full.buf);
}

/* Random byte changes, mostly in the headers: every result is clean. */
static void mutate_and_check(const char *name, int rounds)
{
	const char *names[] = { "SSL_write", "SSL_read", "SSL_write_ex", "SSL_read_ex",
				"gnutls_record_send", "gnutls_record_recv",
				"SSL_write@OPENSSL_1.1.0", "SSL_write@@OPENSSL_3.0.0" };
	size_t len;
	unsigned char *orig = slurp(P(name), &len);
	unsigned char *img = malloc(len);
	uint64_t shoff;
	int opened = 0, found = 0;

	assert_non_null(img);
	shoff = ((Elf64_Ehdr *)orig)->e_ident[EI_CLASS] == ELFCLASS64 ?
			((Elf64_Ehdr *)orig)->e_shoff :
			((Elf32_Ehdr *)orig)->e_shoff;
	assert_true(shoff < len);
	rng_state = 3;
	for (int r = 0; r < rounds; r++) {
		struct elf_sym out[8];
		int rc[8], n = 1 + (int)(rnd() % 8);
		struct elf_syms *e = NULL;

		memcpy(img, orig, len);
		for (int k = 0; k < n; k++) {
			size_t at;
			unsigned char v;

			switch (rnd() % 4) {
			case 0:
			case 1:
				at = rnd() % (len < 2048 ? len : 2048); /* headers, .dynsym, versions */
				break;
			case 2:
				at = (size_t)shoff + rnd() % (len - shoff); /* section headers */
				break;
			default:
				at = rnd() % len;
			}
			switch (rnd() % 4) {
			case 0:
				v = 0xff;
				break;
			case 1:
				v = 0;
				break;
			default:
				v = (unsigned char)rnd();
			}
			img[at] = v;
		}
		if (elf_syms_open_mem(img, len, &e) != 0) {
			assert_null(e);
			continue;
		}
		opened++;
		(void)elf_syms_stripped(e);
		elf_syms_find_many(e, names, 8, out, rc);
		for (int i = 0; i < 8; i++) {
			assert_true(rc[i] == 0 || rc[i] == -ENOENT || rc[i] == -EINVAL ||
				    rc[i] == -EOPNOTSUPP);
			if (rc[i] == 0) {
				assert_true(out[i].offset < len);
				found++;
			}
		}
		elf_syms_close(e);
	}
	/* most single-byte changes leave the file usable: the loop did test finds */
	assert_true(opened > rounds / 10);
	assert_true(found > 0);
	free(img);
	free(orig);
}

static void test_mutations(void **state)
{
	mutate_and_check("libtls.so", 3000);
	mutate_and_check("libm64.so", 1000);
	if (have_m32)
		mutate_and_check("libm32.so", 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lib_default_version),
		cmocka_unit_test(test_lib_explicit_versions),
		cmocka_unit_test(test_lib_all_tls_names),
		cmocka_unit_test(test_lib_stripped),
		cmocka_unit_test(test_lib_not_functions),
		cmocka_unit_test(test_unversioned_lib),
		cmocka_unit_test(test_find_many_large),
		cmocka_unit_test(test_exe_static_tls),
		cmocka_unit_test(test_exe_same_offset_with_debug_info),
		cmocka_unit_test(test_exe_stripped),
		cmocka_unit_test(test_exe_nopie_addresses),
		cmocka_unit_test(test_undefined_import),
		cmocka_unit_test(test_open_fd_dups),
		cmocka_unit_test(test_open_mem),
		cmocka_unit_test(test_markers_64),
		cmocka_unit_test(test_markers_32),
		cmocka_unit_test(test_system_libssl),
		cmocka_unit_test(test_system_libgnutls),
		cmocka_unit_test(test_system_libc),
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_random_after_magic),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_corrupt_elf_header),
		cmocka_unit_test(test_corrupt_symbol_sections),
		cmocka_unit_test(test_corrupt_versions),
		cmocka_unit_test(test_symtab_version_spelling),
		cmocka_unit_test(test_corrupt_symbols),
		cmocka_unit_test(test_mutations),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
