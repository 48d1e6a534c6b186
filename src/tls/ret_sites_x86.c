/*
 * The x86-64 decoder of ret_sites (see ret_sites.h for what is found and
 * ret_sites_walk.h for the split): ret, direct jmp/jcc followed, and the
 * look-back that tells a switch's indirect jmp from a tail call through a
 * pointer.
 */
#include "ret_sites_walk.h"

#include <elf.h>
#include <errno.h>
#include <string.h>

/* The walk's, under the names the rest of ret_sites uses. */
#define fail ret_sites_walk_fail
#define in_extent ret_sites_in_extent

/* Instructions looked back over to tell a jump table from a tail call. */
#define RING 8

/* What the look-back needs of an instruction already decoded. */
struct rec {
	uint64_t next;		/* address of the following instruction */
	unsigned int id;
	bool barrier;		/* call, ret, jmp: what came before need not flow here */
	uint8_t nops;
	cs_x86_op ops[2];
};

/* The last instructions of the extent being decoded. */
struct look {
	struct elf_syms *e;
	csh cs;
	struct rec ring[RING];
	size_t n_rec;
};

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
static const struct rec *back(const struct look *w, size_t i)
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
static const struct rec *def_of(const struct look *w, size_t from, x86_reg reg, size_t *at)
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

/*
 * An 8-byte absolute table at [base + index*8 + disp], looked up by the rec
 * `at` steps back: a jump table when its first entry points into the function.
 * The base is known when it is absent (non-PIC) or was set by lea reg, [rip + d]
 * (Go, PIC code with absolute tables).
 */
static bool absolute_table(struct look *w, const struct extent *x, const x86_op_mem *m, size_t at)
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
static bool jump_table(struct look *w, const struct extent *x, const cs_insn *insn)
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

static void remember(struct look *w, const cs_insn *insn)
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

static int decode(struct walk *walk, const struct extent *x, const uint8_t *bytes,
		  uint64_t file_off)
{
	struct look look = { .e = ret_sites_walk_elf(walk), .cs = ret_sites_walk_cs(walk) };
	struct look *w = &look;
	const uint8_t *code = bytes;
	size_t left = (size_t)x->size;
	uint64_t addr = x->start;
	int rc;

	while (left > 0) {
		const cs_insn *insn = ret_sites_walk_insn(walk);
		const cs_x86 *d;

		if (!cs_disasm_iter(w->cs, &code, &left, &addr, ret_sites_walk_insn(walk))) {
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
			rc = ret_sites_walk_add(walk, file_off + (insn->address - x->start));
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
			rc = ret_sites_walk_follow(walk, x, insn->address, (uint64_t)d->operands[0].imm);
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


const struct ret_sites_decoder ret_sites_x86_64 = {
	.machine = EM_X86_64,
	.name = "x86-64",
	.arch = CS_ARCH_X86,
	.mode = CS_MODE_64,
	.decode = decode,
};
