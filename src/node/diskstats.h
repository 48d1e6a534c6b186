/*
 * /proc/diskstats: I/O counters of the node's whole disks, with Coroot's
 * device filter. Pure.
 */
#ifndef NODESCOPE_NODE_DISKSTATS_H
#define NODESCOPE_NODE_DISKSTATS_H

#include <stdbool.h>
#include <stdint.h>

#define NODE_DISK_NAME_MAX 64

/* One line's counters (Documentation/admin-guide/iostats.rst, fields 1-10). */
struct node_disk {
	char name[NODE_DISK_NAME_MAX];
	uint64_t reads, read_sectors, read_ms; /* completed reads, 512-byte sectors, ms spent */
	uint64_t writes, written_sectors, write_ms;
	uint64_t io_ms; /* time the device had I/O in flight */
};

typedef void (*node_disk_fn)(void *ctx, const struct node_disk *d);

/*
 * Calls fn for each well-formed line of /proc/diskstats' text, whatever its
 * device (filter with node_disk_kept). A line needs major, minor, name and
 * at least the 11 fields every kernel since 2.6 writes (Coroot's rule too).
 * Returns the number of malformed lines skipped (0 when all were good).
 */
unsigned node_diskstats_parse(const char *text, node_disk_fn fn, void *ctx);

/*
 * Coroot's filter: whole disks only, named dm-N, sdX, hdX, xvdX, vdX, mdN,
 * mmcblkN, nvmeNnM or rbdN (no partitions, loop, zram or ram devices).
 */
bool node_disk_kept(const char *name);

#endif
