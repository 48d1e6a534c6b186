/*
 * ret_sites and eh_frame against files built here at test time: hand-written
 * assembly whose return sites are labelled (the labels are local function
 * symbols of size 0, read back with elf_syms), C compiled by gcc and clang
 * with and without CET, a static non-PIE executable with absolute jump
 * tables; the system's libssl and libgnutls when present; hand-built unwind
 * tables in every pointer encoding; and corrupt or mutated tables that must
 * fail cleanly.
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
#include <unistd.h>

#include "tls/eh_frame.h"
#include "tls/elf_syms.h"
#include "tls/ret_sites.h"

#include "fixture.h"
#include "ret_sites_check.h"

#define SYS_LIBDIR "/usr/lib/x86_64-linux-gnu"

static bool have_clang;

/* Every site is a near ret in the file: c3, c2 iw, or f3/f2 (repz, bnd) c3. */
static void assert_rets_in_file(const char *path, const struct ret_sites *r)
{
	size_t len;
	unsigned char *buf = slurp(path, &len);

	for (size_t i = 0; i < r->n; i++) {
		uint64_t o = r->offsets[i];

		assert_true(o + 1 < len);
		if (i > 0)
			assert_true(r->offsets[i - 1] < o);
		if (buf[o] == 0xc3 || buf[o] == 0xc2)
			continue;
		if ((buf[o] == 0xf3 || buf[o] == 0xf2) && buf[o + 1] == 0xc3)
			continue;
		fail_msg("%s: site 0x%llx holds %02x %02x, not a ret", path, (unsigned long long)o,
			 buf[o], buf[o + 1]);
	}
	free(buf);
}

/* ---- fixtures ---------------------------------------------------------- */

/*
 * SITE(x) labels a return site: a local function symbol of size 0 (so it is
 * in .symtab, read back by elf_syms_find, and no function extent).
 */
static const char fix_S[] =
	"#define SITE(n) .type n, @function; n:\n"
	"#define FN(n) .globl n; .type n, @function; .p2align 4; n:\n"
	"#define LOCAL(n) .type n, @function; .p2align 4; n:\n"
	"#define HIDDEN(n) .hidden n; FN(n)\n"
	"#define END(n) .size n, .-n\n"
	"	.text\n"
	/* every kind of ret, a PIC jump table, a notrack jmp: all inside */
	"FN(multi_ret)\n"
	"	.cfi_startproc\n"
	"	endbr64\n"
	"	cmp	$3, %edi\n"
	"	ja	.Lm_def\n"
	"	mov	%edi, %eax\n"
	"	lea	.Lm_tab(%rip), %rdx\n"
	"	movslq	(%rdx,%rax,4), %rax\n"
	"	add	%rdx, %rax\n"
	"	jmp	*%rax\n"
	".Lm_c0:	xor	%eax, %eax\n"
	"SITE(mr_site1)	ret\n"
	".Lm_c1:	mov	$1, %eax\n"
	"SITE(mr_site2)	repz ret\n"
	".Lm_c2:	mov	$2, %eax\n"
	"SITE(mr_site3)	bnd ret\n"
	".Lm_c3:	mov	(%rsi), %rax\n"
	"	notrack jmp	*%rax\n" /* only notrack says "jump table" here */
	".Lm_def:	xor	%edx, %edx\n"
	"	mov	$-1, %eax\n"
	"SITE(mr_site4)	ret	$0\n"
	"	int3\n"
	"	.cfi_endproc\n"
	"END(multi_ret)\n"
	"	.section .rodata\n"
	"	.p2align 2\n"
	".Lm_tab:	.long .Lm_c0-.Lm_tab, .Lm_c1-.Lm_tab, .Lm_c2-.Lm_tab, .Lm_c3-.Lm_tab\n"
	"	.text\n"

	/* tail_entry -> local_fn (jcc) -> local_fn2 (jcc); local_leaf is only called */
	"FN(tail_entry)\n"
	"	.cfi_startproc\n"
	"	endbr64\n"
	"	test	%edi, %edi\n"
	"	jne	local_fn\n"
	"	mov	$5, %eax\n"
	"SITE(te_site1)	ret\n"
	"	.cfi_endproc\n"
	"END(tail_entry)\n"
	"LOCAL(local_fn)\n"
	"	.cfi_startproc\n"
	"	push	%rbx\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	mov	%edi, %ebx\n"
	"	call	local_leaf\n"
	"	add	%ebx, %eax\n"
	"	pop	%rbx\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	cmp	$7, %eax\n"
	"	je	local_fn2\n"
	"SITE(lf_site1)	ret\n"
	"	.cfi_endproc\n"
	"END(local_fn)\n"
	"LOCAL(local_leaf)\n"
	"	.cfi_startproc\n"
	"	mov	$1, %eax\n"
	"SITE(leaf_site)	ret\n"
	"	.cfi_endproc\n"
	"END(local_leaf)\n"
	"LOCAL(local_fn2)\n"
	"	.cfi_startproc\n"
	"	lea	1(%rdi), %eax\n"
	"	test	%eax, %eax\n"
	"	js	1f\n"
	"SITE(lf2_site1)	ret\n"
	"1:	neg	%eax\n"
	"SITE(lf2_site2)	ret\n"
	"	.cfi_endproc\n"
	"END(local_fn2)\n"

	/* a hot part and its cold part jumping to each other */
	"FN(hot_fn)\n"
	"	.cfi_startproc\n"
	"	test	%edi, %edi\n"
	"	js	hot_fn.cold\n"
	".Lhot_back:	mov	%edi, %eax\n"
	"SITE(hot_site)	ret\n"
	"	.cfi_endproc\n"
	"END(hot_fn)\n"
	"	.section .text.unlikely,\"ax\",@progbits\n"
	"LOCAL(hot_fn.cold)\n"
	"	.cfi_startproc\n"
	"	neg	%edi\n"
	"	cmp	$100, %edi\n"
	"	jl	.Lhot_back\n"
	"SITE(cold_site)	ret\n"
	"	.cfi_endproc\n"
	"END(hot_fn.cold)\n"
	"	.text\n"

	/* tail calls that cannot be followed */
	"FN(plt_tail)\n"
	"	.cfi_startproc\n"
	"	jmp	imported_fn@PLT\n"
	"	.cfi_endproc\n"
	"END(plt_tail)\n"
	"FN(plt_tail_cond)\n"
	"	.cfi_startproc\n"
	"	test	%edi, %edi\n"
	"	jne	imported_fn@PLT\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"END(plt_tail_cond)\n"
	"FN(got_tail)\n"
	"	.cfi_startproc\n"
	"	jmp	*imported_fn@GOTPCREL(%rip)\n"
	"	.cfi_endproc\n"
	"END(got_tail)\n"
	"FN(ptr_tail)\n"
	"	.cfi_startproc\n"
	"	mov	8(%rdi), %rax\n"
	"	pop	%rbx\n" /* a def that is no table load */
	"	jmp	*%rax\n"
	"	.cfi_endproc\n"
	"END(ptr_tail)\n"
	"FN(vtable_tail)\n"
	"	.cfi_startproc\n"
	"	mov	(%rdi), %rax\n"
	"	jmp	*16(%rax)\n"
	"	.cfi_endproc\n"
	"END(vtable_tail)\n"
	/* a table load, but a call between it and the jmp: not trusted */
	"FN(call_between)\n"
	"	.cfi_startproc\n"
	"	lea	.Lm_tab(%rip), %rdx\n"
	"	movslq	(%rdx,%rax,4), %rax\n"
	"	call	local_leaf\n"
	"	jmp	*%rax\n"
	"	.cfi_endproc\n"
	"END(call_between)\n"
	"FN(far_ret)\n"
	"	.cfi_startproc\n"
	"	lret\n"
	"	.cfi_endproc\n"
	"END(far_ret)\n"

	/* a tail jump to a local function without an FDE */
	"FN(nofde_entry)\n"
	"	.cfi_startproc\n"
	"	jmp	nofde_local\n"
	"	.cfi_endproc\n"
	"END(nofde_entry)\n"
	"LOCAL(nofde_local)\n"
	"	xor	%eax, %eax\n"
	"SITE(nofde_site)	ret\n"
	"END(nofde_local)\n"

	"FN(bad_code)\n"
	"	.cfi_startproc\n"
	"	test	%edi, %edi\n"
	"	.byte	0x06\n" /* push es: invalid in 64-bit mode */
	"	ret\n"
	"	.cfi_endproc\n"
	"END(bad_code)\n"
	"FN(no_ret)\n"
	"	.cfi_startproc\n"
	"	ud2\n"
	"	.cfi_endproc\n"
	"END(no_ret)\n"

	/* chain0 -> chain1 -> ... -> chain5: 5 tail jumps in a row */
	"#define CHAIN(k, next) HIDDEN(chain##k); .cfi_startproc; test %edi, %edi; "
	"je next; SITE(chain##k##_site) ret; .cfi_endproc; END(chain##k)\n"
	"CHAIN(0, chain1)\nCHAIN(1, chain2)\nCHAIN(2, chain3)\nCHAIN(3, chain4)\n"
	"CHAIN(4, chain5)\n"
	"HIDDEN(chain5)\n"
	"	.cfi_startproc\n"
	"SITE(chain5_site)	ret\n"
	"	.cfi_endproc\n"
	"END(chain5)\n"

	"FN(rets_256)\n"
	"	.cfi_startproc\n"
	"	.rept 256\n	ret\n	.endr\n"
	"	.cfi_endproc\n"
	"END(rets_256)\n"
	"FN(rets_257)\n"
	"	.cfi_startproc\n"
	"	.rept 257\n	ret\n	.endr\n"
	"	.cfi_endproc\n"
	"END(rets_257)\n"
	/* 200 + 100 rets in two functions: past the limit only together */
	"FN(rets_split)\n"
	"	.cfi_startproc\n"
	"	test	%edi, %edi\n"
	"	je	rets_100\n"
	"	.rept 200\n	ret\n	.endr\n"
	"	.cfi_endproc\n"
	"END(rets_split)\n"
	"HIDDEN(rets_100)\n"
	"	.cfi_startproc\n"
	"	.rept 100\n	ret\n	.endr\n"
	"	.cfi_endproc\n"
	"END(rets_100)\n"
	"	.section .note.GNU-stack,\"\",@progbits\n";

