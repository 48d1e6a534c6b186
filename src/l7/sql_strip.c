/* Literal stripping for SQL statements. See sql_strip.h. */
#include "sql_strip.h"

#include <stdint.h>
#include <string.h>

#define MAX_DEPTH 32

struct out {
	char *p;
	size_t cap, len;
	bool full;
	size_t open[MAX_DEPTH]; /* where each unclosed '(' is in the output */
	unsigned depth;
	bool space; /* blanks or a comment before the next token */
};

/*
 * Byte classes as the C locale has them (the agent never sets another), from
 * a table: <ctype.h>'s calls, one per byte of every statement, were a tenth
 * of the agent under a simple-query workload.
 */
enum {
	C_BLANK = 1,	/* isspace, or any other control byte below 0x20 */
	C_DIGIT = 2,	/* isdigit */
	C_HEX = 4,	/* isxdigit */
	C_IDENT0 = 8,	/* an identifier's first byte: a letter, '_', any byte of a UTF-8 sequence */
	C_IDENT = 16,	/* an identifier's other bytes: those, digits and '$' */
	C_TAG = 32,	/* a dollar-quote tag's bytes: letters, digits, '_' */
	C_SPACE = 64,	/* isspace */
	C_ALPHA = 128,	/* isalpha */
};

#define C_WORD (C_IDENT0 | C_IDENT | C_TAG)
#define C_LETTER (C_WORD | C_ALPHA)
static const uint8_t cls[256] = {
	[0 ... 8] = C_BLANK,
	['\t' ... '\r'] = C_BLANK | C_SPACE,
	[14 ... 0x1f] = C_BLANK,
	[' '] = C_BLANK | C_SPACE,
	['0' ... '9'] = C_DIGIT | C_HEX | C_IDENT | C_TAG,
	['A' ... 'F'] = C_LETTER | C_HEX,
	['G' ... 'Z'] = C_LETTER,
	['a' ... 'f'] = C_LETTER | C_HEX,
	['g' ... 'z'] = C_LETTER,
	['_'] = C_WORD,
	['$'] = C_IDENT,
	[0x80 ... 0xff] = C_IDENT0 | C_IDENT,
};

static inline bool is(unsigned char c, unsigned mask)
{
	return cls[c] & mask;
}

