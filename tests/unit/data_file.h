/*
 * Reading the unit tests' data files (captured /proc, cgroup and runtime
 * files): one reader, failing the test with the path when a file is missing.
 * Run the tests from the repository root, as `make test-unit` does. And one
 * writer, for the fake trees some tests make in a temp dir.
 */
#ifndef NODESCOPE_TESTS_UNIT_DATA_FILE_H
#define NODESCOPE_TESTS_UNIT_DATA_FILE_H

#include <stdio.h>
#include <stdlib.h>

/* The whole file, NUL-terminated, malloc'd (the caller frees it); its length in *len if asked. */
__attribute__((unused)) static char *test_file_read(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s (run the tests from the repository root)", path);
	char *buf = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (cap - n < 4096) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap + 1);
			assert_non_null(buf);
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (!got)
			break;
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

/* The same, kept by the header: valid until eight more files were read. */
__attribute__((unused)) static char *test_file_text(const char *path)
{
	static char *ring[8];
	static unsigned next;
	char **slot = &ring[next++ % 8];
	free(*slot);
	*slot = test_file_read(path, NULL);
	return *slot;
}

/* Writes text at path, its parent directories made first. */
__attribute__((unused)) static void test_file_put(const char *path, const char *text)
{
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	assert_int_equal(system(cmd), 0);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

#endif
