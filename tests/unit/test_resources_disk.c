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
	assert_string_equal(m.root, "/");
	assert_int_equal(disk_mountinfo_find("50 27 7:0 /a\\040b /x rw - ext4 /dev/loop0 rw\n", 50, &m),
			 0);
	assert_string_equal(m.root, "/a b");
	assert_int_equal(m.major, 7);
	assert_int_equal(disk_mountinfo_find("49 27 7:0 /\n", 49, &m), -EINVAL);
	/* Found by fuzz_cgroup_files: a line's fields are never taken from the next line. */
	assert_int_equal(disk_mountinfo_find("2 072 3:0:\n\n", 2, &m), -EINVAL);
	assert_int_equal(disk_mountinfo_find("2 72\n7:0 / /x rw\n", 2, &m), -ENOENT);
}

static void test_volume_from_path(void **state)
{
	char v[DISK_VOLUME_MAX];
	const char *id = "pvc-0b6f3c9e-5d0a-4c5e-9a7b-1f2e3d4c5b6a";
	char path[512];

	snprintf(path, sizeof(path),
		 "/var/lib/kubelet/pods/8d3c1c55-6f0e-4f61-b3f0-2b7a1f9d0c11/volumes/"
		 "kubernetes.io~csi/%s/mount",
		 id);
	assert_int_equal(disk_volume_from_path(path, v), 0);
	assert_string_equal(v, id);
	/* local-path provisioner directories: the name and what follows it. */
	snprintf(path, sizeof(path), "/opt/local-path-provisioner/%s_default_data", id);
	assert_int_equal(disk_volume_from_path(path, v), 0);
	assert_string_equal(v, id);
	/* The last of two (Coroot's greedy ".+"), never one at the very start. */
	assert_int_equal(disk_volume_from_path("/a/pvc-00000000-0000-0000-0000-000000000001/"
					       "pvc-00000000-0000-0000-0000-000000000002/x",
					       v),
			 0);
	assert_string_equal(v, "pvc-00000000-0000-0000-0000-000000000002");
	assert_int_equal(disk_volume_from_path("pvc-00000000-0000-0000-0000-000000000001", v),
			 -ENOENT);
	/* Upper-case hex, a short group, too short a string: no name. */
	assert_int_equal(disk_volume_from_path("/pvc-0B6F3C9E-5d0a-4c5e-9a7b-1f2e3d4c5b6a", v),
			 -ENOENT);
	assert_int_equal(disk_volume_from_path("/pvc-0b6f3c9-5d0a-4c5e-9a7b-1f2e3d4c5b6a0", v),
			 -ENOENT);
	assert_int_equal(disk_volume_from_path("/pvc-0b6f3c9e-5d0a", v), -ENOENT);
	assert_int_equal(disk_volume_from_path("", v), -ENOENT);
	assert_int_equal(disk_volume_from_path("/var/lib/kubelet/pods/x/volumes/"
					       "kubernetes.io~empty-dir/cache",
					       v),
			 -ENOENT);
}

/* The host's mountinfo of a Kubernetes node (the kubelet's CSI and local-path layouts). */
static const char host_mountinfo[] =
	"22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
	"40 22 0:21 / /proc rw shared:2 - proc proc rw\n"
	"90 22 8:16 / /var/lib/kubelet/plugins/kubernetes.io/csi/ebs.csi.aws.com/0a1b/globalmount "
	"rw shared:40 - ext4 /dev/sdb rw\n"
	"91 22 8:16 / /var/lib/kubelet/pods/8d3c1c55-6f0e-4f61-b3f0-2b7a1f9d0c11/volumes/"
	"kubernetes.io~csi/pvc-0b6f3c9e-5d0a-4c5e-9a7b-1f2e3d4c5b6a/mount rw shared:40 - ext4 "
	"/dev/sdb rw\n"
	"92 22 8:32 /exports /srv/nfs rw shared:41 - ext4 /dev/sdc rw\n";

static void test_volume_name(void **state)
{
	char v[DISK_VOLUME_MAX];
	struct disk_mount m = { .root = "/", .mount_point = "/data", .major = 8, .minor = 16 };

	/* A CSI volume: the pod's mount of the same device names it (not the global mount). */
	assert_int_equal(disk_volume_name(host_mountinfo, &m, v), 0);
	assert_string_equal(v, "pvc-0b6f3c9e-5d0a-4c5e-9a7b-1f2e3d4c5b6a");
	/* A local-path volume: a directory of the host's / bind-mounted; its root is the host path. */
	struct disk_mount lp = {
		.root = "/opt/local-path-provisioner/pvc-11111111-2222-3333-4444-555555555555_ns_data",
		.mount_point = "/var/lib/postgresql",
		.major = 254,
		.minor = 0,
	};
	assert_int_equal(disk_volume_name(host_mountinfo, &lp, v), 0);
	assert_string_equal(v, "pvc-11111111-2222-3333-4444-555555555555");
	/* A directory of a file system mounted on the host at a pvc path: mount point + the rest. */
	const char *mi = "30 1 7:3 /vols /var/lib/kubelet/pods/u/volumes/kubernetes.io~csi/"
			 "pvc-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee/mount rw - ext4 /dev/loop3 rw\n";
	struct disk_mount sub = { .root = "/vols/a", .mount_point = "/data", .major = 7, .minor = 3 };
	assert_int_equal(disk_volume_name(mi, &sub, v), 0);
	assert_string_equal(v, "pvc-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee");
	/* "/volsx" is not below "/vols"; another device's mount is not its. */
	struct disk_mount other = { .root = "/volsx", .mount_point = "/d", .major = 7, .minor = 3 };
	assert_int_equal(disk_volume_name(mi, &other, v), -ENOENT);
	other = (struct disk_mount){ .root = "/vols", .mount_point = "/d", .major = 7, .minor = 4 };
	assert_int_equal(disk_volume_name(mi, &other, v), -ENOENT);
	/* No volume: the root file system, an exported directory without a name. */
	struct disk_mount root = { .root = "/", .mount_point = "/", .major = 254, .minor = 0 };
	assert_int_equal(disk_volume_name(host_mountinfo, &root, v), -ENOENT);
	struct disk_mount nfs = { .root = "/exports/a", .mount_point = "/a", .major = 8, .minor = 32 };
	assert_int_equal(disk_volume_name(host_mountinfo, &nfs, v), -ENOENT);
	/* The host's mountinfo unknown or garbage: only the root can name it. */
	assert_int_equal(disk_volume_name(NULL, &lp, v), 0);
	assert_int_equal(disk_volume_name(NULL, &m, v), -ENOENT);
	assert_int_equal(disk_volume_name("91 22 8:16\n/ /x/pvc-0b6f3c9e-5d0a-4c5e-9a7b-1f2e3d4c5b6a "
					  "rw\n",
					  &m, v),
			 -ENOENT);
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
	assert_int_equal(io.reads, 18);
	assert_int_equal(io.writes, 16);
	assert_int_equal(io.read_bytes, 27648);
	assert_int_equal(io.written_bytes, 8388608);
	/* Nothing counted (a disk without a throttle rule, on kernels that start blk-throttle lazily). */
	assert_int_equal(disk_blkio_parse("Total 0\n", "Total 0\n", 7, 0, &io), -ENOENT);
	assert_int_equal(disk_blkio_parse("7:0 Read z\n", "", 7, 0, &io), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fdinfo),
		cmocka_unit_test(test_mountinfo),
		cmocka_unit_test(test_volume_from_path),
		cmocka_unit_test(test_volume_name),
		cmocka_unit_test(test_io),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
