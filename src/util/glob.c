#include "glob.h"

/* What is left to match after the current piece: the rest of an enclosing pattern. */
struct glob_rest {
	const char *p, *end;
	const struct glob_rest *up;
};

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

/* The '}' that closes the brace at p, or NULL. */
static const char *brace_end(const char *p, const char *end)
{
	int depth = 0;

	for (; p < end; p++) {
		if (*p == '\\' && p + 1 < end) {
			p++;
		} else if (*p == '[') {
			const char *e = class_end(p, end);
			if (!e)
				return NULL;
			p = e;
		} else if (*p == '{') {
			depth++;
		} else if (*p == '}' && !--depth) {
			return p;
		}
	}
	return NULL;
}

bool glob_valid(const char *pat, size_t len)
{
	const char *end = pat + len;
	int depth = 0;

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
	return depth == 0;
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

static bool match(const char *p, const char *pe, const char *s, const char *se,
		  const struct glob_rest *rest)
{
	while (p < pe) {
		switch (*p) {
		case '*':
			while (p < pe && *p == '*')
				p++;
			for (const char *t = s;; t++) {
				if (match(p, pe, t, se, rest))
					return true;
				if (t == se)
					return false;
			}
		case '?':
			if (s == se)
				return false;
			p++, s++;
			break;
		case '[': {
			const char *e = class_end(p, pe);
			if (s == se || !class_has(p, e, *s))
				return false;
			p = e + 1, s++;
			break;
		}
		case '{': {
			const char *e = brace_end(p, pe);
			const struct glob_rest after = { e + 1, pe, rest };
			/* each top-level alternative, then what follows the braces */
			for (const char *a = p + 1, *q = a; q <= e; q++) {
				if (*q == '\\') {
					q++;
				} else if (*q == '[') {
					q = class_end(q, e);
				} else if (*q == '{') {
					q = brace_end(q, e);
				} else if (*q == ',' || q == e) {
					if (match(a, q, s, se, &after))
						return true;
					a = q + 1;
				}
			}
			return false;
		}
		case '\\':
			p++; /* the next one is itself */
			__attribute__((fallthrough));
		default:
			if (s == se || *s != *p)
				return false;
			p++, s++;
		}
	}
	if (rest)
		return match(rest->p, rest->end, s, se, rest->up);
	return s == se;
}

bool glob_match(const char *pat, size_t plen, const char *s, size_t slen)
{
	return match(pat, pat + plen, s, s + slen, NULL);
}
