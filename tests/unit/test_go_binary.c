/*
 * go_binary against Go programs built here at test time with the system's
 * go (an HTTPS client: normal, stripped with -s -w, the stripped one without
 * its section header table, the normal one stripped by binutils, and one
 * linked by the external linker), the go
 * command itself, synthetic Go executables of every pclntab format, byte
 * order and class (built by the fuzz target, included below), and corrupt
 * copies that must fail cleanly.
 *
 * Go is required: without it these tests fail (they do not skip).
 * GO_BINARY_TEST_PIE=1 adds two PIE builds (about 20 s more: the standard
 * library is rebuilt). GO_BINARY_MUTATIONS (default 300) sets how many random
 * mutations of the real binaries are tried, e.g. fewer under valgrind.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tls/elf_syms.h"
#include "tls/go_binary.h"

#include "fixture.h"

/* The synthetic executables and the fuzz harness's checks (gs_*). */
#include "../fuzz/fuzz_go_binary.c"

static char go_problem[512];	/* why the Go fixtures are missing; "" once built */
static bool keep_fixtures;	/* a build failed: its log is in there */
static char go_version[64];	/* "go1.19.8", as `go version` says */
static char goroot[PATH_MAX];
static bool have_pie;

static const char *const tls_names[2] = { "crypto/tls.(*Conn).Write", "crypto/tls.(*Conn).Read" };

/* The forms of the test program; the PIE ones only with GO_BINARY_TEST_PIE. */
struct form {
	const char *file;
	const char *nm;		/* `go tool nm` output, NULL when stripped */
	bool by_section;	/* the pclntab has its own section */
	bool pie;
};

static const struct form forms[] = {
	{ "normal", "normal.nm", true, false },
	{ "stripped", NULL, true, false },
	{ "noshdr", NULL, false, false },
	{ "bstrip", NULL, true, false },
	{ "ext", "ext.nm", true, false },
	{ "pie", "pie.nm", true, true },
	{ "extpie", "extpie.nm", false, true },
};
#define NFORMS (sizeof(forms) / sizeof(forms[0]))

static const char main_go[] = "package main\n"
			      "\n"
			      "import (\n"
			      "\t\"fmt\"\n"
			      "\t\"net/http\"\n"
			      ")\n"
			      "\n"
			      "func main() {\n"
			      "\tresp, err := http.Get(\"https://127.0.0.1:1/\")\n"
			      "\tif err != nil {\n"
			      "\t\tfmt.Println(err)\n"
			      "\t\treturn\n"
			      "\t}\n"
			      "\tresp.Body.Close()\n"
			      "}\n";

/* Every go command runs with its cache and paths inside the fixture dir. */
#define GO_ENV                                                                              \
	"export GOCACHE=\"$PWD/gocache\" GOPATH=\"$PWD/gopath\" HOME=\"$PWD\" GO111MODULE=off " \
	"GOFLAGS= GOTOOLCHAIN=local; "

/* ---- helpers -------------------------------------------------------------- */

static int write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		return -1;
	if (fwrite(data, 1, len, f) != len) {
		fclose(f);
		return -1;
	}
	return fclose(f);
}

