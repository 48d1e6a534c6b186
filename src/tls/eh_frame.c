#include "eh_frame.h"

#include "util/last_error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* DW_EH_PE_*: the low nibble is the format, the next three bits how it applies. */
#define PE_ABSPTR 0x00
#define PE_ULEB128 0x01
#define PE_UDATA2 0x02
#define PE_UDATA4 0x03
#define PE_UDATA8 0x04
#define PE_SLEB128 0x09
#define PE_SDATA2 0x0a
#define PE_SDATA4 0x0b
#define PE_SDATA8 0x0c
#define PE_FORMAT 0x0f
#define PE_PCREL 0x10
#define PE_DATAREL 0x30
#define PE_APPLY 0x70
#define PE_INDIRECT 0x80
#define PE_OMIT 0xff

/* A ULEB128/SLEB128 of a 64-bit value takes at most this many bytes. */
#define LEB_MAX 10

LAST_ERROR_DEFINE(eh_frame)

/* Reads from buf[pos..len); pos <= len always holds. */
struct cursor {
	const uint8_t *buf;
	size_t len;
	size_t pos;
	uint64_t addr;		/* address of buf[0], for pcrel */
	const char *what;	/* for messages */
};

static int need(struct cursor *c, size_t n)
{
	if (n > c->len - c->pos)
		return fail(-EINVAL, "corrupt %s: truncated at offset %zu (need %zu bytes of %zu)",
			    c->what, c->pos, n, c->len - c->pos);
	return 0;
}

static int read_le(struct cursor *c, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	int rc = need(c, n);

	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)c->buf[c->pos + i] << (8 * i);
	c->pos += n;
	*out = v;
	return 0;
}

static int read_u8(struct cursor *c, uint8_t *out)
{
	uint64_t v;
	int rc = read_le(c, 1, &v);

	*out = (uint8_t)v;
	return rc;
}

static int read_leb(struct cursor *c, bool is_signed, uint64_t *out)
{
	uint64_t v = 0;
	unsigned int shift = 0;

	for (int i = 0; i < LEB_MAX; i++) {
		uint8_t b;
		int rc = read_u8(c, &b);

		if (rc)
			return rc;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (is_signed && shift < 64 && (b & 0x40))
				v |= ~(uint64_t)0 << shift;
			*out = v;
			return 0;
		}
	}
	return fail(-EINVAL, "corrupt %s: LEB128 longer than %d bytes at offset %zu", c->what,
		    LEB_MAX, c->pos);
}

/* Size in bytes of a fixed-size pointer format, 0 for LEB128 or an invalid one. */
static size_t format_size(uint8_t enc)
{
	switch (enc & PE_FORMAT) {
	case PE_UDATA2:
	case PE_SDATA2:
		return 2;
	case PE_UDATA4:
	case PE_SDATA4:
		return 4;
	case PE_ABSPTR:
	case PE_UDATA8:
	case PE_SDATA8:
		return 8;
	default:
		return 0;
	}
}

/* The raw value of a pointer in format enc & PE_FORMAT, sign-extended for sdata. */
static int read_format(struct cursor *c, uint8_t enc, uint64_t *out)
{
	uint64_t v;
	size_t n;
	int rc;

	switch (enc & PE_FORMAT) {
	case PE_ULEB128:
		return read_leb(c, false, out);
	case PE_SLEB128:
		return read_leb(c, true, out);
	}
	n = format_size(enc);
	if (n == 0)
		return fail(-EINVAL, "corrupt %s: pointer encoding 0x%02x at offset %zu", c->what,
			    enc, c->pos);
	rc = read_le(c, n, &v);
	if (rc)
		return rc;
	if ((enc & PE_FORMAT) == PE_SDATA2)
		v = (uint64_t)(int64_t)(int16_t)v;
	else if ((enc & PE_FORMAT) == PE_SDATA4)
		v = (uint64_t)(int64_t)(int32_t)v;
	*out = v;
	return 0;
}

