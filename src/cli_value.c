/* The value forms options take: integers, durations, booleans, sizes, port ranges. Pure. */
#include <errno.h>
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

int cli_parse_seconds(const char *s, long long min, long long max, long long *out)
{
	static const struct {
		char unit;
		unsigned long long seconds;
	} units[] = { { 'h', 3600 }, { 'm', 60 }, { 's', 1 } };
	unsigned long long total = 0, v;
	const char *p = s;

	if (!*s || min < 0 || max < min)
		return -EINVAL;
	if (!parse_digits(p, (unsigned long long)max, &v, &p) && !*p) {
		total = v; /* plain seconds */
	} else {
		/* Go's time.ParseDuration in whole units: "1h30m", "90s". */
		for (p = s; *p;) {
			size_t u;
			if (parse_digits(p, (unsigned long long)max, &v, &p))
				return -EINVAL;
			for (u = 0; u < sizeof(units) / sizeof(units[0]); u++)
				if (*p == units[u].unit)
					break;
			/* "ms", "us", "ns" and fractions are finer than the agent counts */
			if (u == sizeof(units) / sizeof(units[0]) || (p[0] == 'm' && p[1] == 's'))
				return -EINVAL;
			p++;
			if (v > ((unsigned long long)max - total) / units[u].seconds)
				return -EINVAL;
			total += v * units[u].seconds;
		}
	}
	if (total < (unsigned long long)min || total > (unsigned long long)max)
		return -EINVAL;
	*out = (long long)total;
	return 0;
}

int cli_parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "1", "true", "yes" };
	static const char *const no[] = { "0", "false", "no" };

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