static int read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	char *nl;

	if (!f)
		return -1;
	if (!fgets(buf, (int)size, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	return 0;
}

static void need_go(void)
{
	if (go_problem[0])
		fail_msg("%s", go_problem);
}

static bool form_built(const struct form *f)
{
	return !f->pie || have_pie;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static struct go_binary *open_ok(const char *path)
{
	struct go_binary *g = NULL;
	int rc = go_binary_open(path, &g);

	if (rc)
		fail_msg("go_binary_open(%s) = %d: %s", path, rc, go_binary_last_error());
	assert_non_null(g);
	return g;
}

static struct go_binary *open_mem_ok(const void *buf, size_t len)
{
	struct go_binary *g = NULL;
	int rc = go_binary_open_mem(buf, len, &g);

	if (rc)
		fail_msg("go_binary_open_mem(%zu bytes) = %d: %s", len, rc, go_binary_last_error());
	assert_non_null(g);
	return g;
}

static void expect_open_mem(const void *buf, size_t len, int want, const char *what)
{
	struct go_binary *g = (struct go_binary *)1;
	int rc = go_binary_open_mem(buf, len, &g);

	if (rc != want)
		fail_msg("%s: go_binary_open_mem = %d, want %d (%s)", what, rc, want,
			 go_binary_last_error());
	if (rc)
		assert_null(g);
	go_binary_close(g);
}

static struct go_func find_ok(const struct go_binary *g, const char *name)
{
	struct go_func f;
	int rc = go_binary_find_func(g, name, &f);

	if (rc)
		fail_msg("go_binary_find_func(%s) = %d: %s", name, rc, go_binary_last_error());
	return f;
}

static void assert_same_func(const struct go_func *a, const struct go_func *b, const char *what)
{
	if (a->addr != b->addr || a->size != b->size || a->offset != b->offset)
		fail_msg("%s: 0x%llx+%llu@0x%llx vs 0x%llx+%llu@0x%llx", what,
			 (unsigned long long)a->addr, (unsigned long long)a->size,
			 (unsigned long long)a->offset, (unsigned long long)b->addr,
			 (unsigned long long)b->size, (unsigned long long)b->offset);
}

/* The address `go tool nm` gives name in the listing at path (T or t). */
static uint64_t nm_addr(const char *path, const char *name)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	uint64_t addr = 0;

	if (!f)
		fail_msg("open %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end;
		unsigned long long a = strtoull(p, &end, 16);

		if (end == p)
			continue;
		p = end + strspn(end, " ");
		if ((*p != 'T' && *p != 't') || p[1] != ' ')
			continue;
		p += 2;
		p[strcspn(p, "\n")] = '\0';
		if (!strcmp(p, name)) {
			addr = a;
			break;
		}
	}
	fclose(f);
	if (!addr)
		fail_msg("%s not in %s", name, path);
	return addr;
}

/* The end of the furthest PT_LOAD's file bytes (an ELF64 little-endian file). */
static uint64_t segments_end(const unsigned char *buf)
{
	Elf64_Ehdr eh;
	uint64_t end = 0;

	memcpy(&eh, buf, sizeof(eh));
	for (unsigned int i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		memcpy(&ph, buf + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type == PT_LOAD && ph.p_offset + ph.p_filesz > end)
			end = ph.p_offset + ph.p_filesz;
	}
	return end;
}

/* The file offset of section name's header (ELF64 little-endian), or 0. */
static uint64_t section_header(const unsigned char *buf, const char *name)
{
	Elf64_Ehdr eh;
	Elf64_Shdr strs;

	memcpy(&eh, buf, sizeof(eh));
	if (!eh.e_shoff)
		return 0;
	memcpy(&strs, buf + eh.e_shoff + eh.e_shstrndx * sizeof(Elf64_Shdr), sizeof(strs));
	for (unsigned int i = 1; i < eh.e_shnum; i++) {
		uint64_t at = eh.e_shoff + i * sizeof(Elf64_Shdr);
		Elf64_Shdr sh;

		memcpy(&sh, buf + at, sizeof(sh));
		if (!strcmp((const char *)buf + strs.sh_offset + sh.sh_name, name))
			return at;
	}
	return 0;
}

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/*
 * Where the parts of a Go 1.18+ amd64 pclntab are in a file: the header
 * (the first 4-byte aligned magic, quantum 1, pointer size 8), the name
 * table, the function table and the build info blob.
 */
struct layout {
	uint64_t pcln;		/* header */
	uint64_t nfunc;
	uint64_t names, names_len;
	uint64_t functab;	/* also what funcoff is relative to */
	uint64_t buildinfo;
};

static struct layout layout_of(const unsigned char *buf, size_t len)
{
	struct layout l = { 0 };
	bool found = false;

	for (uint64_t i = 0; i + 72 <= len && !found; i += 4) {
		uint32_t m = get32(buf + i);

		if ((m == 0xfffffff0u || m == 0xfffffff1u) && !memcmp(buf + i + 4, "\0\0\1\x08", 4)) {
			l.pcln = i;
			found = true;
		}
	}
	if (!found)
		fail_msg("no Go 1.18+ amd64 pclntab in the test binary (is go older than 1.18?)");
	l.nfunc = get64(buf + l.pcln + 8);
	l.names = l.pcln + get64(buf + l.pcln + 8 + 3 * 8);
	l.names_len = get64(buf + l.pcln + 8 + 4 * 8) - get64(buf + l.pcln + 8 + 3 * 8);
	l.functab = l.pcln + get64(buf + l.pcln + 8 + 7 * 8);
	for (uint64_t i = 0; i + 32 <= len; i += 16)
		if (!memcmp(buf + i, "\xff Go buildinf:", 14)) {
			l.buildinfo = i;
			break;
		}
	assert_true(l.buildinfo != 0);
	return l;
}

/* Function i's _func in the layout. */
static uint64_t func_at(const unsigned char *buf, const struct layout *l, uint64_t i)
{
	return l->functab + get32(buf + l->functab + 8 * i + 4);
}

/* ---- fixtures ------------------------------------------------------------- */

/* A copy of src without a section header table, as sstrip leaves a file. */
static int drop_section_headers(const char *src, const char *dst)
{
	size_t len;
	unsigned char *buf;
	int fd = open(src, O_RDONLY), rc;
	struct stat st;

	if (fd < 0 || fstat(fd, &st) != 0)
		return -1;
	len = (size_t)st.st_size;
	buf = malloc(len);
	if (!buf || pread(fd, buf, len, 0) != (ssize_t)len) {
		free(buf);
		close(fd);
		return -1;
	}
	close(fd);
	memset(buf + offsetof(Elf64_Ehdr, e_shoff), 0, sizeof(Elf64_Off));
	memset(buf + offsetof(Elf64_Ehdr, e_shnum), 0, sizeof(Elf64_Half));
	memset(buf + offsetof(Elf64_Ehdr, e_shstrndx), 0, sizeof(Elf64_Half));
	rc = write_file(dst, buf, len);
	free(buf);
	if (rc == 0)
		rc = chmod(dst, 0755);
	return rc;
}

static void build_go_fixtures(void)
{
	char line[256];

	if (system("command -v go >/dev/null 2>&1") != 0) {
		snprintf(go_problem, sizeof(go_problem),
			 "go is not on PATH: these tests build Go programs with it "
			 "(on Debian: apt-get install golang-go)");
		return;
	}
	if (write_file(P("main.go"), main_go, sizeof(main_go) - 1) ||
	    run(GO_ENV "go version > goversion.txt && go env GOROOT > goroot.txt") ||
	    run(GO_ENV "go build -o normal main.go") ||
	    run(GO_ENV "go build -ldflags='-s -w' -o stripped main.go") ||
	    run(GO_ENV "go build -ldflags=-linkmode=external -o ext main.go") ||
	    run(GO_ENV "go tool nm normal > normal.nm && go tool nm ext > ext.nm") ||
	    run("strip -o bstrip normal") ||
	    drop_section_headers(P("stripped"), P("noshdr"))) {
		snprintf(go_problem, sizeof(go_problem),
			 "building the Go test programs failed: see %s/build.log", dir);
		keep_fixtures = true;
		return;
	}
	if (getenv("GO_BINARY_TEST_PIE") && *getenv("GO_BINARY_TEST_PIE")) {
		if (run(GO_ENV "go build -buildmode=pie -o pie main.go && "
			       "go build -buildmode=pie -ldflags=-linkmode=external -o extpie main.go && "
			       "go tool nm pie > pie.nm && go tool nm extpie > extpie.nm")) {
			snprintf(go_problem, sizeof(go_problem),
				 "building the PIE Go test programs failed: see %s/build.log", dir);
			keep_fixtures = true;
			return;
		}
		have_pie = true;
	}
	/* "go version go1.19.8 linux/amd64" */
	if (read_line(P("goversion.txt"), line, sizeof(line)) ||
	    sscanf(line, "go version %63s", go_version) != 1 ||
	    read_line(P("goroot.txt"), goroot, sizeof(goroot))) {
		snprintf(go_problem, sizeof(go_problem), "cannot read `go version`/`go env` output in %s",
			 dir);
		return;
	}
}

static int group_setup(void **state)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/test_go_binary.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return -1;
	build_go_fixtures();
	return 0;
}

