/*
 * The arm64 decoder of ret_sites (see ret_sites.h for what is found and
 * ret_sites_walk.h for the split). Fixed 4-byte instructions, decoded
 * linearly: GCC and clang put no literal pools or jump tables in .text.
 *
 *  - ret (to x30 or another register) is a return site;
 *  - b, b.cond, cbz/cbnz, tbz/tbnz to a target outside the function are
 *    tail jumps (a sibling call, the function's cold part) and are followed;
 *  - br is a switch through a jump table when the register was computed
 *    from an indexed load of a 1-, 2- or 4-byte entry added to a base (what
 *    GCC and clang emit: ldrb/ldrh/ldrsw [table, index]; adr; add; br), or
 *    loaded as an 8-byte entry from a table whose first entry points into
 *    the function (Go: MOVD (Rtab)(Ri<<3), R; JMP (R)); anything else is a
 *    tail call through a pointer, which cannot be followed.
 * Pointer authentication (paciasp/autiasp, bti) is in the hint space and
 * decodes as hints; what capstone 4 cannot decode is handled by undecodable().
 */
#include "ret_sites_walk.h"

#include <elf.h>
#include <errno.h>
#include <string.h>

/* The walk's, under the names the rest of ret_sites uses. */
#define fail ret_sites_walk_fail
#define in_extent ret_sites_in_extent

/* Instructions looked back over to tell a jump table from a tail call. */
#define RING 12
/* Adds followed back from a br to the table load (base + entry, scaled). */
#define MAX_ADDS 3

/* What the look-back needs of an instruction already decoded. */
struct rec {
	unsigned int id;
	bool barrier;		/* call, ret, b, br: what came before need not flow here */
	uint8_t nops;
	cs_arm64_op ops[3];
};

/* The last instructions of the extent being decoded. */
struct look {
	struct elf_syms *e;
	const struct extent *x;
	struct rec ring[RING];
	size_t n_rec;
};

/* The X register a W register is the low half of; others unchanged. */
static arm64_reg reg64(arm64_reg r)
{
	if (r >= ARM64_REG_W0 && r <= ARM64_REG_W30) {
		unsigned int n = r - ARM64_REG_W0;

		return n == 29 ? ARM64_REG_X29 : n == 30 ? ARM64_REG_X30 : ARM64_REG_X0 + n;
	}
	return r;
}

/* The rec i steps back (1: the instruction before the current one), or NULL. */
static const struct rec *back(const struct look *w, size_t i)
{
	if (i >= w->n_rec || i >= RING)
		return NULL;
	return &w->ring[(w->n_rec - 1 - i) % RING];
}

static bool writes(const struct rec *r, arm64_reg reg)
{
	for (unsigned int k = 0; k < r->nops; k++)
		if (r->ops[k].type == ARM64_OP_REG && (r->ops[k].access & CS_AC_WRITE) &&
		    reg64(r->ops[k].reg) == reg)
			return true;
	return false;
}

/* The instruction that last set reg before rec `from` steps back, or NULL. */
static const struct rec *def_of(const struct look *w, size_t from, arm64_reg reg, size_t *at)
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

static bool is_load(unsigned int id)
{
	switch (id) {
	case ARM64_INS_LDR: case ARM64_INS_LDRB: case ARM64_INS_LDRH:
	case ARM64_INS_LDRSB: case ARM64_INS_LDRSH: case ARM64_INS_LDRSW:
		return true;
	}
	return false;
}

/*
 * reg's value when it holds an address: adrp p; add reg, reg, #lo12, or the
 * adr a linker relaxes that pair to. Looked up from `from`.
 */
