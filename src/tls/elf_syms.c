#define _GNU_SOURCE /* memrchr */
#include "elf_syms.h"

#include "util/last_error.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* .gnu.version entries: the version index, and the "hidden" (non-default) bit. */
#define VERSYM_HIDDEN 0x8000u
#define VERSYM_INDEX 0x7fffu

struct sym_table {
	Elf_Data *data;		/* the symbols (translated by libelf) */
	size_t count;		/* entries, including the null entry 0 */
	const char *strs;	/* the linked string table */
	size_t strs_len;	/* names must start below this (the last NUL + 1) */
	bool dynamic;
};

struct ver_name {
	unsigned int index;
	const char *name;
};

/* The file-backed part of a PT_LOAD segment. */
struct load_seg {
	uint64_t vaddr;
	uint64_t filesz;
	uint64_t offset;
	bool exec;
};

struct elf_syms {
	Elf *elf;
	int fd;			/* -1 when opened from memory */
	void *mem;		/* our copy for elf_syms_open_mem */
	uint64_t file_size;
	int elf_class;
	unsigned int machine;
	struct sym_table dynsym; /* count 0 when absent */
	struct sym_table symtab;
	Elf_Data *versym;	/* NULL when absent; one entry per .dynsym symbol */
	struct ver_name *vers;	/* .gnu.version_d: index -> name */
	size_t nvers;
	struct load_seg *loads;	/* every PT_LOAD with file bytes */
	size_t nloads;
};

/* A parsed lookup name: "base", "base@VER" or "base@@VER". */
struct query {
	const char *base;
	size_t base_len;
	const char *version;	/* NULL: any version */
	bool want_default;
	bool have;
	bool best_is_ifunc;
	unsigned int score;
	struct elf_sym best;
};

LAST_ERROR_DEFINE(elf_syms)

static const char *elf_msg(void)
{
	const char *m = elf_errmsg(-1);

	return m ? m : "unknown libelf error";
}

/*
 * The string table linked from a section: it must exist, be a SHT_STRTAB and
 * be readable. Names must begin before the last NUL so every one is
 * terminated inside the table.
 */
static int load_strtab(struct elf_syms *e, GElf_Word link, const char *what,
		       const char **strs, size_t *len)
{
	size_t shnum;
	Elf_Scn *scn;
	GElf_Shdr shdr;
	Elf_Data *d;

	if (elf_getshdrnum(e->elf, &shnum) != 0)
		return fail(-EINVAL, "corrupt ELF: section count: %s", elf_msg());
	if (link == 0 || link >= shnum)
		return fail(-EINVAL, "corrupt ELF: %s links to section %u of %zu", what,
			    (unsigned int)link, shnum);
	scn = elf_getscn(e->elf, link);
	if (!scn || !gelf_getshdr(scn, &shdr))
		return fail(-EINVAL, "corrupt ELF: %s string table: %s", what, elf_msg());
	if (shdr.sh_type != SHT_STRTAB || (shdr.sh_flags & SHF_COMPRESSED))
		return fail(-EINVAL, "corrupt ELF: %s links to section %u of type %u", what,
			    (unsigned int)link, (unsigned int)shdr.sh_type);
	d = elf_getdata(scn, NULL);
	if (!d)
		return fail(-EINVAL, "corrupt ELF: %s string table: %s", what, elf_msg());
	*strs = d->d_buf;
	*len = 0;
	if (d->d_buf && d->d_size) {
		const char *nul = memrchr(d->d_buf, '\0', d->d_size);

		if (nul)
			*len = (size_t)(nul - (const char *)d->d_buf) + 1;
	}
	return 0;
}

static int load_sym_table(struct elf_syms *e, Elf_Scn *scn, const GElf_Shdr *shdr,
			  struct sym_table *t, const char *what)
{
	size_t entsize = gelf_fsize(e->elf, ELF_T_SYM, 1, EV_CURRENT);
	Elf_Data *d;
	int rc;

