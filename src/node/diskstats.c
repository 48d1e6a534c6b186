#include "diskstats.h"

#include <pthread.h>
#include <regex.h>
#include <string.h>

#include "fields.h"

/* Reads "major minor name f1 .. f11" at p; 0 when the line is well-formed. */
static int parse_line(const char *p, struct node_disk *d)
{
	uint64_t v[11], major, minor;
	size_t n;

	if (node_field_u64(&p, &major) || node_field_u64(&p, &minor))
		return -1;
	while (*p == ' ' || *p == '\t')
		p++;
	n = strcspn(p, " \t\n");
	if (!n || n >= sizeof(d->name))
		return -1;
	memcpy(d->name, p, n);
	d->name[n] = '\0';
	p += n;
	for (int i = 0; i < 11; i++)
		if (node_field_u64(&p, &v[i]))
			return -1;
	d->reads = v[0];
	d->read_sectors = v[2];
	d->read_ms = v[3];
	d->writes = v[4];
	d->written_sectors = v[6];
	d->write_ms = v[7];
	d->io_ms = v[9];
	return 0; /* later fields (discards, flushes) are not used */
}

unsigned node_diskstats_parse(const char *text, node_disk_fn fn, void *ctx)
{
	const char *p = text;
	unsigned bad = 0;

	while (*p) {
		struct node_disk d;
		const char *q = p;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q && *q != '\n') { /* blank lines are no lines */
			if (parse_line(p, &d))
				bad++;
			else
				fn(ctx, &d);
		}
		node_field_next_line(&p);
	}
	return bad;
}

/*
 * Coroot's pattern, anchored at both ends: it keeps a device only when the
 * whole name is the match. POSIX regex spells \d as [0-9].
 */
static regex_t disk_re;
static int disk_re_ok;
static pthread_once_t disk_re_once = PTHREAD_ONCE_INIT;

static void disk_re_compile(void)
{
	disk_re_ok = !regcomp(&disk_re,
			      "^(dm-[0-9]+|(s|h|xv|v)d[a-z]|md[0-9]+|mmcblk[0-9]+|nvme[0-9]+n[0-9]+|"
			      "rbd[0-9]+)$",
			      REG_EXTENDED | REG_NOSUB);
}

bool node_disk_kept(const char *name)
{
	pthread_once(&disk_re_once, disk_re_compile);
	return disk_re_ok && !regexec(&disk_re, name, 0, NULL, 0);
}
