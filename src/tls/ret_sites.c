#include "ret_sites.h"

#include "ret_sites_walk.h"

#include "util/last_error.h"

#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tls/eh_frame.h"

/* Bytes of unwind tables read at most (when .eh_frame's size is not known,
 * it is read to the end of its segment). */
#define MAX_EH_BYTES (64u << 20)

/* Sections of PLT stubs: a jump there leaves for another library. */
static const char *const plt_sections[] = { ".plt", ".plt.sec", ".plt.got", ".iplt" };
#define N_PLT (sizeof(plt_sections) / sizeof(plt_sections[0]))

struct walk {
	struct elf_syms *e;
	struct ret_sites *out;
	const struct ret_sites_decoder *dec;
	csh cs;
	cs_insn *insn;
	struct extent ext[RET_SITES_MAX_FUNCS]; /* the entry, then targets as found */
	size_t n_ext;
	bool plt_loaded;
	uint64_t plt_addr[N_PLT], plt_size[N_PLT];
	bool eh_loaded;
	struct eh_frame_image eh;
	uint8_t *eh_bufs[2];	/* the image's bytes, ours to free */
};

LAST_ERROR_DEFINE(ret_sites)

/* The instruction sets whose code is read, by ELF machine. */
static const struct ret_sites_decoder *const decoders[] = { &ret_sites_x86_64, &ret_sites_aarch64 };

int ret_sites_walk_fail(int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return rc;
}

csh ret_sites_walk_cs(const struct walk *w)
{
	return w->cs;
}

cs_insn *ret_sites_walk_insn(const struct walk *w)
{
	return w->insn;
}

struct elf_syms *ret_sites_walk_elf(const struct walk *w)
{
	return w->e;
}

/* Passes on an error of a module below, its message prefixed with what we did. */
static int fail_from(int rc, const char *what, const char *msg)
{
	return fail(rc, "%s: %s", what, msg);
}

/* ---- unwind tables -------------------------------------------------------- */

/* len bytes at addr, read from the file into a new buffer (never mapped: see elf_syms_read). */
static int read_at(struct elf_syms *e, uint64_t addr, uint64_t len, const char *what,
		   uint8_t **out)
{
	struct elf_syms_loc loc;
	uint8_t *buf;
	int rc;

	*out = NULL;
	rc = elf_syms_locate(e, addr, &loc);
	if (rc)
		return fail_from(rc, what, elf_syms_last_error());
	if (loc.avail < len)
		return fail(-EINVAL, "corrupt ELF: %s (%llu bytes at 0x%llx) is cut short by its "
				     "segment or the file",
			    what, (unsigned long long)len, (unsigned long long)addr);
	buf = malloc(len ? (size_t)len : 1);
	if (!buf)
		return fail(-ENOMEM, "out of memory");
	rc = elf_syms_read(e, loc.offset, buf, (size_t)len);
	if (rc) {
		free(buf);
		return fail_from(rc, what, elf_syms_last_error());
	}
	*out = buf;
	return 0;
}

static void free_eh(struct eh_frame_image *img, uint8_t **bufs)
{
	free(bufs[0]);
	free(bufs[1]);
	bufs[0] = bufs[1] = NULL;
	memset(img, 0, sizeof(*img));
}

/*
 * The header is found as the loader's unwinder finds it (PT_GNU_EH_FRAME,
 * so section headers are not needed), else by section name; .eh_frame from
 * the header's pointer, bounded by its section when there is one, else by
 * its segment. bufs[] get the buffers img points into.
 */