	if (shdr->sh_flags & SHF_COMPRESSED)
		return fail(-EINVAL, "corrupt ELF: %s is compressed", what);
	if (shdr->sh_entsize != 0 && shdr->sh_entsize != entsize)
		return fail(-EINVAL, "corrupt ELF: %s entry size %llu, want %zu", what,
			    (unsigned long long)shdr->sh_entsize, entsize);
	d = elf_getdata(scn, NULL);
	if (!d)
		return fail(-EINVAL, "corrupt ELF: %s: %s", what, elf_msg());
	if (d->d_type != ELF_T_SYM || (d->d_size && !d->d_buf))
		return fail(-EINVAL, "corrupt ELF: %s data of type %d", what, (int)d->d_type);
	if (d->d_size / entsize > ELF_SYMS_MAX_SYMBOLS)
		return fail(-EINVAL, "corrupt ELF: %s has %zu symbols (more than %u)", what,
			    d->d_size / entsize, ELF_SYMS_MAX_SYMBOLS);
	rc = load_strtab(e, shdr->sh_link, what, &t->strs, &t->strs_len);
	if (rc)
		return rc;
	t->data = d;
	t->count = d->d_size / entsize;
	return 0;
}

static int load_versym(struct elf_syms *e, Elf_Scn *scn, const GElf_Shdr *shdr)
{
	Elf_Data *d;

	if (shdr->sh_flags & SHF_COMPRESSED)
		return fail(-EINVAL, "corrupt ELF: .gnu.version is compressed");
	d = elf_getdata(scn, NULL);
	if (!d || d->d_type != ELF_T_HALF || (d->d_size && !d->d_buf))
		return fail(-EINVAL, "corrupt ELF: .gnu.version: %s", elf_msg());
	e->versym = d;
	return 0;
}

/* .gnu.version_d: a chain of Verdef records, each with its name in a Verdaux. */
static int load_verdef(struct elf_syms *e, Elf_Scn *scn, const GElf_Shdr *shdr)
{
	const char *strs;
	size_t strs_len, off = 0, max;
	Elf_Data *d;
	int rc;

	if (shdr->sh_flags & SHF_COMPRESSED)
		return fail(-EINVAL, "corrupt ELF: .gnu.version_d is compressed");
	d = elf_getdata(scn, NULL);
	if (!d || (d->d_size && !d->d_buf))
		return fail(-EINVAL, "corrupt ELF: .gnu.version_d: %s", elf_msg());
	rc = load_strtab(e, shdr->sh_link, ".gnu.version_d", &strs, &strs_len);
	if (rc)
		return rc;
	/* sh_info is the record count, but the data bounds it whatever it says. */
	max = d->d_size / sizeof(GElf_Verdef);
	if (shdr->sh_info < max)
		max = shdr->sh_info;
	if (max == 0)
		return 0;
	e->vers = calloc(max, sizeof(*e->vers));
	if (!e->vers)
		return fail(-ENOMEM, "out of memory");
	for (size_t i = 0; i < max; i++) {
		GElf_Verdef vd;
		GElf_Verdaux va;

		if (!gelf_getverdef(d, (int)off, &vd))
			return fail(-EINVAL, "corrupt ELF: .gnu.version_d record %zu: %s", i,
				    elf_msg());
		if (vd.vd_cnt > 0 && !(vd.vd_flags & VER_FLG_BASE)) {
			if (vd.vd_aux > d->d_size - off || vd.vd_aux > INT32_MAX - off ||
			    !gelf_getverdaux(d, (int)(off + vd.vd_aux), &va))
				return fail(-EINVAL,
					    "corrupt ELF: .gnu.version_d record %zu name", i);
			if (va.vda_name < strs_len) {
				e->vers[e->nvers].index = vd.vd_ndx & VERSYM_INDEX;
				e->vers[e->nvers].name = strs + va.vda_name;
				e->nvers++;
			}
		}
		if (vd.vd_next == 0)
			break;
		/* Offsets only grow, so the walk ends within max steps. */
		if (vd.vd_next > d->d_size - off)
			return fail(-EINVAL, "corrupt ELF: .gnu.version_d record %zu link", i);
		off += vd.vd_next;
		if (off > INT32_MAX)
			return fail(-EINVAL, "corrupt ELF: .gnu.version_d too large");
	}
	return 0;
}

