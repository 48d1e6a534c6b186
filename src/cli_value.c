/* The value forms options take: integers, durations, booleans, sizes, ports, networks. Pure. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

/*
 * Leading digits of s as a number, at most limit; *end past them. strtoull
 * is not used because it takes blanks, a sign ("-1" is a huge value) and
 * wraps silently.
 */
static int parse_digits(const char *s, unsigned long long limit, unsigned long long *v,
			const char **end)
{
	unsigned long long n = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');
		if (n > (limit - d) / 10)
			return -EINVAL;
		n = n * 10 + d;
	}
	*v = n;
	*end = p;
	return 0;
}

int cli_parse_int(const char *s, long long min, long long max, long long *out)
{
	bool neg = *s == '-';
	unsigned long long v;
	const char *end;

	if (neg && min >= 0)
		return -EINVAL;
	if (parse_digits(s + neg, neg ? -(unsigned long long)min : (unsigned long long)max, &v,
			 &end) ||
	    *end)
		return -EINVAL;
	long long n = neg ? -(long long)v : (long long)v;
	if (n < min || n > max)
		return -EINVAL;
	*out = n;
	return 0;
}

/* One of Go's duration units at p: its length in *n, its nanoseconds; 0 if none. */
static unsigned long long duration_unit(const char *p, size_t *n)
{
	static const struct {
		const char *name;
		unsigned long long ns;
	} units[] = { { "ns", 1 },	       { "us", 1000 },	      { "\u00b5s", 1000 },
		      { "\u03bcs", 1000 },    { "ms", 1000000 },     { "s", 1000000000ull },
		      { "m", 60000000000ull }, { "h", 3600000000000ull } };

	for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
		size_t len = strlen(units[u].name);
		if (!strncmp(p, units[u].name, len)) {
			*n = len;
			return units[u].ns;
		}
	}
	return 0;
}

/* Nanoseconds at most this (292 years, as Go's time.Duration): nothing wraps. */
#define DURATION_MAX_NS ((unsigned long long)INT64_MAX)

int cli_parse_duration(const char *s, unsigned long long *ns)
{
	unsigned long long total = 0, v;
	const char *p = s + (*s == '+'), *end;

	if (!*p)
		return -EINVAL;
	if (p == s && !parse_digits(p, DURATION_MAX_NS / 1000000000ull, &v, &end) && !*end) {
		*ns = v * 1000000000ull; /* plain seconds ("0" too, as Go takes it) */
		return 0;
	}
	while (*p) {
		unsigned long long whole = 0, frac = 0, scale = 1, unit;
		bool digits = false;
		size_t n;
		for (; *p >= '0' && *p <= '9'; p++, digits = true) {
			if (whole > (DURATION_MAX_NS - (unsigned)(*p - '0')) / 10)
				return -EINVAL;
			whole = whole * 10 + (unsigned)(*p - '0');
		}
		if (*p == '.') {
			/* Digits past the 18th are below any unit's nanosecond: dropped. */
			for (p++; *p >= '0' && *p <= '9'; p++, digits = true)
				if (scale < 1000000000000000000ull) {
					frac = frac * 10 + (unsigned)(*p - '0');
					scale *= 10;
				}
		}
		if (!digits || !(unit = duration_unit(p, &n)))
			return -EINVAL;
		p += n;
		if (whole > DURATION_MAX_NS / unit)
			return -EINVAL;
		unsigned long long part = whole * unit +
					  (unsigned long long)((unsigned __int128)frac * unit / scale);
		if (part > DURATION_MAX_NS - total)
			return -EINVAL;
		total += part;
	}
	*ns = total;
	return 0;
}

/* A duration that is a whole number of unit_ns, in min..max of them. */
static int parse_duration_in(const char *s, unsigned long long unit_ns, long long min,
			     long long max, long long *out)
{
	unsigned long long ns;

	if (min < 0 || max < min || cli_parse_duration(s, &ns) || ns % unit_ns ||
	    ns / unit_ns < (unsigned long long)min || ns / unit_ns > (unsigned long long)max)
		return -EINVAL;
	*out = (long long)(ns / unit_ns);
	return 0;
}

int cli_parse_seconds(const char *s, long long min, long long max, long long *out)
{
	return parse_duration_in(s, 1000000000ull, min, max, out);
}

int cli_parse_millis(const char *s, long long min, long long max, long long *out)
{
	return parse_duration_in(s, 1000000ull, min, max, out);
}

