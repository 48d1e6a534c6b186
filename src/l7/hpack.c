/* HPACK decoding. See hpack.h. */
#include "hpack.h"

#include <stdlib.h>
#include <string.h>

/*
 * RFC 7541 Appendix B's Huffman code is canonical: codes of one length are
 * consecutive, in symbol order, after the shorter ones. So the code is
 * these two tables: how many codes each length has, and the symbols in
 * code order. Appendix A's static table follows.
 */
/* Codes per bit length (index 0..30). */
static const uint16_t huff_count[31] = {
	0, 0, 0, 0, 0, 10, 26, 32, 6, 0, 5, 3, 2, 6, 2, 3, 0, 0, 0, 3, 8, 13, 26, 29, 12, 4, 15, 19, 29, 0, 4,
};
/* The symbols in canonical order: by code length, then by value (256 is EOS). */
static const uint16_t huff_symbol[257] = {
	48, 49, 50, 97, 99, 101, 105, 111, 115, 116, 32, 37, 45, 46, 47, 51,
	52, 53, 54, 55, 56, 57, 61, 65, 95, 98, 100, 102, 103, 104, 108, 109,
	110, 112, 114, 117, 58, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76,
	77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 89, 106, 107, 113, 118,
	119, 120, 121, 122, 38, 42, 44, 59, 88, 90, 33, 34, 40, 41, 63, 39,
	43, 124, 35, 62, 0, 36, 64, 91, 93, 126, 94, 125, 60, 96, 123, 92,
	195, 208, 128, 130, 131, 162, 184, 194, 224, 226, 153, 161, 167, 172, 176, 177,
	179, 209, 216, 217, 227, 229, 230, 129, 132, 133, 134, 136, 146, 154, 156, 160,
	163, 164, 169, 170, 173, 178, 181, 185, 186, 187, 189, 190, 196, 198, 228, 232,
	233, 1, 135, 137, 138, 139, 140, 141, 143, 147, 149, 150, 151, 152, 155, 157,
	158, 165, 166, 168, 174, 175, 180, 182, 183, 188, 191, 197, 231, 239, 9, 142,
	144, 145, 148, 159, 171, 206, 215, 225, 236, 237, 199, 207, 234, 235, 192, 193,
	200, 201, 202, 205, 210, 213, 218, 219, 238, 240, 242, 243, 255, 203, 204, 211,
	212, 214, 221, 222, 223, 241, 244, 245, 246, 247, 248, 250, 251, 252, 253, 254,
	2, 3, 4, 5, 6, 7, 8, 11, 12, 14, 15, 16, 17, 18, 19, 20,
	21, 23, 24, 25, 26, 27, 28, 29, 30, 31, 127, 220, 249, 10, 13, 22,
	256,
};
static const struct hpack_static { const char *name, *value; } static_table[61] = {
	{ ":authority", "" },
	{ ":method", "GET" },
	{ ":method", "POST" },
	{ ":path", "/" },
	{ ":path", "/index.html" },
	{ ":scheme", "http" },
	{ ":scheme", "https" },
	{ ":status", "200" },
	{ ":status", "204" },
	{ ":status", "206" },
	{ ":status", "304" },
	{ ":status", "400" },
	{ ":status", "404" },
	{ ":status", "500" },
	{ "accept-charset", "" },
	{ "accept-encoding", "gzip, deflate" },
	{ "accept-language", "" },
	{ "accept-ranges", "" },
	{ "accept", "" },
	{ "access-control-allow-origin", "" },
	{ "age", "" },
	{ "allow", "" },
	{ "authorization", "" },
	{ "cache-control", "" },
	{ "content-disposition", "" },
	{ "content-encoding", "" },
	{ "content-language", "" },
	{ "content-length", "" },
	{ "content-location", "" },
	{ "content-range", "" },
	{ "content-type", "" },
	{ "cookie", "" },
	{ "date", "" },
	{ "etag", "" },
	{ "expect", "" },
	{ "expires", "" },
	{ "from", "" },
	{ "host", "" },
	{ "if-match", "" },
	{ "if-modified-since", "" },
	{ "if-none-match", "" },
	{ "if-range", "" },
	{ "if-unmodified-since", "" },
	{ "last-modified", "" },
	{ "link", "" },
	{ "location", "" },
	{ "max-forwards", "" },
	{ "proxy-authenticate", "" },
	{ "proxy-authorization", "" },
	{ "range", "" },
	{ "referer", "" },
	{ "refresh", "" },
	{ "retry-after", "" },
	{ "server", "" },
	{ "set-cookie", "" },
	{ "strict-transport-security", "" },
	{ "transfer-encoding", "" },
	{ "user-agent", "" },
	{ "vary", "" },
	{ "via", "" },
	{ "www-authenticate", "" },
};

