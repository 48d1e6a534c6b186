#include "spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/file.h"

/* "<16 hex digits of seq>.<samples>.rw"; "<...>.tmp" while being written. */
#define NAME_MAX_LEN 64

static void entry_name(const struct spool *s, uint64_t seq, unsigned samples, const char *ext,
		       char *out, size_t len)
{
	snprintf(out, len, "%s/%016" PRIx64 ".%u.%s", s->dir, seq, samples, ext);
}

static struct spool_entry *at(const struct spool *s, size_t i)
{
	return &s->q[(s->head + i) % s->cap];
}

static int grow(struct spool *s)
{
	size_t cap = s->cap ? s->cap * 2 : 64;
	struct spool_entry *q = malloc(cap * sizeof(*q));
	if (!q)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++)
		q[i] = *at(s, i);
	free(s->q);
	s->q = q;
	s->cap = cap;
	s->head = 0;
	return 0;
}

/* Appends in seq order (the scan sorts afterwards). */
static int append(struct spool *s, const struct spool_entry *e)
{
	if (s->n == s->cap && grow(s))
		return -ENOMEM;
	*at(s, s->n++) = *e;
	s->bytes += e->bytes;
	return 0;
}

static int mkdirs(const char *dir)
{
	char path[4096];
	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0750) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(path, 0750) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int cmp_seq(const void *a, const void *b)
{
	const struct spool_entry *x = a, *y = b;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int spool_open(struct spool *s, const char *dir, uint64_t max_bytes)
{
	memset(s, 0, sizeof(*s));
	s->max_bytes = max_bytes;
	if (!(s->dir = strdup(dir)))
		return -ENOMEM;
	int err = mkdirs(dir);
	if (err)
		return err;
	DIR *d = opendir(dir);
	if (!d)
		return -errno;
	struct dirent *de;
	while ((de = readdir(d))) {
		uint64_t seq;
		unsigned samples;
		char ext[4], again[NAME_MAX_LEN];
		if (sscanf(de->d_name, "%16" SCNx64 ".%u.%3s", &seq, &samples, ext) != 3)
			continue;
		snprintf(again, sizeof(again), "%016" PRIx64 ".%u.%s", seq, samples, ext);
		if (strcmp(again, de->d_name))
			continue; /* not a name this spool gives */
		char path[4096 + NAME_MAX_LEN];
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (!strcmp(ext, "tmp")) {
			unlink(path); /* a write cut short */
			continue;
		}
		struct stat st;
		if (strcmp(ext, "rw") || stat(path, &st) < 0)
			continue;
		struct spool_entry e = { seq, (uint64_t)st.st_size, samples };
		if ((err = append(s, &e))) {
			closedir(d);
			return err;
		}
		if (seq >= s->next_seq)
			s->next_seq = seq + 1;
	}
	closedir(d);
	if (s->n)
		qsort(s->q, s->n, sizeof(*s->q), cmp_seq); /* head is 0 after appends only */
	return 0;
}

void spool_close(struct spool *s)
{
	free(s->dir);
	free(s->q);
	memset(s, 0, sizeof(*s));
}

const struct spool_entry *spool_oldest(const struct spool *s)
{
	return s->n ? at(s, 0) : NULL;
}

static void unlink_entry(struct spool *s, const struct spool_entry *e)
{
	char path[4096 + NAME_MAX_LEN];
	entry_name(s, e->seq, e->samples, "rw", path, sizeof(path));
	unlink(path);
}

void spool_pop(struct spool *s)
{
	if (!s->n)
		return;
	struct spool_entry *e = at(s, 0);
	unlink_entry(s, e);
	s->bytes -= e->bytes;
	s->head = (s->head + 1) % s->cap;
	s->n--;
	s->busy = false;
}

/* Drops the oldest batch that is not being sent (index 0 while busy). */
static bool drop_oldest(struct spool *s)
{
	size_t i = s->busy ? 1 : 0;
	if (i >= s->n)
		return false;
	struct spool_entry e = *at(s, i);
	unlink_entry(s, &e);
	s->bytes -= e.bytes;
	s->dropped_batches[SPOOL_DROP_FULL]++;
	s->dropped_samples[SPOOL_DROP_FULL] += e.samples;
	if (i == 0) {
		s->head = (s->head + 1) % s->cap;
	} else {
		*at(s, 1) = *at(s, 0); /* the busy one moves up into the freed slot */
		s->head = (s->head + 1) % s->cap;
	}
	s->n--;
	return true;
}

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int spool_push(struct spool *s, const void *data, size_t len, unsigned samples)
{
	/* Bigger than what the cap can leave it: this one goes, and nothing for it. */
	uint64_t kept = s->busy && s->n ? at(s, 0)->bytes : 0;
	if (len > s->max_bytes - (kept < s->max_bytes ? kept : s->max_bytes)) {
		s->dropped_batches[SPOOL_DROP_FULL]++;
		s->dropped_samples[SPOOL_DROP_FULL] += samples;
		return -ENOSPC;
	}
	while (s->bytes + len > s->max_bytes && drop_oldest(s))
		;
	struct spool_entry e = { s->next_seq++, len, samples };
	char tmp[4096 + NAME_MAX_LEN], path[4096 + NAME_MAX_LEN];
	entry_name(s, e.seq, samples, "tmp", tmp, sizeof(tmp));
	entry_name(s, e.seq, samples, "rw", path, sizeof(path));
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	int err = fd < 0 ? -errno : write_all(fd, data, len);
	if (fd >= 0 && close(fd) < 0 && !err)
		err = -errno;
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (!err)
		err = append(s, &e);
	if (err) {
		unlink(tmp);
		unlink(path);
		s->dropped_batches[SPOOL_DROP_ERROR]++;
		s->dropped_samples[SPOOL_DROP_ERROR] += samples;
	}
	return err;
}

int spool_read_oldest(struct spool *s, struct strbuf *out)
{
	if (!s->n)
		return -ENOENT;
	const struct spool_entry *e = at(s, 0);
	char path[4096 + NAME_MAX_LEN];
	entry_name(s, e->seq, e->samples, "rw", path, sizeof(path));
	strbuf_reset(out);
	ssize_t n = file_read_all(path, out, e->bytes + 1);
	if (n < 0 || (uint64_t)n != e->bytes) {
		s->dropped_batches[SPOOL_DROP_ERROR]++;
		s->dropped_samples[SPOOL_DROP_ERROR] += e->samples;
		spool_pop(s);
		return n < 0 ? (int)n : -EIO;
	}
	return 0;
}
