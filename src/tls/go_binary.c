#define _GNU_SOURCE /* memmem */
#include "go_binary.h"

#include "util/last_error.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* cmd/link writes a 32-byte header, 16-byte aligned, at the start of .go.buildinfo. */
#define BUILDINFO_MAGIC "\xff Go buildinf:"
#define BUILDINFO_MAGIC_LEN 14
#define BUILDINFO_HDR 32
#define BUILDINFO_ALIGN 16
#define BUILDINFO_FLAG_INLINE 2 /* Go 1.18+: the strings follow the header */
#define VERSION_MAX 1024	/* a longer version string means a corrupt blob */

#define PCLN_MAGIC_1_2 0xfffffffbu
#define PCLN_MAGIC_1_16 0xfffffffau
#define PCLN_MAGIC_1_18 0xfffffff0u
#define PCLN_MAGIC_1_20 0xfffffff1u

#ifndef EM_LOONGARCH
#define EM_LOONGARCH 258
#endif

struct seg {
	uint64_t vaddr;
	uint64_t filesz;
	uint64_t offset;
	uint32_t flags;
};

/* Bytes of the file that are mapped at vaddr: a section or the file part of a segment. */
struct region {
	const uint8_t *p;
	uint64_t len;
	uint64_t vaddr;
	bool present;
};

struct pcln {
	enum go_pclntab_format format;
	uint64_t vaddr;		/* of the header */
	unsigned int ptr_size;
	uint64_t nfunc;
	uint64_t text_start;	/* added to every entry of a 1.18+ table; 0 before */
	uint64_t text_start_at;	/* where the header keeps it (a relocation may set it) */
	const uint8_t *functab;	/* nfunc (entry, funcoff) pairs, then the end PC */
	unsigned int field;	/* size of a functab field: 4 (1.18+) or ptr_size */
	const uint8_t *funcdata; /* what funcoff is relative to */
	uint64_t funcdata_len;
	unsigned int entry_size; /* _func's first field: entry (ptr_size) or entryoff (4) */
	const uint8_t *names;	/* what _func.nameoff is relative to */
	uint64_t names_len;
	bool by_section;
};

struct go_binary {
	const uint8_t *data;
	uint64_t size;
	void *map;		/* go_binary_open_fd */
	void *copy;		/* go_binary_open_mem */
	bool be;
	bool is64;
	unsigned int machine;
	struct seg *segs;	/* PT_LOAD with file bytes */
	size_t nsegs;
	struct region dynamic;	/* PT_DYNAMIC */
	bool has_sections;
	bool go_section;	/* one of the sections only cmd/link writes */
	struct region sec_pcln;
	struct region sec_buildinfo;
	bool has_build_info;
	int version_rc;
	struct go_version version;
	struct pcln t;
};

LAST_ERROR_DEFINE(go_binary)

#define ULL(x) ((unsigned long long)(x))

/* ---- bytes -------------------------------------------------------------- */

static inline uint64_t get_uint(const uint8_t *p, unsigned int n, bool be)
{
	uint64_t v = 0;

	if (be) {
		for (unsigned int i = 0; i < n; i++)
			v = v << 8 | p[i];
	} else {
		for (unsigned int i = n; i-- > 0;)
			v = v << 8 | p[i];
	}
	return v;
}

static inline uint32_t rd32(const struct go_binary *g, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return g->be ? __builtin_bswap32(v) : v;
#else
	return g->be ? v : __builtin_bswap32(v);
#endif
}

static inline uint64_t rd64(const struct go_binary *g, const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return g->be ? __builtin_bswap64(v) : v;
#else
	return g->be ? v : __builtin_bswap64(v);
#endif
}

static inline uint64_t rdn(const struct go_binary *g, const uint8_t *p, unsigned int n)
{
	return n == 8 ? rd64(g, p) : rd32(g, p);
}

static inline uint16_t rd16(const struct go_binary *g, const uint8_t *p)
{
	return (uint16_t)get_uint(p, 2, g->be);
}

/* Whether n entries of entsize bytes at off lie inside size bytes. */
static bool fits(uint64_t off, uint64_t n, uint64_t entsize, uint64_t size)
{
	if (off > size)
		return false;
	return n == 0 || (entsize != 0 && n <= (size - off) / entsize);
}

/* The file bytes at [vaddr, vaddr + len) when one segment holds them all, else NULL. */
static const uint8_t *at_vaddr(const struct go_binary *g, uint64_t vaddr, uint64_t len)
{
	for (size_t i = 0; i < g->nsegs; i++) {
		const struct seg *s = &g->segs[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr <= s->filesz &&
		    len <= s->filesz - (vaddr - s->vaddr))
			return g->data + s->offset + (vaddr - s->vaddr);
	}
	return NULL;
}

/* The executable segment whose file bytes hold [addr, end), or NULL. */
static const struct seg *exec_seg(const struct go_binary *g, uint64_t addr, uint64_t end)
{
	for (size_t i = 0; i < g->nsegs; i++) {
		const struct seg *s = &g->segs[i];

		if ((s->flags & PF_X) && addr >= s->vaddr && addr <= end &&
		    end - s->vaddr <= s->filesz)
			return s;
	}
	return NULL;
}

/* ---- ELF ------------------------------------------------------------------ */

