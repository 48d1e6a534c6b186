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

/*
 * One mountinfo line [line, end) of mount `want` (-1: any): its device, root
 * and mount point into out. 0; -ENOENT when it is another mount's or no
 * "ID PARENT MAJ:MIN" line; -EINVAL when its ROOT and MOUNT POINT are not there.
 */
static int mountinfo_line(const char *line, const char *end, int want, struct disk_mount *out)
{
	int id, parent, n = 0;

	/* sscanf's blanks take newlines too: what it read must be on this line. */
	if (sscanf(line, "%d %d %u:%u %n", &id, &parent, &out->major, &out->minor, &n) != 4 || !n ||
	    line + n > end || memchr(line, '\n', n) || (want >= 0 && id != want))
		return -ENOENT;
	const char *root = line + n, *root_end = memchr(root, ' ', end - root);
	if (!root_end || root_end == root)
		return -EINVAL;
	const char *mp = root_end + 1, *mp_end = memchr(mp, ' ', end - mp);
	if (!mp_end || mp_end == mp)
		return -EINVAL;
	if (unescape(root, root_end, out->root, sizeof(out->root)) ||
	    unescape(mp, mp_end, out->mount_point, sizeof(out->mount_point)))
		return -EINVAL;
	return 0;
}

int disk_mountinfo_find(const char *text, int mnt_id, struct disk_mount *out)
{
	for (const char *line = text; line && *line;) {
		const char *eol = strchr(line, '\n');
		int err = mountinfo_line(line, eol ? eol : line + strlen(line), mnt_id, out);
		if (err != -ENOENT)
			return err;
		line = eol ? eol + 1 : NULL;
	}
	return -ENOENT;
}

static bool is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* "pvc-" and 8-4-4-4-12 lower-case hex digits at s. */
static bool pvc_at(const char *s, size_t left)
{
	static const int groups[] = { 8, 4, 4, 4, 12 };

	if (left < 40 || memcmp(s, "pvc-", 4))
		return false;
	s += 4;
	for (int g = 0; g < 5; g++) {
		if (!is_hex(s, groups[g]))
			return false;
		s += groups[g];
		if (g < 4 && *s++ != '-')
			return false;
	}
	return true;
}

int disk_volume_from_path(const char *path, char out[DISK_VOLUME_MAX])
{
	size_t n = strlen(path);

	/* Coroot's ".+(pvc-...).*": the greedy ".+" makes it the last match past the first byte. */
	for (size_t i = n; i-- > 1;) {
		if (pvc_at(path + i, n - i)) {
			memcpy(out, path + i, 40);
			out[40] = '\0';
			return 0;
		}
	}
	return -ENOENT;
}

/* host's root holds root (a path component boundary): the rest of root, else NULL. */
static const char *below(const char *host_root, const char *root)
{
	if (!strcmp(host_root, "/"))
		return strcmp(root, "/") ? root : "";
	size_t l = strlen(host_root);
	if (strncmp(root, host_root, l) || (root[l] && root[l] != '/'))
		return NULL;
	return root + l;
}

int disk_volume_name(const char *host_mountinfo, const struct disk_mount *m,
		     char out[DISK_VOLUME_MAX])
{
	struct disk_mount h;
	char path[sizeof(h.mount_point) + sizeof(m->root)];

	for (const char *line = host_mountinfo; line && *line;) {
		const char *eol = strchr(line, '\n');
		const char *end = eol ? eol : line + strlen(line);
		const char *rest;
		if (mountinfo_line(line, end, -1, &h) == 0 && h.major == m->major &&
		    h.minor == m->minor && (rest = below(h.root, m->root))) {
			snprintf(path, sizeof(path), "%s%s", h.mount_point, rest);
			if (disk_volume_from_path(path, out) == 0)
				return 0;
		}
		line = eol ? eol + 1 : NULL;
	}
	return disk_volume_from_path(m->root, out);
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
