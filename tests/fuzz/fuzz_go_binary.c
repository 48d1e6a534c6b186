/*
 * libFuzzer target for src/tls/go_binary.c, and the synthetic Go ELF files
 * it mutates (tests/unit/test_go_binary.c includes this file for them).
 *
 * A random file almost never gets past the ELF header into a pclntab, so
 * the input mostly describes a well-formed synthetic Go executable and a few
 * patches to it:
 *   byte 0: bits 0-1 pclntab format (1.2, 1.16, 1.18, 1.20), bit 2 big-endian,
 *           bit 3 32-bit, bit 4 section headers, bits 5-6 build info (none,
 *           inline, pointers, inline), bit 7: the rest of the input is the
 *           file itself, raw;
 *   byte 1: bit 0 a decoy pclntab magic before the real one, bit 1 textStart
 *           left 0 in the header and set by a RELA relocation, bit 2 the
 *           section named .data.rel.ro.gopclntab, bits 3-5 which version
 *           string, bit 6 arm64 instead of amd64;
 *   then 4 bytes per patch: offset (2 bytes, big-endian, mod the file size),
 *   op (bits 0-1: set the byte, xor it, write a 32-bit value, truncate the
 *   file there; bits 2-4 pick the 32-bit value), value byte.
 *
 * Besides "no crash, no read outside the file", it checks that an unpatched
 * file opens and gives every function's exact address, size and offset and
 * the version written into it, that find_func and find_many agree, and that
 * every error is one of the documented ones.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tls/go_binary.h"

#include "fuzz_check.h"

/* ---- synthetic Go executables ------------------------------------------- */

/*
 * File layout (each segment's vaddr is GS_BASE + its offset):
 *   0x0000 ELF and program headers   PT_LOAD R
 *   0x1000 text                      PT_LOAD R X
 *   0x2000 rodata: decoy, pclntab    PT_LOAD R
 *   0x4000 data: build info, strings, dynamic, RELA   PT_LOAD RW (+ PT_DYNAMIC)
 *   0x5000 section names and headers (no segment)
 */
#define GS_SIZE 0x6000u
#define GS_BASE 0x400000u
#define GS_TEXT_OFF 0x1000u
#define GS_TEXT_LEN 0x1000u
#define GS_RO_OFF 0x2000u
#define GS_RO_LEN 0x2000u
#define GS_PCLN_OFF (GS_RO_OFF + 0x100u)
#define GS_DATA_OFF 0x4000u
#define GS_DATA_LEN 0x1000u
#define GS_DYN_OFF (GS_DATA_OFF + 0x400u)
#define GS_RELA_OFF (GS_DATA_OFF + 0x500u)
#define GS_SHDR_OFF 0x5000u
/* runtime.text: not the segment start, so a wrong base shows */
#define GS_TEXT_START (GS_BASE + GS_TEXT_OFF + 0x20u)

struct go_synth {
	enum go_pclntab_format format;
	bool be;
	bool is32;
	bool sections;		/* section headers naming the Go sections */
	int buildinfo;		/* 0 none, 1 inline (Go 1.18+), 2 pointers (Go 1.13-1.17) */
	bool decoy;		/* a false pclntab magic in rodata before the real one */
	bool rela;		/* 1.18+: textStart 0 in the header, set by a RELA entry */
	bool relro_name;	/* .data.rel.ro.gopclntab, as in a PIE */
	const char *version;
	unsigned int machine;	/* e_machine */
};

static const struct gs_func {
	const char *name;
	uint32_t off; /* from GS_TEXT_START */
} gs_funcs[] = {
	{ "internal/cpu.Initialize", 0x000 },
	{ "main.main", 0x040 },
	{ "crypto/tls.(*Conn).Write", 0x100 },
	{ "crypto/tls.(*Conn).Read", 0x1a0 },
	{ "crypto/tls.(*Conn).Read.func1", 0x1c0 },
	{ "runtime.goexit", 0x200 },
};
#define GS_NFUNC (sizeof(gs_funcs) / sizeof(gs_funcs[0]))
#define GS_END 0x260u

