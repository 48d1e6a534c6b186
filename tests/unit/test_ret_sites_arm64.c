/*
 * ret_sites on arm64 code, built here at test time with clang's aarch64
 * target and lld (no arm64 libraries needed): hand-written assembly whose
 * return sites are labelled (local function symbols of size 0), GCC's and
 * clang's jump-table shapes, tail branches of every kind, pointer tail
 * calls that must fail; C compiled by clang with and without branch
 * protection; and, when the arm64 libraries are installed through multiarch
 * (scripts/install-deps-arm64.sh), Debian's own GCC-built libssl and
 * libgnutls for arm64.
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
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tls/elf_syms.h"
#include "tls/ret_sites.h"

#include "fixture.h"
#include "ret_sites_check.h"

#define ARM64_LIBDIR "/usr/lib/aarch64-linux-gnu"
#define CLANG_A64 "clang --target=aarch64-linux-gnu -fuse-ld=lld -nostdlib"

/* Every site is a ret (to any register) in the file: d65f0000 | Rn << 5, or retaa/retab. */
static void assert_rets_in_file(const char *path, const struct ret_sites *r)
{
	size_t len;
	unsigned char *buf = slurp(path, &len);

	for (size_t i = 0; i < r->n; i++) {
		uint64_t o = r->offsets[i];
		uint32_t w;

		assert_true(o % 4 == 0 && o + 4 <= len);
		if (i > 0)
			assert_true(r->offsets[i - 1] < o);
		memcpy(&w, buf + o, 4);
		if ((w & 0xfffffc1f) != 0xd65f0000 && w != 0xd65f0bff && w != 0xd65f0fff)
			fail_msg("%s: site 0x%llx holds %08x, not a ret", path, (unsigned long long)o, w);
	}
	free(buf);
}