/* Whether the NUL-terminated string at off of a string table is name. */
static bool name_is(const uint8_t *strs, uint64_t len, uint64_t off, const char *name)
{
	size_t n = strlen(name);

	return off < len && len - off > n && memcmp(strs + off, name, n) == 0 &&
	       strs[off + n] == '\0';
}

static int load_segments(struct go_binary *g, uint64_t phoff, uint64_t phnum,
			 unsigned int phentsize)
{
	if (phnum == 0)
		return fail(-EINVAL, "corrupt ELF: no program headers");
	if (phnum > GO_BINARY_MAX_PHDRS)
		return fail(-EINVAL, "corrupt ELF: %llu program headers", ULL(phnum));
	if (phentsize != (g->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
		return fail(-EINVAL, "corrupt ELF: program header size %u", phentsize);
	if (!fits(phoff, phnum, phentsize, g->size))
		return fail(-EINVAL, "corrupt ELF: program headers past the end of the %llu-byte file",
			    ULL(g->size));
	g->segs = calloc(phnum, sizeof(*g->segs));
	if (!g->segs)
		return fail(-ENOMEM, "out of memory");
	for (uint64_t i = 0; i < phnum; i++) {
		const uint8_t *ph = g->data + phoff + i * phentsize;
		uint32_t type = rd32(g, ph), flags;
		uint64_t off, vaddr, filesz, memsz;

		if (g->is64) {
			flags = rd32(g, ph + 4);
			off = rd64(g, ph + 8);
			vaddr = rd64(g, ph + 16);
			filesz = rd64(g, ph + 32);
			memsz = rd64(g, ph + 40);
		} else {
			off = rd32(g, ph + 4);
			vaddr = rd32(g, ph + 8);
			filesz = rd32(g, ph + 16);
			memsz = rd32(g, ph + 20);
			flags = rd32(g, ph + 24);
		}
		if (type != PT_LOAD && type != PT_DYNAMIC)
			continue;
		if (!fits(off, filesz, 1, g->size))
			return fail(-EINVAL,
				    "corrupt ELF: segment %llu (%llu bytes at offset %llu) past the end of the %llu-byte file (truncated?)",
				    ULL(i), ULL(filesz), ULL(off), ULL(g->size));
		if (type == PT_DYNAMIC) {
			if (!g->dynamic.present)
				g->dynamic = (struct region){ g->data + off, filesz, vaddr, true };
			continue;
		}
		if (filesz > memsz || vaddr + memsz < vaddr)
			return fail(-EINVAL, "corrupt ELF: segment %llu sizes %llu/%llu at 0x%llx",
				    ULL(i), ULL(filesz), ULL(memsz), ULL(vaddr));
		if (filesz == 0)
			continue;
		g->segs[g->nsegs++] = (struct seg){ vaddr, filesz, off, flags };
	}
	if (g->nsegs == 0)
		return fail(-EINVAL, "corrupt ELF: no loadable segment with file contents");
	return 0;
}

static int load_sections(struct go_binary *g, uint64_t shoff, uint64_t shnum,
			 unsigned int shentsize, uint64_t shstrndx)
{
	const uint8_t *strs;
	uint64_t strs_len;

	if (shnum == 0)
		return 0;
	if (!fits(shoff, shnum, shentsize, g->size))
		return fail(-EINVAL, "corrupt ELF: %llu section headers past the end of the %llu-byte file",
			    ULL(shnum), ULL(g->size));
	if (shstrndx == SHN_UNDEF || shstrndx >= shnum)
		return fail(-EINVAL, "corrupt ELF: section name table is section %llu of %llu",
			    ULL(shstrndx), ULL(shnum));
	g->has_sections = true;

	/* sh_name, sh_type, then flags/addr/offset/size: 8 or 4 bytes each */
	{
		const uint8_t *sh = g->data + shoff + shstrndx * shentsize;
		uint64_t off = g->is64 ? rd64(g, sh + 24) : rd32(g, sh + 16);
		uint64_t size = g->is64 ? rd64(g, sh + 32) : rd32(g, sh + 20);

		if (rd32(g, sh + 4) == SHT_NOBITS || !fits(off, size, 1, g->size))
			return fail(-EINVAL, "corrupt ELF: section name table past the end of the file");
		strs = g->data + off;
		strs_len = size;
	}

	for (uint64_t i = 1; i < shnum; i++) {
		const uint8_t *sh = g->data + shoff + i * shentsize;
		uint64_t name = rd32(g, sh), addr, off, size;
		struct region *r = NULL;
		const char *what = NULL;

		if (name_is(strs, strs_len, name, ".gopclntab")) {
			r = &g->sec_pcln;
			what = ".gopclntab";
		} else if (name_is(strs, strs_len, name, ".data.rel.ro.gopclntab")) {
			/* what cmd/link calls it in a PIE; an external linker may merge it away */
			r = &g->sec_pcln;
			what = ".data.rel.ro.gopclntab";
		} else if (name_is(strs, strs_len, name, ".go.buildinfo")) {
			r = &g->sec_buildinfo;
			what = ".go.buildinfo";
		} else if (name_is(strs, strs_len, name, ".note.go.buildid") ||
			   name_is(strs, strs_len, name, ".gosymtab") ||
			   name_is(strs, strs_len, name, ".data.rel.ro.gosymtab")) {
			g->go_section = true;
		}
		if (!r)
			continue;
		g->go_section = true;
		if (r->present)
			continue;
		addr = g->is64 ? rd64(g, sh + 16) : rd32(g, sh + 12);
		off = g->is64 ? rd64(g, sh + 24) : rd32(g, sh + 16);
		size = g->is64 ? rd64(g, sh + 32) : rd32(g, sh + 20);
		if (rd32(g, sh + 4) == SHT_NOBITS || size == 0)
			continue;
		if (!fits(off, size, 1, g->size))
			return fail(-EINVAL,
				    "corrupt ELF: section %s (%llu bytes at offset %llu) past the end of the %llu-byte file (truncated?)",
				    what, ULL(size), ULL(off), ULL(g->size));
		*r = (struct region){ g->data + off, size, addr, true };
	}
	return 0;
}

static int parse_elf(struct go_binary *g)
{
	const uint8_t *d = g->data;
	uint64_t phoff, shoff, phnum, shnum, shstrndx;
	unsigned int phentsize, shentsize, type;
	int rc;

	if (g->size < SELFMAG || memcmp(d, ELFMAG, SELFMAG) != 0)
		return fail(-ENOEXEC, "not an ELF file");
	if (g->size < EI_NIDENT)
		return fail(-EINVAL, "corrupt ELF: truncated at %llu bytes", ULL(g->size));
	if (d[EI_CLASS] != ELFCLASS32 && d[EI_CLASS] != ELFCLASS64)
		return fail(-EINVAL, "corrupt ELF: class %u", d[EI_CLASS]);
	if (d[EI_DATA] != ELFDATA2LSB && d[EI_DATA] != ELFDATA2MSB)
		return fail(-EINVAL, "corrupt ELF: data encoding %u", d[EI_DATA]);
	g->is64 = d[EI_CLASS] == ELFCLASS64;
	g->be = d[EI_DATA] == ELFDATA2MSB;
	if (g->size < (g->is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr)))
		return fail(-EINVAL, "corrupt ELF: truncated header");
	type = rd16(g, d + 16);
	if (type != ET_EXEC && type != ET_DYN)
		return fail(-ENOEXEC, "ELF file of type %u, not an executable", type);
	g->machine = rd16(g, d + 18);
	if (g->is64) {
		phoff = rd64(g, d + 32);
		shoff = rd64(g, d + 40);
		phentsize = rd16(g, d + 54);
		phnum = rd16(g, d + 56);
		shentsize = rd16(g, d + 58);
		shnum = rd16(g, d + 60);
		shstrndx = rd16(g, d + 62);
	} else {
		phoff = rd32(g, d + 28);
		shoff = rd32(g, d + 32);
		phentsize = rd16(g, d + 42);
		phnum = rd16(g, d + 44);
		shentsize = rd16(g, d + 46);
		shnum = rd16(g, d + 48);
		shstrndx = rd16(g, d + 50);
	}

	/*
	 * No section header table (e_shoff 0, as sstrip and some packers
	 * leave it) is fine: everything is then found through the segments.
	 * Counts too large for the header live in section 0.
	 */
	if (shoff == 0) {
		shnum = 0;
	} else {
		const uint8_t *sh0;

		if (shentsize != (g->is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr)))
			return fail(-EINVAL, "corrupt ELF: section header size %u", shentsize);
		if (!fits(shoff, 1, shentsize, g->size))
			return fail(-EINVAL, "corrupt ELF: section headers past the end of the %llu-byte file",
				    ULL(g->size));
		sh0 = d + shoff;
		if (shnum == 0)
			shnum = g->is64 ? rd64(g, sh0 + 32) : rd32(g, sh0 + 20);
		if (shstrndx == SHN_XINDEX)
			shstrndx = rd32(g, sh0 + (g->is64 ? 40 : 24));
		if (phnum == PN_XNUM)
			phnum = rd32(g, sh0 + (g->is64 ? 44 : 28));
	}
	if (phnum == PN_XNUM && shoff == 0)
		return fail(-EINVAL, "corrupt ELF: extended program header count without sections");
	rc = load_segments(g, phoff, phnum, phentsize);
	if (rc)
		return rc;
	return load_sections(g, shoff, shnum, shentsize, shstrndx);
}

