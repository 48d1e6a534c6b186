/*
 * What the per-volume disk metrics are read from, parsed (pure): which
 * files a process holds open for writing (/proc/PID/fdinfo), where they are
 * mounted (/proc/PID/mountinfo), and the container's I/O per device (cgroup
 * v1 blkio.throttle.io_serviced / io_service_bytes, v2 io.stat), as Coroot
 * reads them (cgroup/io.go, proc/mountinfo).
 */
#ifndef NODESCOPE_RESOURCES_DISK_PARSE_H
#define NODESCOPE_RESOURCES_DISK_PARSE_H

#include <stdbool.h>
#include <stdint.h>

/* /proc/PID/fdinfo/N: its open flags (octal) and mount id. 0 or -EINVAL. */
int disk_fdinfo_parse(const char *text, unsigned *flags, int *mnt_id);
/* Opened for writing (O_WRONLY or O_RDWR). */
bool disk_flags_write(unsigned flags);

struct disk_mount {
	char root[256];	       /* the directory of its file system it shows ("/": all of it) */
	char mount_point[256];
	unsigned major, minor;
};

/* The line of mount mnt_id in /proc/PID/mountinfo text: 0, -ENOENT, or -EINVAL. */
int disk_mountinfo_find(const char *text, int mnt_id, struct disk_mount *out);

/* Room for a volume name: "pvc-" and a UUID. */
#define DISK_VOLUME_MAX 48

/*
 * Coroot's volume name (common/volumes.go): the last "pvc-<uuid>" (lower-case
 * hex) that is not at the very start of path, e.g. of
 * /var/lib/kubelet/pods/UID/volumes/kubernetes.io~csi/pvc-ID/mount. 0 and the
 * name in out, or -ENOENT.
 */
int disk_volume_from_path(const char *path, char out[DISK_VOLUME_MAX]);

/*
 * The volume name of mount m of a container. Coroot takes it from the host
 * path the runtime bind-mounted there; here that path is worked out from the
 * host's mountinfo (host_mountinfo, NULL when unknown): a host mount of the
 * same device whose root holds m's root, its mount point joined with the rest
 * of m's root. The first such host path with a name wins; else m's root
 * itself (a directory of the host's / bind-mounted). 0, or -ENOENT: no name.
 */
int disk_volume_name(const char *host_mountinfo, const struct disk_mount *m,
		     char out[DISK_VOLUME_MAX]);

struct disk_io {
	uint64_t reads, read_bytes, writes, written_bytes;
};

/* v2 io.stat: device major:minor's line (-ENOENT when it has none). */
int disk_iostat_parse(const char *text, unsigned major, unsigned minor, struct disk_io *out);
/* v1: the Read and Write lines of major:minor in io_serviced (ops) and io_service_bytes. */
int disk_blkio_parse(const char *serviced, const char *service_bytes, unsigned major,
		     unsigned minor, struct disk_io *out);

#endif