long hpack_huffman(const uint8_t *in, size_t n, char *out, size_t cap)
{
	size_t k = 0;
	uint32_t code = 0, first = 0;
	unsigned len = 0, index = 0, pad = 0;
	bool pad_ones = true;

	for (size_t i = 0; i < n; i++) {
		for (int b = 7; b >= 0; b--) {
			unsigned bit = in[i] >> b & 1;
			code = code << 1 | bit;
			len++;
			pad++;
			pad_ones &= bit;
			if (len > 30)
				return -1;
			uint32_t count = huff_count[len];
			if (code - first < count) {
				unsigned sym = huff_symbol[index + (code - first)];
				if (sym == 256)
					return -1; /* EOS inside a string */
				if (k < cap)
					out[k] = (char)sym;
				k++;
				code = first = 0;
				len = index = 0;
				pad = 0;
				pad_ones = true;
				continue;
			}
			index += count;
			first = (first + count) << 1;
		}
	}
	/* what is left is padding: at most 7 bits, all ones (the EOS code's start) */
	if (pad > 7 || !pad_ones)
		return -1;
	return (long)k;
}

void hpack_init(struct hpack *h)
{
	memset(h, 0, sizeof(*h));
	h->max_size = HPACK_DEFAULT_SIZE;
}

static void drop_oldest(struct hpack *h)
{
	struct hpack_entry *e = &h->e[(h->head + h->n - 1) % h->cap];
	h->size -= e->nlen + e->vlen + 32;
	free(e->name);
	e->name = e->value = NULL;
	h->n--;
}

void hpack_lost(struct hpack *h)
{
	while (h->n)
		drop_oldest(h);
}

void hpack_free(struct hpack *h)
{
	hpack_lost(h);
	free(h->e);
	h->e = NULL;
	h->cap = 0;
}

static void evict_to(struct hpack *h, uint32_t size)
{
	while (h->n && h->size > size)
		drop_oldest(h);
}

/* Inserts a field at the head, evicting as the RFC says. */
static void insert(struct hpack *h, const char *name, size_t nlen, const char *value, size_t vlen)
{
	uint64_t sz = (uint64_t)nlen + vlen + 32;
	if (sz > h->max_size) {
		hpack_lost(h); /* larger than the table: it empties it */
		return;
	}
	evict_to(h, h->max_size - (uint32_t)sz);
	if (h->n == h->cap) {
		/* grow the ring, oldest entries kept in order */
		unsigned cap = h->cap ? h->cap * 2 : 16;
		struct hpack_entry *e = calloc(cap, sizeof(*e));
		if (!e) {
			h->no_memory++;
			hpack_lost(h);
			return;
		}
		for (unsigned i = 0; i < h->n; i++)
			e[i] = h->e[(h->head + i) % h->cap];
		free(h->e);
		h->e = e;
		h->cap = cap;
		h->head = 0;
	}
	char *m = malloc(nlen + vlen + 1);
	if (!m) {
		h->no_memory++;
		hpack_lost(h);
		return;
	}
	memcpy(m, name, nlen);
	memcpy(m + nlen, value, vlen);
	h->head = (h->head + h->cap - 1) % h->cap;
	struct hpack_entry *e = &h->e[h->head];
	e->name = m;
	e->value = m + nlen;
	e->nlen = (uint32_t)nlen;
	e->vlen = (uint32_t)vlen;
	h->n++;
	h->size += (uint32_t)sz;
}

