/*
 * Function extents from the unwind tables: where the function holding an
 * address starts and how long it is, from .eh_frame_hdr's binary-search
 * table and the FDE it points to (pc_begin, pc_range). tls/ret_sites needs
 * this for code that has no symbol, such as a static function that an
 * exported one tail-jumps to in a stripped library.
 *
 * Pure: bytes in, numbers out. No I/O, no globals beyond a per-thread error
 * message. Little-endian, 64-bit pointers (x86-64). Every read is bounded by
 * the bytes given, every loop by their length: corrupt input gives -EINVAL,
 * never a crash or a hang.
 *
 * Supported: CIE versions 1, 3 and 4; augmentations "" and "z..." ('R' gives
 * the FDE pointer encoding; 'P', 'L', 'S', 'B', 'G' are understood and
 * skipped); pointer formats absptr, uleb128, sleb128, u/sdata2, u/sdata4,
 * u/sdata8, applied as absolute, pcrel or datarel (datarel is relative to
 * .eh_frame_hdr inside it; in .eh_frame only when the caller knows the data
 * base). These are all GCC and clang emit for x86-64.
 */
#ifndef NODESCOPE_TLS_EH_FRAME_H
#define NODESCOPE_TLS_EH_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The two tables as bytes of the file, each with its link-time address. */
struct eh_frame_image {
	const uint8_t *hdr;	/* .eh_frame_hdr (the PT_GNU_EH_FRAME segment); NULL if none */
	size_t hdr_len;
	uint64_t hdr_addr;
	const uint8_t *frame;	/* .eh_frame, from its start; NULL if unknown */
	size_t frame_len;	/* its size, or the bytes to the end of its segment */
	uint64_t frame_addr;
	uint64_t data_base;	/* DW_EH_PE_datarel base inside .eh_frame (i386: the GOT) */
	bool have_data_base;	/* else such a pointer gives -ENOTSUP */
};

struct eh_frame_fde {
	uint64_t pc_begin;	/* the function's first address */
	uint64_t pc_range;	/* its length in bytes */
	uint64_t fde_addr;	/* where its FDE is */
};

/*
 * .eh_frame's address from the header's eh_frame_ptr, so the caller can find
 * its bytes. 0, -EINVAL (truncated header, version other than 1, bad
 * encoding), -ENOTSUP (an encoding we do not handle).
 */
int eh_frame_hdr_frame_addr(const uint8_t *hdr, size_t len, uint64_t hdr_addr,
			    uint64_t *frame_addr);

/*
 * The FDE covering pc: pc_begin <= pc < pc_begin + pc_range. Uses the
 * header's sorted table when it has one (O(log n)), else scans .eh_frame.
 * 0; -ENOENT when no FDE covers pc; -EINVAL when the tables are corrupt (a
 * table that does not fit in the header, an FDE pointer outside .eh_frame,
 * an FDE whose pc_begin differs from its table entry, ...); -ENOTSUP for an
 * encoding or augmentation we do not handle.
 */
int eh_frame_find(const struct eh_frame_image *img, uint64_t pc, struct eh_frame_fde *out);

/* The last failure of an eh_frame_* call in this thread ("" if none yet). */
const char *eh_frame_last_error(void);

#endif
