#include "meminfo.h"

#include <errno.h>
#include <string.h>

#include "fields.h"

static const char *const names[NODE_MEM_FIELDS] = {
	[NODE_MEM_TOTAL] = "MemTotal:",
	[NODE_MEM_FREE] = "MemFree:",
	[NODE_MEM_AVAILABLE] = "MemAvailable:",
	[NODE_MEM_CACHED] = "Cached:",
};

/* The value after a wanted line's name, in bytes. */
static int line_bytes(const char *p, uint64_t *out)
{
	uint64_t v;
	int err = node_field_u64(&p, &v);

	if (err)
		return err;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!strncmp(p, "kB", 2) && (p[2] == '\n' || !p[2] || p[2] == ' ')) {
		if (v > UINT64_MAX / 1024)
			return -ERANGE;
		v *= 1024;
	} else if (*p && *p != '\n') {
		return -EINVAL; /* a unit the kernel never wrote */
	}
	*out = v;
	return 0;
}

int node_meminfo_parse(const char *text, struct node_mem *out)
{
	const char *p = text;

	*out = (struct node_mem){ 0 };
	while (*p) {
		for (int f = 0; f < NODE_MEM_FIELDS; f++) {
			size_t n = strlen(names[f]);
			if (strncmp(p, names[f], n))
				continue;
			int err = line_bytes(p + n, &out->bytes[f]);
			if (err)
				return err;
			out->have |= 1u << f;
			break;
		}
		node_field_next_line(&p);
	}
	return out->have & (1u << NODE_MEM_TOTAL) ? 0 : -EINVAL;
}
