/* /proc/meminfo: the four figures Coroot exports, in bytes. Pure. */
#ifndef NODESCOPE_NODE_MEMINFO_H
#define NODESCOPE_NODE_MEMINFO_H

#include <stdint.h>

enum node_mem_field {
	NODE_MEM_TOTAL,	    /* MemTotal */
	NODE_MEM_FREE,	    /* MemFree */
	NODE_MEM_AVAILABLE, /* MemAvailable (kernels since 3.14) */
	NODE_MEM_CACHED,    /* Cached */
	NODE_MEM_FIELDS
};

struct node_mem {
	uint64_t bytes[NODE_MEM_FIELDS];
	unsigned have; /* bit per field found */
};

/*
 * Parses /proc/meminfo's text. "kB" is KiB (the kernel's unit: pages <<
 * (PAGE_SHIFT - 10)), so values are multiplied by 1024; a value without a
 * unit is bytes. Returns 0, or -EINVAL when a wanted line is malformed or
 * MemTotal is missing, -ERANGE when a value does not fit in 64 bits as
 * bytes. Fields not found are left out of have, never reported as 0.
 */
int node_meminfo_parse(const char *text, struct node_mem *out);

#endif
