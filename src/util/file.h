#ifndef NODESCOPE_UTIL_FILE_H
#define NODESCOPE_UTIL_FILE_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Reads a small file (a /proc entry) with one read into buf, NUL-terminated.
 * Returns the bytes read or -errno (-ENOENT/-ESRCH when a process is gone).
 */
ssize_t file_read_small(const char *path, char *buf, size_t size);

#endif
