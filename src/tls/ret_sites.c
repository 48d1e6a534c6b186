#include "ret_sites.h"

#include "util/last_error.h"

#include <capstone/capstone.h>
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tls/eh_frame.h"

/* Instructions looked back over to tell a jump table from a tail call. */
#define RING 8

/* Bytes of unwind tables read at most (when .eh_frame's size is not known,
 * it is read to the end of its segment). */
#define MAX_EH_BYTES (64u << 20)

/* Sections of PLT stubs: a jump there leaves for another library. */
static const char *const plt_sections[] = { ".plt", ".plt.sec", ".plt.got", ".iplt" };
#define N_PLT (sizeof(plt_sections) / sizeof(plt_sections[0]))

struct extent {
	uint64_t start;
	uint64_t size;
	unsigned int depth;	/* tail jumps from the entry function */
};

/* What the look-back needs of an instruction already decoded. */
struct rec {
	uint64_t next;		/* address of the following instruction */
	unsigned int id;
	bool barrier;		/* call, ret, jmp: what came before need not flow here */
	uint8_t nops;
	cs_x86_op ops[2];
};

struct walk {
	struct elf_syms *e;
	struct ret_sites *out;
	csh cs;
	cs_insn *insn;
	struct extent ext[RET_SITES_MAX_FUNCS]; /* the entry, then targets as found */
	size_t n_ext;
	bool plt_loaded;
	uint64_t plt_addr[N_PLT], plt_size[N_PLT];
	bool eh_loaded;
	struct eh_frame_image eh;
	uint8_t *eh_bufs[2];	/* the image's bytes, ours to free */
	struct rec ring[RING];	/* the last instructions of the current extent */
	size_t n_rec;
};

LAST_ERROR_DEFINE(ret_sites)

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

/* ---- decoding ------------------------------------------------------------- */

/* The 64-bit register a general-purpose register is part of; others unchanged. */
static x86_reg reg64(x86_reg r)
{
	switch (r) {
	case X86_REG_EAX: case X86_REG_AX: case X86_REG_AL: case X86_REG_AH: return X86_REG_RAX;
	case X86_REG_EBX: case X86_REG_BX: case X86_REG_BL: case X86_REG_BH: return X86_REG_RBX;
	case X86_REG_ECX: case X86_REG_CX: case X86_REG_CL: case X86_REG_CH: return X86_REG_RCX;
	case X86_REG_EDX: case X86_REG_DX: case X86_REG_DL: case X86_REG_DH: return X86_REG_RDX;
	case X86_REG_ESI: case X86_REG_SI: case X86_REG_SIL: return X86_REG_RSI;
	case X86_REG_EDI: case X86_REG_DI: case X86_REG_DIL: return X86_REG_RDI;
	case X86_REG_EBP: case X86_REG_BP: case X86_REG_BPL: return X86_REG_RBP;
	case X86_REG_ESP: case X86_REG_SP: case X86_REG_SPL: return X86_REG_RSP;
	case X86_REG_R8D: case X86_REG_R8W: case X86_REG_R8B: return X86_REG_R8;
	case X86_REG_R9D: case X86_REG_R9W: case X86_REG_R9B: return X86_REG_R9;
	case X86_REG_R10D: case X86_REG_R10W: case X86_REG_R10B: return X86_REG_R10;
	case X86_REG_R11D: case X86_REG_R11W: case X86_REG_R11B: return X86_REG_R11;
	case X86_REG_R12D: case X86_REG_R12W: case X86_REG_R12B: return X86_REG_R12;
	case X86_REG_R13D: case X86_REG_R13W: case X86_REG_R13B: return X86_REG_R13;
	case X86_REG_R14D: case X86_REG_R14W: case X86_REG_R14B: return X86_REG_R14;
	case X86_REG_R15D: case X86_REG_R15W: case X86_REG_R15B: return X86_REG_R15;
	default: return r;
	}
}

/* The rec i steps back (1: the instruction before the current one), or NULL. */
static const struct rec *back(const struct walk *w, size_t i)
{
	/* n_rec counts the current instruction, which is in the ring too */
	if (i >= w->n_rec || i >= RING)
		return NULL;
	return &w->ring[(w->n_rec - 1 - i) % RING];
}

