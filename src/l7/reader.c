/* The database parsers' unit reader. See reader.h. */
#include "reader.h"

#include <string.h>

void l7_reader_next(struct l7_reader *r, enum l7_unit unit, uint64_t n)
{
	r->unit = unit;
	r->left = unit == L7_U_FIXED && n > L7_READER_BUF ? L7_READER_BUF : n;
	r->have = 0;
	r->cut = false;
	r->uncaptured = false;
	r->started = false;
}

/* Hands out the n bytes at p where they lie: at most L7_READER_BUF of them kept. */
static void in_place(struct l7_reader *r, const uint8_t *p, size_t n)
{
	r->at = p;
	r->have = n < L7_READER_BUF ? n : L7_READER_BUF;
	r->cut = n > L7_READER_BUF;
}

void l7_reader_whole(struct l7_reader *r, const uint8_t *p, size_t n)
{
	in_place(r, p, n);
	r->left = 0;
	r->uncaptured = false;
	r->started = true;
}

enum l7_take l7_reader_take(struct l7_reader *r, const uint8_t *data, size_t captured,
			    size_t total, size_t *pos)
{
	size_t p = *pos;

	if (!data)
		captured = 0;
	if (!r->started && (p < total || (r->unit != L7_U_LINE && r->left == 0)))
		r->started = true;
	switch (r->unit) {
	case L7_U_LINE: {
		/* the captured bytes up to the line's end, kept in one copy */
		size_t end = captured < total ? captured : total;
		const uint8_t *lf = p < end ? memchr(data + p, '\n', end - p) : NULL;
		size_t stop = lf ? (size_t)(lf - data) : p < end ? end : p;
		size_t keep = stop - p;
		if (lf && !r->have) { /* the whole line is in this chunk */
			in_place(r, data + p, keep);
			*pos = stop + 1;
			return L7_TAKE_DONE;
		}
		r->at = r->buf;
		if (keep > L7_READER_BUF - r->have) {
			keep = L7_READER_BUF - r->have;
			r->cut = true;
		}
		if (keep) /* data may be NULL when nothing was captured */
			memcpy(r->buf + r->have, data + p, keep);
		r->have += keep;
		if (lf) {
			*pos = stop + 1;
			return L7_TAKE_DONE;
		}
		*pos = stop;
		return stop < total ? L7_TAKE_LOST : L7_TAKE_MORE;
	}
	case L7_U_FIXED:
	case L7_U_BODY:
	case L7_U_SKIP: {
		size_t n = total - p;
		if (n > r->left)
			n = (size_t)r->left;
		if (r->unit != L7_U_SKIP) {
			/* the captured part of these n bytes */
			size_t cn = p < captured ? captured - p : 0;
			if (cn > n)
				cn = n;
			if (r->unit == L7_U_FIXED && cn < n) {
				*pos = p + cn;
				return L7_TAKE_LOST;
			}
			if (cn < n)
				r->uncaptured = true;
			if (n == r->left && !r->have && !r->cut) {
				/* the whole unit is in this chunk: kept where it is */
				size_t keep = cn < L7_READER_BUF ? cn : L7_READER_BUF;
				r->at = keep ? data + p : r->buf;
				r->have = keep;
				r->cut = keep < n;
				*pos = p + n;
				r->left = 0;
				return L7_TAKE_DONE;
			}
			r->at = r->buf;
			if (!r->cut) {
				size_t keep = cn;
				if (keep > L7_READER_BUF - r->have)
					keep = L7_READER_BUF - r->have;
				if (keep) /* data may be NULL when nothing was captured */
					memcpy(r->buf + r->have, data + p, keep);
				r->have += keep;
				if (keep < n)
					r->cut = true;
			}
		}
		p += n;
		r->left -= n;
		*pos = p;
		return r->left ? L7_TAKE_MORE : L7_TAKE_DONE;
	}
	}
	return L7_TAKE_LOST;
}