/* An encoded pointer; datarel is relative to data_base when have_data_base. */
static int read_encoded(struct cursor *c, uint8_t enc, bool have_data_base, uint64_t data_base,
			uint64_t *out)
{
	uint64_t field = c->addr + c->pos, v;
	int rc;

	if (enc == PE_OMIT)
		return fail(-EINVAL, "corrupt %s: omitted pointer at offset %zu", c->what, c->pos);
	if (enc & PE_INDIRECT)
		return fail(-ENOTSUP, "%s: indirect pointer encoding 0x%02x not supported", c->what,
			    enc);
	rc = read_format(c, enc, &v);
	if (rc)
		return rc;
	switch (enc & PE_APPLY) {
	case 0:
		break;
	case PE_PCREL:
		v += field; /* wraps like the address arithmetic it stands for */
		break;
	case PE_DATAREL:
		if (!have_data_base)
			return fail(-ENOTSUP, "%s: datarel pointer without a data base", c->what);
		v += data_base;
		break;
	default: /* textrel, funcrel, aligned: never emitted for x86-64 */
		return fail(-ENOTSUP, "%s: pointer encoding 0x%02x not supported", c->what, enc);
	}
	*out = v;
	return 0;
}

/* ---- .eh_frame_hdr ------------------------------------------------------- */

struct hdr_info {
	uint64_t frame_addr;
	bool have_table;
	uint64_t count;		/* entries; fits in the header when have_table */
	size_t table_pos;
	uint8_t table_enc;
	size_t entry_size;
};

static int parse_hdr(const uint8_t *hdr, size_t len, uint64_t hdr_addr, struct hdr_info *h)
{
	struct cursor c = { hdr, len, 0, hdr_addr, ".eh_frame_hdr" };
	uint8_t version, ptr_enc, count_enc;
	int rc;

	memset(h, 0, sizeof(*h));
	if ((rc = read_u8(&c, &version)) || (rc = read_u8(&c, &ptr_enc)) ||
	    (rc = read_u8(&c, &count_enc)) || (rc = read_u8(&c, &h->table_enc)))
		return rc;
	if (version != 1)
		return fail(-EINVAL, "corrupt .eh_frame_hdr: version %u", version);
	/* Inside the header, datarel is relative to its start (LSB). */
	rc = read_encoded(&c, ptr_enc, true, hdr_addr, &h->frame_addr);
	if (rc)
		return rc;
	if (count_enc == PE_OMIT || h->table_enc == PE_OMIT)
		return 0;
	rc = read_encoded(&c, count_enc, true, hdr_addr, &h->count);
	if (rc)
		return rc;
	h->entry_size = 2 * format_size(h->table_enc);
	if (h->entry_size == 0) {
		uint8_t f = h->table_enc & PE_FORMAT;

		if (f != PE_ULEB128 && f != PE_SLEB128)
			return fail(-EINVAL, "corrupt .eh_frame_hdr: table encoding 0x%02x",
				    h->table_enc);
		return 0; /* LEB128 entries cannot be binary-searched: scan .eh_frame */
	}
	if (h->count > (c.len - c.pos) / h->entry_size)
		return fail(-EINVAL,
			    "corrupt .eh_frame_hdr: a table of %llu entries does not fit in %zu bytes",
			    (unsigned long long)h->count, c.len - c.pos);
	h->table_pos = c.pos;
	h->have_table = true;
	return 0;
}

/*
 * A table's bytes must fit in the address space: the address of each byte,
 * addr + offset, must not wrap past 2^64 (it is what an FDE's address and a
 * pcrel pointer's base are computed from). The last byte may be at 2^64 - 1.
 */
static int check_extent(uint64_t addr, size_t len, const char *what)
{
	if (len > 0 && (uint64_t)(len - 1) > UINT64_MAX - addr)
		return fail(-EINVAL, "corrupt %s: %zu bytes at 0x%llx run past the end of the "
				     "address space",
			    what, len, (unsigned long long)addr);
	return 0;
}