/* ---- build info ------------------------------------------------------------ */

/* The first 16-byte aligned build info magic in r, or NULL. */
static const uint8_t *find_buildinfo(const struct region *r)
{
	const uint8_t *p = r->p, *end = r->p + r->len;

	while (p < end) {
		const uint8_t *hit = memmem(p, (size_t)(end - p), BUILDINFO_MAGIC,
					    BUILDINFO_MAGIC_LEN);

		if (!hit)
			return NULL;
		if ((r->vaddr + (uint64_t)(hit - r->p)) % BUILDINFO_ALIGN == 0)
			return hit;
		p = hit + 1;
	}
	return NULL;
}

/* encoding/binary.Uvarint: 0 and the value, or -1 when malformed or cut off. */
static int uvarint(const uint8_t *p, uint64_t len, uint64_t *val, uint64_t *used)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < 10 && i < len; i++) {
		if (i == 9 && p[i] > 1)
			return -1; /* overflows 64 bits */
		v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			*val = v;
			*used = i + 1;
			return 0;
		}
	}
	return -1;
}

/* Reads up to 9 decimal digits; NULL when there is none. */
static const char *parse_num(const char *p, int *out)
{
	int v = 0, n = 0;

	while (*p >= '0' && *p <= '9' && n < 9) {
		v = v * 10 + (*p++ - '0');
		n++;
	}
	if (n == 0 || (*p >= '0' && *p <= '9'))
		return NULL;
	*out = v;
	return p;
}

