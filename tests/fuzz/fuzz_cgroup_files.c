/*
 * libFuzzer target for src/resources/cgroup_parse.c and disk_parse.c: the input is split at
 * NUL bytes into up to four texts, given to every parser as the files it
 * reads (each text NUL-terminated in a buffer of its exact size, as the
 * reader hands them over). Besides crashes it checks what a success
 * promises: values that are not negative, a limit only when one was set.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "resources/cgroup_parse.h"
#include "resources/disk_parse.h"

#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *t[4];
	size_t at = 0;

	for (int i = 0; i < 4; i++) {
		const uint8_t *end = at < size ? memchr(data + at, 0, size - at) : NULL;
		size_t n = at < size ? (end ? (size_t)(end - data) - at : size - at) : 0;
		t[i] = malloc(n + 1);
		CHECK(t[i]);
		if (n)
			memcpy(t[i], data + at, n);
		t[i][n] = '\0';
		at += n + 1;
	}

	struct cgroup_dirs d;
	if (cgroup_dirs_parse(t[0], &d) == 0) {
		CHECK(!d.v2[0] || d.v2[0] == '/');
		CHECK(!d.cpu[0] || d.cpu[0] == '/');
		CHECK(strcmp(d.memory, "/") && strcmp(d.memory, "/init.scope"));
	}
	struct cgroup_cpu c;
	if (cgroup_cpu_v1_parse(t[0], t[1], t[2], t[3], &c) == 0)
		CHECK(c.usage_s >= 0 && c.throttled_s >= 0 && c.limit_cores >= 0);
	if (cgroup_cpu_v2_parse(t[0], t[1], &c) == 0)
		CHECK(c.usage_s >= 0 && c.throttled_s >= 0 && c.limit_cores >= 0);
	if (cgroup_cpu_v2_parse(t[0], NULL, &c) == 0)
		CHECK(c.limit_cores == 0);
	struct cgroup_memory m;
	if (cgroup_memory_v1_parse(t[0], t[1], &m) == 0)
		CHECK(m.limit <= (1ull << 62));
	if (cgroup_memory_v2_parse(t[0], NULL, &m) == 0)
		CHECK(m.limit == 0);
	cgroup_memory_v2_parse(t[0], t[1], &m);
	struct cgroup_pressure p;
	if (cgroup_pressure_parse(t[0], &p) == 0)
		CHECK(p.some_s >= 0 && p.full_s >= 0);
	uint64_t u = 0;
	int64_t i;
	cgroup_kv_get(t[0], t[1], &u);
	cgroup_parse_u64(t[2], &u);
	cgroup_parse_i64(t[3], &i);
	unsigned flags;
	int mnt_id;
	if (disk_fdinfo_parse(t[0], &flags, &mnt_id) == 0)
		CHECK(mnt_id >= 0);
	struct disk_mount dm;
	char vol[DISK_VOLUME_MAX];
	if (disk_mountinfo_find(t[0], (int)(u & 0xff), &dm) == 0) {
		CHECK(strlen(dm.mount_point) < sizeof(dm.mount_point));
		CHECK(strlen(dm.root) < sizeof(dm.root));
		/* The host's mountinfo is another file: a name found is always a whole pvc-UUID. */
		if (disk_volume_name(t[1], &dm, vol) == 0)
			CHECK(strlen(vol) == 40 && !strncmp(vol, "pvc-", 4));
	}
	if (disk_volume_from_path(t[3], vol) == 0)
		CHECK(strlen(vol) == 40);
	struct disk_io io;
	disk_iostat_parse(t[1], (unsigned)(u & 0xff), 0, &io);
	disk_blkio_parse(t[2], t[3], 7, (unsigned)(u & 3), &io);
	for (int k = 0; k < 4; k++)
		free(t[k]);
	return 0;
}
