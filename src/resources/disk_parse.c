#include "resources/disk_parse.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int disk_fdinfo_parse(const char *text, unsigned *flags, int *mnt_id)
{
	bool f = false, m = false;

	for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		char *end;
		if (!strncmp(line, "flags:", 6)) {
			unsigned long v = strtoul(line + 6, &end, 8);
			if (end == line + 6 || (*end && *end != '\n'))
				return -EINVAL;
			*flags = (unsigned)v;
			f = true;
		} else if (!strncmp(line, "mnt_id:", 7)) {
			long v = strtol(line + 7, &end, 10);
			if (end == line + 7 || (*end && *end != '\n') || v < 0 || v > INT32_MAX)
				return -EINVAL;
			*mnt_id = (int)v;
			m = true;
		}
	}
	return f && m ? 0 : -EINVAL;
}

bool disk_flags_write(unsigned flags)
{
	unsigned mode = flags & O_ACCMODE;
	return mode == O_WRONLY || mode == O_RDWR;
}

/* Copies field [s, e) of a mountinfo line, undoing the kernel's \ooo escapes. */
static int unescape(const char *s, const char *e, char *out, size_t len)
{
	size_t o = 0;
	while (s < e) {
		char c = *s++;
		if (c == '\\' && e - s >= 3 && s[0] >= '0' && s[0] <= '3' && s[1] >= '0' &&
		    s[1] <= '7' && s[2] >= '0' && s[2] <= '7') {
			c = (char)((s[0] - '0') * 64 + (s[1] - '0') * 8 + (s[2] - '0'));
			s += 3;
		}
		if (o + 1 >= len)
			return -ENAMETOOLONG;
		out[o++] = c;
	}
	out[o] = '\0';
	return 0;
}

int disk_mountinfo_find(const char *text, int mnt_id, struct disk_mount *out)
{
	for (const char *line = text; line && *line;) {
		const char *eol = strchr(line, '\n');
		const char *end = eol ? eol : line + strlen(line);
		int id, parent, n = 0;
		unsigned major, minor;
		/* sscanf's blanks take newlines too: what it read must be on this line. */
		if (sscanf(line, "%d %d %u:%u %n", &id, &parent, &major, &minor, &n) == 4 && n &&
		    line + n <= end && !memchr(line, '\n', n) && id == mnt_id) {
			/* Then ROOT and MOUNT POINT, blank-separated. */
			const char *root = line + n, *root_end = memchr(root, ' ', end - root);
			if (!root_end)
				return -EINVAL;
			const char *mp = root_end + 1, *mp_end = memchr(mp, ' ', end - mp);
			if (!mp_end || mp_end == mp)
				return -EINVAL;
			if (unescape(mp, mp_end, out->mount_point, sizeof(out->mount_point)))
				return -EINVAL;
			out->major = major;
			out->minor = minor;
			return 0;
		}
		line = eol ? eol + 1 : NULL;
	}
	return -ENOENT;
}

int disk_iostat_parse(const char *text, unsigned major, unsigned minor, struct disk_io *out)
{
	char dev[32];
	int dl = snprintf(dev, sizeof(dev), "%u:%u ", major, minor);

	for (const char *line = text; line && *line;) {
		const char *eol = strchr(line, '\n');
		if (!strncmp(line, dev, dl)) {
			struct {
				const char *key;
				uint64_t *dst;
			} keys[] = { { "rbytes=", &out->read_bytes },
				     { "wbytes=", &out->written_bytes },
				     { "rios=", &out->reads },
				     { "wios=", &out->writes } };
			memset(out, 0, sizeof(*out));
			const char *end = eol ? eol : line + strlen(line);
			for (const char *p = line + dl; p < end;) {
				for (size_t k = 0; k < 4; k++) {
					size_t kl = strlen(keys[k].key);
					if ((size_t)(end - p) > kl && !memcmp(p, keys[k].key, kl)) {
						char *e;
						*keys[k].dst = strtoull(p + kl, &e, 10);
						if (e == p + kl)
							return -EINVAL;
					}
				}
				const char *sp = memchr(p, ' ', end - p);
				p = sp ? sp + 1 : end;
			}
			return 0;
		}
		line = eol ? eol + 1 : NULL;
	}
	return -ENOENT;
}

/* "MAJ:MIN Read N" and "MAJ:MIN Write N" of one blkio file. */
static int blkio_rw(const char *text, const char *dev, size_t dl, uint64_t *r, uint64_t *w)
{
	bool any = false;

	for (const char *line = text; line && *line;) {
		const char *eol = strchr(line, '\n');
		if (!strncmp(line, dev, dl)) {
			const char *p = line + dl;
			uint64_t *dst = !strncmp(p, "Read ", 5) ? r : !strncmp(p, "Write ", 6) ? w : NULL;
			if (dst) {
				char *e;
				p = strchr(p, ' ') + 1;
				*dst = strtoull(p, &e, 10);
				if (e == p)
					return -EINVAL;
				any = true;
			}
		}
		line = eol ? eol + 1 : NULL;
	}
	return any ? 0 : -ENOENT;
}

int disk_blkio_parse(const char *serviced, const char *service_bytes, unsigned major,
		     unsigned minor, struct disk_io *out)
{
	char dev[32];
	int dl = snprintf(dev, sizeof(dev), "%u:%u ", major, minor);

	memset(out, 0, sizeof(*out));
	int a = blkio_rw(serviced, dev, dl, &out->reads, &out->writes);
	int b = blkio_rw(service_bytes, dev, dl, &out->read_bytes, &out->written_bytes);
	if (a == -EINVAL || b == -EINVAL)
		return -EINVAL;
	return a && b ? -ENOENT : 0;
}