/*
 * "go1.19.8", "go1.20", "go1.21rc2", "go1.22.1 X:boringcrypto",
 * "devel go1.22-5c68d6f Thu Feb 1 ...": the first "go" + digits at a word start.
 */
static int parse_version(const char *s, struct go_version *v)
{
	const char *p;

	for (p = s; *p; p++)
		if ((p == s || p[-1] == ' ') && p[0] == 'g' && p[1] == 'o' && p[2] >= '0' &&
		    p[2] <= '9')
			break;
	if (!*p)
		return -EINVAL;
	p = parse_num(p + 2, &v->major);
	if (!p)
		return -EINVAL;
	if (*p == '.') {
		p = parse_num(p + 1, &v->minor);
		if (!p)
			return -EINVAL;
		if (*p == '.' && !parse_num(p + 1, &v->patch))
			return -EINVAL;
	}
	return 0;
}

static int set_version(struct go_binary *g, const uint8_t *s, uint64_t len)
{
	struct go_version *v = &g->version;
	size_t n = len < sizeof(v->str) - 1 ? (size_t)len : sizeof(v->str) - 1;

	if (len == 0)
		return fail(-EINVAL, "corrupt Go build info: empty version string");
	if (len > VERSION_MAX)
		return fail(-EINVAL, "corrupt Go build info: version string of %llu bytes", ULL(len));
	for (uint64_t i = 0; i < len; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return fail(-EINVAL, "corrupt Go build info: byte 0x%02x in the version string",
				    s[i]);
	memcpy(v->str, s, n);
	v->str[n] = '\0';
	g->has_build_info = true;
	g->version_rc = parse_version(v->str, v);
	if (g->version_rc)
		v->major = v->minor = v->patch = 0;
	return 0;
}

/*
 * The blob: magic, pointer size, flags, then either (flag 2, Go 1.18+) the
 * version and module strings inline after the 32-byte header, each prefixed
 * by its uvarint length, or (Go 1.13-1.17) the addresses of the Go strings
 * runtime.buildVersion and runtime.modinfo, in the byte order flag 1 says.
 */
static int parse_buildinfo(struct go_binary *g, const uint8_t *b, uint64_t avail)
{
	unsigned int ptr_size, flags;

	if (avail < BUILDINFO_HDR)
		return fail(-EINVAL, "corrupt Go build info: %llu bytes, want %u", ULL(avail),
			    BUILDINFO_HDR);
	ptr_size = b[14];
	flags = b[15];
	if (ptr_size != 4 && ptr_size != 8)
		return fail(-EINVAL, "corrupt Go build info: pointer size %u", ptr_size);
	if (flags & BUILDINFO_FLAG_INLINE) {
		uint64_t len, used, rest = avail - BUILDINFO_HDR;

		if (uvarint(b + BUILDINFO_HDR, rest, &len, &used) || len >= rest - used)
			return fail(-EINVAL, "corrupt Go build info: version string length");
		return set_version(g, b + BUILDINFO_HDR + used, len);
	} else {
		bool be = flags != 0;
		uint64_t str_addr = get_uint(b + 16, ptr_size, be), addr, len;
		const uint8_t *hdr = at_vaddr(g, str_addr, 2 * ptr_size), *s;

		if (!hdr)
			return fail(-EINVAL,
				    "corrupt Go build info: version string header at 0x%llx is not in the file",
				    ULL(str_addr));
		addr = get_uint(hdr, ptr_size, be);
		len = get_uint(hdr + ptr_size, ptr_size, be);
		if (len > VERSION_MAX)
			return fail(-EINVAL, "corrupt Go build info: version string of %llu bytes",
				    ULL(len));
		s = at_vaddr(g, addr, len);
		if (!s)
			return fail(-EINVAL,
				    "corrupt Go build info: version string at 0x%llx is not in the file",
				    ULL(addr));
		return set_version(g, s, len);
	}
}

static int load_buildinfo(struct go_binary *g)
{
	const uint8_t *b;

	g->version_rc = -ENOENT;
	if (g->sec_buildinfo.present) {
		b = find_buildinfo(&g->sec_buildinfo);
		if (!b)
			return fail(-EINVAL, "corrupt Go binary: .go.buildinfo without the build info magic");
		return parse_buildinfo(g, b, g->sec_buildinfo.len - (uint64_t)(b - g->sec_buildinfo.p));
	}
	/* cmd/link puts it first in the writable data; look there first, then anywhere. */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < g->nsegs; i++) {
			const struct seg *s = &g->segs[i];
			bool data = (s->flags & (PF_W | PF_X)) == PF_W;
			struct region r = { g->data + s->offset, s->filesz, s->vaddr, true };

			if (data != (pass == 0))
				continue;
			b = find_buildinfo(&r);
			if (b)
				return parse_buildinfo(g, b, r.len - (uint64_t)(b - r.p));
		}
	}
	return 0;
}

/* ---- pclntab ------------------------------------------------------------- */

