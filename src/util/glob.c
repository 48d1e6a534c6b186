#include "glob.h"

/*
 * A pattern is matched as its brace-free alternatives ("/{a,b}*" is "/a*"
 * and "/b*"), each by the greedy walk that backs up only to the last '*':
 * at most the path's length times the pattern's steps, whatever the path
 * (it comes from the network). Validation bounds the alternatives.
 */
#define GLOB_MAX_LEN 512
#define GLOB_MAX_ALTERNATIVES 64

/* What is left to expand after the current piece: the rest of an enclosing pattern. */
struct glob_rest {
	const char *p, *end;
	const struct glob_rest *up;
};

/* Called with each alternative; true stops the expansion. */
typedef bool glob_fn(void *ctx, const char *alt, size_t len);

/* The end of the class that starts at p ('['), or NULL. */
static const char *class_end(const char *p, const char *end)
{
	for (p++; p < end; p++) {
		if (*p == '\\' && p + 1 < end)
			p++;
		else if (*p == ']')
			return p;
	}
	return NULL;
}

/* The '}' that closes the brace at p (in a valid pattern). */
static const char *brace_end(const char *p, const char *end)
{
	int depth = 0;

	for (; p < end; p++) {
		if (*p == '\\')
			p++;
		else if (*p == '[')
			p = class_end(p, end);
		else if (*p == '{')
			depth++;
		else if (*p == '}' && !--depth)
			return p;
	}
	return end;
}

/* Writes the alternatives of [p, end) then rest into buf from len on; true if fn stopped. */
static bool expand(const char *p, const char *end, const struct glob_rest *rest, char *buf,
		   size_t len, glob_fn *fn, void *ctx)
{
	while (p < end && *p != '{') {
		const char *to = *p == '\\' ? p + 2 : *p == '[' ? class_end(p, end) + 1 : p + 1;
		while (p < to)
			buf[len++] = *p++;
	}
	if (p == end)
		return rest ? expand(rest->p, rest->end, rest->up, buf, len, fn, ctx)
			    : fn(ctx, buf, len);
	const char *e = brace_end(p, end);
	const struct glob_rest after = { e + 1, end, rest };
	for (const char *a = p + 1, *q = a; q <= e; q++) {
		if (*q == '\\') {
			q++;
		} else if (*q == '[') {
			q = class_end(q, e);
		} else if (*q == '{') {
			q = brace_end(q, e);
		} else if (*q == ',' || q == e) {
			if (expand(a, q, &after, buf, len, fn, ctx))
				return true;
			a = q + 1;
		}
	}
	return false;
}

static bool count_one(void *ctx, const char *alt, size_t len)
{
	return ++*(unsigned *)ctx > GLOB_MAX_ALTERNATIVES;
}

bool glob_valid(const char *pat, size_t len)
{
	const char *end = pat + len;
	int depth = 0;

	if (len > GLOB_MAX_LEN)
		return false;
	for (const char *p = pat; p < end; p++) {
		if (*p == '\\') {
			if (++p == end)
				return false;
		} else if (*p == '[') {
			if (!(p = class_end(p, end)))
				return false;
		} else if (*p == '{') {
			depth++;
		} else if (*p == '}' && --depth < 0) {
			return false;
		}
	}
	char buf[GLOB_MAX_LEN];
	unsigned n = 0;
	return depth == 0 && !expand(pat, end, NULL, buf, 0, count_one, &n);
}

/* Whether c is in the class [p, e] (p at '[', e at ']'). */
static bool class_has(const char *p, const char *e, char c)
{
	bool neg = p[1] == '!', in = false;

	for (p += 1 + neg; p < e; p++) {
		char lo = *p == '\\' ? *++p : *p, hi = lo;
		if (p + 2 < e && p[1] == '-') {
			p += 2;
			hi = *p == '\\' ? *++p : *p;
		}
		if ((unsigned char)c >= (unsigned char)lo && (unsigned char)c <= (unsigned char)hi)
			in = true;
	}
	return in != neg;
}

/* Whether the one step at *p ('?', a class, a character) takes c; *p moves past it. */
static bool step(const char **p, const char *pe, char c)
{
	const char *q = *p;

	if (*q == '?') {
		*p = q + 1;
		return true;
	}
	if (*q == '[') {
		const char *e = class_end(q, pe);
		*p = e + 1;
		return class_has(q, e, c);
	}
	if (*q == '\\')
		q++;
	*p = q + 1;
	return *q == c;
}

struct subject {
	const char *s;
	size_t len;
};

/* A brace-free pattern against the whole subject. */
static bool match_alternative(void *ctx, const char *p, size_t plen)
{
	const struct subject *sub = ctx;
	const char *pe = p + plen, *s = sub->s, *se = s + sub->len;
	const char *star_p = NULL, *star_s = NULL;

	while (s < se) {
		if (p < pe && *p == '*') {
			while (p < pe && *p == '*')
				p++;
			star_p = p;
			star_s = s;
			continue;
		}
		const char *next = p;
		if (p < pe && step(&next, pe, *s)) {
			p = next;
			s++;
			continue;
		}
		if (!star_p)
			return false;
		p = star_p; /* the last '*' takes one more character */
		s = ++star_s;
	}
	while (p < pe && *p == '*')
		p++;
	return p == pe;
}

bool glob_match(const char *pat, size_t plen, const char *s, size_t slen)
{
	char buf[GLOB_MAX_LEN];
	struct subject sub = { s, slen };

	if (plen > GLOB_MAX_LEN)
		return false;
	return expand(pat, pat + plen, NULL, buf, 0, match_alternative, &sub);
}