int eh_frame_hdr_frame_addr(const uint8_t *hdr, size_t len, uint64_t hdr_addr,
			    uint64_t *frame_addr)
{
	struct hdr_info h;
	int rc;

	if (!hdr)
		return fail(-EINVAL, "no .eh_frame_hdr");
	rc = check_extent(hdr_addr, len, ".eh_frame_hdr");
	if (rc)
		return rc;
	rc = parse_hdr(hdr, len, hdr_addr, &h);
	if (rc)
		return rc;
	*frame_addr = h.frame_addr;
	return 0;
}

static int table_entry(const struct hdr_info *h, const uint8_t *hdr, size_t len, uint64_t hdr_addr,
		       uint64_t i, uint64_t *loc, uint64_t *fde)
{
	/* i < count, and count entries fit: no overflow */
	struct cursor c = { hdr, len, h->table_pos + (size_t)i * h->entry_size, hdr_addr,
			    ".eh_frame_hdr" };
	int rc = read_encoded(&c, h->table_enc, true, hdr_addr, loc);

	return rc ? rc : read_encoded(&c, h->table_enc, true, hdr_addr, fde);
}

/* ---- .eh_frame ----------------------------------------------------------- */

enum entry_kind { ENTRY_END, ENTRY_CIE, ENTRY_FDE };

struct entry {
	enum entry_kind kind;
	size_t body;		/* offset of the CIE id / CIE pointer field */
	size_t end;		/* offset just past the entry */
	uint32_t id;
};

static struct cursor frame_cursor(const struct eh_frame_image *img, size_t pos, size_t end)
{
	return (struct cursor){ img->frame, end, pos, img->frame_addr, ".eh_frame" };
}

/* The CIE or FDE at off; off < frame_len. Its end is checked to be inside .eh_frame. */
static int read_entry(const struct eh_frame_image *img, size_t off, struct entry *en)
{
	struct cursor c = frame_cursor(img, off, img->frame_len);
	uint64_t len, id;
	int rc;

	memset(en, 0, sizeof(*en));
	rc = read_le(&c, 4, &len);
	if (rc)
		return rc;
	if (len == 0) {
		en->kind = ENTRY_END;
		en->end = c.pos;
		return 0;
	}
	if (len == 0xffffffff && (rc = read_le(&c, 8, &len)))
		return rc;
	if (len < 4 || len > c.len - c.pos)
		return fail(-EINVAL, "corrupt .eh_frame: entry at offset %zu has length %llu (%zu left)",
			    off, (unsigned long long)len, c.len - c.pos);
	en->body = c.pos;
	en->end = c.pos + (size_t)len;
	rc = read_le(&c, 4, &id);
	if (rc)
		return rc;
	en->id = (uint32_t)id;
	en->kind = id == 0 ? ENTRY_CIE : ENTRY_FDE;
	return 0;
}

/* Skips a pointer in encoding enc without applying it (the personality routine). */
static int skip_encoded(struct cursor *c, uint8_t enc)
{
	uint64_t v;

	if (enc == PE_OMIT)
		return 0;
	return read_format(c, enc, &v);
}