static int group_teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	if (keep_fixtures || getenv("KEEP_FIXTURES")) {
		fprintf(stderr, "fixtures kept in %s\n", dir);
		return 0;
	}
	if (dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			return -1;
	}
	return 0;
}

/* ---- the real Go programs ------------------------------------------------ */

static void expected_version(struct go_version *v)
{
	memset(v, 0, sizeof(*v));
	if (sscanf(go_version, "go%d.%d.%d", &v->major, &v->minor, &v->patch) < 2)
		fail_msg("cannot parse `go version`'s %s", go_version);
}

static enum go_pclntab_format expected_format(const struct go_version *v)
{
	if (v->minor >= 20)
		return GO_PCLNTAB_1_20;
	if (v->minor >= 18)
		return GO_PCLNTAB_1_18;
	if (v->minor >= 16)
		return GO_PCLNTAB_1_16;
	return GO_PCLNTAB_1_2;
}

static void test_version_all_forms(void **state)
{
	struct go_version want;

	need_go();
	expected_version(&want);
	for (size_t i = 0; i < NFORMS; i++) {
		struct go_binary *g;
		struct go_version v;
		struct go_binary_info info;

		if (!form_built(&forms[i]))
			continue;
		g = open_ok(P(forms[i].file));
		assert_int_equal(go_binary_version(g, &v), 0);
		assert_string_equal(v.str, go_version);
		assert_int_equal(v.major, want.major);
		assert_int_equal(v.minor, want.minor);
		assert_int_equal(v.patch, want.patch);
		go_binary_info(g, &info);
		assert_int_equal(info.machine, EM_X86_64);
		assert_int_equal(info.ptr_size, 8);
		assert_false(info.big_endian);
		assert_true(info.has_build_info);
		assert_int_equal(info.pclntab_format, expected_format(&want));
		if (info.pclntab_by_section != forms[i].by_section)
			fail_msg("%s: pclntab found %s", forms[i].file,
				 info.pclntab_by_section ? "by section" : "by scanning");
		assert_true(info.nfunc > 1000);
		/* amd64: the register ABI from Go 1.17 */
		assert_int_equal(go_binary_regabi(g), want.major > 1 || want.minor >= 17);
		go_binary_close(g);
	}
}

/* The stripped forms give exactly what the symbol table gives. */
static void test_find_all_forms(void **state)
{
	struct go_func ref[2];
	struct go_binary *g;

	need_go();
	g = open_ok(P("normal"));
	for (int k = 0; k < 2; k++)
		ref[k] = find_ok(g, tls_names[k]);
	go_binary_close(g);
	assert_true(ref[0].addr != ref[1].addr);
	for (const char *const *f = (const char *const[]){ "stripped", "noshdr", NULL }; *f; f++) {
		g = open_ok(P(*f));
		for (int k = 0; k < 2; k++) {
			struct go_func got = find_ok(g, tls_names[k]);

			assert_same_func(&got, &ref[k], *f);
		}
		go_binary_close(g);
	}
}

/* How many of n bytes are the same. */
static size_t same_bytes(const unsigned char *a, const unsigned char *b, size_t n)
{
	size_t same = 0;

	for (size_t i = 0; i < n; i++)
		same += a[i] == b[i];
	return same;
}

/*
 * Against `go tool nm` and the ELF symbol table (elf_syms) of every unstripped
 * form: the same address and file offset, and an extent that is the symbol's
 * size up to the next function's alignment. The bytes at the offset are the
 * function's: exactly in the binutils-stripped copy; in the -s -w build (and
 * its copy without sections) all but a few, since its build settings are
 * longer, which moves the data its code refers to.
 */
static void test_against_symbols(void **state)
{
	const char *const copies[] = { "bstrip", "stripped", "noshdr" };
	unsigned char *normal, *copy[3];
	size_t nlen, clen[3];

	need_go();
	normal = slurp(P("normal"), &nlen);
	for (int c = 0; c < 3; c++)
		copy[c] = slurp(P(copies[c]), &clen[c]);
	for (size_t i = 0; i < NFORMS; i++) {
		struct go_binary *g;
		struct elf_syms *e = NULL;

		if (!forms[i].nm || !form_built(&forms[i]))
			continue;
		g = open_ok(P(forms[i].file));
		if (elf_syms_open(P(forms[i].file), &e))
			fail_msg("elf_syms_open(%s): %s", forms[i].file, elf_syms_last_error());
		for (int k = 0; k < 2; k++) {
			struct go_func f = find_ok(g, tls_names[k]);
			struct elf_sym s;

			if (elf_syms_find(e, tls_names[k], &s))
				fail_msg("elf_syms_find(%s): %s", tls_names[k], elf_syms_last_error());
			assert_int_equal(f.addr, nm_addr(P(forms[i].nm), tls_names[k]));
			assert_int_equal(f.addr, s.addr);
			assert_int_equal(f.offset, s.offset);
			assert_true(s.size > 16);
			if (f.size < s.size || f.size - s.size >= 64)
				fail_msg("%s %s: extent %llu for a symbol of %llu bytes", forms[i].file,
					 tls_names[k], (unsigned long long)f.size,
					 (unsigned long long)s.size);
			if (strcmp(forms[i].file, "normal") != 0)
				continue;
			for (int c = 0; c < 3; c++) {
				struct go_binary *gc = open_ok(P(copies[c]));
				struct go_func fc = find_ok(gc, tls_names[k]);
				size_t same;

				go_binary_close(gc);
				assert_true(fc.offset + s.size <= clen[c]);
				same = same_bytes(copy[c] + fc.offset, normal + s.offset, s.size);
				if (c == 0 ? same != s.size :
					     same < s.size * 95 / 100 ||
						     memcmp(copy[c] + fc.offset, normal + s.offset, 16))
					fail_msg("%s in %s: %zu of %llu bytes as in the symbol's", tls_names[k],
						 copies[c], same, (unsigned long long)s.size);
			}
		}
		elf_syms_close(e);
		go_binary_close(g);
	}
	free(normal);
	for (int c = 0; c < 3; c++)
		free(copy[c]);
}

