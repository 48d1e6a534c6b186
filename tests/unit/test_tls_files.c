/*
 * tls_open_event_file: the file of a files-stream event opened through the
 * process's fd while it is open, else through the mapping the event names,
 * here this test's own. The socket hooks report a library at the loader's
 * first mapping of it, whose first segment is read-only: that mapping must
 * open as well as an executable one (without it, a first-run client whose
 * loader had closed the fd before the agent looked was never probed).
 * Opening /proc/PID/map_files needs CAP_SYS_ADMIN: run as root, as make
 * check does.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tls/files.h"

struct mapped {
	char path[64];
	struct stat st;
	void *addr;
	size_t len;
	int fd;
};

/* A two-page file of our own, mapped read-only and private, its fd still open. */
static void map_file(struct mapped *m)
{
	char page[4096];

	snprintf(m->path, sizeof(m->path), "/tmp/nodescope-test-tls-files.XXXXXX");
	m->fd = mkstemp(m->path);
	assert_true(m->fd >= 0);
	memset(page, 0x5a, sizeof(page));
	m->len = 2 * sizeof(page);
	for (int i = 0; i < 2; i++)
		assert_int_equal(write(m->fd, page, sizeof(page)), sizeof(page));
	assert_int_equal(fstat(m->fd, &m->st), 0);
	m->addr = mmap(NULL, m->len, PROT_READ, MAP_PRIVATE, m->fd, 0);
	assert_true(m->addr != MAP_FAILED);
}

static void unmap_file(struct mapped *m)
{
	if (m->fd >= 0)
		close(m->fd);
	munmap(m->addr, m->len);
	unlink(m->path);
}

/* Closes the file's fd as ld.so does once mapped: the number it had, for the event. */
static int close_fd(struct mapped *m)
{
	int closed = m->fd;
	close(m->fd);
	m->fd = -1;
	return closed;
}

static int open_event(const struct mapped *m, int fd, uint64_t addr, char *path, size_t len)
{
	return tls_open_event_file((uint32_t)getpid(), fd, addr, m->st.st_dev, m->st.st_ino, path, len);
}

static int setup(void **state)
{
	if (geteuid() != 0)
		fail_msg("opening /proc/PID/map_files needs root (CAP_SYS_ADMIN): run as root, as make check does");
	return 0;
}

static void test_open_through_the_fd(void **state)
{
	struct mapped m;
	char path[PATH_MAX];

	map_file(&m);
	int fd = open_event(&m, m.fd, (uint64_t)(uintptr_t)m.addr, path, sizeof(path));
	assert_true(fd >= 0);
	assert_string_equal(path, m.path);
	close(fd);
	unmap_file(&m);
}

static void test_open_through_a_read_only_mapping_once_the_fd_is_closed(void **state)
{
	struct mapped m;
	char path[PATH_MAX];

	map_file(&m);
	int closed = close_fd(&m);
	int fd = open_event(&m, closed, (uint64_t)(uintptr_t)m.addr, path, sizeof(path));
	assert_true(fd >= 0);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(st.st_dev == m.st.st_dev && st.st_ino == m.st.st_ino);
	assert_string_equal(path, m.path);
	close(fd);
	unmap_file(&m);
}

static void test_a_mapping_of_another_file_is_not_opened(void **state)
{
	struct mapped m, other;
	char path[PATH_MAX];

	map_file(&m);
	map_file(&other);
	int closed = close_fd(&m);
	/* The address is other's mapping: its file is not the event's. */
	assert_int_equal(open_event(&m, closed, (uint64_t)(uintptr_t)other.addr, path, sizeof(path)), -ESTALE);
	unmap_file(&other);
	unmap_file(&m);
}

static void test_gone_when_neither_fd_nor_mapping_is_left(void **state)
{
	struct mapped m;
	char path[PATH_MAX];

	map_file(&m);
	int closed = close_fd(&m);
	uint64_t addr = (uint64_t)(uintptr_t)m.addr;
	munmap(m.addr, m.len);
	m.addr = MAP_FAILED;
	m.len = 0;
	assert_int_equal(open_event(&m, closed, addr, path, sizeof(path)), -ENOENT);
	unlink(m.path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_through_the_fd),
		cmocka_unit_test(test_open_through_a_read_only_mapping_once_the_fd_is_closed),
		cmocka_unit_test(test_a_mapping_of_another_file_is_not_opened),
		cmocka_unit_test(test_gone_when_neither_fd_nor_mapping_is_left),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