static enum go_pclntab_format pcln_format(uint32_t magic)
{
	switch (magic) {
	case PCLN_MAGIC_1_2:
		return GO_PCLNTAB_1_2;
	case PCLN_MAGIC_1_16:
		return GO_PCLNTAB_1_16;
	case PCLN_MAGIC_1_18:
		return GO_PCLNTAB_1_18;
	case PCLN_MAGIC_1_20:
		return GO_PCLNTAB_1_20;
	default:
		return GO_PCLNTAB_NONE;
	}
}

/*
 * Reads the header of a pclntab at p (avail bytes may belong to it) and
 * checks that its offsets are in order and its function table fits.
 */
static int pcln_parse(const struct go_binary *g, const uint8_t *p, uint64_t avail, uint64_t vaddr,
		      struct pcln *t)
{
	unsigned int ps;
	uint64_t tab_off;

	memset(t, 0, sizeof(*t));
	if (avail < 16)
		return fail(-EINVAL, "corrupt pclntab: %llu bytes", ULL(avail));
	t->format = pcln_format(rd32(g, p));
	if (t->format == GO_PCLNTAB_NONE) {
		/* after 0xfffffff1 comes 0xfffffff2, ... (1.2 and 1.16 counted down from 0xfffffffb) */
		if (rd32(g, p) >= 0xfffffff2u && rd32(g, p) <= 0xfffffff9u && !p[4] && !p[5])
			return fail(-EOPNOTSUPP,
				    "pclntab magic 0x%08x is of a Go release newer than this nodescope knows",
				    rd32(g, p));
		return fail(-EINVAL, "corrupt pclntab: magic 0x%08x", rd32(g, p));
	}
	ps = p[7];
	if (p[4] || p[5] || (p[6] != 1 && p[6] != 2 && p[6] != 4))
		return fail(-EINVAL, "corrupt pclntab: header bytes %02x %02x %02x", p[4], p[5], p[6]);
	if (ps != (g->is64 ? 8u : 4u))
		return fail(-EINVAL, "corrupt pclntab: pointer size %u in a %d-bit ELF", ps,
			    g->is64 ? 64 : 32);
	t->vaddr = vaddr;
	t->ptr_size = ps;
	t->nfunc = rdn(g, p + 8, ps);

	if (t->format == GO_PCLNTAB_1_2) {
		/* nfunc, then the function table; offsets are from the header */
		tab_off = 8 + ps;
		t->field = t->entry_size = ps;
		t->funcdata = t->names = p;
		t->funcdata_len = t->names_len = avail;
	} else {
		/*
		 * nfunc, nfiles, [textStart,] then the offsets of funcnametab,
		 * cutab, filetab, pctab and the function table, which cmd/link
		 * writes in that order.
		 */
		bool v118 = t->format >= GO_PCLNTAB_1_18;
		unsigned int k = v118 ? 3 : 2;
		uint64_t hdr = 8 + (uint64_t)(k + 5) * ps, off[5];

		if (avail < hdr)
			return fail(-EINVAL, "corrupt pclntab: %llu bytes, header of %llu", ULL(avail),
				    ULL(hdr));
		for (unsigned int i = 0; i < 5; i++)
			off[i] = rdn(g, p + 8 + (uint64_t)(k + i) * ps, ps);
		if (off[0] < hdr || off[0] > off[1] || off[1] > off[2] || off[2] > off[3] ||
		    off[3] > off[4] || off[4] > avail)
			return fail(-EINVAL,
				    "corrupt pclntab: table offsets %llu %llu %llu %llu %llu out of order or past its %llu bytes",
				    ULL(off[0]), ULL(off[1]), ULL(off[2]), ULL(off[3]), ULL(off[4]),
				    ULL(avail));
		if (v118) {
			t->text_start = rdn(g, p + 8 + 2 * (uint64_t)ps, ps);
			t->text_start_at = vaddr + 8 + 2 * (uint64_t)ps;
		}
		tab_off = off[4];
		t->field = t->entry_size = v118 ? 4 : ps;
		t->names = p + off[0];
		t->names_len = off[1] - off[0];
		t->funcdata = p + off[4];
		t->funcdata_len = avail - off[4];
	}
	if (t->nfunc == 0 || t->nfunc > GO_BINARY_MAX_FUNCS)
		return fail(-EINVAL, "corrupt pclntab: %llu functions", ULL(t->nfunc));
	/* nfunc (entry, funcoff) pairs, then the end PC */
	if (!fits(tab_off, 2 * t->nfunc + 1, t->field, avail))
		return fail(-EINVAL, "corrupt pclntab: table of %llu functions past its %llu bytes",
			    ULL(t->nfunc), ULL(avail));
	t->functab = p + tab_off;
	return 0;
}

static inline uint64_t pcln_entry(const struct go_binary *g, const struct pcln *t, uint64_t i)
{
	return rdn(g, t->functab + 2 * i * t->field, t->field);
}

/*
 * Function i's _func: its entry must be the table's and its name offset
 * inside the name table. Returns its name and the bytes it may span.
 */