/* An integer with an N-bit prefix at p[*off]. False when cut or too large. */
static bool integer(const uint8_t *p, size_t n, size_t *off, unsigned prefix, uint32_t *v)
{
	if (*off >= n)
		return false;
	uint32_t max = (1u << prefix) - 1, x = p[(*off)++] & max;
	if (x < max) {
		*v = x;
		return true;
	}
	for (unsigned shift = 0; shift <= 21; shift += 7) {
		if (*off >= n)
			return false;
		uint8_t b = p[(*off)++];
		x += (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

/* A string literal at p[*off] into buf (HPACK_STRING_MAX): its length, or -1. */
static long string(struct hpack *h, const uint8_t *p, size_t n, size_t *off, char *buf)
{
	if (*off >= n)
		return -1;
	bool huff = p[*off] & 0x80;
	uint32_t len;
	if (!integer(p, n, off, 7, &len) || len > n - *off)
		return -1;
	long k;
	if (huff) {
		k = hpack_huffman(p + *off, len, buf, HPACK_STRING_MAX);
	} else {
		k = len;
		memcpy(buf, p + *off, len < HPACK_STRING_MAX ? len : HPACK_STRING_MAX);
	}
	*off += len;
	if (k > HPACK_STRING_MAX) {
		h->cut++;
		k = HPACK_STRING_MAX;
	}
	return k;
}

/* Field `index` (1-based): false when it names an entry not known. */
static bool field(const struct hpack *h, uint32_t index, const char **name, size_t *nlen,
		  const char **value, size_t *vlen)
{
	if (index >= 1 && index <= HPACK_STATIC) {
		*name = static_table[index - 1].name;
		*nlen = strlen(*name);
		*value = static_table[index - 1].value;
		*vlen = strlen(*value);
		return true;
	}
	uint32_t d = index - HPACK_STATIC - 1;
	if (index <= HPACK_STATIC || d >= h->n)
		return false;
	const struct hpack_entry *e = &h->e[(h->head + d) % h->cap];
	*name = e->name;
	*nlen = e->nlen;
	*value = e->value;
	*vlen = e->vlen;
	return true;
}

int hpack_decode(struct hpack *h, const uint8_t *p, size_t n, hpack_field_fn fn, void *ctx)
{
	char nbuf[HPACK_STRING_MAX], vbuf[HPACK_STRING_MAX]; /* on the stack: no global state */
	size_t off = 0;

	while (off < n) {
		uint8_t b = p[off];
		uint32_t index;
		const char *name, *value;
		size_t nlen, vlen;
		if (b & 0x80) { /* indexed field */
			if (!integer(p, n, &off, 7, &index) || index == 0)
				goto bad;
			if (field(h, index, &name, &nlen, &value, &vlen)) {
				fn(ctx, name, nlen, value, vlen);
			} else {
				h->unknown_refs++;
				fn(ctx, "", 0, NULL, 0);
			}
			continue;
		}
		if ((b & 0xe0) == 0x20) { /* dynamic table size update */
			uint32_t size;
			if (!integer(p, n, &off, 5, &size) || size > HPACK_MAX_SIZE)
				goto bad;
			h->max_size = size;
			evict_to(h, size);
			continue;
		}
		bool indexing = (b & 0xc0) == 0x40;
		if (!integer(p, n, &off, indexing ? 6 : 4, &index))
			goto bad;
		bool known = true;
		long nl;
		if (index) {
			const char *v;
			size_t vl;
			known = field(h, index, &name, &nlen, &v, &vl);
			if (known) {
				/* the name may live in the table an insertion below evicts: copy it */
				nl = (long)(nlen < HPACK_STRING_MAX ? nlen : HPACK_STRING_MAX);
				memcpy(nbuf, name, (size_t)nl);
			} else {
				nl = 0;
				h->unknown_refs++;
			}
		} else if ((nl = string(h, p, n, &off, nbuf)) < 0) {
			goto bad;
		}
		long vl = string(h, p, n, &off, vbuf);
		if (vl < 0)
			goto bad;
		if (known)
			fn(ctx, nbuf, (size_t)nl, vbuf, (size_t)vl);
		else
			fn(ctx, "", 0, NULL, 0);
		if (indexing) {
			if (known)
				insert(h, nbuf, (size_t)nl, vbuf, (size_t)vl);
			else
				hpack_lost(h); /* an entry of unknown name: the indices after it are unknown */
		}
	}
	return 0;
bad:
	h->errors++;
	hpack_lost(h);
	return -1;
}