/* A static non-PIE executable: absolute jump tables, and a pointer table. */
static const char abs_S[] =
	"#define SITE(n) .type n, @function; n:\n"
	"#define FN(n) .globl n; .type n, @function; .p2align 4; n:\n"
	"#define END(n) .size n, .-n\n"
	"	.text\n"
	"FN(_start)\n"
	"	.cfi_startproc\n"
	"	ud2\n"
	"	.cfi_endproc\n"
	"END(_start)\n"
	"FN(abs_table)\n" /* gcc -fno-pic */
	"	.cfi_startproc\n"
	"	mov	%edi, %eax\n"
	"	jmp	*.Labs(,%rax,8)\n"
	".La0:	xor	%eax, %eax\n"
	"SITE(abs_site1)	ret\n"
	".La1:	mov	$1, %eax\n"
	"SITE(abs_site2)	ret\n"
	"	.cfi_endproc\n"
	"END(abs_table)\n"
	"FN(abs_table_reg)\n"
	"	.cfi_startproc\n"
	"	mov	%edi, %eax\n"
	"	mov	.Labs2(,%rax,8), %rax\n"
	"	jmp	*%rax\n"
	".Lb0:\n"
	"SITE(absr_site1)	ret\n"
	".Lb1:\n"
	"SITE(absr_site2)	ret\n"
	"	.cfi_endproc\n"
	"END(abs_table_reg)\n"
	"FN(go_table)\n" /* Go: LEAQ table(SB), R; JMP (R)(I*8) */
	"	.cfi_startproc\n"
	"	lea	.Lgo(%rip), %rcx\n"
	"	mov	%edi, %eax\n"
	"	jmp	*(%rcx,%rax,8)\n"
	".Lg0:\n"
	"SITE(go_site1)	ret\n"
	".Lg1:\n"
	"SITE(go_site2)	ret\n"
	"	.cfi_endproc\n"
	"END(go_table)\n"
	"FN(fptr_tail)\n" /* return handlers[i](): entries are other functions */
	"	.cfi_startproc\n"
	"	mov	%edi, %eax\n"
	"	jmp	*.Lfp(,%rax,8)\n"
	"	.cfi_endproc\n"
	"END(fptr_tail)\n"
	"FN(fptr_tail_pic)\n"
	"	.cfi_startproc\n"
	"	lea	.Lfp(%rip), %rcx\n"
	"	jmp	*(%rcx,%rax,8)\n"
	"	.cfi_endproc\n"
	"END(fptr_tail_pic)\n"
	"	.section .rodata\n"
	"	.p2align 3\n"
	".Labs:	.quad .La0, .La1\n"
	".Labs2:	.quad .Lb0, .Lb1\n"
	".Lgo:	.quad .Lg0, .Lg1\n"
	".Lfp:	.quad _start, abs_table\n"
	"	.section .note.GNU-stack,\"\",@progbits\n";

/* What compilers make of a tail call and a switch. */

static int group_setup(void **state)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/test_ret_sites.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return -1;
	if (write_text("fix.S", fix_S) || write_text("abs.S", abs_S) ||
	    write_text("tail.c", tail_c))
		return -1;
	if (run("cc -c -o fix.o fix.S && cc -shared -nostdlib -o libfix.so fix.o") ||
	    run("cp libfix.so libfix_stripped.so && strip --strip-all libfix_stripped.so") ||
	    run("cc -c -o abs.o abs.S && ld --eh-frame-hdr -e _start -o abs_exe abs.o") ||
	    run("cc -O2 -fPIC -shared -fcf-protection=none -o libtail_gcc.so tail.c") ||
	    run("cc -O2 -fPIC -shared -fcf-protection=full -fzero-call-used-regs=used-gpr "
		"-o libtail_cet.so tail.c") ||
	    run("cp libtail_cet.so libtail_cet_stripped.so && "
		"strip --strip-all libtail_cet_stripped.so"))
		return -1;
	have_clang = run("clang -O2 -fPIC -shared -o libtail_clang.so tail.c") == 0;
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