static bool address_of(const struct look *w, size_t from, arm64_reg reg, uint64_t *addr)
{
	size_t at, at2;
	const struct rec *add = def_of(w, from, reg, &at), *page;

	if (add && add->id == ARM64_INS_ADR && add->nops == 2 && add->ops[1].type == ARM64_OP_IMM) {
		*addr = (uint64_t)add->ops[1].imm;
		return true;
	}
	if (!add || add->id != ARM64_INS_ADD || add->nops != 3 ||
	    add->ops[1].type != ARM64_OP_REG || reg64(add->ops[1].reg) != reg ||
	    add->ops[2].type != ARM64_OP_IMM)
		return false;
	page = def_of(w, at, reg, &at2);
	if (!page || page->id != ARM64_INS_ADRP || page->nops != 2 || page->ops[1].type != ARM64_OP_IMM)
		return false;
	*addr = (uint64_t)page->ops[1].imm + (uint64_t)add->ops[2].imm;
	return true;
}

/* An 8-byte table at [base, index, lsl #3], loaded by the rec `at` steps back. */
static bool absolute_table(const struct look *w, const arm64_op_mem *m, size_t at)
{
	struct elf_syms_loc loc;
	uint64_t table, entry = 0;
	uint8_t b[8];

	if (!address_of(w, at, reg64(m->base), &table))
		return false;
	if (elf_syms_locate(w->e, table, &loc) != 0 || loc.avail < 8 ||
	    elf_syms_read(w->e, loc.offset, b, sizeof(b)) != 0)
		return false;
	for (int i = 0; i < 8; i++)
		entry |= (uint64_t)b[i] << (8 * i);
	return in_extent(w->x, entry);
}

/* Was reg, as of rec `from` steps back, computed from a jump table's entry? */
static bool from_table(const struct look *w, size_t from, arm64_reg reg, unsigned int adds)
{
	size_t at;
	const struct rec *r = def_of(w, from, reg, &at);

	if (!r)
		return false;
	if (r->id == ARM64_INS_ADD && r->nops == 3 && adds < MAX_ADDS) {
		/* base + entry (maybe extended and shifted): either side may be the entry */
		for (unsigned int k = 1; k < 3; k++)
			if (r->ops[k].type == ARM64_OP_REG &&
			    from_table(w, at, reg64(r->ops[k].reg), adds + 1))
				return true;
		return false;
	}
	if (!is_load(r->id) || r->nops != 2 || r->ops[1].type != ARM64_OP_MEM ||
	    r->ops[1].mem.index == ARM64_REG_INVALID)
		return false;
	/* A W destination or a narrow load: an offset, never a code address. */
	if (r->id != ARM64_INS_LDR || !(r->ops[0].reg >= ARM64_REG_X0 && r->ops[0].reg <= ARM64_REG_X28))
		return true;
	return absolute_table(w, &r->ops[1].mem, at);
}

static void remember(struct look *w, const cs_insn *insn)
{
	const cs_arm64 *d = &insn->detail->arm64;
	struct rec *r = &w->ring[w->n_rec++ % RING];

	r->id = insn->id;
	/* by id: capstone 4 puts bl in no call group */
	r->barrier = insn->id == ARM64_INS_BL || insn->id == ARM64_INS_BLR ||
		     insn->id == ARM64_INS_RET || insn->id == ARM64_INS_BR ||
		     (insn->id == ARM64_INS_B && d->cc == ARM64_CC_INVALID);
	r->nops = d->op_count < 3 ? d->op_count : 3;
	memcpy(r->ops, d->operands, sizeof(r->ops));
}

/* The target of a direct branch: its immediate operand (the last one). */
static bool branch_target(const cs_arm64 *d, uint64_t *target)
{
	if (d->op_count == 0 || d->operands[d->op_count - 1].type != ARM64_OP_IMM)
		return false;
	*target = (uint64_t)d->operands[d->op_count - 1].imm;
	return true;
}

/*
 * A word capstone 4 cannot decode: it knows no ARMv8.1+ instruction (LSE
 * atomics such as casal, which Go inlines; retaa). Instructions are 4 bytes,
 * so decoding goes on past one that cannot change the flow of control:
 * every branch, return and exception is in the encoding class op0 = x101
 * (bits 28:26 = 101). One there that capstone cannot decode fails, except
 * the two returns of pointer authentication (retaa, retab), which are
 * return sites. A skipped word ends the look-back for jump tables.
 */