static void test_open_fd_and_mem(void **state)
{
	struct go_binary *g, *gf = NULL, *gm;
	struct go_func a, b, c;
	unsigned char *buf;
	size_t len;
	int fd;

	need_go();
	g = open_ok(P("stripped"));
	fd = open(P("stripped"), O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(go_binary_open_fd(fd, &gf), 0);
	/* the fd is not kept */
	assert_int_equal(close(fd), 0);
	buf = slurp(P("stripped"), &len);
	gm = open_mem_ok(buf, len);
	memset(buf, 0, len); /* the bytes were copied */
	free(buf);
	for (int k = 0; k < 2; k++) {
		a = find_ok(g, tls_names[k]);
		b = find_ok(gf, tls_names[k]);
		c = find_ok(gm, tls_names[k]);
		assert_same_func(&a, &b, "fd");
		assert_same_func(&a, &c, "mem");
	}
	go_binary_close(g);
	go_binary_close(gf);
	go_binary_close(gm);
	go_binary_close(NULL);
}

static void test_find_many(void **state)
{
	const char *names[] = { tls_names[0], tls_names[1], "main.main", "no.such.func", "",
				"crypto/tls.(*Conn).Writ", tls_names[0] };
	enum { N = sizeof(names) / sizeof(names[0]) };
	const int want[N] = { 0, 0, 0, -ENOENT, -EINVAL, -ENOENT, 0 };
	struct go_func out[N], one;
	int rc[N];
	struct go_binary *g;

	need_go();
	g = open_ok(P("noshdr"));
	assert_int_equal(go_binary_find_many(g, names, N, out, rc), 4);
	for (int i = 0; i < N; i++) {
		if (rc[i] != want[i])
			fail_msg("%s: %d, want %d", names[i], rc[i], want[i]);
		assert_int_equal(go_binary_find_func(g, names[i], &one), want[i]);
		assert_memory_equal(&one, &out[i], sizeof(one));
	}
	assert_same_func(&out[0], &out[6], "duplicate query");
	assert_int_equal(go_binary_find_many(g, names, 0, out, rc), 0);
	assert_int_equal(go_binary_find_func(g, "no.such.func", &one), -ENOENT);
	assert_non_null(strstr(go_binary_last_error(), "no.such.func"));
	go_binary_close(g);
}

/*
 * The go command itself: stripped by Debian, larger (10^4 functions), built
 * by the same release that reports the version. Also times open + find.
 */
static void test_go_command(void **state)
{
	char path[PATH_MAX + 16];
	struct go_binary *g;
	struct go_version v;
	struct go_func f[2], f2[2];
	int rc[2];
	double t0, t1, t2;

	need_go();
	snprintf(path, sizeof(path), "%s/bin/go", goroot);
	t0 = now_ms();
	g = open_ok(path);
	t1 = now_ms();
	assert_int_equal(go_binary_find_many(g, tls_names, 2, f, rc), 2);
	t2 = now_ms();
	fprintf(stderr, "go command: open %.2f ms, find %.2f ms\n", t1 - t0, t2 - t1);
	assert_int_equal(go_binary_version(g, &v), 0);
	assert_string_equal(v.str, go_version);
	go_binary_close(g);

	/* the same without section headers */
	assert_int_equal(drop_section_headers(path, P("go_noshdr")), 0);
	t0 = now_ms();
	g = open_ok(P("go_noshdr"));
	t1 = now_ms();
	assert_int_equal(go_binary_find_many(g, tls_names, 2, f2, rc), 2);
	t2 = now_ms();
	fprintf(stderr, "go command without sections: open %.2f ms, find %.2f ms\n", t1 - t0,
		t2 - t1);
	assert_same_func(&f[0], &f2[0], "go command");
	assert_same_func(&f[1], &f2[1], "go command");
	go_binary_close(g);

	t0 = now_ms();
	g = open_ok(P("normal"));
	assert_int_equal(go_binary_find_many(g, tls_names, 2, f, rc), 2);
	t1 = now_ms();
	fprintf(stderr, "test program: open + find %.2f ms\n", t1 - t0);
	go_binary_close(g);
}

static void test_not_go(void **state)
{
	struct go_binary *g = (struct go_binary *)1;
	unsigned char *buf;
	size_t len;
	int fd;

	assert_int_equal(go_binary_open("/bin/true", &g), -ENOEXEC);
	assert_null(g);
	assert_non_null(strstr(go_binary_last_error(), "not a Go binary"));

	/* the scanning path finds nothing either */
	buf = slurp("/bin/true", &len);
	memset(buf + offsetof(Elf64_Ehdr, e_shoff), 0, 8);
	memset(buf + offsetof(Elf64_Ehdr, e_shnum), 0, 2);
	expect_open_mem(buf, len, -ENOEXEC, "/bin/true without sections");
	buf[offsetof(Elf64_Ehdr, e_type)] = ET_REL;
	expect_open_mem(buf, len, -ENOEXEC, "relocatable");
	free(buf);

	assert_int_equal(write_file(P("hello.txt"), "#!/bin/sh\necho hi\n", 18), 0);
	assert_int_equal(go_binary_open(P("hello.txt"), &g), -ENOEXEC);
	assert_int_equal(write_file(P("empty"), "", 0), 0);
	assert_int_equal(go_binary_open(P("empty"), &g), -ENOEXEC);
	assert_int_equal(go_binary_open(P("does-not-exist"), &g), -ENOENT);
	assert_int_equal(go_binary_open(dir, &g), -ENOEXEC);
	fd = open("/dev/null", O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(go_binary_open_fd(fd, &g), -ENOEXEC);
	close(fd);
	expect_open_mem(NULL, 0, -ENOEXEC, "no bytes");
	expect_open_mem("\x7f" "EL", 3, -ENOEXEC, "3 bytes");
	expect_open_mem("\x7f" "ELF\2\1\1", 7, -EINVAL, "7 bytes of ELF");
}

/* ---- corrupt copies of the real program ----------------------------------- */

/*
 * A file cut inside its segments fails (-ENOEXEC before the magic, else
 * -EINVAL); cut past them, it either fails or gives the same answers.
 */
static void check_truncations(const char *file)
{
	size_t len;
	unsigned char *buf = slurp(P(file), &len);
	struct layout l = layout_of(buf, len);
	uint64_t seg_end = segments_end(buf);
	struct go_binary *g = open_mem_ok(buf, len);
	struct go_func ref[2];
	const uint64_t cuts[] = { 0, 1, 3, 4, 15, 16, 52, 63, 64, 200, 0x1000, 0x1001, 0x20000,
				  l.pcln, l.pcln + 8, l.pcln + 64, l.pcln + 100, l.functab + 100,
				  l.functab + 8 * l.nfunc / 2, l.buildinfo + 20, len / 2, seg_end - 1,
				  seg_end, len - 1 };

	for (int k = 0; k < 2; k++)
		ref[k] = find_ok(g, tls_names[k]);
	go_binary_close(g);
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		int rc;

		g = NULL;
		rc = go_binary_open_mem(buf, cuts[i], &g);
		if (cuts[i] < seg_end) {
			int want = cuts[i] < 4 ? -ENOEXEC : -EINVAL;

			if (rc != want)
				fail_msg("%s cut at %llu: %d, want %d (%s)", file,
					 (unsigned long long)cuts[i], rc, want, go_binary_last_error());
		} else if (rc == 0) {
			for (int k = 0; k < 2; k++) {
				struct go_func f = find_ok(g, tls_names[k]);

				assert_same_func(&f, &ref[k], "cut past the segments");
			}
		}
		go_binary_close(g);
	}
	free(buf);
}

static void test_truncated(void **state)
{
	need_go();
	check_truncations("stripped");
	check_truncations("noshdr");
	check_truncations("ext");
}

/* The .gopclntab section says the table is shorter than it is. */
static void test_pclntab_section_cut(void **state)
{
	size_t len;
	unsigned char *buf;
	uint64_t sh, size;
	struct layout l;

	need_go();
	buf = slurp(P("stripped"), &len);
	l = layout_of(buf, len);
	sh = section_header(buf, ".gopclntab");
	assert_true(sh != 0);
	size = get64(buf + sh + offsetof(Elf64_Shdr, sh_size));
	const uint64_t sizes[] = { 8, 16, 64, l.names - l.pcln + 10, l.functab - l.pcln + 100,
				   l.functab - l.pcln + 8 * l.nfunc };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char what[64];

		put64(buf + sh + offsetof(Elf64_Shdr, sh_size), sizes[i]);
		snprintf(what, sizeof(what), ".gopclntab of %llu bytes", (unsigned long long)sizes[i]);
		expect_open_mem(buf, len, -EINVAL, what);
	}
	put64(buf + sh + offsetof(Elf64_Shdr, sh_size), size);
	put64(buf + sh + offsetof(Elf64_Shdr, sh_offset), len - 100);
	expect_open_mem(buf, len, -EINVAL, ".gopclntab past the end of the file");
	free(buf);
}