/* ---- return sites in hand-written code --------------------------------- */

static void test_multi_ret(void **state)
{
	struct elf_syms *e = open_ok(P("libfix.so"));

	expect_sites(e, e, "multi_ret", SITES("mr_site1", "mr_site2", "mr_site3", "mr_site4"), 1);
	elf_syms_close(e);
}

static void test_tail_jumps(void **state)
{
	struct elf_syms *e = open_ok(P("libfix.so"));
	struct elf_syms *s = open_ok(P("libfix_stripped.so"));

	assert_true(elf_syms_stripped(s));
	/* local_leaf is called, not jumped to: its ret returns elsewhere */
	expect_sites(e, e, "tail_entry", SITES("te_site1", "lf_site1", "lf2_site1", "lf2_site2"),
		     3);
	/* stripped: the local functions' extents come from the FDEs alone */
	expect_sites(s, e, "tail_entry", SITES("te_site1", "lf_site1", "lf2_site1", "lf2_site2"),
		     3);
	expect_sites(s, e, "hot_fn", SITES("hot_site", "cold_site"), 2);
	expect_sites(e, e, "hot_fn", SITES("hot_site", "cold_site"), 2);
	elf_syms_close(e);
	elf_syms_close(s);
}

static void test_depth_and_count_limits(void **state)
{
	struct elf_syms *e = open_ok(P("libfix.so"));
	struct ret_sites r;

	/* chain1 -> chain5 is 4 tail jumps: allowed; chain0 needs 5 */
	expect_sites(e, e, "chain1",
		     SITES("chain1_site", "chain2_site", "chain3_site", "chain4_site",
			   "chain5_site"),
		     5);
	expect_rc(e, "chain0", -E2BIG);
	assert_non_null(strstr(ret_sites_last_error(), "tail jumps in a row"));

	sites_ok(e, "rets_256", &r);
	assert_int_equal(r.n, RET_SITES_MAX);
	for (size_t i = 0; i < r.n; i++)
		assert_int_equal(r.offsets[i], sym_ok(e, "rets_256").offset + i);
	expect_rc(e, "rets_257", -E2BIG);
	expect_rc(e, "rets_split", -E2BIG);
	elf_syms_close(e);
}

static void test_unfollowable(void **state)
{
	struct elf_syms *e = open_ok(P("libfix.so"));
	struct elf_syms *s = open_ok(P("libfix_stripped.so"));

	expect_rc(e, "plt_tail", -ENOTSUP);
	assert_non_null(strstr(ret_sites_last_error(), "PLT"));
	expect_rc(e, "plt_tail_cond", -ENOTSUP);
	expect_rc(s, "plt_tail", -ENOTSUP);
	expect_rc(e, "got_tail", -ENOTSUP);
	assert_non_null(strstr(ret_sites_last_error(), "through a pointer"));
	expect_rc(e, "ptr_tail", -ENOTSUP);
	expect_rc(e, "vtable_tail", -ENOTSUP);
	expect_rc(e, "call_between", -ENOTSUP);
	expect_rc(e, "far_ret", -ENOTSUP);
	elf_syms_close(e);
	elf_syms_close(s);
}

static void test_extent_sources(void **state)
{
	struct elf_syms *e = open_ok(P("libfix.so"));
	struct elf_syms *s = open_ok(P("libfix_stripped.so"));
	struct elf_sym fn;
	struct ret_sites r, r2;

	/* no FDE: the .symtab symbol gives the extent; stripped, nothing does */
	expect_sites(e, e, "nofde_entry", SITES("nofde_site"), 2);
	expect_rc(s, "nofde_entry", -ENOENT);
	assert_non_null(strstr(ret_sites_last_error(), "no function symbol"));

	/* size 0 from the caller: the entry's extent is looked up too */
	fn = sym_ok(s, "multi_ret");
	assert_int_equal(ret_sites_find(s, &fn, &r), 0);
	fn.size = 0;
	assert_int_equal(ret_sites_find(s, &fn, &r2), 0);
	assert_int_equal(r2.n, r.n);
	assert_memory_equal(r2.offsets, r.offsets, r.n * sizeof(r.offsets[0]));

	expect_rc(e, "bad_code", -EILSEQ);
	assert_non_null(strstr(ret_sites_last_error(), "06"));
	sites_ok(e, "no_ret", &r);
	assert_int_equal(r.n, 0);
	assert_int_equal(r.functions, 1);

	/* an extent outside the file's code */
	fn = sym_ok(e, "multi_ret");
	fn.addr = 0x7fff0000;
	assert_int_equal(ret_sites_find(e, &fn, &r), -EINVAL);
	fn.addr = 0; /* the ELF header: mapped, not executable */
	assert_int_equal(ret_sites_find(e, &fn, &r), -EINVAL);
	fn = sym_ok(e, "multi_ret");
	fn.size = (uint64_t)RET_SITES_MAX_FN_SIZE + 1;
	assert_int_equal(ret_sites_find(e, &fn, &r), -E2BIG);
	elf_syms_close(e);
	elf_syms_close(s);
}

/* The FDE extent of a local function in a stripped file is its .symtab extent. */
static void test_fde_extent_stripped(void **state)
{
	static const char *const locals[] = { "local_fn", "local_fn2", "local_leaf",
					      "hot_fn.cold", "multi_ret", "chain5" };
	struct elf_syms *e = open_ok(P("libfix.so"));
	struct elf_syms *s = open_ok(P("libfix_stripped.so"));
	uint64_t start, size;

	for (size_t i = 0; i < sizeof(locals) / sizeof(locals[0]); i++) {
		struct elf_sym want = sym_ok(e, locals[i]);

		for (uint64_t d = 0; d < want.size; d += want.size > 3 ? want.size / 3 : 1) {
			start = size = 0;
			if (ret_sites_extent(s, want.addr + d, &start, &size))
				fail_msg("%s+%llu: %s", locals[i], (unsigned long long)d,
					 ret_sites_last_error());
			assert_int_equal(start, want.addr);
			assert_int_equal(size, want.size);
		}
	}
	/* nofde_local: no FDE, no symbol left */
	assert_int_equal(ret_sites_extent(s, sym_ok(e, "nofde_local").addr, &start, &size),
			 -ENOENT);
	assert_int_equal(ret_sites_extent(s, 0x7fff0000, &start, &size), -ENOENT);
	assert_int_equal(ret_sites_extent(s, 0, &start, &size), -ENOENT);

	/* compiled C: helper() is static */
	elf_syms_close(e);
	elf_syms_close(s);
	e = open_ok(P("libtail_cet.so"));
	s = open_ok(P("libtail_cet_stripped.so"));
	{
		struct elf_sym h;

		if (elf_syms_find(e, "helper", &h) != 0)
			h = sym_ok(e, "helper.constprop.0");
		assert_int_equal(ret_sites_extent(s, h.addr, &start, &size), 0);
		assert_int_equal(start, h.addr);
		assert_int_equal(size, h.size);
	}
	elf_syms_close(e);
	elf_syms_close(s);
}

