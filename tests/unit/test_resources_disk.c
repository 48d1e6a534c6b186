/*
 * The per-volume disk parsers (src/resources/disk_parse.c): fdinfo and
 * mountinfo captured here, blkio and io.stat in the kernel's format
 * (tests/unit/data/resources/README).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "resources/disk_parse.h"

#include "data_file.h"

#define DATA "tests/unit/data/resources/"


static void test_fdinfo(void **state)
{
	unsigned flags;
	int mnt;

	assert_int_equal(disk_fdinfo_parse(test_file_text(DATA "fdinfo-write"), &flags, &mnt), 0);
	assert_int_equal(mnt, 27);
	assert_true(disk_flags_write(flags));
	assert_int_equal(disk_fdinfo_parse("pos:\t0\nflags:\t0100000\nmnt_id:\t31\n", &flags, &mnt), 0);
	assert_false(disk_flags_write(flags)); /* O_RDONLY | O_LARGEFILE */
	assert_true(disk_flags_write(O_RDWR));
	assert_int_equal(disk_fdinfo_parse("flags:\t01\n", &flags, &mnt), -EINVAL);
	assert_int_equal(disk_fdinfo_parse("flags:\t9\nmnt_id:\t1\n", &flags, &mnt), -EINVAL);
	assert_int_equal(disk_fdinfo_parse("flags:\t1\nmnt_id:\t-1\n", &flags, &mnt), -EINVAL);
}

static void test_mountinfo(void **state)
{
	struct disk_mount m;
	const char *text = test_file_text(DATA "mountinfo");

	assert_int_equal(disk_mountinfo_find(text, 27, &m), 0);
	assert_string_equal(m.mount_point, "/");
	assert_int_equal(disk_mountinfo_find(text, 22, &m), 0);
	assert_string_equal(m.mount_point, "/proc");
	assert_int_equal(m.major, 0);
	assert_int_equal(m.minor, 21);
	assert_int_equal(disk_mountinfo_find(text, 999999, &m), -ENOENT);
	/* The kernel escapes blanks in paths as \040. */
	assert_int_equal(disk_mountinfo_find("49 27 7:0 / /mnt/my\\040data rw - ext4 /dev/loop0 rw\n",
					     49, &m),
			 0);
	assert_string_equal(m.mount_point, "/mnt/my data");
	assert_int_equal(m.major, 7);
	assert_int_equal(disk_mountinfo_find("49 27 7:0 /\n", 49, &m), -EINVAL);
	/* Found by fuzz_cgroup_files: a line's fields are never taken from the next line. */
	assert_int_equal(disk_mountinfo_find("2 072 3:0:\n\n", 2, &m), -EINVAL);
	assert_int_equal(disk_mountinfo_find("2 72\n7:0 / /x rw\n", 2, &m), -ENOENT);
}

static void test_io(void **state)
{
	struct disk_io io;

	assert_int_equal(disk_iostat_parse(test_file_text(DATA "v2/io.stat"), 7, 0, &io), 0);
	assert_int_equal(io.reads, 3);
	assert_int_equal(io.read_bytes, 12288);
	assert_int_equal(io.writes, 64);
	assert_int_equal(io.written_bytes, 8388608);
	assert_int_equal(disk_iostat_parse(test_file_text(DATA "v2/io.stat"), 254, 0, &io), 0);
	assert_int_equal(io.writes, 2048);
	/* "7:0" is not "7:00" or "17:0". */
	assert_int_equal(disk_iostat_parse(test_file_text(DATA "v2/io.stat"), 17, 0, &io), -ENOENT);
	assert_int_equal(disk_iostat_parse("7:0 rbytes=x\n", 7, 0, &io), -EINVAL);

	assert_int_equal(disk_blkio_parse(test_file_text(DATA "v1/blkio.throttle.io_serviced"),
					  test_file_text(DATA "v1/blkio.throttle.io_service_bytes"), 7, 0, &io),
			 0);
	assert_int_equal(io.reads, 3);
	assert_int_equal(io.writes, 64);
	assert_int_equal(io.read_bytes, 12288);
	assert_int_equal(io.written_bytes, 8388608);
	/* This kernel's: nothing counted. */
	assert_int_equal(disk_blkio_parse("Total 0\n", "Total 0\n", 7, 0, &io), -ENOENT);
	assert_int_equal(disk_blkio_parse("7:0 Read z\n", "", 7, 0, &io), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fdinfo),
		cmocka_unit_test(test_mountinfo),
		cmocka_unit_test(test_io),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