static int load_sections(struct elf_syms *e)
{
	Elf_Scn *scn = NULL, *versym = NULL, *verdef = NULL;
	GElf_Shdr versym_shdr = { 0 }, verdef_shdr = { 0 };
	size_t shnum;
	int rc;

	if (elf_getshdrnum(e->elf, &shnum) != 0)
		return fail(-EINVAL, "corrupt ELF: section count: %s", elf_msg());
	/* elf_nextscn walks libelf's own table of shnum sections. */
	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr shdr;

		if (!gelf_getshdr(scn, &shdr))
			return fail(-EINVAL, "corrupt ELF: section header %zu: %s",
				    elf_ndxscn(scn), elf_msg());
		switch (shdr.sh_type) {
		case SHT_DYNSYM:
			if (e->dynsym.data)
				break;
			rc = load_sym_table(e, scn, &shdr, &e->dynsym, ".dynsym");
			if (rc)
				return rc;
			e->dynsym.dynamic = true;
			break;
		case SHT_SYMTAB:
			if (e->symtab.data)
				break;
			rc = load_sym_table(e, scn, &shdr, &e->symtab, ".symtab");
			if (rc)
				return rc;
			break;
		case SHT_GNU_versym:
			if (!versym) {
				versym = scn;
				versym_shdr = shdr;
			}
			break;
		case SHT_GNU_verdef:
			if (!verdef) {
				verdef = scn;
				verdef_shdr = shdr;
			}
			break;
		}
	}

	/* Versions only mean something next to the .dynsym they describe. */
	if (versym && e->dynsym.data) {
		rc = load_versym(e, versym, &versym_shdr);
		if (rc)
			return rc;
		if (e->versym->d_size / sizeof(GElf_Versym) != e->dynsym.count)
			return fail(-EINVAL, "corrupt ELF: .gnu.version has %zu entries for %zu symbols",
				    e->versym->d_size / sizeof(GElf_Versym), e->dynsym.count);
		if (verdef) {
			rc = load_verdef(e, verdef, &verdef_shdr);
			if (rc)
				return rc;
		}
	}
	return 0;
}

static int load_segments(struct elf_syms *e)
{
	size_t phnum;

	if (elf_getphdrnum(e->elf, &phnum) != 0)
		return fail(-EINVAL, "corrupt ELF: program header count: %s", elf_msg());
	if (phnum > ELF_SYMS_MAX_PHDRS)
		return fail(-EINVAL, "corrupt ELF: %zu program headers", phnum);
	if (phnum == 0)
		return 0;
	e->loads = calloc(phnum, sizeof(*e->loads));
	if (!e->loads)
		return fail(-ENOMEM, "out of memory");
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e->elf, (int)i, &ph))
			return fail(-EINVAL, "corrupt ELF: program header %zu: %s", i, elf_msg());
		if (ph.p_type != PT_LOAD || ph.p_filesz == 0)
			continue;
		e->loads[e->nloads].vaddr = ph.p_vaddr;
		e->loads[e->nloads].filesz = ph.p_filesz;
		e->loads[e->nloads].offset = ph.p_offset;
		e->loads[e->nloads].exec = ph.p_flags & PF_X;
		e->nloads++;
	}
	return 0;
}

/* Checks the identification bytes: -ENOEXEC when not ELF, -EINVAL when it is a broken one. */
static int check_ident(const unsigned char *id, size_t len)
{
	if (len < SELFMAG || memcmp(id, ELFMAG, SELFMAG) != 0)
		return fail(-ENOEXEC, "not an ELF file");
	if (len < EI_NIDENT)
		return fail(-EINVAL, "corrupt ELF: truncated at %zu bytes", len);
	if (id[EI_CLASS] != ELFCLASS32 && id[EI_CLASS] != ELFCLASS64)
		return fail(-EINVAL, "corrupt ELF: class %u", id[EI_CLASS]);
	if (id[EI_DATA] != ELFDATA2LSB && id[EI_DATA] != ELFDATA2MSB)
		return fail(-EINVAL, "corrupt ELF: data encoding %u", id[EI_DATA]);
	return 0;
}

static bool table_fits(uint64_t off, uint64_t num, uint64_t entsize, uint64_t size)
{
	if (num == 0)
		return true;
	return off <= size && entsize != 0 && num <= (size - off) / entsize;
}

/*
 * libelf quietly reports no sections when the section header table is past
 * the end of the file, and fewer program headers when they do not fit: a
 * truncated file would look like a valid one without symbols. Check the
 * tables against the file ourselves.
 */