static void test_absolute_tables(void **state)
{
	struct elf_syms *e = open_ok(P("abs_exe"));

	expect_sites(e, e, "abs_table", SITES("abs_site1", "abs_site2"), 1);
	expect_sites(e, e, "abs_table_reg", SITES("absr_site1", "absr_site2"), 1);
	expect_sites(e, e, "go_table", SITES("go_site1", "go_site2"), 1);
	expect_rc(e, "fptr_tail", -ENOTSUP);
	expect_rc(e, "fptr_tail_pic", -ENOTSUP);
	elf_syms_close(e);
}

/* gcc (with and without CET and zeroed call-used registers) and clang output. */
static void check_compiled(const char *lib)
{
	struct elf_syms *e = open_ok(P(lib));
	struct elf_sym api = sym_ok(e, "api");
	struct ret_sites r;
	bool inside = false, outside = false;

	sites_ok(e, "api", &r);
	assert_rets_in_file(P(lib), &r);
	/* api's own ret (x < 0) and helper's, reached by the tail jump */
	assert_int_equal(r.functions, 2);
	for (size_t i = 0; i < r.n; i++) {
		if (r.offsets[i] - api.offset < api.size)
			inside = true;
		else
			outside = true;
	}
	assert_true(inside && outside);

	/* a switch through a jump table (notrack with CET); gcc moves the
	 * default case to sw.cold, reached by a jcc out of sw */
	sites_ok(e, "sw", &r);
	assert_true(r.n >= 1);
	if (!elf_syms_stripped(e)) {
		struct elf_sym cold;

		assert_int_equal(r.functions, elf_syms_find(e, "sw.cold", &cold) == 0 ? 2 : 1);
	}
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

	check_compiled("libtail_gcc.so");
	check_compiled("libtail_cet.so");
	check_compiled("libtail_cet_stripped.so");
	if (have_clang)
		check_compiled("libtail_clang.so");

	/* the CET build really starts with endbr64 */
	e = open_ok(P("libtail_cet.so"));
	s = sym_ok(e, "api");
	buf = slurp(P("libtail_cet.so"), &len);
	assert_true(s.offset + 4 <= len);
	assert_memory_equal(buf + s.offset, "\xf3\x0f\x1e\xfa", 4);
	free(buf);
	elf_syms_close(e);
}

static void test_not_x86_64(void **state)
{
	struct elf_syms *e;
	struct elf_sym s = { 0 };
	struct ret_sites r;

	if (write_text("i386.s", ".text\n.globl f\n.type f,@function\nf: ret\n.size f,.-f\n") ||
	    run("as --32 -o i386.o i386.s && ld -m elf_i386 -shared -o libi386.so i386.o")) {
		skip();
		return;
	}
	e = open_ok(P("libi386.so"));
	s = sym_ok(e, "f");
	assert_int_equal(ret_sites_find(e, &s, &r), -ENOTSUP);
	assert_int_equal(r.n, 0);
	elf_syms_close(e);
}

/* ---- the system's TLS libraries ------------------------------------------ */