static bool writes(const struct rec *r, x86_reg reg)
{
	for (unsigned int k = 0; k < r->nops && k < 2; k++)
		if (r->ops[k].type == X86_OP_REG && (r->ops[k].access & CS_AC_WRITE) &&
		    reg64(r->ops[k].reg) == reg)
			return true;
	return false;
}

/* The instruction that last set reg before rec `from` steps back, or NULL. */
static const struct rec *def_of(const struct walk *w, size_t from, x86_reg reg, size_t *at)
{
	for (size_t i = from + 1;; i++) {
		const struct rec *r = back(w, i);

		if (!r || r->barrier)
			return NULL;
		if (writes(r, reg)) {
			*at = i;
			return r;
		}
	}
}

static bool in_extent(const struct extent *x, uint64_t addr)
{
	return addr >= x->start && addr - x->start < x->size;
}

/*
 * An 8-byte absolute table at [base + index*8 + disp], looked up by the rec
 * `at` steps back: a jump table when its first entry points into the function.
 * The base is known when it is absent (non-PIC) or was set by lea reg, [rip + d]
 * (Go, PIC code with absolute tables).
 */
static bool absolute_table(struct walk *w, const struct extent *x, const x86_op_mem *m, size_t at)
{
	struct elf_syms_loc loc;
	uint64_t table = (uint64_t)m->disp, entry = 0;
	uint8_t b[8];

	if (m->base != X86_REG_INVALID) {
		const struct rec *d;
		size_t i;

		if (m->base == X86_REG_RIP)
			return false;
		d = def_of(w, at, reg64(m->base), &i);
		if (!d || d->id != X86_INS_LEA || d->nops != 2 || d->ops[1].type != X86_OP_MEM ||
		    d->ops[1].mem.base != X86_REG_RIP || d->ops[1].mem.index != X86_REG_INVALID)
			return false;
		table += d->next + (uint64_t)d->ops[1].mem.disp;
	}
	if (elf_syms_locate(w->e, table, &loc) != 0 || loc.avail < 8 ||
	    elf_syms_read(w->e, loc.offset, b, sizeof(b)) != 0)
		return false;
	for (int i = 0; i < 8; i++)
		entry |= (uint64_t)b[i] << (8 * i);
	return in_extent(x, entry);
}

/*
 * Is the indirect jmp a switch through a jump table inside the function?
 * GCC and clang emit, for PIC code:
 *	lea rdx, [rip + T]; movsxd rax, dword ptr [rdx + rax*4]; add rax, rdx; jmp rax
 * for non-PIC code: jmp qword ptr [rax*8 + T]; with CET: notrack jmp.
 * Anything else (jmp rax after a load from a struct, jmp [rip + GOT]) is a
 * tail call through a pointer.
 */
static bool jump_table(struct walk *w, const struct extent *x, const cs_insn *insn)
{
	const cs_x86 *d = &insn->detail->x86;
	const cs_x86_op *op = &d->operands[0];

	if (d->prefix[1] == X86_PREFIX_DS)
		return true; /* notrack: only jump tables lack endbr64 targets */
	if (d->op_count != 1)
		return false;
	if (op->type == X86_OP_MEM)
		return op->mem.index != X86_REG_INVALID && op->mem.scale == 8 &&
		       absolute_table(w, x, &op->mem, 0);
	if (op->type != X86_OP_REG)
		return false;
	for (size_t from = 0;;) {
		size_t at;
		const struct rec *r = def_of(w, from, reg64(op->reg), &at);

		if (!r)
			return false;
		if (r->id == X86_INS_ADD && r->nops == 2 && r->ops[1].type == X86_OP_REG) {
			from = at; /* the table's base added to the entry: look further */
			continue;
		}
		if (r->nops != 2 || r->ops[1].type != X86_OP_MEM ||
		    r->ops[1].mem.index == X86_REG_INVALID)
			return false;
		if (r->id == X86_INS_MOVSXD && r->ops[1].mem.scale == 4)
			return true;
		return r->id == X86_INS_MOV && r->ops[1].mem.scale == 8 &&
		       absolute_table(w, x, &r->ops[1].mem, at);
	}
}