static int check_tables(struct elf_syms *e, const GElf_Ehdr *eh)
{
	size_t phnum, shnum;

	if (e->file_size < gelf_fsize(e->elf, ELF_T_EHDR, 1, EV_CURRENT))
		return fail(-EINVAL, "corrupt ELF: truncated header");
	if (elf_getphdrnum(e->elf, &phnum) != 0)
		return fail(-EINVAL, "corrupt ELF: program header count: %s", elf_msg());
	if (eh->e_phnum != PN_XNUM && phnum != eh->e_phnum)
		return fail(-EINVAL, "corrupt ELF: %u program headers, %zu in the file",
			    (unsigned int)eh->e_phnum, phnum);
	if (phnum && (eh->e_phentsize != gelf_fsize(e->elf, ELF_T_PHDR, 1, EV_CURRENT) ||
		      !table_fits(eh->e_phoff, phnum, eh->e_phentsize, e->file_size)))
		return fail(-EINVAL, "corrupt ELF: program headers past the end of the file");

	if (elf_getshdrnum(e->elf, &shnum) != 0)
		return fail(-EINVAL, "corrupt ELF: section count: %s", elf_msg());
	if (eh->e_shoff == 0) {
		if (eh->e_shnum != 0 || shnum != 0)
			return fail(-EINVAL, "corrupt ELF: sections without a section header table");
		return 0; /* no sections at all (sstrip): no symbols either */
	}
	if (shnum == 0 || (eh->e_shnum != 0 && shnum != eh->e_shnum))
		return fail(-EINVAL, "corrupt ELF: %u sections, %zu in the file",
			    (unsigned int)eh->e_shnum, shnum);
	if (eh->e_shentsize != gelf_fsize(e->elf, ELF_T_SHDR, 1, EV_CURRENT) ||
	    !table_fits(eh->e_shoff, shnum, eh->e_shentsize, e->file_size))
		return fail(-EINVAL, "corrupt ELF: section headers past the end of the file");
	return 0;
}

/* Takes e with e->elf (or NULL when elf_begin failed) and fills in the rest. */
static int setup(struct elf_syms *e)
{
	GElf_Ehdr eh;
	int rc;

	if (!e->elf)
		return fail(-EINVAL, "corrupt ELF: %s", elf_msg());
	if (elf_kind(e->elf) != ELF_K_ELF)
		return fail(-EINVAL, "corrupt ELF: not readable as ELF");
	if (!gelf_getehdr(e->elf, &eh))
		return fail(-EINVAL, "corrupt ELF: header: %s", elf_msg());
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
		return fail(-ENOEXEC, "ELF type %u is neither an executable nor a shared object",
			    (unsigned int)eh.e_type);
	e->elf_class = gelf_getclass(e->elf);
	e->machine = eh.e_machine;
	rc = check_tables(e, &eh);
	if (rc)
		return rc;
	rc = load_segments(e);
	if (rc)
		return rc;
	return load_sections(e);
}

static int init_libelf(void)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return fail(-ENOSYS, "libelf: %s", elf_msg());
	return 0;
}

static struct elf_syms *alloc_handle(void)
{
	struct elf_syms *e = calloc(1, sizeof(*e));

	if (e)
		e->fd = -1;
	return e;
}

/* Takes ownership of fd. */
static int open_owned_fd(int fd, struct elf_syms **out)
{
	unsigned char id[EI_NIDENT];
	struct elf_syms *e;
	struct stat st;
	ssize_t n;
	int rc;

	if (fstat(fd, &st) != 0) {
		rc = fail(-errno, "fstat: %s", strerror(errno));
		close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return fail(-ENOEXEC, "not a regular file");
	}
	do
		n = pread(fd, id, sizeof(id), 0);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		rc = fail(-errno, "read: %s", strerror(errno));
		close(fd);
		return rc;
	}
	rc = check_ident(id, (size_t)n);
	if (!rc)
		rc = init_libelf();
	if (rc) {
		close(fd);
		return rc;
	}
	e = alloc_handle();
	if (!e) {
		close(fd);
		return fail(-ENOMEM, "out of memory");
	}
	e->fd = fd;
	e->file_size = (uint64_t)st.st_size;
	e->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	rc = setup(e);
	if (rc) {
		elf_syms_close(e);
		return rc;
	}
	*out = e;
	return 0;
}

int elf_syms_open(const char *path, struct elf_syms **out)
{
	int fd;

	*out = NULL;
	if (!path)
		return fail(-EINVAL, "no path");
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return fail(-errno, "%s: %s", path, strerror(errno));
	return open_owned_fd(fd, out);
}

