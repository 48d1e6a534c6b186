/*
 * libFuzzer target for src/tls/eh_frame.c.
 *
 * Input: byte 0 = flags (bit 0: no .eh_frame_hdr, scan .eh_frame; bit 1: a
 * datarel base is known), bytes 1-2 = the header's length (little-endian,
 * cut to what is there), bytes 3-10 = the pc looked up, then the header's
 * bytes, then .eh_frame's. Each table is copied into a buffer of exactly
 * its size, so any read past it is caught.
 *
 * Besides "no crash, no read past the tables", it checks that a found FDE
 * covers the pc, that its FDE address lies inside .eh_frame, that a lookup
 * repeated gives the same answer, and that scanning finds an FDE again from
 * the found one's first byte.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tls/eh_frame.h"

#include "fuzz_check.h"

/* Fixed addresses close together, so pcrel and datarel values meet real ones. */
#define HDR_ADDR 0x1000u
#define FRAME_ADDR 0x1100u

static void check_rc(int rc)
{
	CHECK(rc == 0 || rc == -ENOENT || rc == -EINVAL || rc == -ENOTSUP);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct eh_frame_image img = { 0 };
	struct eh_frame_fde fde, again;
	uint8_t *hdr = NULL, *frame;
	size_t hdr_len, frame_len;
	uint64_t pc = 0, frame_addr;
	uint8_t flags;
	int rc;

	if (size < 11)
		return 0;
	flags = data[0];
	hdr_len = (size_t)data[1] | (size_t)data[2] << 8;
	for (int i = 0; i < 8; i++)
		pc |= (uint64_t)data[3 + i] << (8 * i);
	data += 11;
	size -= 11;
	if (hdr_len > size)
		hdr_len = size;
	frame_len = size - hdr_len;

	if (!(flags & 1)) {
		hdr = malloc(hdr_len ? hdr_len : 1);
		CHECK(hdr);
		memcpy(hdr, data, hdr_len);
		img.hdr = hdr;
		img.hdr_len = hdr_len;
		img.hdr_addr = HDR_ADDR;
		/* the header names .eh_frame's address: put the frame there when we can */
		rc = eh_frame_hdr_frame_addr(hdr, hdr_len, HDR_ADDR, &frame_addr);
		check_rc(rc);
		img.frame_addr = rc == 0 ? frame_addr : FRAME_ADDR;
	} else {
		img.frame_addr = FRAME_ADDR;
	}
	frame = malloc(frame_len ? frame_len : 1);
	CHECK(frame);
	memcpy(frame, data + hdr_len, frame_len);
	img.frame = frame;
	img.frame_len = frame_len;
	img.data_base = HDR_ADDR;
	img.have_data_base = flags & 2;

	/* the fuzzer finds pcs near the tables more easily than anywhere */
	if (flags & 4)
		pc = HDR_ADDR + (pc & 0xffff) - 0x8000;

	rc = eh_frame_find(&img, pc, &fde);
	check_rc(rc);
	if (rc == 0) {
		CHECK(pc >= fde.pc_begin && pc - fde.pc_begin < fde.pc_range);
		CHECK(fde.fde_addr >= img.frame_addr &&
		      fde.fde_addr - img.frame_addr < img.frame_len);
		CHECK(eh_frame_find(&img, pc, &again) == 0);
		CHECK(memcmp(&fde, &again, sizeof(fde)) == 0);
		/* Scanning, the FDE's first byte finds it or an earlier FDE
		 * covering it (a corrupt file can have overlaps): every entry
		 * before it parsed already. A table may be unsorted: any answer. */
		rc = eh_frame_find(&img, fde.pc_begin, &again);
		check_rc(rc);
		if (!img.hdr)
			CHECK(rc == 0);
		if (rc == 0)
			CHECK(fde.pc_begin >= again.pc_begin &&
			      fde.pc_begin - again.pc_begin < again.pc_range);
		check_rc(eh_frame_find(&img, fde.pc_begin + fde.pc_range - 1, &again));
	}
	free(hdr);
	free(frame);
	return 0;
}
