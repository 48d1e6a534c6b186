#include "fields.h"

#include <errno.h>

int node_field_u64(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	/* "12ab" is no number: a field ends at a blank or the line's end. */
	if (*s && *s != ' ' && *s != '\t' && *s != '\n')
		return -EINVAL;
	*p = s;
	*out = v;
	return 0;
}

void node_field_next_line(const char **p)
{
	const char *s = *p;

	while (*s && *s != '\n')
		s++;
	if (*s)
		s++;
	*p = s;
}