/* Room for s and a closing "...": otherwise the output is full. */
static inline void put(struct out *o, const char *s, size_t n)
{
	if (o->full)
		return;
	if (o->space && o->len) {
		o->space = false;
		if (o->len + 1 + 4 > o->cap) {
			o->full = true;
			return;
		}
		o->p[o->len++] = ' ';
	}
	o->space = false;
	if (o->len + n + 4 > o->cap) {
		o->full = true;
		return;
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
}

/* The output from `from` holds only `?`, commas and blanks, with one `?` at least. */
static bool only_values(const struct out *o, size_t from, size_t to)
{
	bool any = false;
	for (size_t i = from; i < to; i++) {
		if (o->p[i] == '?')
			any = true;
		else if (o->p[i] != ',' && o->p[i] != ' ')
			return false;
	}
	return any;
}

static void close_paren(struct out *o)
{
	put(o, ")", 1);
	if (o->full || !o->depth)
		return;
	size_t open = o->open[--o->depth];
	if (!only_values(o, open + 1, o->len - 1))
		return;
	/* (?, ?, ?) -> (?) */
	memcpy(o->p + open, "(?)", 3);
	o->len = open + 3;
	/* "(?), (?)" -> "(?)": a repeated tuple of values */
	size_t i = open;
	while (i > 0 && o->p[i - 1] == ' ')
		i--;
	if (i > 0 && o->p[i - 1] == ',') {
		size_t comma = i - 1, j = comma;
		while (j > 0 && o->p[j - 1] == ' ')
			j--;
		if (j >= 3 && !memcmp(o->p + j - 3, "(?)", 3))
			o->len = j;
	}
}

/* Past a quoted literal or identifier that started at in[i] (the quote). */
static size_t skip_quoted(const char *in, size_t n, size_t i, char q, bool backslash)
{
	for (i++; i < n; i++) {
		if (backslash && in[i] == '\\') {
			i++;
			continue;
		}
		if (in[i] == q) {
			if (i + 1 < n && in[i + 1] == q) {
				i++;
				continue;
			}
			return i + 1;
		}
	}
	return n;
}

/* A PostgreSQL dollar-quote opener "$tag$" at in[i]: its length, or 0. */
static size_t dollar_tag(const char *in, size_t n, size_t i)
{
	size_t j = i + 1;
	if (j < n && is(in[j], C_DIGIT))
		return 0; /* $1: a parameter */
	while (j < n && is(in[j], C_TAG))
		j++;
	return j < n && in[j] == '$' ? j + 1 - i : 0;
}

static size_t skip_number(const char *in, size_t n, size_t i)
{
	if (i + 1 < n && in[i] == '0' && (in[i + 1] == 'x' || in[i + 1] == 'X')) {
		for (i += 2; i < n && (is(in[i], C_HEX) || in[i] == '_'); i++)
			;
		return i;
	}
	while (i < n && (is(in[i], C_DIGIT) || in[i] == '.' || in[i] == '_'))
		i++;
	if (i < n && (in[i] == 'e' || in[i] == 'E')) {
		size_t j = i + 1;
		if (j < n && (in[j] == '+' || in[j] == '-'))
			j++;
		if (j < n && is(in[j], C_DIGIT)) {
			for (i = j; i < n && is(in[i], C_DIGIT); i++)
				;
		}
	}
	return i;
}

/* Replaces bytes that are not valid UTF-8 (or are control bytes) by '?'. */
static void sanitize(char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x7f) { /* printable ASCII: most of any statement */
			i++;
			continue;
		}
		size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 :
				       (c & 0xf8) == 0xf0	    ? 4 : 0;
		bool ok = len && i + len <= n && !(c >= 0x80 && c < 0xc2);
		for (size_t k = 1; ok && k < len; k++)
			ok = ((unsigned char)s[i + k] & 0xc0) == 0x80;
		if (!ok) {
			s[i++] = '?';
			continue;
		}
		if (c < 0x20 || c == 0x7f)
			s[i] = ' ';
		i += len;
	}
}