int elf_syms_open_fd(int fd, struct elf_syms **out)
{
	int dup_fd;

	*out = NULL;
	dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dup_fd < 0)
		return fail(-errno, "dup: %s", strerror(errno));
	return open_owned_fd(dup_fd, out);
}

int elf_syms_open_mem(const void *buf, size_t len, struct elf_syms **out)
{
	struct elf_syms *e;
	int rc;

	*out = NULL;
	if (!buf && len)
		return fail(-EINVAL, "no buffer");
	rc = check_ident(buf, len);
	if (!rc)
		rc = init_libelf();
	if (rc)
		return rc;
	e = alloc_handle();
	if (!e)
		return fail(-ENOMEM, "out of memory");
	e->mem = malloc(len);
	if (!e->mem) {
		free(e);
		return fail(-ENOMEM, "out of memory");
	}
	memcpy(e->mem, buf, len);
	e->file_size = len;
	e->elf = elf_memory(e->mem, len);
	rc = setup(e);
	if (rc) {
		elf_syms_close(e);
		return rc;
	}
	*out = e;
	return 0;
}

void elf_syms_close(struct elf_syms *e)
{
	if (!e)
		return;
	if (e->elf)
		elf_end(e->elf);
	if (e->fd >= 0)
		close(e->fd);
	free(e->mem);
	free(e->vers);
	free(e->loads);
	free(e);
}

bool elf_syms_stripped(const struct elf_syms *e)
{
	return e->symtab.count <= 1;
}

int elf_syms_class(const struct elf_syms *e)
{
	return e->elf_class;
}

unsigned int elf_syms_machine(const struct elf_syms *e)
{
	return e->machine;
}

static const char *version_name(const struct elf_syms *e, unsigned int index)
{
	for (size_t i = 0; i < e->nvers; i++)
		if (e->vers[i].index == index)
			return e->vers[i].name;
	return NULL;
}

static unsigned int binding_rank(unsigned int bind)
{
	switch (bind) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		return 2;
	case STB_WEAK:
		return 1;
	default:
		return 0;
	}
}

/* Offers symbol i of t (whose name is nm) to q; keeps it when it is the best yet. */
static void consider(const struct elf_syms *e, const struct sym_table *t, size_t i,
		     const GElf_Sym *sym, const char *nm, struct query *q)
{
	const char *version = NULL;
	bool is_default = true;
	const char *at = nm + q->base_len;
	unsigned int score;

	if (*at == '@') {
		/* .symtab spelling: "name@VER" (non-default) or "name@@VER" (default) */
		is_default = at[1] == '@';
		version = at + (is_default ? 2 : 1);
	} else if (t->dynamic && e->versym) {
		GElf_Versym vs;

		if (gelf_getversym(e->versym, (int)i, &vs)) {
			is_default = !(vs & VERSYM_HIDDEN);
			if ((vs & VERSYM_INDEX) > VER_NDX_GLOBAL)
				version = version_name(e, vs & VERSYM_INDEX);
		}
	}
	if (q->version && (!version || strcmp(version, q->version) != 0))
		return;
	if (q->want_default && !is_default)
		return;

	score = (is_default ? 8u : 0u) + binding_rank(GELF_ST_BIND(sym->st_info)) * 2u +
		(t->dynamic ? 1u : 0u);
	if (q->have && score <= q->score)
		return;
	q->have = true;
	q->best_is_ifunc = GELF_ST_TYPE(sym->st_info) == STT_GNU_IFUNC;
	q->score = score;
	q->best = (struct elf_sym){
		.addr = sym->st_value,
		.size = sym->st_size,
		.version = version,
		.default_version = is_default,
		.dynamic = t->dynamic,
		.binding = (uint8_t)GELF_ST_BIND(sym->st_info),
	};
	if (e->machine == EM_ARM)
		q->best.addr &= ~(uint64_t)1; /* Thumb functions have bit 0 set */
}