enum target { T_HDR, T_FUNCTAB, T_FUNC };

struct mutation {
	const char *what;
	enum target where;
	int64_t index;		/* header word, function index (-1: the middle, -2: the end) */
	unsigned int field;	/* T_FUNCTAB: 0 entry, 1 funcoff; T_FUNC: 0 entryoff, 1 nameoff */
	int64_t value;
	bool add;		/* value is added to what is there */
	int open_rc;		/* with the section */
	int open_rc_scan;	/* without section headers */
	int find_rc;		/* when the open succeeds */
};

/* Header words of a Go 1.18+ pclntab: nfunc, nfiles, textStart, 5 offsets. */
static const struct mutation mutations[] = {
	{ "nfunc 0xffffffff", T_HDR, 0, 0, 0xffffffff, false, -EINVAL, -EINVAL, 0 },
	{ "nfunc 0", T_HDR, 0, 0, 0, false, -EINVAL, -EINVAL, 0 },
	{ "nfunc 2^24 + 1", T_HDR, 0, 0, (1 << 24) + 1, false, -EINVAL, -EINVAL, 0 },
	{ "nfunc + 1", T_HDR, 0, 0, 1, true, -EINVAL, -EINVAL, 0 },
	{ "textStart 0x12345", T_HDR, 2, 0, 0x12345, false, -EINVAL, -EINVAL, 0 },
	{ "textStart 0", T_HDR, 2, 0, 0, false, -EINVAL, -EINVAL, 0 },
	{ "textStart + 1 MiB", T_HDR, 2, 0, 1 << 20, true, -EINVAL, -EINVAL, 0 },
	{ "funcnametab after cutab", T_HDR, 3, 0, 0x10000000, true, -EINVAL, -EINVAL, 0 },
	{ "cutab before funcnametab", T_HDR, 4, 0, 0, false, -EINVAL, -EINVAL, 0 },
	{ "functab offset huge", T_HDR, 7, 0, 0xffffffffffffll, false, -EINVAL, -EINVAL, 0 },
	{ "functab offset past the end", T_HDR, 7, 0, 0x7fffffff, false, -EINVAL, -EINVAL, 0 },
	{ "entry going backwards", T_FUNCTAB, -1, 0, 0xffffff00, false, -EINVAL, -EINVAL, 0 },
	{ "entry 0 in the middle", T_FUNCTAB, -1, 0, 0, false, -EINVAL, -EINVAL, 0 },
	{ "funcoff huge", T_FUNCTAB, -1, 1, 0xfffffff0, false, -EINVAL, -EINVAL, 0 },
	{ "end PC huge", T_FUNCTAB, -2, 0, 0xffffffff, false, -EINVAL, -EINVAL, 0 },
	{ "first _func's entry", T_FUNC, 0, 0, 4, true, -EINVAL, -EINVAL, 0 },
	{ "_func entry off by one", T_FUNC, -1, 0, 1, true, 0, 0, -EINVAL },
	{ "_func nameoff 0x7fffffff", T_FUNC, -1, 1, 0x7fffffff, false, 0, 0, -EINVAL },
	{ "_func nameoff -1", T_FUNC, -1, 1, 0xffffffff, false, 0, 0, -EINVAL },
};