static const char fix_S[] =
	"#define SITE(n) .type n, %function; n:\n"
	"#define FN(n) .globl n; .type n, %function; .p2align 4; n:\n"
	"#define LOCAL(n) .type n, %function; .p2align 4; n:\n"
	"#define END(n) .size n, .-n\n"
	"	.text\n"
	/* ret and ret xN; GCC's switch: ldrb [table, index]; adr; add sxtb #2; br */
	"FN(gcc_switch)\n"
	"	.cfi_startproc\n"
	"	cmp	w0, #3\n"
	"	b.hi	.Lg_def\n"
	"	adrp	x1, .Lg_tab\n"
	"	add	x1, x1, :lo12:.Lg_tab\n"
	"	ldrb	w2, [x1, w0, uxtw]\n"
	"	adr	x3, .Lg_c0\n"
	"	add	x2, x3, w2, sxtb #2\n"
	"	br	x2\n"
	".Lg_c0:	mov	w0, #7\n"
	"SITE(gs_site1)	ret\n"
	".Lg_c1:	mov	w0, #8\n"
	"SITE(gs_site2)	ret	x30\n"
	".Lg_c2:	mov	x1, x30\n"
	"SITE(gs_site3)	ret	x1\n"
	".Lg_def:	mov	w0, #-1\n"
	"SITE(gs_site4)	ret\n"
	"	.cfi_endproc\n"
	"END(gcc_switch)\n"
	"	.section .rodata\n"
	".Lg_tab:	.byte (.Lg_c0-.Lg_c0)/4, (.Lg_c1-.Lg_c0)/4, (.Lg_c2-.Lg_c0)/4, (.Lg_def-.Lg_c0)/4\n"
	"	.text\n"
	/* clang's: adrp/add table; adr base; ldrb [x9, x8]; add lsl #2; br */
	"FN(clang_switch)\n"
	"	.cfi_startproc\n"
	"	mov	w8, w0\n"
	"	adrp	x9, .Lc_tab\n"
	"	add	x9, x9, :lo12:.Lc_tab\n"
	"	adr	x10, .Lc_c0\n"
	"	ldrb	w11, [x9, x8]\n"
	"	add	x10, x10, x11, lsl #2\n"
	"	br	x10\n"
	".Lc_c0:\n"
	"SITE(cs_site1)	ret\n"
	".Lc_c1:	mov	w0, #1\n"
	"SITE(cs_site2)	ret\n"
	"	.cfi_endproc\n"
	"END(clang_switch)\n"
	"	.section .rodata\n"
	".Lc_tab:	.byte 0, 1\n"
	"	.text\n"
	/* word offsets from the table itself: ldrsw; add base; br */
	"FN(word_switch)\n"
	"	.cfi_startproc\n"
	"	adrp	x1, .Lw_tab\n"
	"	add	x1, x1, :lo12:.Lw_tab\n"
	"	ldrsw	x2, [x1, w0, uxtw #2]\n"
	"	add	x1, x1, x2\n"
	"	br	x1\n"
	".Lw_c0:\n"
	"SITE(ws_site1)	ret\n"
	".Lw_c1:\n"
	"SITE(ws_site2)	ret\n"
	"	.cfi_endproc\n"
	"END(word_switch)\n"
	"	.section .rodata\n"
	"	.p2align 2\n"
	".Lw_tab:	.word .Lw_c0-.Lw_tab, .Lw_c1-.Lw_tab\n"
	"	.text\n"

	/* tail_entry -b.ne-> local_fn -cbz-> local_fn2 -tbz-> local_fn3; local_leaf is called */
	"FN(tail_entry)\n"
	"	.cfi_startproc\n"
	"	cmp	w0, #0\n"
	"	b.ne	local_fn\n"
	"	mov	w0, #5\n"
	"SITE(te_site1)	ret\n"
	"	.cfi_endproc\n"
	"END(tail_entry)\n"
	"LOCAL(local_fn)\n"
	"	.cfi_startproc\n"
	"	stp	x29, x30, [sp, #-16]!\n"
	"	.cfi_def_cfa_offset 16\n"
	"	bl	local_leaf\n"
	"	ldp	x29, x30, [sp], #16\n"
	"	.cfi_def_cfa_offset 0\n"
	"	cbz	w0, local_fn2\n"
	"SITE(lf_site1)	ret\n"
	"	.cfi_endproc\n"
	"END(local_fn)\n"
	"LOCAL(local_leaf)\n"
	"	.cfi_startproc\n"
	"	mov	w0, #1\n"
	"SITE(leaf_site)	ret\n"
	"	.cfi_endproc\n"
	"END(local_leaf)\n"
	"LOCAL(local_fn2)\n"
	"	.cfi_startproc\n"
	"	tbz	w1, #3, local_fn3\n"
	"SITE(lf2_site1)	ret\n"
	"	.cfi_endproc\n"
	"END(local_fn2)\n"
	"LOCAL(local_fn3)\n"
	"	.cfi_startproc\n"
	"	b	1f\n"
	"1:\n"
	"SITE(lf3_site1)	ret\n"
	"	.cfi_endproc\n"
	"END(local_fn3)\n"

	/* a hot part and its cold part branching to each other */
	"FN(hot_fn)\n"
	"	.cfi_startproc\n"
	"	cbnz	w0, hot_fn.cold\n"
	".Lhot_back:\n"
	"SITE(hot_site)	ret\n"
	"	.cfi_endproc\n"
	"END(hot_fn)\n"
	"	.section .text.unlikely,\"ax\",%progbits\n"
	"LOCAL(hot_fn.cold)\n"
	"	.cfi_startproc\n"
	"	cmp	w0, #100\n"
	"	b.lt	.Lhot_back\n"
	"SITE(cold_site)	ret\n"
	"	.cfi_endproc\n"
	"END(hot_fn.cold)\n"
	"	.text\n"

	/* tail calls that cannot be followed */
	"FN(plt_tail)\n"
	"	.cfi_startproc\n"
	"	b	imported_fn\n"
	"	.cfi_endproc\n"
	"END(plt_tail)\n"
	"FN(ptr_tail)\n"
	"	.cfi_startproc\n"
	"	ldr	x1, [x0, #8]\n"
	"	br	x1\n"
	"	.cfi_endproc\n"
	"END(ptr_tail)\n"
	/* an indexed 8-byte load: a table of function pointers, not of cases */
	"FN(fptr_tail)\n"
	"	.cfi_startproc\n"
	"	adrp	x1, .Lfp\n"
	"	add	x1, x1, :lo12:.Lfp\n"
	"	ldr	x2, [x1, w0, uxtw #3]\n"
	"	br	x2\n"
	"	.cfi_endproc\n"
	"END(fptr_tail)\n"
	/* a table load, but a call between it and the br: not trusted */
	"FN(call_between)\n"
	"	.cfi_startproc\n"
	"	adrp	x1, .Lg_tab\n"
	"	ldrb	w2, [x1, w0, uxtw]\n"
	"	bl	local_leaf\n"
	"	adr	x3, 1f\n"
	"	add	x2, x3, w2, sxtb #2\n"
	"	br	x2\n"
	"1:	ret\n"
	"	.cfi_endproc\n"
	"END(call_between)\n"
	/* an unallocated branch-class encoding: what it does cannot be known */
	"FN(bad_code)\n"
	"	.cfi_startproc\n"
	"	.inst	0xd6ff03e0\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"END(bad_code)\n"
	/* what capstone 4 cannot decode but must be read past: casal (LSE, Go
	 * inlines it), udf; retaa and retab are returns */
	"FN(newer_insns)\n"
	"	.cfi_startproc\n"
	"	.inst	0x88fbfc86\n"
	"	.inst	0x00000000\n"
	"	cbz	w0, 1f\n"
	"SITE(ni_site1)	.inst	0xd65f0bff\n"
	"1:	cbz	w1, 2f\n"
	"SITE(ni_site2)	.inst	0xd65f0fff\n"
	"2:\n"
	"SITE(ni_site3)	ret\n"
	"	.cfi_endproc\n"
	"END(newer_insns)\n"
	"	.section .data.rel.ro,\"aw\"\n"
	"	.p2align 3\n"
	".Lfp:	.quad plt_tail, ptr_tail\n"
	"	.section .note.GNU-stack,\"\",%progbits\n";