static inline int pcln_func(const struct go_binary *g, const struct pcln *t, uint64_t i,
			    uint64_t entry, const uint8_t **name, uint64_t *name_max)
{
	uint64_t funcoff = rdn(g, t->functab + (2 * i + 1) * t->field, t->field);
	const uint8_t *f;
	uint32_t nameoff;

	if (funcoff > t->funcdata_len || t->funcdata_len - funcoff < t->entry_size + 4)
		return fail(-EINVAL, "corrupt pclntab: function %llu's data at %llu, past the table",
			    ULL(i), ULL(funcoff));
	f = t->funcdata + funcoff;
	if (rdn(g, f, t->entry_size) != entry)
		return fail(-EINVAL,
			    "corrupt pclntab: function %llu starts at 0x%llx in the table but 0x%llx in its data",
			    ULL(i), ULL(entry), ULL(rdn(g, f, t->entry_size)));
	nameoff = rd32(g, f + t->entry_size);
	if (nameoff >= t->names_len)
		return fail(-EINVAL, "corrupt pclntab: function %llu's name at %u, past the %llu-byte name table",
			    ULL(i), nameoff, ULL(t->names_len));
	*name = t->names + nameoff;
	*name_max = t->names_len - nameoff;
	return 0;
}

/* Cheap checks of a candidate: the first and last functions, not the whole table. */
static int pcln_spot_check(const struct go_binary *g, const struct pcln *t)
{
	uint64_t last = t->nfunc - 1, name_max = 0;
	const uint8_t *name = NULL;
	int rc;

	rc = pcln_func(g, t, 0, pcln_entry(g, t, 0), &name, &name_max);
	if (rc)
		return rc;
	if (!name[0] || !memchr(name, '\0', name_max))
		return fail(-EINVAL, "corrupt pclntab: first function's name is empty or unterminated");
	rc = pcln_func(g, t, last, pcln_entry(g, t, last), &name, &name_max);
	if (rc)
		return rc;
	if (pcln_entry(g, t, last) > pcln_entry(g, t, t->nfunc))
		return fail(-EINVAL, "corrupt pclntab: last function ends before it starts");
	return 0;
}

/*
 * The first "\xff\xff\xff" in p[0..len), or NULL. Not memmem: a sanitizer's
 * memmem checks the whole rest of the segment at each call, and a big Go
 * program's segments hold thousands of candidates (seconds per file under
 * ASan, while the loop is blocked); memchr's checks stop at what it found.
 */
static const uint8_t *find_ff3(const uint8_t *p, size_t len)
{
	for (const uint8_t *end = p + len; len >= 3;) {
		const uint8_t *ff = memchr(p, 0xff, len - 2);
		if (!ff)
			return NULL;
		if (ff[1] == 0xff && ff[2] == 0xff)
			return ff;
		p = ff + 1;
		len = (size_t)(end - p);
	}
	return NULL;
}

/*
 * The pclntab is in read-only data; a PIE puts it in the relro segment, and
 * old external links in the text segment. Candidates are 4-byte aligned
 * magics followed by two zero bytes; the first one whose header and first
 * and last functions agree wins.
 */
static int pcln_scan(const struct go_binary *g, struct pcln *t)
{
	for (int pass = 0; pass < 3; pass++) {
		for (size_t i = 0; i < g->nsegs; i++) {
			const struct seg *s = &g->segs[i];
			const uint8_t *p = g->data + s->offset;
			uint64_t pos = 0, len = s->filesz;
			int kind = (s->flags & PF_X) ? 2 : (s->flags & PF_W) ? 1 : 0;

			if (kind != pass)
				continue;
			while (pos < len) {
				const uint8_t *hit = find_ff3(p + pos, (size_t)(len - pos));
				uint64_t h, c;

				if (!hit)
					break;
				h = (uint64_t)(hit - p);
				pos = h + 1;
				/* little-endian fb ff ff ff, big-endian ff ff ff fb */
				if (!g->be && h == 0)
					continue;
				c = g->be ? h : h - 1;
				if ((s->vaddr + c) % 4 || len - c < 16 || p[c + 4] || p[c + 5] ||
				    pcln_format(rd32(g, p + c)) == GO_PCLNTAB_NONE)
					continue;
				if (pcln_parse(g, p + c, len - c, s->vaddr + c, t) == 0 &&
				    pcln_spot_check(g, t) == 0)
					return 0;
			}
		}
	}
	return -ENOENT;
}

/*
 * A 1.18+ header's textStart is an address, so in a PIE it is relocated.
 * cmd/link and GNU ld also write the value in place, but a linker that
 * leaves it to the RELA addend (lld) leaves 0: take the addend then.
 */
static uint64_t reloc_addend(const struct go_binary *g, uint64_t where)
{
	unsigned int ps = g->is64 ? 8 : 4, ent = 2 * ps, relaent_want = 3 * ps;
	uint64_t rela = 0, relasz = 0, relaent = relaent_want;
	const uint8_t *tab;

	if (!g->dynamic.present)
		return 0;
	for (uint64_t off = 0; off + ent <= g->dynamic.len; off += ent) {
		uint64_t tag = rdn(g, g->dynamic.p + off, ps), val = rdn(g, g->dynamic.p + off + ps, ps);

		if (tag == DT_NULL)
			break;
		if (tag == DT_RELA)
			rela = val;
		else if (tag == DT_RELASZ)
			relasz = val;
		else if (tag == DT_RELAENT)
			relaent = val;
	}
	if (!rela || !relasz || relaent != relaent_want)
		return 0;
	tab = at_vaddr(g, rela, relasz);
	if (!tab)
		return 0;
	for (uint64_t off = 0; off + relaent <= relasz; off += relaent) {
		uint64_t info;

		if (rdn(g, tab + off, ps) != where)
			continue;
		info = rdn(g, tab + off + ps, ps);
		/* a relative relocation: no symbol, the addend is the address */
		if ((g->is64 ? info >> 32 : info >> 8) == 0)
			return rdn(g, tab + off + 2 * ps, ps);
	}
	return 0;
}