/* The FDE pointer encoding of the CIE at off. */
static int parse_cie(const struct eh_frame_image *img, size_t off, uint8_t *fde_enc)
{
	struct entry en;
	struct cursor c;
	const uint8_t *aug, *nul;
	uint64_t v;
	uint8_t version, b;
	int rc;

	rc = read_entry(img, off, &en);
	if (rc)
		return rc;
	if (en.kind != ENTRY_CIE)
		return fail(-EINVAL, "corrupt .eh_frame: an FDE's CIE pointer leads to offset %zu, "
				     "not a CIE", off);
	c = frame_cursor(img, en.body + 4, en.end);
	if ((rc = read_u8(&c, &version)))
		return rc;
	if (version != 1 && version != 3 && version != 4)
		return fail(-ENOTSUP, ".eh_frame: CIE at offset %zu has version %u", off, version);
	aug = c.buf + c.pos;
	nul = memchr(aug, '\0', c.len - c.pos);
	if (!nul)
		return fail(-EINVAL, "corrupt .eh_frame: CIE at offset %zu: unterminated augmentation",
			    off);
	c.pos += (size_t)(nul - aug) + 1;
	if (version == 4) { /* address_size, segment_selector_size */
		if ((rc = read_u8(&c, &b)) || (rc = read_u8(&c, &b)))
			return rc;
	}
	/* code alignment, data alignment, return address register */
	if ((rc = read_leb(&c, false, &v)) || (rc = read_leb(&c, true, &v)))
		return rc;
	rc = version == 1 ? read_u8(&c, &b) : read_leb(&c, false, &v);
	if (rc)
		return rc;

	*fde_enc = PE_ABSPTR;
	if (aug[0] == '\0')
		return 0;
	if (aug[0] != 'z')
		return fail(-ENOTSUP, ".eh_frame: CIE at offset %zu: augmentation \"%s\" not supported",
			    off, (const char *)aug);
	if ((rc = read_leb(&c, false, &v)))
		return rc;
	if (v > c.len - c.pos)
		return fail(-EINVAL, "corrupt .eh_frame: CIE at offset %zu: augmentation data of "
				     "%llu bytes", off, (unsigned long long)v);
	c.len = c.pos + (size_t)v; /* 'z' data is bounded by its own length */
	for (const uint8_t *a = aug + 1; *a; a++) {
		switch (*a) {
		case 'R':
			if ((rc = read_u8(&c, fde_enc)))
				return rc;
			break;
		case 'P':
			if ((rc = read_u8(&c, &b)) || (rc = skip_encoded(&c, b)))
				return rc;
			break;
		case 'L':
			if ((rc = read_u8(&c, &b)))
				return rc;
			break;
		case 'S': /* signal frame */
		case 'B': /* AArch64 BTI */
		case 'G': /* AArch64 MTE */
			break;
		default:
			return fail(-ENOTSUP,
				    ".eh_frame: CIE at offset %zu: augmentation \"%s\" not supported",
				    off, (const char *)aug);
		}
	}
	return 0;
}

/* The FDE at off, whose entry is en. */
static int parse_fde(const struct eh_frame_image *img, size_t off, const struct entry *en,
		     struct eh_frame_fde *out)
{
	struct cursor c;
	uint8_t enc = PE_ABSPTR;
	int rc;

	/* The CIE pointer counts back from its own field. */
	if (en->id > en->body)
		return fail(-EINVAL, "corrupt .eh_frame: FDE at offset %zu: CIE pointer %u points "
				     "before the section", off, en->id);
	rc = parse_cie(img, en->body - en->id, &enc);
	if (rc)
		return rc;
	c = frame_cursor(img, en->body + 4, en->end);
	rc = read_encoded(&c, enc, img->have_data_base, img->data_base, &out->pc_begin);
	if (rc)
		return rc;
	/* pc_range is a length: the format without its application */
	rc = read_format(&c, enc & PE_FORMAT, &out->pc_range);
	if (rc)
		return rc;
	out->fde_addr = img->frame_addr + off;
	return 0;
}

static bool covers(const struct eh_frame_fde *f, uint64_t pc)
{
	return pc >= f->pc_begin && pc - f->pc_begin < f->pc_range;
}

/* Every CIE and FDE in order; each step moves on by at least 4 bytes. */
static int scan_frame(const struct eh_frame_image *img, uint64_t pc, struct eh_frame_fde *out)
{
	size_t off = 0;

	while (off < img->frame_len) {
		struct entry en;
		int rc = read_entry(img, off, &en);

		if (rc)
			return rc;
		if (en.kind == ENTRY_END)
			break;
		if (en.kind == ENTRY_FDE) {
			rc = parse_fde(img, off, &en, out);
			if (rc)
				return rc;
			if (covers(out, pc))
				return 0;
		}
		off = en.end;
	}
	return fail(-ENOENT, "no FDE covers address 0x%llx", (unsigned long long)pc);
}