static void test_system_libssl(void **state)
{
	static const char *const fns[] = { "SSL_read", "SSL_read_ex", "SSL_write",
					   "SSL_write_ex" };
	const char *path = SYS_LIBDIR "/libssl.so.3";
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

static void test_system_libgnutls(void **state)
{
	const char *path = SYS_LIBDIR "/libgnutls.so.30";
	struct elf_syms *e;
	struct elf_sym fn;
	struct ret_sites r;
	bool inside = false, outside = false;

	if (access(path, R_OK) != 0) {
		skip();
		return;
	}
	e = open_ok(path);
	fn = sym_ok(e, "gnutls_record_recv");
	sites_ok(e, "gnutls_record_recv", &r);
	assert_rets_in_file(path, &r);
	for (size_t i = 0; i < r.n; i++) {
		if (r.offsets[i] - fn.offset < fn.size)
			inside = true;
		else
			outside = true;
	}
	/* Debian's ends in a jmp to the static _gnutls_recv_int */
	assert_true(inside);
	if (r.functions > 1)
		assert_true(outside);
	elf_syms_close(e);
}

/* ---- elf_syms helpers ------------------------------------------------------ */

static void test_elf_helpers(void **state)
{
	struct elf_syms *e = open_ok(P("libfix.so"));
	struct elf_syms *s = open_ok(P("libfix_stripped.so"));
	struct elf_syms_loc loc;
	struct elf_sym f, want = sym_ok(e, "local_fn");
	uint64_t addr, size, file_len;
	unsigned char buf[16], *file;
	size_t len;

	assert_int_equal(elf_syms_locate(e, 0, &loc), 0);
	assert_false(loc.exec);
	assert_int_equal(loc.offset, 0);
	assert_int_equal(elf_syms_read(e, 0, buf, SELFMAG), 0);
	assert_memory_equal(buf, ELFMAG, SELFMAG);
	assert_int_equal(elf_syms_locate(e, want.addr, &loc), 0);
	assert_true(loc.exec);
	assert_int_equal(loc.offset, want.offset);
	assert_true(loc.avail >= want.size);
	assert_int_equal(elf_syms_locate(e, 0x7fff0000, &loc), -EINVAL);

	file = slurp(P("libfix.so"), &len);
	file_len = len;
	assert_int_equal(elf_syms_read(e, want.offset, buf, sizeof(buf)), 0);
	assert_memory_equal(buf, file + want.offset, sizeof(buf));
	assert_int_equal(elf_syms_read(e, file_len - 4, buf, 4), 0);
	assert_int_equal(elf_syms_read(e, file_len - 4, buf, 5), -EINVAL);
	assert_int_equal(elf_syms_read(e, UINT64_MAX - 2, buf, 4), -EINVAL);
	{ /* the same from memory */
		struct elf_syms *m = NULL;

		assert_int_equal(elf_syms_open_mem(file, len, &m), 0);
		assert_int_equal(elf_syms_read(m, want.offset, buf, sizeof(buf)), 0);
		assert_memory_equal(buf, file + want.offset, sizeof(buf));
		assert_int_equal(elf_syms_read(m, file_len, buf, 1), -EINVAL);
		elf_syms_close(m);
	}
	free(file);

	assert_int_equal(elf_syms_section(e, ".text", &addr, &size), 0);
	assert_true(want.addr >= addr && want.addr - addr < size);
	assert_int_equal(elf_syms_section(e, ".no_such", &addr, &size), -ENOENT);
	assert_int_equal(elf_syms_segment(s, PT_GNU_EH_FRAME, &addr, &size), 0);
	assert_true(size > 12);
	assert_int_equal(elf_syms_segment(s, PT_TLS, &addr, &size), -ENOENT);

	assert_int_equal(elf_syms_func_at(e, want.addr + 3, &f), 0);
	assert_int_equal(f.addr, want.addr);
	assert_int_equal(f.size, want.size);
	assert_int_equal(f.offset, want.offset);
	assert_int_equal(elf_syms_func_at(s, want.addr + 3, &f), -ENOENT);
	want = sym_ok(e, "tail_entry");
	assert_int_equal(elf_syms_func_at(s, want.addr + 1, &f), 0); /* .dynsym */
	assert_int_equal(f.addr, want.addr);
	assert_true(f.dynamic);
	elf_syms_close(e);
	elf_syms_close(s);
}

/* ---- hand-built unwind tables --------------------------------------------- */

#define HDR_ADDR 0x1f000u
#define FRAME_ADDR 0x20000u
#define DATA_BASE 0x800u /* below every pc: udata datarel fits */

struct bb {
	uint8_t b[2048];
	size_t n;
};

static void put(struct bb *b, uint64_t v, int n)
{
	assert_true(b->n + (size_t)n <= sizeof(b->b));
	for (int i = 0; i < n; i++)
		b->b[b->n++] = (uint8_t)(v >> (8 * i));
}

static void put_leb(struct bb *b, uint64_t v, bool is_signed)
{
	for (;;) {
		uint8_t byte = v & 0x7f;
		bool done;

		v = is_signed ? (uint64_t)((int64_t)v >> 7) : v >> 7;
		done = is_signed ? ((v == 0 && !(byte & 0x40)) || (v == UINT64_MAX && (byte & 0x40)))
				 : v == 0;
		put(b, done ? byte : byte | 0x80, 1);
		if (done)
			return;
	}
}

/* value encoded as enc at the end of b, which is at address base + b->n */
static void put_enc(struct bb *b, uint8_t enc, uint64_t value, uint64_t base, uint64_t data_base)
{
	uint64_t field = base + b->n;

	if ((enc & 0x70) == 0x10)
		value -= field;
	else if ((enc & 0x70) == 0x30)
		value -= data_base;
	switch (enc & 0x0f) {
	case 0x00: case 0x04: case 0x0c: put(b, value, 8); break;
	case 0x03: case 0x0b: put(b, value, 4); break;
	case 0x02: case 0x0a: put(b, value, 2); break;
	case 0x01: put_leb(b, value, false); break;
	case 0x09: put_leb(b, value, true); break;
	default: fail_msg("bad enc %#x", enc);
	}
}

static size_t begin_entry(struct bb *b, bool ext)
{
	size_t at = b->n;

	put(b, ext ? 0xffffffffu : 0, 4);
	if (ext)
		put(b, 0, 8);
	return at;
}

static void end_entry(struct bb *b, size_t at, bool ext)
{
	uint64_t len;

	while ((b->n - at) % 4)
		put(b, 0, 1); /* DW_CFA_nop */
	len = b->n - at - (ext ? 12 : 4);
	for (int i = 0; i < (ext ? 8 : 4); i++)
		b->b[at + (ext ? 4 : 0) + i] = (uint8_t)(len >> (8 * i));
}

static const struct {
	uint64_t begin, range;
} fdes[] = { { 0x1000, 0x40 }, { 0x1040, 0xc0 }, { 0x2000, 0x10 } };
#define N_FDES (sizeof(fdes) / sizeof(fdes[0]))

/*
 * One CIE then the FDEs; fde_off gets each FDE's offset. The pointers are
 * written in encoding enc, the CIE declares `declared` (to make liars).
 */
static void build_frame_as(struct bb *b, uint8_t version, const char *aug, uint8_t enc,
			   uint8_t declared, bool ext, size_t *fde_off)
{
	size_t cie = begin_entry(b, ext), e;
	bool z = aug[0] == 'z', has_l = strchr(aug, 'L') != NULL;

	put(b, 0, 4); /* CIE id */
	put(b, version, 1);
	for (const char *a = aug; *a; a++)
		put(b, (uint8_t)*a, 1);
	put(b, 0, 1);
	if (version == 4) {
		put(b, 8, 1);
		put(b, 0, 1);
	}
	put_leb(b, 1, false);
	put_leb(b, (uint64_t)-8, true);
	if (version == 1)
		put(b, 16, 1);
	else
		put_leb(b, 16, false);
	if (z) {
		struct bb d = { .n = 0 };

		for (const char *a = aug + 1; *a; a++) {
			if (*a == 'R')
				put(&d, declared, 1);
			else if (*a == 'L')
				put(&d, 0x1b, 1);
			else if (*a == 'P') {
				put(&d, 0x9b, 1); /* indirect pcrel sdata4: skipped, not applied */
				put(&d, 0x1234, 4);
			}
		}
		put_leb(b, d.n, false);
		for (size_t i = 0; i < d.n; i++)
			put(b, d.b[i], 1);
	}
	put(b, 0x0c, 1); /* DW_CFA_def_cfa rsp 8 */
	put(b, 0x07, 1);
	put(b, 0x08, 1);
	end_entry(b, cie, ext);

	for (size_t i = 0; i < N_FDES; i++) {
		e = begin_entry(b, ext);
		fde_off[i] = e;
		put(b, b->n - cie, 4); /* CIE pointer: back from this field */
		put_enc(b, enc, fdes[i].begin, FRAME_ADDR, DATA_BASE);
		put_enc(b, enc & 0x0f, fdes[i].range, FRAME_ADDR, DATA_BASE);
		if (z) {
			put_leb(b, has_l ? 4 : 0, false);
			if (has_l)
				put(b, 0, 4);
		}
		put(b, 0x0e, 1); /* DW_CFA_def_cfa_offset 16 */
		put(b, 0x10, 1);
		end_entry(b, e, ext);
	}
	put(b, 0, 4); /* terminator */
}

static void build_frame(struct bb *b, uint8_t version, const char *aug, uint8_t enc, bool ext,
			size_t *fde_off)
{
	build_frame_as(b, version, aug, enc, enc, ext, fde_off);
}

static void build_hdr(struct bb *h, const size_t *fde_off, uint8_t table_enc)
{
	put(h, 1, 1);
	put(h, 0x1b, 1); /* eh_frame_ptr: pcrel sdata4 */
	put(h, 0x03, 1); /* fde_count: udata4 */
	put(h, table_enc, 1);
	put(h, (uint64_t)FRAME_ADDR - (HDR_ADDR + 4), 4);
	put(h, N_FDES, 4);
	/* inside the header, datarel is relative to the header */
	for (size_t i = 0; i < N_FDES && table_enc != 0xff; i++) {
		put_enc(h, table_enc, fdes[i].begin, HDR_ADDR, HDR_ADDR);
		put_enc(h, table_enc, FRAME_ADDR + fde_off[i], HDR_ADDR, HDR_ADDR);
	}
}

static struct eh_frame_image image_of(const struct bb *h, const struct bb *f)
{
	return (struct eh_frame_image){
		.hdr = h ? h->b : NULL,
		.hdr_len = h ? h->n : 0,
		.hdr_addr = HDR_ADDR,
		.frame = f->b,
		.frame_len = f->n,
		.frame_addr = FRAME_ADDR,
		.data_base = DATA_BASE,
		.have_data_base = true,
	};
}

/* Every FDE is found at its first, middle and last byte; gaps are -ENOENT. */
static void check_lookups(const struct eh_frame_image *img, const char *what)
{
	struct eh_frame_fde f;
	static const uint64_t misses[] = { 0, 0xfff, 0x1100, 0x1fff, 0x2010, UINT64_MAX };

	for (size_t i = 0; i < N_FDES; i++) {
		uint64_t pcs[3] = { fdes[i].begin, fdes[i].begin + fdes[i].range / 2,
				    fdes[i].begin + fdes[i].range - 1 };

		for (int k = 0; k < 3; k++) {
			int rc = eh_frame_find(img, pcs[k], &f);

			if (rc)
				fail_msg("%s: pc 0x%llx: %d %s", what, (unsigned long long)pcs[k], rc,
					 eh_frame_last_error());
			assert_int_equal(f.pc_begin, fdes[i].begin);
			assert_int_equal(f.pc_range, fdes[i].range);
		}
	}
	for (size_t i = 0; i < sizeof(misses) / sizeof(misses[0]); i++) {
		int rc = eh_frame_find(img, misses[i], &f);

		if (rc != -ENOENT)
			fail_msg("%s: pc 0x%llx: %d, want -ENOENT (%s)", what,
				 (unsigned long long)misses[i], rc, eh_frame_last_error());
	}
}

static void test_eh_frame_encodings(void **state)
{
	static const uint8_t encs[] = { 0x00, 0x01, 0x02, 0x03, 0x04, 0x09, 0x0a, 0x0b, 0x0c,
					0x1b, 0x14, 0x1c, 0x10, 0x19, 0x3b, 0x33 };
	static const struct {
		uint8_t version;
		const char *aug;
	} cies[] = { { 1, "zR" }, { 1, "zPLR" }, { 1, "zRS" }, { 3, "zR" }, { 4, "zLPR" } };
	char what[64];

	for (size_t c = 0; c < sizeof(cies) / sizeof(cies[0]); c++)
		for (size_t i = 0; i < sizeof(encs); i++)
			for (int ext = 0; ext < 2; ext++) {
				struct bb f = { .n = 0 }, h = { .n = 0 }, h_scan = { .n = 0 };
				struct bb h_pc = { .n = 0 }, h_uleb = { .n = 0 };
				size_t off[N_FDES];
				struct eh_frame_image img;

				build_frame(&f, cies[c].version, cies[c].aug, encs[i], ext, off);
				build_hdr(&h, off, 0x3b);
				build_hdr(&h_scan, off, 0xff); /* no table: scan .eh_frame */
				build_hdr(&h_pc, off, 0x1b);
				build_hdr(&h_uleb, off, 0x09); /* not fixed-size: scan */
				snprintf(what, sizeof(what), "v%u %s enc %#x%s", cies[c].version,
					 cies[c].aug, encs[i], ext ? " ext" : "");
				img = image_of(&h, &f);
				check_lookups(&img, what);
				img = image_of(&h_scan, &f);
				check_lookups(&img, what);
				img = image_of(&h_pc, &f);
				check_lookups(&img, what);
				img = image_of(&h_uleb, &f);
				check_lookups(&img, what);
				img = image_of(NULL, &f);
				check_lookups(&img, what);
			}

	/* no augmentation at all: absptr */
	{
		struct bb f = { .n = 0 }, h = { .n = 0 };
		size_t off[N_FDES];
		struct eh_frame_image img;
		struct eh_frame_fde fde;
		uint64_t frame_addr = 0;

		build_frame(&f, 1, "", 0x00, false, off);
		build_hdr(&h, off, 0x3b);
		img = image_of(&h, &f);
		check_lookups(&img, "no augmentation");
		/* a table of absolute udata8 and udata4 entries */
		h.n = 0;
		build_hdr(&h, off, 0x04);
		img = image_of(&h, &f);
		check_lookups(&img, "udata8 table");
		h.n = 0;
		build_hdr(&h, off, 0x03);
		img = image_of(&h, &f);
		check_lookups(&img, "udata4 table");
		assert_int_equal(eh_frame_hdr_frame_addr(h.b, h.n, HDR_ADDR, &frame_addr), 0);
		assert_int_equal(frame_addr, FRAME_ADDR);
		assert_int_equal(eh_frame_find(&img, 0x1010, &fde), 0);
		assert_int_equal(fde.fde_addr, FRAME_ADDR + off[0]);
	}
}

static void test_eh_frame_unsupported(void **state)
{
	static const struct {
		uint8_t version;
		const char *aug;
		uint8_t written, declared;
		bool data_base;
	} bad[] = {
		{ 1, "zR", 0x03, 0x23, true },	/* textrel */
		{ 1, "zR", 0x03, 0x43, true },	/* funcrel */
		{ 1, "zR", 0x03, 0x53, true },	/* aligned */
		{ 1, "zR", 0x1b, 0x9b, true },	/* indirect */
		{ 1, "zR", 0x3b, 0x3b, false },	/* datarel with no base known */
		{ 1, "eh", 0x00, 0x00, true },	/* old GCC augmentation */
		{ 1, "zXR", 0x1b, 0x1b, true },	/* unknown letter before R */
		{ 2, "zR", 0x1b, 0x1b, true },	/* version */
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct bb f = { .n = 0 }, h = { .n = 0 };
		size_t off[N_FDES];
		struct eh_frame_image img;
		struct eh_frame_fde fde;
		int rc;

		build_frame_as(&f, bad[i].version, bad[i].aug, bad[i].written, bad[i].declared, false,
			       off);
		build_hdr(&h, off, 0x3b);
		img = image_of(NULL, &f);
		img.have_data_base = bad[i].data_base;
		rc = eh_frame_find(&img, 0x1000, &fde);
		if (rc != -ENOTSUP)
			fail_msg("case %zu: %d, want -ENOTSUP (%s)", i, rc, eh_frame_last_error());
		img = image_of(&h, &f);
		img.have_data_base = bad[i].data_base;
		assert_int_equal(eh_frame_find(&img, 0x1000, &fde), -ENOTSUP);
	}
	/* in the header: an indirect eh_frame_ptr, a textrel table */
	{
		struct bb f = { .n = 0 }, h = { .n = 0 };
		size_t off[N_FDES];
		struct eh_frame_image img;
		struct eh_frame_fde fde;

		build_frame(&f, 1, "zR", 0x1b, false, off);
		build_hdr(&h, off, 0x3b);
		h.b[1] = 0x9b;
		img = image_of(&h, &f);
		assert_int_equal(eh_frame_find(&img, 0x1000, &fde), -ENOTSUP);
		h.b[1] = 0x1b;
		h.b[3] = 0x23;
		assert_int_equal(eh_frame_find(&img, 0x1000, &fde), -ENOTSUP);
	}
}

/* A copy of exactly n bytes, so that reading past them is caught (valgrind, ASan). */
static uint8_t *exact(const uint8_t *src, size_t n)
{
	uint8_t *p = malloc(n ? n : 1);

	assert_non_null(p);
	memcpy(p, src, n);
	return p;
}

static void test_eh_frame_truncated(void **state)
{
	struct bb f = { .n = 0 }, h = { .n = 0 };
	size_t off[N_FDES];
	struct eh_frame_fde fde;

	build_frame(&f, 1, "zPLR", 0x1b, false, off);
	build_hdr(&h, off, 0x3b);
	for (size_t n = 0; n <= h.n; n++) {
		uint8_t *hb = exact(h.b, n);
		struct eh_frame_image img = image_of(&h, &f);
		int rc;

		img.hdr = hb;
		img.hdr_len = n;
		for (size_t i = 0; i < N_FDES; i++) {
			rc = eh_frame_find(&img, fdes[i].begin, &fde);
			if (n < h.n)
				assert_int_equal(rc, -EINVAL); /* the table must fit */
			else
				assert_int_equal(rc, 0);
		}
		free(hb);
	}
	for (size_t n = 0; n <= f.n; n++) {
		uint8_t *fb = exact(f.b, n);
		struct eh_frame_image img = image_of(&h, &f);
		struct eh_frame_image scan = image_of(NULL, &f);

		img.frame = scan.frame = fb;
		img.frame_len = scan.frame_len = n;
		for (size_t i = 0; i < N_FDES; i++) {
			int rc = eh_frame_find(&img, fdes[i].begin, &fde);

			if (rc == 0)
				assert_int_equal(fde.pc_begin, fdes[i].begin);
			else
				assert_int_equal(rc, -EINVAL);
			rc = eh_frame_find(&scan, fdes[i].begin, &fde);
			if (rc == 0)
				assert_int_equal(fde.pc_range, fdes[i].range);
			else
				assert_true(rc == -EINVAL || rc == -ENOENT);
		}
		free(fb);
	}
}

static void test_eh_frame_corrupt(void **state)
{
	struct bb f = { .n = 0 }, h = { .n = 0 };
	size_t off[N_FDES];
	struct eh_frame_image img;
	struct eh_frame_fde fde;
	struct bb f2, h2;
	uint64_t fa;

	build_frame(&f, 1, "zR", 0x1b, false, off);
	build_hdr(&h, off, 0x3b);

#define CORRUPT(stmt, want)                                                           \
	do {                                                                          \
		f2 = f;                                                               \
		h2 = h;                                                               \
		stmt;                                                                 \
		img = image_of(&h2, &f2);                                             \
		int rc_ = eh_frame_find(&img, 0x1080, &fde);                          \
		if (rc_ != (want))                                                    \
			fail_msg("%s: %d, want %d (%s)", #stmt, rc_, want,            \
				 eh_frame_last_error());                              \
	} while (0)

	CORRUPT(h2.b[0] = 2, -EINVAL);					/* version */
	CORRUPT((h2.b[8] = 0, h2.b[9] = 0, h2.b[10] = 0, h2.b[11] = 0x80), -EINVAL); /* 2^31 */
	CORRUPT((h2.b[8] = 0xff, h2.b[9] = 0xff, h2.b[10] = 0xff, h2.b[11] = 0xff), -EINVAL);
	CORRUPT(h2.b[3] = 0x3f, -EINVAL);				/* bad table format */
	CORRUPT(h2.b[1] = 0x07, -EINVAL);				/* bad eh_frame_ptr format */
	CORRUPT(h2.b[4] ^= 0x40, -EINVAL);	/* eh_frame_ptr disagrees with .eh_frame */
	CORRUPT(h2.b[12 + 8 + 4 + 2] = 0x10, -EINVAL);	/* entry 1's FDE outside .eh_frame */
	CORRUPT(h2.b[12 + 8 + 4 + 3] = 0x80, -EINVAL);	/* ... before it */
	CORRUPT(h2.b[12 + 8 + 4] -= 4, -EINVAL);	/* ... into the middle of an entry */
	CORRUPT(memcpy(h2.b + 12 + 8 + 4, &(uint32_t){ FRAME_ADDR - HDR_ADDR }, 4),
		-EINVAL);				/* ... at the CIE */
	CORRUPT(h2.b[12 + 8] += 1, -EINVAL);		/* entry's loc != FDE's pc_begin */
	CORRUPT((f2.b[off[1]] = 0xf0, f2.b[off[1] + 3] = 0x7f), -EINVAL); /* FDE length */
	CORRUPT((f2.b[off[1]] = 0xff, f2.b[off[1] + 1] = 0xff, f2.b[off[1] + 2] = 0xff,
		 f2.b[off[1] + 3] = 0xff),
		-EINVAL);				/* 64-bit length, garbage */
	CORRUPT(f2.b[off[1] + 4] += 4, -EINVAL);	/* CIE pointer before .eh_frame */
	CORRUPT(f2.b[off[1] + 4] -= 4, -EINVAL);	/* CIE pointer into the CIE */
	CORRUPT((f2.b[off[1] + 4] = 0xff, f2.b[off[1] + 7] = 0x7f), -EINVAL); /* far before */
	CORRUPT(memset(f2.b + 9, 'x', off[0] - 9), -EINVAL); /* augmentation never ends */
	CORRUPT(f2.b[4] = 1, -EINVAL);			/* the CIE is no CIE */
	CORRUPT(f2.b[0] = 3, -EINVAL);			/* CIE shorter than its contents */
#undef CORRUPT

	/* the table count with no room at all, and eh_frame_hdr_frame_addr alone */
	assert_int_equal(eh_frame_hdr_frame_addr(h.b, 7, HDR_ADDR, &fa), -EINVAL);
	assert_int_equal(eh_frame_hdr_frame_addr(NULL, 0, HDR_ADDR, &fa), -EINVAL);
	img = image_of(&h, &f);
	img.frame = NULL;
	assert_int_equal(eh_frame_find(&img, 0x1000, &fde), -ENOENT);
	/* an overlong LEB128 */
	{
		struct bb b = { .n = 0 };

		build_frame(&b, 1, "zR", 0x01, false, off);
		for (int i = 0; i < 12; i++)
			b.b[off[0] + 8 + i] = 0x80;
		img = image_of(NULL, &b);
		assert_int_equal(eh_frame_find(&img, 0x1000, &fde), -EINVAL);
	}
}

/* ---- corrupt unwind tables inside an ELF file ----------------------------- */

struct image {
	unsigned char *buf;
	size_t len;
};

static Elf64_Phdr *phdr_of(struct image *im, uint32_t type)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)im->buf;

	for (int i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr *ph = (Elf64_Phdr *)(im->buf + eh->e_phoff + (size_t)i * eh->e_phentsize);

		if (ph->p_type == type)
			return ph;
	}
	fail_msg("no phdr of type %#x", type);
	return NULL;
}

