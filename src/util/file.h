#ifndef NODESCOPE_UTIL_FILE_H
#define NODESCOPE_UTIL_FILE_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Reads a small file (a /proc entry) with one read into buf, NUL-terminated.
 * Returns the bytes read or -errno (-ENOENT/-ESRCH when a process is gone).
 */
ssize_t file_read_small(const char *path, char *buf, size_t size);

struct strbuf;

/*
 * Reads a whole file (a /proc table that may outgrow one read: /proc/stat
 * on a machine with many CPUs) into out, replacing what was there, up to
 * max bytes. Returns the bytes read, -EFBIG past max, -ENOMEM, or -errno.
 */
ssize_t file_read_all(const char *path, struct strbuf *out, size_t max);

/*
 * Where the host's root is seen: "/proc/1/root" (the host's files even when
 * the agent runs in a container with the host's PID namespace), or "" when
 * that cannot be entered (then the agent's own root is the host's best view).
 */
const char *file_host_root(void);

#endif