static void gs_put(uint8_t *b, uint64_t off, uint64_t v, unsigned int n, bool be)
{
	for (unsigned int i = 0; i < n; i++)
		b[off + (be ? n - 1 - i : i)] = (uint8_t)(v >> (8 * i));
}

static uint64_t gs_align(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

static uint32_t gs_magic(enum go_pclntab_format f)
{
	switch (f) {
	case GO_PCLNTAB_1_2:
		return 0xfffffffbu;
	case GO_PCLNTAB_1_16:
		return 0xfffffffau;
	case GO_PCLNTAB_1_18:
		return 0xfffffff0u;
	default:
		return 0xfffffff1u;
	}
}

/* The pclntab at b, as cmd/link of that release lays it out. */
static void gs_pclntab(const struct go_synth *o, uint8_t *b)
{
	unsigned int ps = o->is32 ? 4 : 8;
	bool be = o->be, v118 = o->format >= GO_PCLNTAB_1_18;
	uint64_t name_off[GS_NFUNC], names, names_end, ft, funcs, base, fsz;

	gs_put(b, 0, gs_magic(o->format), 4, be);
	b[6] = 1;
	b[7] = (uint8_t)ps;
	gs_put(b, 8, GS_NFUNC, ps, be);

	if (o->format == GO_PCLNTAB_1_2) {
		/* functab right after the header; everything relative to it */
		fsz = ps;
		ft = 8 + ps;
		funcs = gs_align(ft + (2 * GS_NFUNC + 1) * fsz + 4, 8);
		names = funcs + GS_NFUNC * 40;
		base = 0;
	} else {
		unsigned int k = v118 ? 3 : 2;

		fsz = v118 ? 4 : ps;
		names = 8 + (uint64_t)(k + 5) * ps;
		ft = funcs = base = 0; /* set below, after the names */
	}
	names_end = names;
	for (size_t i = 0; i < GS_NFUNC; i++) {
		size_t n = strlen(gs_funcs[i].name) + 1;

		memcpy(b + names_end, gs_funcs[i].name, n);
		name_off[i] = o->format == GO_PCLNTAB_1_2 ? names_end : names_end - names;
		names_end += n;
	}
	if (o->format != GO_PCLNTAB_1_2) {
		/* funcnametab, cutab, filetab, pctab, then the functab and _funcs */
		bool v118b = v118;
		unsigned int k = v118b ? 3 : 2;
		uint64_t cu = gs_align(names_end, 4), pcln = gs_align(cu + 16, 8);

		gs_put(b, 8 + 1 * (uint64_t)ps, 0, ps, be); /* nfiles */
		if (v118b)
			gs_put(b, 8 + 2 * (uint64_t)ps, o->rela ? 0 : GS_TEXT_START, ps, be);
		gs_put(b, 8 + (uint64_t)(k + 0) * ps, names, ps, be);
		gs_put(b, 8 + (uint64_t)(k + 1) * ps, cu, ps, be);
		gs_put(b, 8 + (uint64_t)(k + 2) * ps, cu, ps, be);
		gs_put(b, 8 + (uint64_t)(k + 3) * ps, cu + 8, ps, be);
		gs_put(b, 8 + (uint64_t)(k + 4) * ps, pcln, ps, be);
		base = pcln;
		ft = pcln;
		funcs = gs_align(pcln + (2 * GS_NFUNC + 1) * fsz, 8);
	}
	for (size_t i = 0; i < GS_NFUNC; i++) {
		uint64_t entry = v118 ? gs_funcs[i].off : GS_TEXT_START + gs_funcs[i].off;
		uint64_t fo = funcs + i * 40;

		gs_put(b, ft + 2 * i * fsz, entry, (unsigned int)fsz, be);
		gs_put(b, ft + (2 * i + 1) * fsz, fo - base, (unsigned int)fsz, be);
		gs_put(b, fo, entry, v118 ? 4 : ps, be);
		gs_put(b, fo + (v118 ? 4 : ps), name_off[i], 4, be);
		memset(b + fo + (v118 ? 8 : ps + 4), 0x11, 8); /* args, deferreturn, ... */
	}
	gs_put(b, ft + 2 * GS_NFUNC * fsz, v118 ? GS_END : GS_TEXT_START + GS_END,
	       (unsigned int)fsz, be);
}

static void gs_buildinfo(const struct go_synth *o, uint8_t *f)
{
	unsigned int ps = o->is32 ? 4 : 8;
	uint8_t *b = f + GS_DATA_OFF;
	size_t n = strlen(o->version);

	memcpy(b, "\xff Go buildinf:", 14);
	b[14] = (uint8_t)ps;
	if (o->buildinfo == 1) {
		size_t p = 32;

		b[15] = (uint8_t)(2 | (o->be ? 1 : 0));
		/* uvarint length, the version, then an empty module info */
		while (n >= 0x80 && p < 40) {
			b[p++] = (uint8_t)(n | 0x80);
			n >>= 7;
		}
		b[p++] = (uint8_t)n;
		memcpy(b + p, o->version, strlen(o->version));
		p += strlen(o->version);
		b[p] = 0;
	} else {
		/* addresses of the Go strings runtime.buildVersion and runtime.modinfo */
		uint64_t hdr = GS_BASE + GS_DATA_OFF + 0x100, mod = hdr + 0x20;
		uint64_t str = GS_BASE + GS_DATA_OFF + 0x200;

		b[15] = o->be ? 1 : 0;
		gs_put(b, 16, hdr, ps, o->be);
		gs_put(b, 16 + ps, mod, ps, o->be);
		gs_put(b, 0x100, str, ps, o->be);
		gs_put(b, 0x100 + ps, n, ps, o->be);
		memcpy(b + 0x200, o->version, n);
	}
}

/* PT_DYNAMIC with one R_*_RELATIVE relocation: the pclntab's textStart. */
static void gs_rela(const struct go_synth *o, uint8_t *f)
{
	unsigned int ps = o->is32 ? 4 : 8;
	uint64_t rela = GS_BASE + GS_RELA_OFF, where = GS_BASE + GS_PCLN_OFF + 8 + 2 * ps;
	uint64_t tags[4][2] = { { 7 /* DT_RELA */, rela }, { 8 /* DT_RELASZ */, 3 * ps },
				{ 9 /* DT_RELAENT */, 3 * ps }, { 0, 0 } };

	for (int i = 0; i < 4; i++) {
		gs_put(f, GS_DYN_OFF + (uint64_t)i * 2 * ps, tags[i][0], ps, o->be);
		gs_put(f, GS_DYN_OFF + (uint64_t)i * 2 * ps + ps, tags[i][1], ps, o->be);
	}
	gs_put(f, GS_RELA_OFF, where, ps, o->be);
	gs_put(f, GS_RELA_OFF + ps, 8 /* R_X86_64_RELATIVE, symbol 0 */, ps, o->be);
	gs_put(f, GS_RELA_OFF + 2 * ps, GS_TEXT_START, ps, o->be);
}

static void gs_phdr(const struct go_synth *o, uint8_t *f, int i, uint32_t type, uint32_t flags,
		    uint64_t off, uint64_t filesz, uint64_t memsz)
{
	bool be = o->be;

	if (o->is32) {
		uint8_t *p = f + 52 + i * 32;

		gs_put(p, 0, type, 4, be);
		gs_put(p, 4, off, 4, be);
		gs_put(p, 8, GS_BASE + off, 4, be);
		gs_put(p, 12, GS_BASE + off, 4, be);
		gs_put(p, 16, filesz, 4, be);
		gs_put(p, 20, memsz, 4, be);
		gs_put(p, 24, flags, 4, be);
		gs_put(p, 28, 0x1000, 4, be);
	} else {
		uint8_t *p = f + 64 + i * 56;

		gs_put(p, 0, type, 4, be);
		gs_put(p, 4, flags, 4, be);
		gs_put(p, 8, off, 8, be);
		gs_put(p, 16, GS_BASE + off, 8, be);
		gs_put(p, 24, GS_BASE + off, 8, be);
		gs_put(p, 32, filesz, 8, be);
		gs_put(p, 40, memsz, 8, be);
		gs_put(p, 48, 0x1000, 8, be);
	}
}

static void gs_shdr(const struct go_synth *o, uint8_t *f, int i, uint32_t name, uint32_t type,
		    uint64_t flags, uint64_t off, uint64_t size)
{
	bool be = o->be, alloc = flags != 0;
	uint64_t addr = alloc ? GS_BASE + off : 0;

	if (o->is32) {
		uint8_t *p = f + GS_SHDR_OFF + 0x100 + i * 40;

		gs_put(p, 0, name, 4, be);
		gs_put(p, 4, type, 4, be);
		gs_put(p, 8, flags, 4, be);
		gs_put(p, 12, addr, 4, be);
		gs_put(p, 16, off, 4, be);
		gs_put(p, 20, size, 4, be);
	} else {
		uint8_t *p = f + GS_SHDR_OFF + 0x100 + i * 64;

		gs_put(p, 0, name, 4, be);
		gs_put(p, 4, type, 4, be);
		gs_put(p, 8, flags, 8, be);
		gs_put(p, 16, addr, 8, be);
		gs_put(p, 24, off, 8, be);
		gs_put(p, 32, size, 8, be);
	}
}

/* Writes the file into f (GS_SIZE bytes) and returns its size. */
static size_t go_synth_build(const struct go_synth *o, uint8_t *f)
{
	unsigned int ps = o->is32 ? 4 : 8;
	bool be = o->be;
	int nph = o->rela ? 5 : 4, nsh = 0;

	memset(f, 0, GS_SIZE);
	for (uint32_t i = 0; i < GS_TEXT_LEN; i++)
		f[GS_TEXT_OFF + i] = (uint8_t)(i * 7 + 3);
	if (o->decoy) {
		/* a magic, zero bytes, quantum and pointer size, then nonsense */
		gs_put(f, GS_RO_OFF, gs_magic(o->format), 4, be);
		f[GS_RO_OFF + 6] = 1;
		f[GS_RO_OFF + 7] = (uint8_t)ps;
		gs_put(f, GS_RO_OFF + 8, 3, ps, be);
		memset(f + GS_RO_OFF + 8 + ps, 0xee, 0x80);
	}
	gs_pclntab(o, f + GS_PCLN_OFF);
	if (o->buildinfo)
		gs_buildinfo(o, f);
	if (o->rela)
		gs_rela(o, f);

	memcpy(f, "\x7f" "ELF", 4);
	f[4] = o->is32 ? 1 : 2;
	f[5] = be ? 2 : 1;
	f[6] = 1;
	gs_put(f, 16, 2 /* ET_EXEC */, 2, be);
	gs_put(f, 18, o->machine, 2, be);
	gs_put(f, 20, 1, 4, be);
	if (o->is32) {
		gs_put(f, 24, GS_TEXT_START, 4, be);
		gs_put(f, 28, 52, 4, be);
		gs_put(f, 40, 52, 2, be);
		gs_put(f, 42, 32, 2, be);
		gs_put(f, 44, (uint64_t)nph, 2, be);
		gs_put(f, 46, 40, 2, be);
	} else {
		gs_put(f, 24, GS_TEXT_START, 8, be);
		gs_put(f, 32, 64, 8, be);
		gs_put(f, 52, 64, 2, be);
		gs_put(f, 54, 56, 2, be);
		gs_put(f, 56, (uint64_t)nph, 2, be);
		gs_put(f, 58, 64, 2, be);
	}
	gs_phdr(o, f, 0, 1 /* PT_LOAD */, 4 /* R */, 0, 0x1000, 0x1000);
	gs_phdr(o, f, 1, 1, 5 /* R X */, GS_TEXT_OFF, GS_TEXT_LEN, GS_TEXT_LEN);
	gs_phdr(o, f, 2, 1, 4, GS_RO_OFF, GS_RO_LEN, GS_RO_LEN);
	gs_phdr(o, f, 3, 1, 6 /* R W */, GS_DATA_OFF, GS_DATA_LEN, GS_DATA_LEN + 0x800);
	if (o->rela)
		gs_phdr(o, f, 4, 2 /* PT_DYNAMIC */, 6, GS_DYN_OFF, 8 * ps, 8 * ps);

	if (o->sections) {
		static const char strs[] = "\0.shstrtab\0.text\0.gopclntab\0.data.rel.ro.gopclntab\0"
					   ".go.buildinfo";
		uint64_t sh = GS_SHDR_OFF;

		memcpy(f + sh, strs, sizeof(strs));
		gs_shdr(o, f, 1, 11, 1 /* PROGBITS */, 6, GS_TEXT_OFF, GS_TEXT_LEN);
		gs_shdr(o, f, 2, o->relro_name ? 28 : 17, 1, 2, GS_PCLN_OFF, 0x1000);
		nsh = 3;
		if (o->buildinfo)
			gs_shdr(o, f, nsh++, 51, 1, 3, GS_DATA_OFF, 0x100);
		gs_shdr(o, f, nsh, 1, 3 /* STRTAB */, 0, sh, sizeof(strs));
		if (o->is32) {
			gs_put(f, 32, sh + 0x100, 4, be);
			gs_put(f, 48, (uint64_t)nsh + 1, 2, be);
			gs_put(f, 50, (uint64_t)nsh, 2, be);
		} else {
			gs_put(f, 40, sh + 0x100, 8, be);
			gs_put(f, 60, (uint64_t)nsh + 1, 2, be);
			gs_put(f, 62, (uint64_t)nsh, 2, be);
		}
	}
	return GS_SIZE;
}

/* ---- the fuzz target --------------------------------------------------- */

static const char *const gs_versions[8] = {
	"go1.19.8", "go1.16.15", "go1.21rc2", "go1.20", "devel go1.23-5c68d6f Thu Feb 1 2024",
	"go1.22.1 X:boringcrypto", "not a version", "go1.17.13",
};

static const char *const gs_missing[] = { "crypto/tls.(*Conn).Rea", "crypto/tls.(*Conn).Read.",
					  "main", "" };

static bool gs_open_rc_ok(int rc)
{
	return rc == 0 || rc == -ENOEXEC || rc == -EINVAL || rc == -EOPNOTSUPP;
}

/*
 * Opens the bytes and runs every query. With expect (an unpatched synthetic
 * file), the answers must be exactly what was written.
 */
static void gs_check(const uint8_t *buf, size_t len, const struct go_synth *expect)
{
	enum { NQ = GS_NFUNC + sizeof(gs_missing) / sizeof(gs_missing[0]) };
	const char *names[NQ];
	struct go_func out[NQ], one;
	int rc[NQ];
	struct go_binary *g = NULL;
	struct go_version v;
	struct go_binary_info info;
	size_t found;
	int r = go_binary_open_mem(buf, len, &g);

	CHECK(gs_open_rc_ok(r));
	CHECK((r == 0) == (g != NULL));
	CHECK(go_binary_last_error() != NULL);
	if (expect && r != 0) {
		fprintf(stderr, "synthetic file rejected: %d %s\n", r, go_binary_last_error());
		CHECK(r == 0);
	}
	if (!g)
		return;

	for (size_t i = 0; i < GS_NFUNC; i++)
		names[i] = gs_funcs[i].name;
	for (size_t i = GS_NFUNC; i < NQ; i++)
		names[i] = gs_missing[i - GS_NFUNC];
	found = go_binary_find_many(g, names, NQ, out, rc);
	CHECK(found <= NQ);
	for (size_t i = 0; i < NQ; i++) {
		int r1 = go_binary_find_func(g, names[i], &one);

		CHECK(rc[i] == 0 || rc[i] == -ENOENT || rc[i] == -EINVAL);
		CHECK(r1 == rc[i]);
		CHECK(!memcmp(&one, &out[i], sizeof(one)));
		if (rc[i] == 0) {
			CHECK(out[i].offset <= len && out[i].size <= len - out[i].offset);
			CHECK(out[i].addr + out[i].size >= out[i].addr);
		}
	}

	r = go_binary_version(g, &v);
	CHECK(r == 0 || r == -ENOENT || r == -EINVAL);
	CHECK(strnlen(v.str, sizeof(v.str)) < sizeof(v.str));
	(void)go_binary_regabi(g);
	go_binary_info(g, &info);
	CHECK(info.nfunc > 0 && info.nfunc <= GO_BINARY_MAX_FUNCS);
	CHECK(info.ptr_size == 4 || info.ptr_size == 8);

	if (expect) {
		CHECK(info.pclntab_format == expect->format);
		CHECK(info.pclntab_by_section == expect->sections);
		CHECK(info.pclntab_addr == GS_BASE + GS_PCLN_OFF);
		CHECK(info.nfunc == GS_NFUNC);
		CHECK(info.big_endian == expect->be);
		CHECK(info.ptr_size == (expect->is32 ? 4u : 8u));
		CHECK(info.machine == expect->machine);
		CHECK(info.text_start ==
			 (expect->format >= GO_PCLNTAB_1_18 ? GS_TEXT_START : 0));
		CHECK(found == GS_NFUNC);
		for (size_t i = 0; i < GS_NFUNC; i++) {
			uint64_t end = i + 1 < GS_NFUNC ? gs_funcs[i + 1].off : GS_END;

			CHECK(rc[i] == 0);
			CHECK(out[i].addr == GS_TEXT_START + gs_funcs[i].off);
			CHECK(out[i].size == end - gs_funcs[i].off);
			CHECK(out[i].offset == GS_TEXT_START - GS_BASE + gs_funcs[i].off);
		}
		for (size_t i = GS_NFUNC; i < NQ; i++)
			CHECK(rc[i] == (names[i][0] ? -ENOENT : -EINVAL));
		CHECK(info.has_build_info == (expect->buildinfo != 0));
		if (expect->buildinfo) {
			CHECK(!strncmp(v.str, expect->version, sizeof(v.str) - 1));
			CHECK(r == (strstr(expect->version, "go1") ? 0 : -EINVAL));
		} else {
			CHECK(r == -ENOENT);
		}
	}
	go_binary_close(g);
}

/* The options bytes 0 and 1 stand for. */
static struct go_synth gs_options(uint8_t a, uint8_t b)
{
	static const enum go_pclntab_format formats[4] = { GO_PCLNTAB_1_2, GO_PCLNTAB_1_16,
							   GO_PCLNTAB_1_18, GO_PCLNTAB_1_20 };
	struct go_synth o = {
		.format = formats[a & 3],
		.be = a & 4,
		.is32 = a & 8,
		.sections = a & 16,
		.buildinfo = (a >> 5) & 3,
		.decoy = b & 1,
		.rela = (b & 2) && (a & 3) >= 2,
		.relro_name = b & 4,
		.version = gs_versions[(b >> 3) & 7],
		.machine = b & 64 ? 183 /* EM_AARCH64 */ : 62 /* EM_X86_64 */,
	};

	if (o.buildinfo == 3)
		o.buildinfo = 1;
	return o;
}

static const uint32_t gs_values[8] = { 0, 0xffffffffu, 0x7fffffffu, 0x80000000u,
				       1, 0xfffffff1u, 0x00001000u, 0x00400000u };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t f[GS_SIZE];
	struct go_synth o;
	size_t len, npatch;

	if (size < 2)
		return 0;
	if (data[0] & 0x80) {
		gs_check(data + 1, size - 1, NULL);
		return 0;
	}
	o = gs_options(data[0], data[1]);
	len = go_synth_build(&o, f);
	npatch = (size - 2) / 4;
	for (size_t i = 0; i < npatch && len; i++) {
		const uint8_t *p = data + 2 + 4 * i;
		size_t off = ((size_t)p[0] << 8 | p[1]) % len;

		switch (p[2] & 3) {
		case 0:
			f[off] = p[3];
			break;
		case 1:
			f[off] ^= p[3] ? p[3] : 0x80;
			break;
		case 2:
			if (off + 4 <= len)
				gs_put(f, off, gs_values[(p[2] >> 2) & 7] ^ (p[2] & 0x20 ? p[3] : 0),
				       4, o.be);
			break;
		default:
			len = off;
			break;
		}
	}
	gs_check(f, len, npatch ? NULL : &o);
	return 0;
}