static int load_eh(struct elf_syms *e, struct eh_frame_image *img, uint8_t **bufs)
{
	struct elf_syms_loc loc;
	uint64_t addr, size, frame_addr, frame_len, sec_addr, sec_size;
	int rc;

	memset(img, 0, sizeof(*img));
	bufs[0] = bufs[1] = NULL;
	rc = elf_syms_segment(e, PT_GNU_EH_FRAME, &addr, &size);
	if (rc == -ENOENT)
		rc = elf_syms_section(e, ".eh_frame_hdr", &addr, &size);
	if (rc == 0) {
		if (size > MAX_EH_BYTES)
			return fail(-E2BIG, ".eh_frame_hdr of %llu bytes", (unsigned long long)size);
		rc = read_at(e, addr, size, ".eh_frame_hdr", &bufs[0]);
		if (rc)
			return rc;
		img->hdr = bufs[0];
		img->hdr_len = (size_t)size;
		img->hdr_addr = addr;
		rc = eh_frame_hdr_frame_addr(img->hdr, img->hdr_len, addr, &frame_addr);
		if (rc) {
			free_eh(img, bufs);
			return fail_from(rc, "unwind tables", eh_frame_last_error());
		}
	} else if (rc == -ENOENT) {
		rc = elf_syms_section(e, ".eh_frame", &frame_addr, &size);
		if (rc == -ENOENT)
			return 0; /* no unwind tables at all (Go) */
		if (rc)
			return fail_from(rc, "unwind tables", elf_syms_last_error());
	} else {
		return fail_from(rc, "unwind tables", elf_syms_last_error());
	}

	rc = elf_syms_locate(e, frame_addr, &loc);
	if (rc) {
		free_eh(img, bufs);
		return fail_from(rc, ".eh_frame", elf_syms_last_error());
	}
	frame_len = loc.avail;
	if (elf_syms_section(e, ".eh_frame", &sec_addr, &sec_size) == 0 &&
	    sec_addr == frame_addr && sec_size <= frame_len)
		frame_len = sec_size;
	if (frame_len > MAX_EH_BYTES)
		frame_len = MAX_EH_BYTES; /* a table larger than that fails as truncated */
	rc = read_at(e, frame_addr, frame_len, ".eh_frame", &bufs[1]);
	if (rc) {
		free_eh(img, bufs);
		return rc;
	}
	img->frame = bufs[1];
	img->frame_len = (size_t)frame_len;
	img->frame_addr = frame_addr;
	return 0;
}

static int extent_with(struct elf_syms *e, const struct eh_frame_image *img, uint64_t addr,
		       uint64_t *start, uint64_t *size)
{
	struct eh_frame_fde fde;
	struct elf_sym sym;
	char msg[sizeof(last_error)];
	int rc = -ENOENT;

	msg[0] = '\0';
	if (img->frame) {
		rc = eh_frame_find(img, addr, &fde);
		if (rc == 0) {
			*start = fde.pc_begin;
			*size = fde.pc_range;
			return 0;
		}
		if (rc != -ENOENT)
			return fail_from(rc, "unwind tables", eh_frame_last_error());
		snprintf(msg, sizeof(msg), "%s", eh_frame_last_error());
	}
	rc = elf_syms_func_at(e, addr, &sym);
	if (rc == 0) {
		*start = sym.addr;
		*size = sym.size;
		return 0;
	}
	if (rc != -ENOENT)
		return fail_from(rc, "symbols", elf_syms_last_error());
	return fail(-ENOENT, "no FDE (%s) and no function symbol holds 0x%llx",
		    msg[0] ? msg : "no unwind tables", (unsigned long long)addr);
}

int ret_sites_extent(struct elf_syms *e, uint64_t addr, uint64_t *start, uint64_t *size)
{
	struct eh_frame_image img;
	uint8_t *bufs[2];
	int rc = load_eh(e, &img, bufs);

	if (rc)
		return rc;
	rc = extent_with(e, &img, addr, start, size);
	free_eh(&img, bufs);
	return rc;
}

/* ---- the walk -------------------------------------------------------------- */

bool ret_sites_in_extent(const struct extent *x, uint64_t addr)
{
	return addr >= x->start && addr - x->start < x->size;
}

#define in_extent ret_sites_in_extent

int ret_sites_walk_add(struct walk *w, uint64_t offset)
{
	struct ret_sites *o = w->out;

	for (size_t i = 0; i < o->n; i++)
		if (o->offsets[i] == offset)
			return 0; /* extents may overlap */
	if (o->n == RET_SITES_MAX)
		return fail(-E2BIG, "more than %d return sites", RET_SITES_MAX);
	o->offsets[o->n++] = offset;
	return 0;
}

static int load_plt(struct walk *w)
{
	for (size_t i = 0; i < N_PLT; i++) {
		int rc = elf_syms_section(w->e, plt_sections[i], &w->plt_addr[i], &w->plt_size[i]);

		if (rc == -ENOENT) {
			w->plt_addr[i] = w->plt_size[i] = 0;
		} else if (rc) {
			return fail_from(rc, "sections", elf_syms_last_error());
		}
	}
	w->plt_loaded = true;
	return 0;
}

