#include "json.h"

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. */
static int utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	int n;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0; /* also stops at the NUL terminator */
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0; /* overlong, out of range, or a surrogate */
	return n;
}

/* Bytes that pass through a JSON string as they are: printable ASCII but '"' and '\\'. */
static const bool plain_byte[256] = {
	[0x20 ... 0x21] = true, /* '"' is 0x22 */
	[0x23 ... 0x5b] = true, /* '\\' is 0x5c */
	[0x5d ... 0x7e] = true,
};

static bool json_plain(unsigned char c)
{
	return plain_byte[c];
}

void json_string(struct strbuf *sb, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	/* Most strings (addresses, paths, names) are plain throughout: quoted in one append. */
	while (json_plain(*s))
		s++;
	if (!*s) {
		size_t n = (size_t)(s - (const unsigned char *)str);
		char *d = strbuf_extend(sb, n + 2);
		if (d) {
			d[0] = '"';
			memcpy(d + 1, str, n);
			d[n + 1] = '"';
		}
		return;
	}
	strbuf_putc(sb, '"');
	strbuf_append(sb, str, (size_t)(s - (const unsigned char *)str));
	while (*s) {
		/* Runs of plain bytes go in one append: most strings are one run. */
		const unsigned char *run = s;
		while (json_plain(*s))
			s++;
		if (s > run)
			strbuf_append(sb, run, (size_t)(s - run));
		if (!*s)
			break;
		int n = utf8_len(s);
		if (n == 1) {
			switch (*s) {
			case '"':
				strbuf_puts(sb, "\\\"");
				break;
			case '\\':
				strbuf_puts(sb, "\\\\");
				break;
			case '\n':
				strbuf_puts(sb, "\\n");
				break;
			case '\t':
				strbuf_puts(sb, "\\t");
				break;
			case '\r':
				strbuf_puts(sb, "\\r");
				break;
			default:
				strbuf_printf(sb, "\\u%04x", *s);
			}
			s++;
		} else if (n > 1) {
			strbuf_append(sb, s, (size_t)n);
			s += n;
		} else {
			strbuf_printf(sb, "\\u%04x", *s);
			s++;
		}
	}
	strbuf_putc(sb, '"');
}

void json_begin(struct strbuf *sb, const char *type)
{
	strbuf_puts(sb, "{\"type\":");
	json_string(sb, type);
}

/* "00" to "99": two digits a division (a nanosecond timestamp is 19). */
static const char digit_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* Decimal digits, without printf's format parsing (a line has several). */
void json_u64(struct strbuf *sb, uint64_t val)
{
	char tmp[20];
	size_t i = sizeof(tmp);

	while (val >= 100) {
		unsigned pair = (unsigned)(val % 100) * 2;
		val /= 100;
		tmp[--i] = digit_pairs[pair + 1];
		tmp[--i] = digit_pairs[pair];
	}
	if (val >= 10) {
		tmp[--i] = digit_pairs[val * 2 + 1];
		tmp[--i] = digit_pairs[val * 2];
	} else {
		tmp[--i] = (char)('0' + val);
	}
	strbuf_append(sb, tmp + i, sizeof(tmp) - i);
}

void json_i64(struct strbuf *sb, int64_t val)
{
	if (val < 0) {
		strbuf_putc(sb, '-');
		json_u64(sb, -(uint64_t)val);
	} else {
		json_u64(sb, (uint64_t)val);
	}
}

void json_bool(struct strbuf *sb, int val)
{
	strbuf_puts(sb, val ? "true" : "false");
}

void json_end(struct strbuf *sb)
{
	strbuf_puts(sb, "}\n");
}
