/*
 * Inside ret_sites: what the architecture-independent walk (ret_sites.c:
 * extents, unwind tables, the PLT, the list of sites) offers the decoder of
 * one instruction set (ret_sites_x86.c, ret_sites_arm64.c), and what a
 * decoder is. Not for use outside src/tls/ret_sites*.c.
 */
#ifndef NODESCOPE_TLS_RET_SITES_WALK_H
#define NODESCOPE_TLS_RET_SITES_WALK_H

#include <stdbool.h>
#include <stdint.h>

#include <capstone/capstone.h>

#include "tls/ret_sites.h"

struct extent {
	uint64_t start;
	uint64_t size;
	unsigned int depth;	/* tail jumps from the entry function */
};

struct walk;

/* An instruction set: which ELF files it is for and how its code is read. */
struct ret_sites_decoder {
	unsigned int machine;	/* e_machine */
	const char *name;	/* in messages: "x86-64" */
	cs_arch arch;
	cs_mode mode;
	/*
	 * Decodes x (bytes: its code, at file offset file_off) linearly, adding
	 * every return instruction with ret_sites_walk_add and every direct jump
	 * with ret_sites_walk_follow; an indirect jump that is not a jump table
	 * fails. 0 or -errno with the message set by ret_sites_walk_fail.
	 */
	int (*decode)(struct walk *w, const struct extent *x, const uint8_t *bytes,
		      uint64_t file_off);
};

extern const struct ret_sites_decoder ret_sites_x86_64;
extern const struct ret_sites_decoder ret_sites_aarch64;

/* The walk's capstone handle and its one instruction buffer. */
csh ret_sites_walk_cs(const struct walk *w);
cs_insn *ret_sites_walk_insn(const struct walk *w);
struct elf_syms *ret_sites_walk_elf(const struct walk *w);

/* A return instruction at this file offset (duplicates ignored). */
int ret_sites_walk_add(struct walk *w, uint64_t offset);

/*
 * A direct jump at `from` in x to target: nothing when the target is inside
 * an extent already known, -ENOTSUP into the PLT, else the extent holding
 * the target is queued to be decoded too.
 */
int ret_sites_walk_follow(struct walk *w, const struct extent *x, uint64_t from, uint64_t target);

bool ret_sites_in_extent(const struct extent *x, uint64_t addr);

/* Records the message ret_sites_last_error() returns, and returns rc. */
__attribute__((format(printf, 2, 3))) int ret_sites_walk_fail(int rc, const char *fmt, ...);

#endif
