/*
 * What the unit tests that build ELF fixtures at test time share: the
 * fixture directory, paths in it, and running a build command there with
 * its output kept in build.log.
 */
#ifndef NODESCOPE_TESTS_UNIT_FIXTURE_H
#define NODESCOPE_TESTS_UNIT_FIXTURE_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256]; /* the fixture directory, made by each test's setup */

/* A path inside the fixture dir; a small ring so a few can be used at once. */
static const char *P(const char *name)
{
	static char bufs[8][sizeof(dir) + 64];
	static unsigned int next;
	char *b = bufs[next++ % 8];

	snprintf(b, sizeof(bufs[0]), "%s/%.60s", dir, name);
	return b;
}

__attribute__((format(printf, 1, 2), unused)) static int run(const char *fmt, ...)
{
	char cmd[4096], full[sizeof(cmd) + sizeof(dir) + 64];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(full, sizeof(full), "cd '%s' && (%s) >>build.log 2>&1", dir, cmd);
	rc = system(full);
	if (rc != 0)
		fprintf(stderr, "command failed (%d): %s (see %s/build.log)\n", rc, cmd, dir);
	return rc;
}

__attribute__((unused)) static int write_text(const char *name, const char *text)
{
	FILE *f = fopen(P(name), "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

__attribute__((unused)) static unsigned char *slurp(const char *path, size_t *len)
{
	struct stat st;
	unsigned char *buf;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		fail_msg("open %s: %s", path, strerror(errno));
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, (size_t)st.st_size, 0), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

#endif