/* The whole function table: in order, every _func inside the table. */
static int pcln_check_functab(const struct go_binary *g, const struct pcln *t)
{
	uint64_t prev = 0;

	for (uint64_t i = 0; i <= t->nfunc; i++) {
		uint64_t e = pcln_entry(g, t, i);

		if (e < prev)
			return fail(-EINVAL,
				    "corrupt pclntab: function %llu starts at 0x%llx, before the previous one's 0x%llx",
				    ULL(i), ULL(e), ULL(prev));
		prev = e;
		if (i < t->nfunc) {
			uint64_t funcoff = rdn(g, t->functab + (2 * i + 1) * t->field, t->field);

			if (funcoff > t->funcdata_len || t->funcdata_len - funcoff < t->entry_size + 4)
				return fail(-EINVAL,
					    "corrupt pclntab: function %llu's data at %llu, past the table",
					    ULL(i), ULL(funcoff));
		}
	}
	return 0;
}

static int load_pclntab(struct go_binary *g)
{
	struct pcln *t = &g->t;
	uint64_t start, end;
	int rc;

	if (g->sec_pcln.present) {
		rc = pcln_parse(g, g->sec_pcln.p, g->sec_pcln.len, g->sec_pcln.vaddr, t);
		if (!rc)
			rc = pcln_spot_check(g, t);
		if (rc)
			return rc;
		t->by_section = true;
	} else if (pcln_scan(g, t)) {
		memset(t, 0, sizeof(*t));
		return -ENOENT;
	}
	if (t->format >= GO_PCLNTAB_1_18 && t->text_start == 0)
		t->text_start = reloc_addend(g, t->text_start_at);
	if (t->format >= GO_PCLNTAB_1_18 && t->text_start == 0)
		return fail(-EINVAL,
			    "corrupt pclntab: text start is 0 and no relocation sets it");
	rc = pcln_check_functab(g, t);
	if (rc)
		return rc;
	/* All of Go's code is in one executable segment: one more check of the table. */
	start = t->text_start + pcln_entry(g, t, 0);
	end = t->text_start + pcln_entry(g, t, t->nfunc);
	if (start < t->text_start || end < t->text_start || !exec_seg(g, start, end))
		return fail(-EINVAL,
			    "corrupt pclntab: functions at 0x%llx-0x%llx are not in an executable segment",
			    ULL(start), ULL(end));
	return 0;
}

/* ---- open / close --------------------------------------------------------- */

static int setup(struct go_binary *g)
{
	int rc = parse_elf(g);

	if (rc)
		return rc;
	/* Most files the agent sees are not Go: answer those without a scan. */
	if (g->has_sections && !g->go_section)
		return fail(-ENOEXEC, "not a Go binary: no Go section (.gopclntab, .go.buildinfo)");
	rc = load_buildinfo(g);
	if (rc)
		return rc;
	rc = load_pclntab(g);
	if (rc == -ENOENT && !g->has_build_info)
		return fail(-ENOEXEC, "not a Go binary: no Go build info and no pclntab");
	if (rc == -ENOENT)
		return fail(-EINVAL,
			    "Go binary (%s) without a pclntab of a known format: corrupt, or built by a newer Go than this nodescope knows",
			    g->version.str);
	return rc;
}

