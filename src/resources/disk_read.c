#include "resources/disk_read.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "util/file.h"

#define MOUNTINFO_MAX (256 * 1024)

static bool have(const struct disk_volumes *vols, int mnt_id)
{
	for (int i = 0; i < vols->n; i++)
		if (vols->v[i].mnt_id == mnt_id)
			return true;
	return false;
}

/* Coroot's filter: a regular file's path, not a pseudo-file system's. */
static bool wanted_path(const char *p)
{
	static const char *const skip[] = { "/proc/", "/dev/", "/sys/" };
	if (p[0] != '/')
		return false; /* socket:[..], pipe:[..], anon_inode:... */
	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (!strncmp(p, skip[i], strlen(skip[i])))
			return false;
	return true;
}

/* The whole disk of device maj:min and its name, from /sys/dev/block (none: ""). */
static void whole_disk(struct disk_volume *v)
{
	char link[64], real[PATH_MAX], text[32];

	v->device[0] = '\0';
	v->dmajor = v->major;
	v->dminor = v->minor;
	snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", v->major, v->minor);
	if (!realpath(link, real))
		return;
	char part[PATH_MAX + 16];
	snprintf(part, sizeof(part), "%s/partition", real);
	if (access(part, F_OK) == 0) { /* a partition: its parent directory is the disk */
		char *slash = strrchr(real, '/');
		if (!slash)
			return;
		*slash = '\0';
		snprintf(part, sizeof(part), "%s/dev", real);
		if (file_read_small(part, text, sizeof(text)) <= 0 ||
		    sscanf(text, "%u:%u", &v->dmajor, &v->dminor) != 2)
			return;
	}
	const char *name = strrchr(real, '/');
	snprintf(v->device, sizeof(v->device), "%.63s", name ? name + 1 : real);
}

int disk_scan_process(uint32_t pid, struct disk_volumes *vols)
{
	char path[320], target[PATH_MAX], info[512];
	char *mountinfo = NULL, *host = NULL;
	bool host_read = false;
	int added = 0;

	snprintf(path, sizeof(path), "/proc/%u/fd", pid);
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	for (struct dirent *de; (de = readdir(d)) && vols->n < DISK_MAX_VOLUMES;) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%u/fd/%s", pid, de->d_name);
		ssize_t n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (!wanted_path(target))
			continue;
		unsigned flags;
		int mnt_id;
		snprintf(path, sizeof(path), "/proc/%u/fdinfo/%s", pid, de->d_name);
		if (file_read_small(path, info, sizeof(info)) <= 0 ||
		    disk_fdinfo_parse(info, &flags, &mnt_id) || !disk_flags_write(flags) ||
		    have(vols, mnt_id))
			continue;
		if (!mountinfo) {
			mountinfo = malloc(MOUNTINFO_MAX);
			snprintf(path, sizeof(path), "/proc/%u/mountinfo", pid);
			if (!mountinfo || file_read_small(path, mountinfo, MOUNTINFO_MAX) <= 0)
				break;
		}
		struct disk_mount m;
		if (disk_mountinfo_find(mountinfo, mnt_id, &m))
			continue;
		struct disk_volume *v = &vols->v[vols->n++];
		v->mnt_id = mnt_id;
		memcpy(v->mount_point, m.mount_point, sizeof(v->mount_point));
		v->major = m.major;
		v->minor = m.minor;
		whole_disk(v);
		if (!host_read) { /* read once per call, only when a volume is new */
			host_read = true;
			host = malloc(MOUNTINFO_MAX);
			if (host && file_read_small("/proc/1/mountinfo", host, MOUNTINFO_MAX) <= 0) {
				free(host);
				host = NULL;
			}
		}
		if (disk_volume_name(host, &m, v->volume))
			v->volume[0] = '\0';
		added++;
	}
	closedir(d);
	free(mountinfo);
	free(host);
	return added;
}

int disk_usage_read(uint32_t pid, const struct disk_volume *v, struct disk_usage *out)
{
	char path[sizeof(v->mount_point) + 32];
	struct statfs st;

	snprintf(path, sizeof(path), "/proc/%u/root%s", pid, v->mount_point);
	if (statfs(path, &st))
		return -errno;
	out->size = (uint64_t)st.f_blocks * st.f_bsize;
	out->used = (uint64_t)(st.f_blocks - st.f_bfree) * st.f_bsize;
	out->reserved = (uint64_t)(st.f_bfree - st.f_bavail) * st.f_bsize;
	return 0;
}

int disk_io_read(const struct cgroup_roots *r, const struct cgroup_dirs *d,
		 const struct disk_volume *v, struct disk_io *out)
{
	char dir[CGROUP_DIR_MAX + 300], path[CGROUP_DIR_MAX + 400];
	static char a[16384], b[16384];

	if (d->blkio[0]) {
		snprintf(dir, sizeof(dir), "%s/blkio%s", r->v1, d->blkio);
		snprintf(path, sizeof(path), "%s/blkio.throttle.io_serviced", dir);
		ssize_t n = file_read_small(path, a, sizeof(a));
		if (n < 0)
			return (int)n;
		snprintf(path, sizeof(path), "%s/blkio.throttle.io_service_bytes", dir);
		if ((n = file_read_small(path, b, sizeof(b))) < 0)
			return (int)n;
		return disk_blkio_parse(a, b, v->dmajor, v->dminor, out);
	}
	if (!d->v2[0])
		return -ENODATA;
	snprintf(path, sizeof(path), "%s%s/io.stat", r->v2, d->v2);
	ssize_t n = file_read_small(path, a, sizeof(a));
	if (n == -ENOENT) {
		snprintf(dir, sizeof(dir), "%s%s", r->v2, d->v2);
		return access(dir, F_OK) == 0 ? -ENODATA : -ENOENT;
	}
	if (n < 0)
		return (int)n;
	return disk_iostat_parse(a, v->dmajor, v->dminor, out);
}
