/*
 * The volumes a container writes to and their figures, read at a scrape
 * (the parsing is disk_parse.h). Coroot learns the mounts from file-open
 * events and a kprobe; here they come from /proc at scrapes, with no probe:
 * each process's descriptors open for writing on regular files (not under
 * /proc, /dev or /sys), their mount ids (fdinfo) and /proc/PID/mountinfo.
 * A mount seen once stays the container's until it is gone, as in Coroot;
 * a file opened and closed between two scrapes is not seen (only an open
 * event can tell which mount it was on: the cgroup's I/O files count per
 * disk, and a container's overlay root and its volumes often share one).
 * Volumes are named as Coroot names Kubernetes ones (disk_volume_name), from
 * the host's mountinfo (/proc/1/mountinfo), with no runtime asked.
 */
#ifndef NODESCOPE_RESOURCES_DISK_READ_H
#define NODESCOPE_RESOURCES_DISK_READ_H

#include <stdint.h>

#include "resources/cgroup_read.h"
#include "resources/disk_parse.h"

#define DISK_MAX_VOLUMES 16 /* per container */

struct disk_volume {
	int mnt_id;
	char mount_point[256];
	char device[64];	   /* the whole block device ("vda" for vda1), "" when none */
	char volume[DISK_VOLUME_MAX]; /* "pvc-..." or "" */
	unsigned major, minor;	   /* the mount's device */
	unsigned dmajor, dminor;   /* the whole disk's, which the cgroup's I/O files name */
};

struct disk_volumes {
	int n;
	struct disk_volume v[DISK_MAX_VOLUMES];
};

/*
 * Adds to vols the mounts pid holds files open for writing on. Returns the
 * number added, or -errno when pid is gone.
 */
int disk_scan_process(uint32_t pid, struct disk_volumes *vols);

struct disk_usage {
	uint64_t size, used, reserved;
};

/* statfs of the mount as pid sees it (/proc/PID/root/MOUNT): 0 or -errno. */
int disk_usage_read(uint32_t pid, const struct disk_volume *v, struct disk_usage *out);

/* The container's I/O on the volume's disk (v1 blkio when set, else v2 io.stat). */
int disk_io_read(const struct cgroup_roots *r, const struct cgroup_dirs *d,
		 const struct disk_volume *v, struct disk_io *out);

#endif