size_t sql_strip(enum sql_dialect d, const char *in, size_t n, char *out, size_t cap)
{
	struct out o;
	size_t i = 0;

	/* Not an initialiser: it would zero the stack of open parentheses at every call. */
	o.p = out;
	o.cap = cap;
	o.len = o.depth = 0;
	o.full = o.space = false;

	if (!cap)
		return 0;
	if (cap < 8) {
		out[0] = '\0';
		return 0;
	}
	while (i < n && !o.full) {
		unsigned char c = (unsigned char)in[i];
		if (is(c, C_BLANK)) {
			o.space = true;
			i++;
		} else if (c == '-' && i + 1 < n && in[i + 1] == '-') {
			while (i < n && in[i] != '\n')
				i++;
			o.space = true;
		} else if (c == '#' && d == SQL_MYSQL) {
			while (i < n && in[i] != '\n')
				i++;
			o.space = true;
		} else if (c == '/' && i + 1 < n && in[i + 1] == '*') {
			unsigned nest = 1;
			for (i += 2; i < n && nest; i++) {
				if (in[i] == '*' && i + 1 < n && in[i + 1] == '/') {
					nest--;
					i++;
				} else if (d == SQL_POSTGRES && in[i] == '/' && i + 1 < n && in[i + 1] == '*') {
					nest++;
					i++;
				}
			}
			o.space = true;
		} else if (c == '\'' || (c == '"' && d == SQL_MYSQL)) {
			i = skip_quoted(in, n, i, (char)c, d != SQL_POSTGRES);
			put(&o, "?", 1);
		} else if (c == '"' || c == '`') {
			size_t end = skip_quoted(in, n, i, (char)c, false);
			put(&o, in + i, end - i);
			i = end;
		} else if (c == '$' && d == SQL_POSTGRES && dollar_tag(in, n, i)) {
			size_t t = dollar_tag(in, n, i);
			const char *end = NULL;
			for (size_t j = i + t; j + t <= n; j++) {
				if (!memcmp(in + j, in + i, t)) {
					end = in + j + t;
					break;
				}
			}
			i = end ? (size_t)(end - in) : n;
			put(&o, "?", 1);
		} else if (c == '$' && i + 1 < n && is(in[i + 1], C_DIGIT)) {
			/* $1: a parameter, kept */
			size_t s = i++;
			while (i < n && is(in[i], C_DIGIT))
				i++;
			put(&o, in + s, i - s);
		} else if (is(c, C_DIGIT) || (c == '.' && i + 1 < n && is(in[i + 1], C_DIGIT))) {
			i = skip_number(in, n, i);
			put(&o, "?", 1);
		} else if (is(c, C_IDENT0)) {
			size_t s = i;
			while (i < n && is(in[i], C_IDENT))
				i++;
			size_t len = i - s;
			/* E'..', B'..', X'..', N'..', _utf8'..': prefixed string literals */
			if (i < n && in[i] == '\'' &&
			    ((len == 1 && strchr("EeBbXxNn", in[s])) || in[s] == '_')) {
				bool bs = d != SQL_POSTGRES || in[s] == 'E' || in[s] == 'e';
				i = skip_quoted(in, n, i, '\'', bs);
				put(&o, "?", 1);
			} else {
				put(&o, in + s, len);
			}
		} else if (c == '(') {
			put(&o, "(", 1);
			if (!o.full && o.depth < MAX_DEPTH)
				o.open[o.depth++] = o.len - 1;
			i++;
		} else if (c == ')') {
			close_paren(&o);
			i++;
		} else {
			put(&o, in + i, 1);
			i++;
		}
	}
	if (o.full || i < n) {
		/* cut at a character boundary */
		while (o.len && ((unsigned char)out[o.len - 1] & 0xc0) == 0x80)
			o.len--;
		if (o.len && (unsigned char)out[o.len - 1] >= 0xc0)
			o.len--;
		memcpy(out + o.len, "...", 3);
		o.len += 3;
	}
	out[o.len] = '\0';
	sanitize(out, o.len);
	return o.len;
}

void sql_mark_cut(char *out, size_t cap)
{
	size_t n = strnlen(out, cap);
	if (n >= 3 && !memcmp(out + n - 3, "...", 3))
		return;
	if (n + 4 > cap)
		n = cap - 4;
	/* not inside a character */
	while (n && ((unsigned char)out[n] & 0xc0) == 0x80)
		n--;
	memcpy(out + n, "...", 4);
}

void sql_operation(const char *in, size_t n, char *op, size_t cap)
{
	size_t i = 0, k = 0;

	if (!cap)
		return;
	for (;;) {
		while (i < n && (is(in[i], C_SPACE) || in[i] == '('))
			i++;
		if (i + 1 < n && in[i] == '-' && in[i + 1] == '-') {
			while (i < n && in[i] != '\n')
				i++;
		} else if (i + 1 < n && in[i] == '/' && in[i + 1] == '*') {
			for (i += 2; i + 1 < n && !(in[i] == '*' && in[i + 1] == '/'); i++)
				;
			i += 2;
		} else {
			break;
		}
	}
	for (; i < n && k + 1 < cap && is(in[i], C_ALPHA); i++)
		op[k++] = (char)(in[i] >= 'a' ? in[i] - ('a' - 'A') : in[i]);
	op[k] = '\0';
}