static int add_site(struct walk *w, uint64_t offset)
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

/* A jmp or jcc at `from` in x to target. */
static int follow(struct walk *w, const struct extent *x, uint64_t from, uint64_t target)
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

static void remember(struct walk *w, const cs_insn *insn)
{
	const cs_x86 *d = &insn->detail->x86;
	struct rec *r = &w->ring[w->n_rec++ % RING];

	r->next = insn->address + insn->size;
	r->id = insn->id;
	r->barrier = cs_insn_group(w->cs, insn, X86_GRP_CALL) ||
		     cs_insn_group(w->cs, insn, X86_GRP_RET) || insn->id == X86_INS_JMP;
	r->nops = d->op_count < 2 ? d->op_count : 2;
	memcpy(r->ops, d->operands, sizeof(r->ops));
}

static int decode_bytes(struct walk *w, const struct extent *x, const uint8_t *bytes,
			uint64_t file_off)
{
	const uint8_t *code = bytes;
	size_t left = (size_t)x->size;
	uint64_t addr = x->start;
	int rc;

	w->n_rec = 0;
	while (left > 0) {
		const cs_insn *insn = w->insn;
		const cs_x86 *d;

		if (!cs_disasm_iter(w->cs, &code, &left, &addr, w->insn)) {
			size_t at = (size_t)(addr - x->start);

			return fail(-EILSEQ, "undecodable bytes at 0x%llx (file offset 0x%llx) in the "
					     "function at 0x%llx: %02x %02x %02x %02x ...",
				    (unsigned long long)addr, (unsigned long long)(file_off + at),
				    (unsigned long long)x->start, bytes[at],
				    left > 1 ? bytes[at + 1] : 0, left > 2 ? bytes[at + 2] : 0,
				    left > 3 ? bytes[at + 3] : 0);
		}
		remember(w, insn);
		d = &insn->detail->x86;
		switch (insn->id) {
		case X86_INS_RET: /* also ret imm16, repz ret, bnd ret */
			rc = add_site(w, file_off + (insn->address - x->start));
			if (rc)
				return rc;
			continue;
		case X86_INS_RETF:
		case X86_INS_RETFQ:
		case X86_INS_LJMP:
			return fail(-ENOTSUP, "far %s at 0x%llx in the function at 0x%llx",
				    insn->mnemonic, (unsigned long long)insn->address,
				    (unsigned long long)x->start);
		}
		if (!cs_insn_group(w->cs, insn, X86_GRP_JUMP))
			continue;
		if (d->op_count == 1 && d->operands[0].type == X86_OP_IMM) {
			rc = follow(w, x, insn->address, (uint64_t)d->operands[0].imm);
			if (rc)
				return rc;
		} else if (!jump_table(w, x, insn)) {
			return fail(-ENOTSUP, "%s %s at 0x%llx in the function at 0x%llx is a tail call "
					      "through a pointer, not a jump table: where it returns "
					      "cannot be known",
				    insn->mnemonic, insn->op_str, (unsigned long long)insn->address,
				    (unsigned long long)x->start);
		}
	}
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
	rc = decode_bytes(w, x, bytes, loc.offset);
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
	int rc;

	memset(out, 0, sizeof(*out));
	if (elf_syms_class(e) != ELFCLASS64 || elf_syms_machine(e) != EM_X86_64)
		return fail(-ENOTSUP, "return sites are found in x86-64 code only (ELF machine %u)",
			    elf_syms_machine(e));
	if (size == 0) {
		rc = ret_sites_extent(e, fn->addr, &start, &size);
		if (rc)
			return rc;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return fail(-ENOMEM, "out of memory");
	w->e = e;
	w->out = out;
	w->ext[0] = (struct extent){ start, size, 0 };
	w->n_ext = 1;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &w->cs) != CS_ERR_OK) {
		free(w);
		return fail(-ENOTSUP, "capstone cannot decode x86-64");
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