static int sites_in_image(const struct image *im, const char *fn, struct ret_sites *r)
{
	struct elf_syms *e = NULL;
	struct elf_sym s;
	int rc = elf_syms_open_mem(im->buf, im->len, &e);

	if (rc)
		return 1000 + rc;
	rc = elf_syms_find(e, fn, &s);
	if (rc == 0)
		rc = ret_sites_find(e, &s, r);
	else
		rc = 2000 + rc;
	elf_syms_close(e);
	return rc;
}

static void expect_image(const struct image *im, int want, const char *what)
{
	struct ret_sites r;
	int rc = sites_in_image(im, "tail_entry", &r);

	if (rc != want)
		fail_msg("%s: %d, want %d (%s)", what, rc, want, ret_sites_last_error());
	if (rc)
		assert_int_equal(r.n, 0);
}

static void test_corrupt_elf_unwind(void **state)
{
	struct image im, orig;
	Elf64_Phdr *ph;
	uint8_t *hdr;
	uint32_t count;

	orig.buf = slurp(P("libfix_stripped.so"), &orig.len);
	im.len = orig.len;
	im.buf = malloc(im.len);
	assert_non_null(im.buf);

#define RESET() memcpy(im.buf, orig.buf, orig.len), ph = phdr_of(&im, PT_GNU_EH_FRAME), \
		hdr = im.buf + ph->p_offset, memcpy(&count, hdr + 8, 4)
	RESET();
	expect_image(&im, 0, "intact");
	assert_int_equal(hdr[0], 1);
	assert_int_equal(hdr[2], 0x03);
	assert_int_equal(hdr[3], 0x3b);
	assert_true(count > 10);

	ph->p_filesz = 6; /* truncated header */
	expect_image(&im, -EINVAL, "header of 6 bytes");
	RESET();
	ph->p_filesz = 12 + 8 * ((uint64_t)count - 1); /* the table's last entry cut */
	expect_image(&im, -EINVAL, "table cut");
	RESET();
	ph->p_filesz = orig.len; /* past its segment and the file */
	expect_image(&im, -EINVAL, "header past the file");
	RESET();
	ph->p_vaddr = 0x7fff0000;
	expect_image(&im, -EINVAL, "header outside every segment");
	RESET();
	memcpy(hdr + 8, &(uint32_t){ 0x80000000u }, 4);
	expect_image(&im, -EINVAL, "count 2^31");
	RESET();
	hdr[0] = 7;
	expect_image(&im, -EINVAL, "version");
	RESET();
	memcpy(hdr + 4, &(int32_t){ 0x40000000 }, 4);
	expect_image(&im, -EINVAL, "eh_frame_ptr outside the file");
	RESET();
	for (uint32_t i = 0; i < count; i++) { /* every FDE pointer far away */
		int32_t v;

		memcpy(&v, hdr + 12 + 8 * i + 4, 4);
		v += 0x100000;
		memcpy(hdr + 12 + 8 * i + 4, &v, 4);
	}
	expect_image(&im, -EINVAL, "table points outside .eh_frame");
	RESET();
	for (uint32_t i = 0; i < count; i++) { /* every FDE pointer 4 bytes in */
		int32_t v;

		memcpy(&v, hdr + 12 + 8 * i + 4, 4);
		v += 4;
		memcpy(hdr + 12 + 8 * i + 4, &v, 4);
	}
	expect_image(&im, -EINVAL, "table points into FDEs");
	RESET();
	for (uint32_t i = 0; i < count; i++) { /* every FDE: a huge length */
		int32_t v;
		uint64_t fde_off;

		memcpy(&v, hdr + 12 + 8 * i + 4, 4);
		fde_off = ph->p_offset + (uint64_t)(int64_t)v; /* same segment: same delta */
		assert_true(fde_off + 8 <= im.len);
		memcpy(im.buf + fde_off, &(uint32_t){ 0xfffffff0u }, 4);
	}
	expect_image(&im, -EINVAL, "FDE lengths");
	RESET();
	for (uint32_t i = 0; i < count; i++) { /* every FDE: its CIE pointer garbage */
		int32_t v;
		uint64_t fde_off;

		memcpy(&v, hdr + 12 + 8 * i + 4, 4);
		fde_off = ph->p_offset + (uint64_t)(int64_t)v;
		memcpy(im.buf + fde_off + 4, &(uint32_t){ 0x7ffffff0u }, 4);
	}
	expect_image(&im, -EINVAL, "CIE pointers");
	RESET();
	{ /* garbage in place of local_fn's code */
		struct elf_syms *e = open_ok(P("libfix.so"));
		struct elf_sym lf = sym_ok(e, "local_fn");

		memset(im.buf + lf.offset, 0x06, lf.size);
		elf_syms_close(e);
		expect_image(&im, -EILSEQ, "garbage code");
	}
#undef RESET
	free(im.buf);
	free(orig.buf);
}