int cli_parse_float(const char *s, double min, double max, double *out)
{
	char *end;

	/* strtod takes blanks, hex, "inf" and "nan": none of them is a value here */
	if (!((*s >= '0' && *s <= '9') || *s == '.' || *s == '-') || strpbrk(s, "xXnN"))
		return -EINVAL;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= min && v <= max))
		return -EINVAL;
	*out = v;
	return 0;
}

int cli_parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "1", "t", "true", "yes" };
	static const char *const no[] = { "0", "f", "false", "no" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(s, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

int cli_parse_ring_size(const char *s, uint32_t page, uint32_t *out)
{
	unsigned long long v;
	const char *end;
	unsigned shift = 0;

	if (parse_digits(s, 1ull << 30, &v, &end))
		return -EINVAL;
	if (*end == 'k' || *end == 'K')
		shift = 10, end++;
	else if (*end == 'm' || *end == 'M')
		shift = 20, end++;
	/* compare before shifting, so a huge v cannot wrap into range */
	if (*end || v == 0 || v > ((1ull << 30) >> shift))
		return -EINVAL;
	v <<= shift;
	unsigned long long p = page;
	while (p < v)
		p <<= 1;
	*out = (uint32_t)p;
	return 0;
}

int cli_parse_bytes(const char *s, unsigned long long min, unsigned long long max,
		    unsigned long long *out)
{
	static const struct {
		const char *unit;
		unsigned shift;
	} units[] = { { "", 0 },    { "b", 0 },	   { "k", 10 },	 { "kb", 10 }, { "kib", 10 },
		      { "m", 20 },  { "mb", 20 },  { "mib", 20 }, { "g", 30 }, { "gb", 30 },
		      { "gib", 30 } };
	unsigned long long v;
	const char *end;

	if (parse_digits(s, ~0ull, &v, &end))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcasecmp(end, units[i].unit))
			continue;
		if (v > (max >> units[i].shift)) /* before shifting, so nothing wraps */
			return -EINVAL;
		v <<= units[i].shift;
		if (v < min)
			return -EINVAL;
		*out = v;
		return 0;
	}
	return -EINVAL;
}

int cli_parse_port_range(const char *s, struct ns_port_range *out)
{
	unsigned long long lo, hi;
	const char *p;

	if (parse_digits(s, 65535, &lo, &p) || *p != '-' || parse_digits(p + 1, 65535, &hi, &p) ||
	    *p || lo == 0 || lo > hi)
		return -EINVAL;
	*out = (struct ns_port_range){ (uint16_t)lo, (uint16_t)hi };
	return 0;
}

int cli_parse_port_ranges(const char *s, struct ns_port_ranges *out)
{
	struct ns_port_ranges r = { 0 };

	for (const char *p = s;;) {
		char item[16];
		p += strspn(p, " \t\n\r,");
		size_t n = strcspn(p, " \t\n\r,");
		if (!n)
			break;
		if (n >= sizeof(item) || r.n == NS_PORT_RANGES_MAX)
			return -EINVAL;
		memcpy(item, p, n);
		item[n] = '\0';
		if (cli_parse_port_range(item, &r.r[r.n++]))
			return -EINVAL;
		p += n;
	}
	if (!r.n)
		return -EINVAL;
	*out = r;
	return 0;
}

int cli_parse_cidr(const char *s, size_t len, struct ns_cidr *out)
{
	char text[INET6_ADDRSTRLEN + 8];
	struct ns_cidr c = { 0 };
	unsigned long long bits;
	const char *end;

	if (!len || len >= sizeof(text))
		return -EINVAL;
	memcpy(text, s, len);
	text[len] = '\0';
	char *slash = strchr(text, '/');
	if (slash)
		*slash = '\0';
	c.family = strchr(text, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(c.family, text, c.addr) != 1)
		return -EINVAL;
	unsigned max = c.family == AF_INET ? 32 : 128;
	if (!slash)
		bits = max;
	else if (parse_digits(slash + 1, max, &bits, &end) || *end)
		return -EINVAL;
	c.bits = (uint8_t)bits;
	/* As Go's netip: the bits past the prefix are cleared ("10.1.2.3/8" is 10.0.0.0/8). */
	for (unsigned b = c.bits; b < max; b++)
		c.addr[b / 8] &= (uint8_t)~(0x80u >> (b % 8));
	*out = c;
	return 0;
}