static void scan_table(const struct elf_syms *e, const struct sym_table *t, struct query *qs,
		       size_t n)
{
	for (size_t i = 1; i < t->count; i++) {
		GElf_Sym sym;
		const char *nm;

		if (!gelf_getsym(t->data, (int)i, &sym))
			break; /* past the data: cannot happen with count from d_size */
		unsigned int type = GELF_ST_TYPE(sym.st_info);

		/* ifuncs compete so that one never loses to an older plain version */
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF)
			continue;
		if (sym.st_name == 0 || sym.st_name >= t->strs_len)
			continue; /* a name outside its table: skip just this entry */
		nm = t->strs + sym.st_name;
		for (size_t j = 0; j < n; j++) {
			struct query *q = &qs[j];

			if (!q->base || nm[0] != q->base[0] ||
			    strncmp(nm, q->base, q->base_len) != 0)
				continue;
			if (nm[q->base_len] != '\0' && nm[q->base_len] != '@')
				continue;
			consider(e, t, i, &sym, nm, q);
		}
	}
}

/* The file offset of addr: inside the file-backed part of an executable PT_LOAD. */
static int addr_to_offset(const struct elf_syms *e, uint64_t addr, uint64_t *offset)
{
	for (size_t i = 0; i < e->nloads; i++) {
		const struct load_seg *l = &e->loads[i];
		uint64_t delta;

		if (!l->exec || addr < l->vaddr || addr - l->vaddr >= l->filesz)
			continue;
		delta = addr - l->vaddr;
		if (l->offset > e->file_size || delta >= e->file_size - l->offset)
			return -EINVAL;
		*offset = l->offset + delta;
		return 0;
	}
	return -EINVAL;
}

static void parse_query(const char *name, struct query *q)
{
	const char *at;

	memset(q, 0, sizeof(*q));
	if (!name || !name[0] || name[0] == '@')
		return; /* base stays NULL: matches nothing, reported -EINVAL */
	q->base = name;
	at = strchr(name, '@');
	if (!at) {
		q->base_len = strlen(name);
		return;
	}
	q->base_len = (size_t)(at - name);
	q->want_default = at[1] == '@';
	q->version = at + (q->want_default ? 2 : 1);
}

size_t elf_syms_find_many(struct elf_syms *e, const char *const *names, size_t n,
			  struct elf_sym *out, int *rc)
{
	struct query small[8], *qs = small;
	size_t found = 0;
	bool failed = false;

	if (n > sizeof(small) / sizeof(small[0])) {
		qs = calloc(n, sizeof(*qs));
		if (!qs) {
			for (size_t j = 0; j < n; j++)
				rc[j] = -ENOMEM;
			fail(-ENOMEM, "out of memory");
			return 0;
		}
	}
	for (size_t j = 0; j < n; j++)
		parse_query(names[j], &qs[j]);

	scan_table(e, &e->dynsym, qs, n);
	scan_table(e, &e->symtab, qs, n);

	for (size_t j = 0; j < n; j++) {
		struct query *q = &qs[j];
		int r;

		memset(&out[j], 0, sizeof(out[j]));
		if (!q->base) {
			r = -EINVAL;
			if (!failed)
				fail(r, "invalid symbol name \"%s\"", names[j] ? names[j] : "(null)");
		} else if (!q->have) {
			r = -ENOENT;
			if (!failed)
				fail(r, "%s: no such function symbol", names[j]);
		} else if (q->best_is_ifunc) {
			r = -EOPNOTSUPP;
			if (!failed)
				fail(r, "%s: is an ifunc (its address is the resolver's)", names[j]);
		} else {
			r = addr_to_offset(e, q->best.addr, &q->best.offset);
			if (r && !failed)
				fail(r, "%s: address 0x%llx is not in an executable segment of the file",
				     names[j], (unsigned long long)q->best.addr);
		}
		if (r == 0) {
			out[j] = q->best;
			found++;
		} else {
			failed = true;
		}
		rc[j] = r;
	}
	if (qs != small)
		free(qs);
	return found;
}

int elf_syms_find(struct elf_syms *e, const char *name, struct elf_sym *out)
{
	int rc;

	elf_syms_find_many(e, &name, 1, out, &rc);
	return rc;
}

int elf_syms_locate(const struct elf_syms *e, uint64_t addr, struct elf_syms_loc *out)
{
	memset(out, 0, sizeof(*out));
	/* PT_LOADs do not overlap in a loadable file; the first one wins if they do. */
	for (size_t i = 0; i < e->nloads; i++) {
		const struct load_seg *l = &e->loads[i];
		uint64_t delta = addr - l->vaddr;

		if (addr < l->vaddr || delta >= l->filesz)
			continue;
		if (l->offset > e->file_size || delta >= e->file_size - l->offset)
			return fail(-EINVAL, "corrupt ELF: address 0x%llx is past the end of the file",
				    (unsigned long long)addr);
		out->offset = l->offset + delta;
		out->avail = l->filesz - delta;
		if (out->avail > e->file_size - out->offset)
			out->avail = e->file_size - out->offset; /* a segment cut short by the file */
		out->exec = l->exec;
		return 0;
	}
	return fail(-EINVAL, "address 0x%llx is not in the file part of a loadable segment",
		    (unsigned long long)addr);
}

