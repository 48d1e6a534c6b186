#include "resources/cgroup_read.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc/cgroup.h"
#include "util/file.h"

#define FILE_MAX 8192 /* memory.stat is about 1.5 KiB; the largest file read here */

void cgroup_roots_find(const char *root, struct cgroup_roots *out)
{
	snprintf(out->v1, sizeof(out->v1), "%s", root);
	/* The process tracker's choice, so both read the same tree. */
	if (cgroup_v2_mount(root, out->v2, sizeof(out->v2)))
		snprintf(out->v2, sizeof(out->v2), "%s", root);
}

/*
 * Reads dir/name into buf. A missing file in a cgroup that exists is
 * -ENODATA (that controller is not in this tree); a missing cgroup stays
 * -ENOENT.
 */
static int read_file(const char *dir, const char *name, char *buf, size_t size)
{
	char path[CGROUP_DIR_MAX + 512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ssize_t n = file_read_small(path, buf, size);
	if (n == -ENOENT && access(dir, F_OK) == 0)
		return -ENODATA;
	return n < 0 ? (int)n : 0;
}

/* ROOT/hier/dir into out: the v1 hierarchy hier, or the v2 tree when hier is NULL. */
static void dir_path(const struct cgroup_roots *r, const char *hier, const char *dir, char *out,
		     size_t len)
{
	if (hier)
		snprintf(out, len, "%s/%s%s", r->v1, hier, dir);
	else
		snprintf(out, len, "%s%s", r->v2, dir);
}

int cgroup_read_cpu(const struct cgroup_roots *r, const struct cgroup_dirs *d,
		    struct cgroup_cpu *out)
{
	char cpu[CGROUP_DIR_MAX + 300], acct[CGROUP_DIR_MAX + 300];
	char usage[64], stat[FILE_MAX], quota[64], period[64], max[64];
	int err;

	if (cgroup_dirs_cpu_v1(d)) {
		dir_path(r, "cpu", d->cpu, cpu, sizeof(cpu));
		dir_path(r, "cpuacct", d->cpuacct, acct, sizeof(acct));
		if ((err = read_file(acct, "cpuacct.usage", usage, sizeof(usage))) ||
		    (err = read_file(cpu, "cpu.stat", stat, sizeof(stat))) ||
		    (err = read_file(cpu, "cpu.cfs_quota_us", quota, sizeof(quota))) ||
		    (err = read_file(cpu, "cpu.cfs_period_us", period, sizeof(period))))
			return err;
		return cgroup_cpu_v1_parse(usage, stat, quota, period, out);
	}
	if (!d->v2[0])
		return -ENODATA;
	dir_path(r, NULL, d->v2, cpu, sizeof(cpu));
	if ((err = read_file(cpu, "cpu.stat", stat, sizeof(stat))))
		return err;
	err = read_file(cpu, "cpu.max", max, sizeof(max));
	if (err && err != -ENODATA)
		return err;
	return cgroup_cpu_v2_parse(stat, err ? NULL : max, out);
}

int cgroup_read_memory(const struct cgroup_roots *r, const struct cgroup_dirs *d,
		       struct cgroup_memory *out)
{
	char dir[CGROUP_DIR_MAX + 300], stat[FILE_MAX], limit[64];
	int err;

	if (cgroup_dirs_memory_v1(d)) {
		dir_path(r, "memory", d->memory, dir, sizeof(dir));
		if ((err = read_file(dir, "memory.stat", stat, sizeof(stat))) ||
		    (err = read_file(dir, "memory.limit_in_bytes", limit, sizeof(limit))))
			return err;
		return cgroup_memory_v1_parse(stat, limit, out);
	}
	if (!d->v2[0])
		return -ENODATA;
	dir_path(r, NULL, d->v2, dir, sizeof(dir));
	if ((err = read_file(dir, "memory.stat", stat, sizeof(stat))))
		return err;
	err = read_file(dir, "memory.max", limit, sizeof(limit));
	if (err && err != -ENODATA)
		return err;
	return cgroup_memory_v2_parse(stat, err ? NULL : limit, out);
}

int cgroup_read_pressure(const struct cgroup_roots *r, const struct cgroup_dirs *d,
			 const char *kind, struct cgroup_pressure *out)
{
	char dir[CGROUP_DIR_MAX + 300], name[32], text[1024];
	int err;

	if (!d->v2[0])
		return -ENODATA;
	dir_path(r, NULL, d->v2, dir, sizeof(dir));
	snprintf(name, sizeof(name), "%s.pressure", kind);
	if ((err = read_file(dir, name, text, sizeof(text))))
		return err;
	return cgroup_pressure_parse(text, out);
}
