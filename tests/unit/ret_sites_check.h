/*
 * What the return-site tests of every architecture share: opening a fixture,
 * finding a symbol, and checking ret_sites_find's answer against labelled
 * sites or an expected error. Include after cmocka.h and fixture.h.
 */
#ifndef NODESCOPE_TESTS_UNIT_RET_SITES_CHECK_H
#define NODESCOPE_TESTS_UNIT_RET_SITES_CHECK_H

#include "tls/elf_syms.h"
#include "tls/ret_sites.h"

__attribute__((unused)) static struct elf_syms *open_ok(const char *path)
{
	struct elf_syms *e = NULL;
	int rc = elf_syms_open(path, &e);

	if (rc)
		fail_msg("elf_syms_open(%s) = %d: %s", path, rc, elf_syms_last_error());
	return e;
}

__attribute__((unused)) static struct elf_sym sym_ok(struct elf_syms *e, const char *name)
{
	struct elf_sym s;
	int rc = elf_syms_find(e, name, &s);

	if (rc)
		fail_msg("elf_syms_find(%s) = %d: %s", name, rc, elf_syms_last_error());
	return s;
}

__attribute__((unused)) static int sites_of(struct elf_syms *e, const char *name, struct ret_sites *out)
{
	struct elf_sym s = sym_ok(e, name);

	memset(out, 0xa5, sizeof(*out)); /* whatever was there must not survive */
	return ret_sites_find(e, &s, out);
}

__attribute__((unused)) static void sites_ok(struct elf_syms *e, const char *name, struct ret_sites *out)
{
	int rc = sites_of(e, name, out);

	if (rc)
		fail_msg("ret_sites_find(%s) = %d: %s", name, rc, ret_sites_last_error());
}

__attribute__((unused)) static void expect_rc(struct elf_syms *e, const char *name, int want)
{
	struct ret_sites r;
	int rc = sites_of(e, name, &r);

	if (rc != want)
		fail_msg("ret_sites_find(%s) = %d, want %d: %s", name, rc, want,
			 ret_sites_last_error());
	if (rc) {
		assert_int_equal(r.n, 0);
		assert_true(ret_sites_last_error()[0] != '\0');
	}
}

/* The sites must be exactly the offsets of the labels named (any order). */
__attribute__((unused)) static void expect_sites(struct elf_syms *e, struct elf_syms *labels, const char *name,
			 const char *const *want, size_t n_want, unsigned int functions)
{
	struct ret_sites r;
	uint64_t w[32];

	assert_true(n_want <= 32);
	sites_ok(e, name, &r);
	for (size_t i = 0; i < n_want; i++)
		w[i] = sym_ok(labels, want[i]).offset;
	for (size_t i = 1; i < n_want; i++) /* sort: the result is ascending */
		for (size_t j = i; j > 0 && w[j - 1] > w[j]; j--) {
			uint64_t t = w[j];

			w[j] = w[j - 1];
			w[j - 1] = t;
		}
	if (r.n != n_want) {
		for (size_t i = 0; i < r.n; i++)
			fprintf(stderr, "  got 0x%llx\n", (unsigned long long)r.offsets[i]);
		fail_msg("%s: %zu sites, want %zu", name, r.n, n_want);
	}
	for (size_t i = 0; i < n_want; i++)
		assert_int_equal(r.offsets[i], w[i]);
	assert_int_equal(r.functions, functions);
}

/* The label names of expected sites, and how many: for expect_sites. */
#define SITES(...) (const char *const[]){ __VA_ARGS__ }, \
	sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(const char *)

/* A C source compiled for each instruction set: tail calls, a jump table, a call through a pointer. */
__attribute__((unused)) static const char tail_c[] =
	"__attribute__((noinline)) static int helper(int x, int y)\n"
	"{\n"
	"	if (x > 100)\n"
	"		return x * 3 + y;\n"
	"	return x - y;\n"
	"}\n"
	"int api(int x, int y)\n"
	"{\n"
	"	if (x < 0)\n"
	"		return -1;\n"
	"	return helper(x + 1, y);\n"
	"}\n"
	"int sw(int x, int y)\n"
	"{\n"
	"	switch (x) {\n"
	"	case 0: return y + 1;\n"
	"	case 1: return y * 3;\n"
	"	case 2: return y - 7;\n"
	"	case 3: return y ^ 5;\n"
	"	case 4: return y << 2;\n"
	"	case 5: return y / 3;\n"
	"	case 6: return y % 11;\n"
	"	case 7: return y | 0x40;\n"
	"	default: return 0;\n"
	"	}\n"
	"}\n"
	"extern int (*volatile hook)(int);\n"
	"int (*volatile hook)(int);\n"
	"int through_ptr(int x) { return hook(x); }\n";

#endif