/* Random bytes over the unwind tables and the code: any clean answer will do. */
static void test_mutations(void **state)
{
	struct image im, orig;
	Elf64_Phdr *ph;
	uint64_t lo, hi, text_lo, text_hi, sec_addr, sec_size;
	struct elf_syms *e;
	unsigned int seed = 12345;
	int counts[6] = { 0 };

	orig.buf = slurp(P("libfix_stripped.so"), &orig.len);
	im.len = orig.len;
	im.buf = malloc(im.len);
	assert_non_null(im.buf);
	ph = phdr_of(&orig, PT_GNU_EH_FRAME);
	e = open_ok(P("libfix_stripped.so"));
	assert_int_equal(elf_syms_section(e, ".eh_frame", &sec_addr, &sec_size), 0);
	lo = ph->p_offset;
	hi = ph->p_offset + (sec_addr - ph->p_vaddr) + sec_size; /* hdr, then .eh_frame */
	assert_true(sec_addr > ph->p_vaddr);
	text_lo = sym_ok(e, "tail_entry").offset;
	text_hi = text_lo + 0x80;
	elf_syms_close(e);
	assert_true(hi <= orig.len && text_hi <= orig.len);

	for (int iter = 0; iter < 3000; iter++) {
		struct ret_sites r;
		int flips = 1 + rand_r(&seed) % 4, rc;

		memcpy(im.buf, orig.buf, orig.len);
		for (int k = 0; k < flips; k++) {
			bool code = rand_r(&seed) % 4 == 0;
			uint64_t a = code ? text_lo : lo, b = code ? text_hi : hi;
			uint64_t at = a + (uint64_t)rand_r(&seed) % (b - a);

			im.buf[at] = rand_r(&seed) % 3 ? (uint8_t)rand_r(&seed)
						       : im.buf[at] ^ (uint8_t)(1u << (rand_r(&seed) % 8));
		}
		rc = sites_in_image(&im, "tail_entry", &r);
		switch (rc) {
		case 0: counts[0]++; break;
		case -ENOENT: counts[1]++; break;
		case -ENOTSUP: counts[2]++; break;
		case -E2BIG: counts[3]++; break;
		case -EILSEQ: counts[4]++; break;
		case -EINVAL: counts[5]++; break;
		default: fail_msg("iteration %d: %d (%s)", iter, rc, ret_sites_last_error());
		}
		if (rc == 0)
			for (size_t i = 0; i < r.n; i++)
				assert_true(r.offsets[i] < im.len);
	}
	/* the mutations reach more than one outcome */
	assert_true(counts[0] > 0 && counts[5] > 0);
	free(im.buf);
	free(orig.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_multi_ret),
		cmocka_unit_test(test_tail_jumps),
		cmocka_unit_test(test_depth_and_count_limits),
		cmocka_unit_test(test_unfollowable),
		cmocka_unit_test(test_extent_sources),
		cmocka_unit_test(test_fde_extent_stripped),
		cmocka_unit_test(test_absolute_tables),
		cmocka_unit_test(test_compiled),
		cmocka_unit_test(test_not_x86_64),
		cmocka_unit_test(test_system_libssl),
		cmocka_unit_test(test_system_libgnutls),
		cmocka_unit_test(test_elf_helpers),
		cmocka_unit_test(test_eh_frame_encodings),
		cmocka_unit_test(test_eh_frame_unsupported),
		cmocka_unit_test(test_eh_frame_truncated),
		cmocka_unit_test(test_eh_frame_corrupt),
		cmocka_unit_test(test_corrupt_elf_unwind),
		cmocka_unit_test(test_mutations),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