static void apply(unsigned char *buf, const struct layout *l, const struct mutation *m)
{
	int64_t i = m->index == -1 ? (int64_t)l->nfunc / 2 : m->index == -2 ? (int64_t)l->nfunc : m->index;
	unsigned char *p;
	bool wide = false;

	switch (m->where) {
	case T_HDR:
		p = buf + l->pcln + 8 + 8 * i;
		wide = true;
		break;
	case T_FUNCTAB:
		p = buf + l->functab + 8 * i + 4 * m->field;
		break;
	default:
		p = buf + func_at(buf, l, (uint64_t)i) + 4 * m->field;
		break;
	}
	if (wide)
		put64(p, m->add ? get64(p) + (uint64_t)m->value : (uint64_t)m->value);
	else
		put32(p, m->add ? get32(p) + (uint32_t)m->value : (uint32_t)m->value);
}

static void test_corrupt_pclntab(void **state)
{
	need_go();
	for (int scan = 0; scan < 2; scan++) {
		size_t len;
		unsigned char *orig = slurp(P(scan ? "noshdr" : "stripped"), &len);
		unsigned char *buf = malloc(len);
		struct layout l = layout_of(orig, len);

		assert_non_null(buf);
		for (size_t i = 0; i < sizeof(mutations) / sizeof(mutations[0]); i++) {
			const struct mutation *m = &mutations[i];
			int want = scan ? m->open_rc_scan : m->open_rc;
			struct go_binary *g = NULL;
			struct go_func out[2];
			int rc[2], r;

			memcpy(buf, orig, len);
			apply(buf, &l, m);
			r = go_binary_open_mem(buf, len, &g);
			if (r != want)
				fail_msg("%s (%s): open %d, want %d (%s)", m->what,
					 scan ? "scanned" : "section", r, want, go_binary_last_error());
			if (r)
				continue;
			go_binary_find_many(g, tls_names, 2, out, rc);
			if (rc[0] != m->find_rc || rc[1] != m->find_rc)
				fail_msg("%s: find %d %d, want %d (%s)", m->what, rc[0], rc[1],
					 m->find_rc, go_binary_last_error());
			go_binary_close(g);
		}

		/* two entries swapped */
		memcpy(buf, orig, len);
		put32(buf + l.functab + 8 * 10, get32(orig + l.functab + 8 * 11));
		put32(buf + l.functab + 8 * 11, get32(orig + l.functab + 8 * 10));
		expect_open_mem(buf, len, -EINVAL, "swapped functab entries");

		/* magics of other formats; an unknown newer one is named as such */
		memcpy(buf, orig, len);
		put32(buf + l.pcln, 0xfffffff7u);
		expect_open_mem(buf, len, scan ? -EINVAL : -EOPNOTSUPP, "magic 0xfffffff7");
		put32(buf + l.pcln, 0x01020304u);
		expect_open_mem(buf, len, -EINVAL, "magic 0x01020304");
		memcpy(buf, orig, len);
		buf[l.pcln + 7] = 4;
		expect_open_mem(buf, len, -EINVAL, "pointer size 4");
		buf[l.pcln + 7] = 8;
		buf[l.pcln + 6] = 3;
		expect_open_mem(buf, len, -EINVAL, "quantum 3");
		buf[l.pcln + 6] = 1;
		buf[l.pcln + 4] = 1;
		expect_open_mem(buf, len, -EINVAL, "pad byte");

		/* a renamed function is not found; the others still are */
		memcpy(buf, orig, len);
		{
			unsigned char *n = memmem(buf + l.names, l.names_len, "crypto/tls.(*Conn).Write",
						  sizeof("crypto/tls.(*Conn).Write"));
			struct go_binary *g;
			struct go_func out[2];
			int rc[2];

			assert_non_null(n);
			n[11] = 'X';
			g = open_mem_ok(buf, len);
			assert_int_equal(go_binary_find_many(g, tls_names, 2, out, rc), 1);
			assert_int_equal(rc[0], -ENOENT);
			assert_int_equal(rc[1], 0);
			go_binary_close(g);
		}
		free(buf);
		free(orig);
	}
}

static void test_corrupt_buildinfo(void **state)
{
	need_go();
	for (int scan = 0; scan < 2; scan++) {
		size_t len;
		unsigned char *orig = slurp(P(scan ? "noshdr" : "stripped"), &len);
		unsigned char *buf = malloc(len);
		struct layout l = layout_of(orig, len);
		unsigned char *b;
		struct go_binary *g;
		struct go_version v;
		struct go_binary_info info;

		assert_non_null(buf);
		b = buf + l.buildinfo;
		/* Go 1.18+: flag 2, then the uvarint length and the version */
		assert_true(orig[l.buildinfo + 15] & 2);
		assert_int_equal(orig[l.buildinfo + 32], strlen(go_version));

		memcpy(buf, orig, len);
		memcpy(b + 32, "\xff\xff\xff\xff\x0f", 5);
		expect_open_mem(buf, len, -EINVAL, "huge version length");
		memcpy(buf, orig, len);
		b[32] = 0;
		expect_open_mem(buf, len, -EINVAL, "empty version");
		memcpy(buf, orig, len);
		b[33] = 1;
		expect_open_mem(buf, len, -EINVAL, "control byte in the version");
		memcpy(buf, orig, len);
		b[14] = 3;
		expect_open_mem(buf, len, -EINVAL, "pointer size 3");
		memcpy(buf, orig, len);
		b[15] = 0; /* the pre-1.18 form: its pointers are 0 */
		expect_open_mem(buf, len, -EINVAL, "pointer form with null pointers");

		/* not a version: the pclntab format says at least 1.18 */
		memcpy(buf, orig, len);
		memcpy(b + 33, "xx", 2);
		g = open_mem_ok(buf, len);
		assert_int_equal(go_binary_version(g, &v), -EINVAL);
		assert_int_equal(v.major, 0);
		assert_int_equal(strncmp(v.str, "xx1.", 4), 0);
		assert_true(go_binary_regabi(g));
		go_binary_close(g);

		/* without the magic: a corrupt section, or no build info at all */
		memcpy(buf, orig, len);
		b[2] = 'g';
		if (!scan) {
			expect_open_mem(buf, len, -EINVAL, ".go.buildinfo without magic");
		} else {
			g = open_mem_ok(buf, len);
			assert_int_equal(go_binary_version(g, &v), -ENOENT);
			assert_string_equal(v.str, "");
			go_binary_info(g, &info);
			assert_false(info.has_build_info);
			assert_true(go_binary_regabi(g));
			assert_int_equal(go_binary_find_func(g, tls_names[0], &(struct go_func){ 0 }), 0);
			go_binary_close(g);
		}
		free(buf);
		free(orig);
	}
}