int elf_syms_read(struct elf_syms *e, uint64_t off, void *buf, size_t len)
{
	size_t done = 0;

	if (off > e->file_size || len > e->file_size - off)
		return fail(-EINVAL, "corrupt ELF: %zu bytes at offset 0x%llx are past the end of "
				     "the file",
			    len, (unsigned long long)off);
	if (e->fd < 0) {
		memcpy(buf, (const uint8_t *)e->mem + off, len);
		return 0;
	}
	while (done < len) {
		ssize_t n = pread(e->fd, (uint8_t *)buf + done, len - done, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail(-errno, "read: %s", strerror(errno));
		if (n == 0)
			return fail(-EINVAL, "the file shrank while being read");
		done += (size_t)n;
	}
	return 0;
}

int elf_syms_section(struct elf_syms *e, const char *name, uint64_t *addr, uint64_t *size)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(e->elf, &shstrndx) != 0)
		return fail(-EINVAL, "corrupt ELF: section name table: %s", elf_msg());
	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr shdr;
		const char *nm;

		if (!gelf_getshdr(scn, &shdr))
			return fail(-EINVAL, "corrupt ELF: section header %zu: %s",
				    elf_ndxscn(scn), elf_msg());
		if (!(shdr.sh_flags & SHF_ALLOC) || shdr.sh_type == SHT_NULL)
			continue;
		/* libelf bounds the name by its string table; NULL for a bad one */
		nm = elf_strptr(e->elf, shstrndx, shdr.sh_name);
		if (nm && strcmp(nm, name) == 0) {
			*addr = shdr.sh_addr;
			*size = shdr.sh_size;
			return 0;
		}
	}
	return fail(-ENOENT, "no section %s", name);
}

int elf_syms_segment(struct elf_syms *e, uint32_t p_type, uint64_t *addr, uint64_t *size)
{
	size_t phnum;

	/* phnum was bounded by ELF_SYMS_MAX_PHDRS and checked against the file at open */
	if (elf_getphdrnum(e->elf, &phnum) != 0)
		return fail(-EINVAL, "corrupt ELF: program header count: %s", elf_msg());
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e->elf, (int)i, &ph))
			return fail(-EINVAL, "corrupt ELF: program header %zu: %s", i, elf_msg());
		if (ph.p_type == p_type) {
			*addr = ph.p_vaddr;
			*size = ph.p_filesz;
			return 0;
		}
	}
	return fail(-ENOENT, "no program header of type 0x%x", (unsigned int)p_type);
}

static bool func_at_in(const struct elf_syms *e, const struct sym_table *t, uint64_t addr,
		       struct elf_sym *out)
{
	for (size_t i = 1; i < t->count; i++) {
		GElf_Sym sym;

		if (!gelf_getsym(t->data, (int)i, &sym))
			break;
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF ||
		    sym.st_size == 0)
			continue;
		if (addr < sym.st_value || addr - sym.st_value >= sym.st_size)
			continue;
		*out = (struct elf_sym){
			.addr = sym.st_value,
			.size = sym.st_size,
			.dynamic = t->dynamic,
			.default_version = true,
			.binding = (uint8_t)GELF_ST_BIND(sym.st_info),
		};
		if (e->machine == EM_ARM)
			out->addr &= ~(uint64_t)1;
		return true;
	}
	return false;
}

int elf_syms_func_at(struct elf_syms *e, uint64_t addr, struct elf_sym *out)
{
	memset(out, 0, sizeof(*out));
	if (!func_at_in(e, &e->dynsym, addr, out) && !func_at_in(e, &e->symtab, addr, out))
		return fail(-ENOENT, "no function symbol holds address 0x%llx",
			    (unsigned long long)addr);
	if (addr_to_offset(e, out->addr, &out->offset) != 0)
		return fail(-EINVAL, "address 0x%llx is not in an executable segment of the file",
			    (unsigned long long)out->addr);
	return 0;
}