/* A static executable: Go's absolute 8-byte jump table (MOVD (R)(I<<3), R; JMP (R)). */
static const char abs_S[] =
	"#define SITE(n) .type n, %function; n:\n"
	"#define FN(n) .globl n; .type n, %function; .p2align 4; n:\n"
	"#define END(n) .size n, .-n\n"
	"	.text\n"
	"FN(_start)\n"
	"	.cfi_startproc\n"
	"	brk	#0\n"
	"	.cfi_endproc\n"
	"END(_start)\n"
	"FN(go_table)\n"
	"	.cfi_startproc\n"
	"	adrp	x27, .Lgo\n"
	"	add	x27, x27, :lo12:.Lgo\n"
	"	ldr	x1, [x27, x0, lsl #3]\n"
	"	br	x1\n"
	".Lg0:\n"
	"SITE(go_site1)	ret\n"
	".Lg1:\n"
	"SITE(go_site2)	ret\n"
	"	.cfi_endproc\n"
	"END(go_table)\n"
	"FN(fptr_abs)\n"
	"	.cfi_startproc\n"
	"	adrp	x27, .Lfp\n"
	"	add	x27, x27, :lo12:.Lfp\n"
	"	ldr	x1, [x27, x0, lsl #3]\n"
	"	br	x1\n"
	"	.cfi_endproc\n"
	"END(fptr_abs)\n"
	"	.section .rodata\n"
	"	.p2align 3\n"
	".Lgo:	.quad .Lg0, .Lg1\n"
	".Lfp:	.quad _start, go_table\n"
	"	.section .note.GNU-stack,\"\",%progbits\n";

/* What clang makes of a tail call and a switch. */

static int group_setup(void **state)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/test_ret_sites_arm64.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return -1;
	if (write_text("fix.S", fix_S) || write_text("abs.S", abs_S) || write_text("tail.c", tail_c))
		return -1;
	if (run(CLANG_A64 " -c -o fix.o fix.S && " CLANG_A64 " -shared -o libfix.so fix.o") ||
	    run("cp libfix.so libfix_stripped.so && llvm-strip --strip-all libfix_stripped.so") ||
	    run(CLANG_A64 " -c -o abs.o abs.S && ld.lld --eh-frame-hdr -static -e _start -o abs_exe "
			  "abs.o") ||
	    run(CLANG_A64 " -O2 -fPIC -shared -o libtail.so tail.c") ||
	    run(CLANG_A64 " -O2 -fPIC -shared -mbranch-protection=standard -o libtail_bti.so tail.c"))
		return -1;
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

static void test_switches(void **state)
{
	struct elf_syms *e = open_ok(P("libfix.so"));

	assert_int_equal(elf_syms_machine(e), EM_AARCH64);
	expect_sites(e, e, "gcc_switch", SITES("gs_site1", "gs_site2", "gs_site3", "gs_site4"), 1);
	expect_sites(e, e, "clang_switch", SITES("cs_site1", "cs_site2"), 1);
	expect_sites(e, e, "word_switch", SITES("ws_site1", "ws_site2"), 1);
	elf_syms_close(e);
}

static void test_tail_branches(void **state)
{
	struct elf_syms *e = open_ok(P("libfix.so"));
	struct elf_syms *s = open_ok(P("libfix_stripped.so"));
	static const char *const want[] = { "te_site1", "lf_site1", "lf2_site1", "lf3_site1" };

	/* b.cond, cbz, tbz followed; local_leaf is called (bl), not jumped to */
	expect_sites(e, e, "tail_entry", want, 4, 4);
	/* stripped: the local functions' extents come from the FDEs alone */
	assert_true(elf_syms_stripped(s));
	expect_sites(s, e, "tail_entry", want, 4, 4);
	expect_sites(e, e, "hot_fn", SITES("hot_site", "cold_site"), 2);
	expect_sites(s, e, "hot_fn", SITES("hot_site", "cold_site"), 2);
	elf_syms_close(e);
	elf_syms_close(s);
}

