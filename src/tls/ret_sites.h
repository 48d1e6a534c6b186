/*
 * Return sites of a function in an x86-64 or arm64 ELF file, for uprobes that
 * stand in for a uretprobe: the agent probes the entry and every `ret` that
 * can end the call, and at each of them compares the stack pointer with the
 * one saved at entry (equal: the probed call is returning, rax or x0 holds
 * its result). Each instruction set has its decoder (ret_sites_x86.c,
 * ret_sites_arm64.c, whose comments say what each treats as a jump table);
 * the walk over extents and unwind tables is shared (ret_sites.c).
 * Unlike a uretprobe this leaves the return address on the stack alone, which
 * Go's runtime (it walks and copies goroutine stacks) needs.
 *
 * The sites are the `ret`s inside the function itself, plus those inside
 * code it reaches by a tail jump (a jmp or jcc; b, b.cond, cbz or tbz on
 * arm64) whose target is outside its extent: a sibling call to a local
 * function, or the function's own cold part, followed transitively. A
 * `ret` reached that way runs with the entry stack pointer once the jump
 * came from our frame; run from elsewhere, its
 * stack pointer differs and the BPF side ignores it. The list is complete or
 * the call fails: a missed site would lose data silently.
 *
 * Assumptions, true of GCC and clang output: a function's extent holds only
 * instructions (decoded linearly); on x86-64 an indirect jmp is a switch
 * through a jump table inside the function when it looks like one (notrack;
 * a 4-byte relative table: movsxd r, [b + i*4] then add; an 8-byte absolute table
 * whose first entry points into the function), and otherwise a tail call
 * through a pointer, which gives -ENOTSUP.
 *
 * Extents: the entry function's comes from the caller (a symbol's st_size;
 * for Go, pclntab can supply it the same way). A tail-jump target's comes
 * from the FDE covering it (.eh_frame_hdr + .eh_frame), else from a function
 * symbol holding it. Go binaries have no .eh_frame, so a tail jump in Go code
 * gives -ENOENT.
 *
 * Reads only: no BPF, no /proc, no globals beyond a per-thread error message.
 */
#ifndef NODESCOPE_TLS_RET_SITES_H
#define NODESCOPE_TLS_RET_SITES_H

#include <stddef.h>
#include <stdint.h>

#include "tls/elf_syms.h"

#define RET_SITES_MAX 256		/* sites in all; past it -E2BIG */
#define RET_SITES_MAX_DEPTH 4		/* tail jumps in a row; past it -E2BIG */
#define RET_SITES_MAX_FUNCS 64		/* extents decoded in all; past it -E2BIG */
#define RET_SITES_MAX_FN_SIZE (4u << 20) /* bytes in one extent; past it -E2BIG */

struct ret_sites {
	size_t n;
	uint64_t offsets[RET_SITES_MAX];	/* file offsets of the rets, ascending, distinct */
	unsigned int functions;			/* extents decoded: 1 + tail-jump targets */
};

/*
 * Finds every return site of fn in e, an ELFCLASS64 EM_X86_64 or EM_AARCH64 file. Only
 * fn->addr and fn->size are used; a size of 0 means "look it up" like a
 * tail-jump target.
 *
 * Returns 0 with out->n >= 0 (0 only for a function that never returns:
 * it has no ret and no tail jump), or, with out->n = 0:
 *  -ENOENT  an extent was not found (a tail jump into code with no FDE and
 *           no symbol, e.g. in a Go binary);
 *  -ENOTSUP a tail call that cannot be followed: through the PLT (into
 *           another library), through a pointer or the GOT (indirect jmp
 *           that is not a jump table), a far jmp or ret, eret; or neither an
 *           x86-64 nor an arm64 file;
 *  -E2BIG   more than RET_SITES_MAX sites, tail jumps deeper than
 *           RET_SITES_MAX_DEPTH, more than RET_SITES_MAX_FUNCS extents, an
 *           extent larger than RET_SITES_MAX_FN_SIZE, or an .eh_frame_hdr
 *           over 64 MiB;
 *  -EILSEQ  bytes in an extent that do not decode as the file's instruction set;
 *  -EINVAL  a corrupt file (an extent or jump target outside the
 *           executable part of the file, corrupt unwind tables);
 *  -ENOMEM.
 */
int ret_sites_find(struct elf_syms *e, const struct elf_sym *fn, struct ret_sites *out);

/*
 * The extent of the function holding addr, as used for tail-jump targets:
 * the FDE covering it, else a function symbol holding it (.dynsym, .symtab).
 * 0, -ENOENT (neither), -EINVAL (corrupt unwind tables), -ENOTSUP (unwind
 * encodings we do not handle).
 */
int ret_sites_extent(struct elf_syms *e, uint64_t addr, uint64_t *start, uint64_t *size);

/* The last failure of a ret_sites_* call in this thread ("" if none yet). */
const char *ret_sites_last_error(void);

#endif