int go_binary_open_fd(int fd, struct go_binary **out)
{
	struct go_binary *g;
	struct stat st;
	void *map;
	int rc;

	*out = NULL;
	if (fstat(fd, &st) != 0)
		return fail(-errno, "fstat: %s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return fail(-ENOEXEC, "not a regular file");
	if (st.st_size < SELFMAG)
		return fail(-ENOEXEC, "not an ELF file (%lld bytes)", (long long)st.st_size);
	if ((uint64_t)st.st_size > SIZE_MAX)
		return fail(-EFBIG, "file of %lld bytes is too large to map", (long long)st.st_size);
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return fail(-errno, "mmap: %s", strerror(errno));
	g = calloc(1, sizeof(*g));
	if (!g) {
		munmap(map, (size_t)st.st_size);
		return fail(-ENOMEM, "out of memory");
	}
	g->map = map;
	g->data = map;
	g->size = (uint64_t)st.st_size;
	rc = setup(g);
	if (rc) {
		go_binary_close(g);
		return rc;
	}
	*out = g;
	return 0;
}

int go_binary_open(const char *path, struct go_binary **out)
{
	int fd, rc;

	*out = NULL;
	if (!path)
		return fail(-EINVAL, "no path");
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return fail(-errno, "%s: %s", path, strerror(errno));
	rc = go_binary_open_fd(fd, out);
	close(fd);
	return rc;
}

int go_binary_open_mem(const void *buf, size_t len, struct go_binary **out)
{
	struct go_binary *g;
	int rc;

	*out = NULL;
	if (!buf && len)
		return fail(-EINVAL, "no buffer");
	g = calloc(1, sizeof(*g));
	if (!g)
		return fail(-ENOMEM, "out of memory");
	g->copy = malloc(len ? len : 1);
	if (!g->copy) {
		free(g);
		return fail(-ENOMEM, "out of memory");
	}
	if (len)
		memcpy(g->copy, buf, len);
	g->data = g->copy;
	g->size = len;
	rc = setup(g);
	if (rc) {
		go_binary_close(g);
		return rc;
	}
	*out = g;
	return 0;
}

void go_binary_close(struct go_binary *g)
{
	if (!g)
		return;
	if (g->map)
		munmap(g->map, (size_t)g->size);
	free(g->copy);
	free(g->segs);
	free(g);
}

/* ---- queries ---------------------------------------------------------------- */

int go_binary_version(const struct go_binary *g, struct go_version *out)
{
	if (!g->has_build_info) {
		memset(out, 0, sizeof(*out));
		return fail(-ENOENT, "Go binary without build info (built by Go older than 1.13)");
	}
	*out = g->version;
	if (g->version_rc)
		return fail(g->version_rc, "unrecognised Go version string \"%s\"", g->version.str);
	return 0;
}

bool go_binary_regabi(const struct go_binary *g)
{
	int minor;

	if (g->has_build_info && g->version_rc == 0) {
		if (g->version.major < 1)
			return false;
		/* a Go 2 would not go back to the stack */
		minor = g->version.major > 1 ? 1000 : g->version.minor;
	} else if (g->t.format == GO_PCLNTAB_1_20) {
		minor = 20;
	} else if (g->t.format == GO_PCLNTAB_1_18) {
		minor = 18;
	} else {
		return false;
	}
	switch (g->machine) {
	case EM_X86_64:
		return minor >= 17;
	case EM_AARCH64:
	case EM_PPC64:
		return minor >= 18;
	case EM_RISCV:
		return minor >= 19;
	case EM_LOONGARCH:
		return minor >= 20;
	default:
		return false;
	}
}

void go_binary_info(const struct go_binary *g, struct go_binary_info *out)
{
	*out = (struct go_binary_info){
		.machine = g->machine,
		.ptr_size = g->is64 ? 8 : 4,
		.big_endian = g->be,
		.has_build_info = g->has_build_info,
		.pclntab_format = g->t.format,
		.pclntab_by_section = g->t.by_section,
		.pclntab_addr = g->t.vaddr,
		.nfunc = g->t.nfunc,
		.text_start = g->t.format >= GO_PCLNTAB_1_18 ? g->t.text_start : 0,
	};
}

/* Whether the name at nm (at most max bytes, maybe unterminated) is q. */
static inline bool name_eq(const uint8_t *nm, uint64_t max, const char *q)
{
	for (uint64_t k = 0; k < max; k++) {
		if (nm[k] != (uint8_t)q[k])
			return false;
		if (!q[k])
			return true;
	}
	return false;
}

size_t go_binary_find_many(const struct go_binary *g, const char *const *names, size_t n,
			   struct go_func *out, int *rc)
{
	const struct pcln *t = &g->t;
	size_t left = 0, found = 0;
	int err = 0;

	for (size_t q = 0; q < n; q++) {
		memset(&out[q], 0, sizeof(out[q]));
		rc[q] = names[q] && names[q][0] ? -ENOENT : -EINVAL;
		left += rc[q] == -ENOENT;
	}

	/*
	 * One pass over every function, on past the last name found: a table
	 * with one bad entry is not trusted for any (see the header).
	 */
	for (uint64_t i = 0; left && i < t->nfunc; i++) {
		uint64_t entry = pcln_entry(g, t, i), max = 0;
		const uint8_t *nm = NULL;

		err = pcln_func(g, t, i, entry, &nm, &max);
		if (err)
			break;
		for (size_t q = 0; q < n; q++) {
			if (rc[q] != -ENOENT || nm[0] != (uint8_t)names[q][0] ||
			    !name_eq(nm, max, names[q]))
				continue;
			out[q].addr = t->text_start + entry;
			out[q].size = pcln_entry(g, t, i + 1) - entry;
			rc[q] = 1; /* found; its offset is still to check */
		}
	}

	for (size_t q = 0; q < n; q++) {
		const struct seg *s;

		if (err) {
			rc[q] = err;
			continue;
		}
		if (rc[q] == -EINVAL) {
			fail(-EINVAL, "empty function name");
			continue;
		}
		if (rc[q] == -ENOENT) {
			fail(-ENOENT, "%s: no such function in the pclntab (%llu functions)", names[q],
			     ULL(t->nfunc));
			continue;
		}
		s = exec_seg(g, out[q].addr, out[q].addr + out[q].size);
		if (!s || out[q].addr + out[q].size < out[q].addr) {
			rc[q] = fail(-EINVAL,
				     "%s at 0x%llx (%llu bytes) is not in an executable segment of the file",
				     names[q], ULL(out[q].addr), ULL(out[q].size));
			memset(&out[q], 0, sizeof(out[q]));
			continue;
		}
		out[q].offset = s->offset + (out[q].addr - s->vaddr);
		rc[q] = 0;
		found++;
	}
	return found;
}

int go_binary_find_func(const struct go_binary *g, const char *name, struct go_func *out)
{
	int rc;

	go_binary_find_many(g, &name, 1, out, &rc);
	return rc;
}