static void test_unfollowable(void **state)
{
	struct elf_syms *e = open_ok(P("libfix.so"));

	expect_rc(e, "plt_tail", -ENOTSUP);
	assert_non_null(strstr(ret_sites_last_error(), "PLT"));
	expect_rc(e, "ptr_tail", -ENOTSUP);
	assert_non_null(strstr(ret_sites_last_error(), "through a pointer"));
	expect_rc(e, "fptr_tail", -ENOTSUP);
	expect_rc(e, "call_between", -ENOTSUP);
	expect_rc(e, "bad_code", -EILSEQ);
	elf_syms_close(e);
}

static void test_newer_instructions(void **state)
{
	struct elf_syms *e = open_ok(P("libfix.so"));

	expect_sites(e, e, "newer_insns", SITES("ni_site1", "ni_site2", "ni_site3"), 1);
	elf_syms_close(e);
}

static void test_absolute_tables(void **state)
{
	struct elf_syms *e = open_ok(P("abs_exe"));

	/* the table's first entry is inside the function: a switch */
	expect_sites(e, e, "go_table", SITES("go_site1", "go_site2"), 1);
	/* its entries are other functions: a tail call through a pointer */
	expect_rc(e, "fptr_abs", -ENOTSUP);
	elf_syms_close(e);
}

static void check_compiled(const char *lib)
{
	struct elf_syms *e = open_ok(P(lib));
	struct elf_sym api = sym_ok(e, "api");
	struct ret_sites r;
	bool inside = false, outside = false;

	sites_ok(e, "api", &r);
	assert_rets_in_file(P(lib), &r);
	/* api's own ret (x < 0) and helper's, reached by the tail branch */
	assert_int_equal(r.functions, 2);
	for (size_t i = 0; i < r.n; i++) {
		if (r.offsets[i] - api.offset < api.size)
			inside = true;
		else
			outside = true;
	}
	assert_true(inside && outside);
	/* a switch through a jump table */
	sites_ok(e, "sw", &r);
	assert_true(r.n >= 1);
	assert_rets_in_file(P(lib), &r);
	expect_rc(e, "through_ptr", -ENOTSUP);
	elf_syms_close(e);
}

static void test_compiled(void **state)
{
	size_t len;
	unsigned char *buf;
	struct elf_syms *e;
	struct elf_sym s;

	check_compiled("libtail.so");
	check_compiled("libtail_bti.so");
	/* the branch-protected build really starts with bti c (or paciasp) */
	e = open_ok(P("libtail_bti.so"));
	s = sym_ok(e, "api");
	buf = slurp(P("libtail_bti.so"), &len);
	assert_true(s.offset + 4 <= len);
	assert_true(!memcmp(buf + s.offset, "\x5f\x24\x03\xd5", 4) ||
		    !memcmp(buf + s.offset, "\x3f\x23\x03\xd5", 4));
	free(buf);
	elf_syms_close(e);
}

/* Debian's GCC-built arm64 TLS libraries, when multiarch put them here. */
static void test_debian_libssl(void **state)
{
	static const char *const fns[] = { "SSL_read", "SSL_read_ex", "SSL_write",
					   "SSL_write_ex" };
	const char *path = ARM64_LIBDIR "/libssl.so.3";
	struct elf_syms *e;

	if (access(path, R_OK) != 0) {
		skip();
		return;
	}
	e = open_ok(path);
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		struct ret_sites r;

		sites_ok(e, fns[i], &r);
		assert_true(r.n >= 1);
		assert_rets_in_file(path, &r);
	}
	elf_syms_close(e);
}

static void test_debian_libgnutls(void **state)
{
	const char *path = ARM64_LIBDIR "/libgnutls.so.30";
	struct elf_syms *e;
	struct ret_sites r;

	if (access(path, R_OK) != 0) {
		skip();
		return;
	}
	e = open_ok(path);
	sites_ok(e, "gnutls_record_recv", &r);
	assert_rets_in_file(path, &r);
	sites_ok(e, "gnutls_record_send2", &r);
	assert_rets_in_file(path, &r);
	/* a tail call through the PLT to gnutls_record_send2 */
	expect_rc(e, "gnutls_record_send", -ENOTSUP);
	elf_syms_close(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_switches),
		cmocka_unit_test(test_tail_branches),
		cmocka_unit_test(test_unfollowable),
		cmocka_unit_test(test_newer_instructions),
		cmocka_unit_test(test_absolute_tables),
		cmocka_unit_test(test_compiled),
		cmocka_unit_test(test_debian_libssl),
		cmocka_unit_test(test_debian_libgnutls),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