/* splitmix64: reproducible from GO_BINARY_SEED */
static uint64_t rnd_state;

static uint64_t rnd(void)
{
	uint64_t z = (rnd_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static unsigned long env_num(const char *name, unsigned long def)
{
	const char *s = getenv(name);

	return s && *s ? strtoul(s, NULL, 0) : def;
}

/*
 * Random byte changes, mostly where go_binary reads (ELF headers, pclntab
 * header, function table, _funcs, names, build info): each copy must fail
 * with a documented error or answer within the file, never crash.
 */
static void test_mutations(void **state)
{
	unsigned long n = env_num("GO_BINARY_MUTATIONS", 300);
	unsigned long outcome[3] = { 0 }; /* open failed, found, not found */

	need_go();
	rnd_state = env_num("GO_BINARY_SEED", 1);
	for (int scan = 0; scan < 2; scan++) {
		size_t len;
		unsigned char *buf = slurp(P(scan ? "noshdr" : "stripped"), &len);
		struct layout l = layout_of(buf, len);
		uint64_t funcs = func_at(buf, &l, 0);
		const uint64_t regions[][2] = {
			{ 0, 0x400 },
			{ l.pcln, 72 },
			{ l.functab, 8 * l.nfunc + 4 },
			{ funcs, 64 * l.nfunc < len - funcs ? 64 * l.nfunc : len - funcs },
			{ l.names, l.names_len },
			{ l.buildinfo, 64 },
			{ 0, len },
		};
		static const uint32_t special[] = { 0, 1, 0x7fffffff, 0x80000000u, 0xffffffffu };

		for (unsigned long i = 0; i < n / 2; i++) {
			const uint64_t *reg = regions[rnd() % (sizeof(regions) / sizeof(regions[0]))];
			unsigned int changes = 1 + rnd() % 8;
			uint64_t at[8];
			unsigned char saved[8][4];
			struct go_binary *g = NULL;
			struct go_func out[2];
			int rc[2], r;

			for (unsigned int c = 0; c < changes; c++) {
				at[c] = reg[0] + rnd() % (reg[1] > 4 ? reg[1] - 4 : 1);
				memcpy(saved[c], buf + at[c], 4);
				if (rnd() % 4 == 0)
					put32(buf + at[c], special[rnd() % 5]);
				else
					buf[at[c]] ^= (unsigned char)(1 + rnd() % 255);
			}
			gs_check(buf, len, NULL);
			r = go_binary_open_mem(buf, len, &g);
			if (r) {
				outcome[0]++;
			} else {
				outcome[go_binary_find_many(g, tls_names, 2, out, rc) == 2 ? 1 : 2]++;
				go_binary_close(g);
			}
			while (changes-- > 0)
				memcpy(buf + at[changes], saved[changes], 4);
		}
		free(buf);
	}
	fprintf(stderr, "%lu mutations: %lu refused, %lu found both, %lu did not\n", n & ~1ul,
		outcome[0], outcome[1], outcome[2]);
}

/* ---- synthetic executables ----------------------------------------------- */

/* Every format, byte order, class, with and without sections and build info. */
static void test_synthetic_all_layouts(void **state)
{
	static uint8_t f[GS_SIZE];
	unsigned int n = 0;

	for (unsigned int bits = 0; bits < 1u << 10; bits++) {
		struct go_synth o = {
			.format = (enum go_pclntab_format[]){ GO_PCLNTAB_1_2, GO_PCLNTAB_1_16,
							      GO_PCLNTAB_1_18, GO_PCLNTAB_1_20 }[bits & 3],
			.be = bits & 4,
			.is32 = bits & 8,
			.sections = bits & 16,
			.buildinfo = (int)((bits >> 5) % 3),
			.decoy = bits & 128,
			.rela = (bits & 256) && (bits & 3) >= 2,
			.relro_name = bits & 512,
			.version = "go1.19.8",
			.machine = EM_X86_64,
		};

		if (((bits >> 5) & 3) == 3)
			continue;
		gs_check(f, go_synth_build(&o, f), &o);
		n++;
	}
	assert_int_equal(n, 768);
}

static void test_synthetic_text_start_relocation(void **state)
{
	static uint8_t f[GS_SIZE];
	struct go_synth o = { .format = GO_PCLNTAB_1_20, .sections = true, .buildinfo = 1,
			      .rela = true, .version = "go1.21.0", .machine = EM_X86_64 };
	size_t len = go_synth_build(&o, f);
	struct go_binary *g = open_mem_ok(f, len);
	struct go_binary_info info;

	go_binary_info(g, &info);
	assert_int_equal(info.text_start, GS_TEXT_START);
	go_binary_close(g);

	/* without the PT_DYNAMIC nothing sets it */
	f[56] = 4; /* e_phnum */
	expect_open_mem(f, len, -EINVAL, "textStart 0 without a relocation");
	assert_non_null(strstr(go_binary_last_error(), "text start"));
}

static void test_synthetic_versions(void **state)
{
	static uint8_t f[GS_SIZE];
	static const struct {
		const char *str;
		int rc, major, minor, patch;
	} cases[] = {
		{ "go1.19.8", 0, 1, 19, 8 },
		{ "go1.20", 0, 1, 20, 0 },
		{ "go1.21rc2", 0, 1, 21, 0 },
		{ "go1.22.1 X:boringcrypto", 0, 1, 22, 1 },
		{ "devel go1.23-5c68d6f Thu Feb 1 12:00:00 2024 +0000", 0, 1, 23, 0 },
		{ "go1", 0, 1, 0, 0 },
		{ "go2.0.1", 0, 2, 0, 1 },
		{ "not a version", -EINVAL, 0, 0, 0 },
		{ "go1.x", -EINVAL, 0, 0, 0 },
		{ "go1.19.", -EINVAL, 0, 0, 0 },
		{ "go12345678901.1", -EINVAL, 0, 0, 0 },
		{ "xgo1.19", -EINVAL, 0, 0, 0 },
	};

	for (int inline_form = 0; inline_form < 2; inline_form++) {
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			struct go_synth o = { .format = GO_PCLNTAB_1_18, .buildinfo = inline_form ? 1 : 2,
					      .version = cases[i].str, .machine = EM_X86_64 };
			size_t len = go_synth_build(&o, f);
			struct go_binary *g = open_mem_ok(f, len);
			struct go_version v;

			if (go_binary_version(g, &v) != cases[i].rc)
				fail_msg("%s: version rc %d", cases[i].str, go_binary_version(g, &v));
			assert_int_equal(strncmp(v.str, cases[i].str, sizeof(v.str) - 1), 0);
			assert_int_equal(v.major, cases[i].major);
			assert_int_equal(v.minor, cases[i].minor);
			assert_int_equal(v.patch, cases[i].patch);
			go_binary_close(g);
		}
	}

	/* too long for str: cut, still parsed */
	{
		char longv[200];
		struct go_synth o = { .format = GO_PCLNTAB_1_18, .buildinfo = 1, .version = longv,
				      .machine = EM_X86_64 };
		struct go_binary *g;
		struct go_version v;

		snprintf(longv, sizeof(longv), "go1.24.3 %0150d", 7);
		g = open_mem_ok(f, go_synth_build(&o, f));
		assert_int_equal(go_binary_version(g, &v), 0);
		assert_int_equal(strlen(v.str), sizeof(v.str) - 1);
		assert_int_equal(v.minor, 24);
		go_binary_close(g);
	}
}

static void test_synthetic_regabi(void **state)
{
	static uint8_t f[GS_SIZE];
	static const struct {
		unsigned int machine;
		enum go_pclntab_format format;
		const char *version; /* NULL: no build info */
		bool regabi;
	} cases[] = {
		{ EM_X86_64, GO_PCLNTAB_1_16, "go1.16.15", false },
		{ EM_X86_64, GO_PCLNTAB_1_16, "go1.17.13", true },
		{ EM_X86_64, GO_PCLNTAB_1_20, "go1.21.0", true },
		{ EM_AARCH64, GO_PCLNTAB_1_16, "go1.17.13", false },
		{ EM_AARCH64, GO_PCLNTAB_1_18, "go1.18", true },
		{ EM_RISCV, GO_PCLNTAB_1_18, "go1.18.10", false },
		{ EM_RISCV, GO_PCLNTAB_1_18, "go1.19", true },
		{ EM_386, GO_PCLNTAB_1_20, "go1.22.0", false },
		{ EM_S390, GO_PCLNTAB_1_20, "go1.22.0", false },
		{ EM_386, GO_PCLNTAB_1_20, "go2.0.1", false },
		{ EM_X86_64, GO_PCLNTAB_1_20, "go2.0.1", true },
		{ EM_X86_64, GO_PCLNTAB_1_18, "weird", true },
		{ EM_X86_64, GO_PCLNTAB_1_16, "weird", false },
		{ EM_X86_64, GO_PCLNTAB_1_2, NULL, false },
		{ EM_X86_64, GO_PCLNTAB_1_20, NULL, true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct go_synth o = { .format = cases[i].format, .buildinfo = cases[i].version ? 1 : 0,
				      .version = cases[i].version ? cases[i].version : "",
				      .machine = cases[i].machine, .sections = i & 1 };
		struct go_binary *g = open_mem_ok(f, go_synth_build(&o, f));

		if (go_binary_regabi(g) != cases[i].regabi)
			fail_msg("case %zu (%s): regabi %d", i, o.version, !cases[i].regabi);
		go_binary_close(g);
	}
}

/* The fuzz harness on random inputs: options, then patches of the synthetic file. */
static void test_fuzz_harness(void **state)
{
	uint8_t in[2 + 4 * 16];
	unsigned long n = env_num("GO_BINARY_FUZZ_RUNS", 3000);

	rnd_state = env_num("GO_BINARY_SEED", 1) ^ 0x5eed;
	for (unsigned long i = 0; i < n; i++) {
		size_t len = 2 + 4 * (rnd() % 17);

		for (size_t k = 0; k < len; k++)
			in[k] = (uint8_t)rnd();
		in[0] &= 0x7f; /* raw input almost never gets past the ELF header */
		LLVMFuzzerTestOneInput(in, len);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version_all_forms),
		cmocka_unit_test(test_find_all_forms),
		cmocka_unit_test(test_against_symbols),
		cmocka_unit_test(test_open_fd_and_mem),
		cmocka_unit_test(test_find_many),
		cmocka_unit_test(test_go_command),
		cmocka_unit_test(test_not_go),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_pclntab_section_cut),
		cmocka_unit_test(test_corrupt_pclntab),
		cmocka_unit_test(test_corrupt_buildinfo),
		cmocka_unit_test(test_mutations),
		cmocka_unit_test(test_synthetic_all_layouts),
		cmocka_unit_test(test_synthetic_text_start_relocation),
		cmocka_unit_test(test_synthetic_versions),
		cmocka_unit_test(test_synthetic_regabi),
		cmocka_unit_test(test_fuzz_harness),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