int ret_sites_walk_follow(struct walk *w, const struct extent *x, uint64_t from, uint64_t target)
{
	uint64_t start, size;
	int rc;

	if (in_extent(x, target))
		return 0;
	for (size_t i = 0; i < w->n_ext; i++)
		if (in_extent(&w->ext[i], target))
			return 0; /* seen or queued: a loop between hot and cold parts */

	if (!w->plt_loaded && (rc = load_plt(w)))
		return rc;
	for (size_t i = 0; i < N_PLT; i++)
		if (target >= w->plt_addr[i] && target - w->plt_addr[i] < w->plt_size[i])
			return fail(-ENOTSUP, "tail call at 0x%llx into the PLT (%s, 0x%llx): the call "
					      "returns from another library",
				    (unsigned long long)from, plt_sections[i],
				    (unsigned long long)target);

	if (x->depth >= RET_SITES_MAX_DEPTH)
		return fail(-E2BIG, "tail jump at 0x%llx to 0x%llx: more than %d tail jumps in a row",
			    (unsigned long long)from, (unsigned long long)target,
			    RET_SITES_MAX_DEPTH);
	if (w->n_ext == RET_SITES_MAX_FUNCS)
		return fail(-E2BIG, "tail jumps into more than %d functions", RET_SITES_MAX_FUNCS);
	if (!w->eh_loaded) {
		rc = load_eh(w->e, &w->eh, w->eh_bufs);
		if (rc)
			return rc;
		w->eh_loaded = true;
	}
	rc = extent_with(w->e, &w->eh, target, &start, &size);
	if (rc) {
		char msg[sizeof(last_error)];

		snprintf(msg, sizeof(msg), "%s", last_error);
		return fail(rc, "tail jump at 0x%llx to 0x%llx: %s", (unsigned long long)from,
			    (unsigned long long)target, msg);
	}
	w->ext[w->n_ext++] = (struct extent){ start, size, x->depth + 1 };
	return 0;
}

static int decode_extent(struct walk *w, const struct extent *x)
{
	struct elf_syms_loc loc;
	uint8_t *bytes;
	int rc;

	if (x->size > RET_SITES_MAX_FN_SIZE)
		return fail(-E2BIG, "the function at 0x%llx is %llu bytes (more than %u)",
			    (unsigned long long)x->start, (unsigned long long)x->size,
			    RET_SITES_MAX_FN_SIZE);
	rc = elf_syms_locate(w->e, x->start, &loc);
	if (rc)
		return fail_from(rc, "function", elf_syms_last_error());
	if (!loc.exec || loc.avail < x->size)
		return fail(-EINVAL, "the function at 0x%llx (%llu bytes) is not inside the "
				     "executable part of the file",
			    (unsigned long long)x->start, (unsigned long long)x->size);
	rc = read_at(w->e, x->start, x->size, "function", &bytes);
	if (rc)
		return rc;
	rc = w->dec->decode(w, x, bytes, loc.offset);
	free(bytes);
	return rc;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int walk_all(struct walk *w)
{
	/* n_ext grows while we go: breadth first, every extent once */
	for (size_t i = 0; i < w->n_ext; i++) {
		struct extent x = w->ext[i];
		int rc = decode_extent(w, &x);

		if (rc)
			return rc;
	}
	return 0;
}

int ret_sites_find(struct elf_syms *e, const struct elf_sym *fn, struct ret_sites *out)
{
	struct walk *w;
	uint64_t start = fn->addr, size = fn->size;
	const struct ret_sites_decoder *dec = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < sizeof(decoders) / sizeof(decoders[0]); i++)
		if (elf_syms_machine(e) == decoders[i]->machine)
			dec = decoders[i];
	if (elf_syms_class(e) != ELFCLASS64 || !dec)
		return fail(-ENOTSUP, "return sites are found in x86-64 and arm64 code only "
				      "(ELF class %u, machine %u)",
			    elf_syms_class(e), elf_syms_machine(e));
	if (size == 0) {
		rc = ret_sites_extent(e, fn->addr, &start, &size);
		if (rc)
			return rc;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return fail(-ENOMEM, "out of memory");
	w->e = e;
	w->dec = dec;
	w->out = out;
	w->ext[0] = (struct extent){ start, size, 0 };
	w->n_ext = 1;
	if (cs_open(dec->arch, dec->mode, &w->cs) != CS_ERR_OK) {
		free(w);
		return fail(-ENOTSUP, "capstone cannot decode %s", dec->name);
	}
	cs_option(w->cs, CS_OPT_DETAIL, CS_OPT_ON);
	w->insn = cs_malloc(w->cs);
	if (!w->insn)
		rc = fail(-ENOMEM, "out of memory");
	else
		rc = walk_all(w);
	if (w->insn)
		cs_free(w->insn, 1);
	cs_close(&w->cs);
	free_eh(&w->eh, w->eh_bufs);
	out->functions = (unsigned int)w->n_ext;
	free(w);
	if (rc) {
		memset(out, 0, sizeof(*out));
		return rc;
	}
	qsort(out->offsets, out->n, sizeof(out->offsets[0]), cmp_u64);
	return 0;
}