static int search_table(const struct eh_frame_image *img, const struct hdr_info *h, uint64_t pc,
			struct eh_frame_fde *out)
{
	uint64_t lo = 0, hi = h->count, loc, fde, off;
	struct entry en;
	int rc;

	/* The last entry whose initial location is <= pc. An unsorted (corrupt)
	 * table can only make us pick a wrong FDE, which the checks below catch. */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		rc = table_entry(h, img->hdr, img->hdr_len, img->hdr_addr, mid, &loc, &fde);
		if (rc)
			return rc;
		if (loc <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return fail(-ENOENT, "no FDE covers address 0x%llx (before the first)",
			    (unsigned long long)pc);
	rc = table_entry(h, img->hdr, img->hdr_len, img->hdr_addr, lo - 1, &loc, &fde);
	if (rc)
		return rc;
	off = fde - img->frame_addr;
	if (fde < img->frame_addr || off >= img->frame_len)
		return fail(-EINVAL, "corrupt .eh_frame_hdr: entry %llu points to 0x%llx, outside "
				     ".eh_frame (0x%llx, %zu bytes)",
			    (unsigned long long)(lo - 1), (unsigned long long)fde,
			    (unsigned long long)img->frame_addr, img->frame_len);
	rc = read_entry(img, (size_t)off, &en);
	if (rc)
		return rc;
	if (en.kind != ENTRY_FDE)
		return fail(-EINVAL, "corrupt .eh_frame_hdr: entry %llu points to 0x%llx, not an FDE",
			    (unsigned long long)(lo - 1), (unsigned long long)fde);
	rc = parse_fde(img, (size_t)off, &en, out);
	if (rc)
		return rc;
	if (out->pc_begin != loc)
		return fail(-EINVAL, "corrupt .eh_frame_hdr: entry %llu says 0x%llx, its FDE 0x%llx",
			    (unsigned long long)(lo - 1), (unsigned long long)loc,
			    (unsigned long long)out->pc_begin);
	if (!covers(out, pc))
		return fail(-ENOENT, "no FDE covers address 0x%llx (the nearest ends at 0x%llx)",
			    (unsigned long long)pc,
			    (unsigned long long)(out->pc_begin + out->pc_range));
	return 0;
}

int eh_frame_find(const struct eh_frame_image *img, uint64_t pc, struct eh_frame_fde *out)
{
	struct eh_frame_fde fde;
	struct hdr_info h = { 0 };
	int rc;

	memset(out, 0, sizeof(*out));
	if (img->hdr) {
		rc = check_extent(img->hdr_addr, img->hdr_len, ".eh_frame_hdr");
		if (rc)
			return rc;
		rc = parse_hdr(img->hdr, img->hdr_len, img->hdr_addr, &h);
		if (rc)
			return rc;
		if (img->frame && h.frame_addr != img->frame_addr)
			return fail(-EINVAL, "corrupt .eh_frame_hdr: eh_frame_ptr 0x%llx, but "
					     ".eh_frame is at 0x%llx",
				    (unsigned long long)h.frame_addr,
				    (unsigned long long)img->frame_addr);
	}
	if (!img->frame)
		return fail(-ENOENT, "no .eh_frame");
	/* else an FDE's address, frame_addr + its offset, could wrap to below it */
	rc = check_extent(img->frame_addr, img->frame_len, ".eh_frame");
	if (rc)
		return rc;
	rc = h.have_table ? search_table(img, &h, pc, &fde) : scan_frame(img, pc, &fde);
	if (rc == 0)
		*out = fde;
	return rc;
}
