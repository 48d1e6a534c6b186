/*
 * The unit reader the database parsers share: it turns a direction's
 * chunks (data holds the first `captured` of `total` bytes) into whole units
 * whatever the split: a fixed-size header, a line up to LF, the first bytes
 * of a body of known length (the rest skipped, captured or not), or bytes to
 * skip. A header or a line that falls in uncaptured bytes loses the framing;
 * a body does not, its length is known.
 */
#ifndef NODESCOPE_L7_READER_H
#define NODESCOPE_L7_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define L7_READER_BUF 2048 /* the most of one unit kept: a header, a line, a statement's start */

enum l7_unit { L7_U_FIXED, L7_U_LINE, L7_U_BODY, L7_U_SKIP };

enum l7_take {
	L7_TAKE_MORE, /* the chunk ended inside the unit */
	L7_TAKE_DONE, /* the unit is complete: buf[0..have) */
	L7_TAKE_LOST, /* a header or line byte was not captured: framing lost */
};

struct l7_reader {
	enum l7_unit unit;
	uint64_t left;	 /* FIXED, BODY, SKIP: bytes still to come */
	size_t have;	 /* bytes kept in buf */
	bool cut;	 /* BODY: not all kept (longer than buf, or uncaptured); LINE: longer than buf */
	bool uncaptured; /* BODY: some of its bytes were not captured (counted truncated) */
	bool started;	 /* the unit has begun (a byte of it was seen) */
	/*
	 * Once a unit is DONE: its kept bytes, `have` of them. In the chunk
	 * itself when the unit lay whole in the chunk's captured part (no copy),
	 * else buf: valid until the feed call that took the chunk returns.
	 */
	const uint8_t *at;
	uint8_t buf[L7_READER_BUF];
};

/* Prepares the next unit. FIXED: n <= L7_READER_BUF. LINE: n ignored. */
void l7_reader_next(struct l7_reader *r, enum l7_unit unit, uint64_t n);
/*
 * Takes bytes of the current unit from the chunk's data at *pos (advanced).
 * data may be NULL when nothing was captured.
 */
enum l7_take l7_reader_take(struct l7_reader *r, const uint8_t *data, size_t captured,
			    size_t total, size_t *pos);

/*
 * The unit is the n bytes at p, all captured and whole in the chunk: handed
 * out where they lie (r.at), as l7_reader_take hands out such a unit, for a
 * parser that found it whole itself.
 */
void l7_reader_whole(struct l7_reader *r, const uint8_t *p, size_t n);

/* Little- and big-endian field reads from a buffer the caller checked. */
static inline uint32_t l7_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint32_t l7_le24(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
}
static inline uint16_t l7_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}
static inline uint32_t l7_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}
static inline uint16_t l7_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

#endif