#define A64_RETAA 0xd65f0bffu
#define A64_RETAB 0xd65f0fffu
static int undecodable(struct walk *walk, struct look *w, const struct extent *x,
		       const uint8_t *code, size_t left, uint64_t addr, uint64_t file_off)
{
	uint64_t at = addr - x->start;
	uint32_t word;

	if (left < 4)
		return fail(-EILSEQ, "the function at 0x%llx ends in %zu bytes that are no instruction",
			    (unsigned long long)x->start, left);
	word = (uint32_t)code[0] | (uint32_t)code[1] << 8 | (uint32_t)code[2] << 16 |
	       (uint32_t)code[3] << 24;
	w->ring[w->n_rec++ % RING] = (struct rec){ .id = ARM64_INS_INVALID, .barrier = true };
	if (word == A64_RETAA || word == A64_RETAB)
		return ret_sites_walk_add(walk, file_off + at);
	if (((word >> 26) & 7) != 5)
		return 0;
	return fail(-EILSEQ, "undecodable branch-class instruction %08x at 0x%llx (file offset "
			     "0x%llx) in the function at 0x%llx",
		    word, (unsigned long long)addr, (unsigned long long)(file_off + at),
		    (unsigned long long)x->start);
}

static int decode(struct walk *walk, const struct extent *x, const uint8_t *bytes,
		  uint64_t file_off)
{
	struct look look = { .e = ret_sites_walk_elf(walk), .x = x };
	struct look *w = &look;
	csh cs = ret_sites_walk_cs(walk);
	cs_insn *insn = ret_sites_walk_insn(walk);
	const uint8_t *code = bytes;
	size_t left = (size_t)x->size;
	uint64_t addr = x->start, target;
	int rc;

	while (left > 0) {
		const cs_arm64 *d;

		if (!cs_disasm_iter(cs, &code, &left, &addr, insn)) {
			rc = undecodable(walk, w, x, code, left, addr, file_off);
			if (rc)
				return rc;
			code += 4;
			left -= 4;
			addr += 4;
			continue;
		}
		remember(w, insn);
		d = &insn->detail->arm64;
		switch (insn->id) {
		case ARM64_INS_RET:
			rc = ret_sites_walk_add(walk, file_off + (insn->address - x->start));
			if (rc)
				return rc;
			break;
		case ARM64_INS_ERET:
			return fail(-ENOTSUP, "eret at 0x%llx in the function at 0x%llx",
				    (unsigned long long)insn->address, (unsigned long long)x->start);
		case ARM64_INS_B:
		case ARM64_INS_CBZ:
		case ARM64_INS_CBNZ:
		case ARM64_INS_TBZ:
		case ARM64_INS_TBNZ:
			if (!branch_target(d, &target))
				return fail(-EILSEQ, "%s %s at 0x%llx: no target", insn->mnemonic,
					    insn->op_str, (unsigned long long)insn->address);
			rc = ret_sites_walk_follow(walk, x, insn->address, target);
			if (rc)
				return rc;
			break;
		case ARM64_INS_BR:
			if (d->op_count == 1 && d->operands[0].type == ARM64_OP_REG &&
			    from_table(w, 0, reg64(d->operands[0].reg), 0))
				break;
			return fail(-ENOTSUP, "%s %s at 0x%llx in the function at 0x%llx is a tail call "
					      "through a pointer, not a jump table: where it returns "
					      "cannot be known",
				    insn->mnemonic, insn->op_str, (unsigned long long)insn->address,
				    (unsigned long long)x->start);
		}
	}
	return 0;
}

const struct ret_sites_decoder ret_sites_aarch64 = {
	.machine = EM_AARCH64,
	.name = "arm64",
	.arch = CS_ARCH_ARM64,
	.mode = CS_MODE_ARM,
	.decode = decode,
};
