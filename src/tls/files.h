/*
 * Where the TLS manager finds executable files and how it opens them: the
 * files of a files-stream event (through /proc, so containers' files are
 * reached in their own mount namespace), the TLS libraries installed on the
 * host, and the executable mappings of every running process.
 */
#ifndef NODESCOPE_TLS_FILES_H
#define NODESCOPE_TLS_FILES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A file to consider: opened only if the manager does not know it yet. */
struct tls_candidate {
	uint32_t pid;	       /* 0 for host library directories */
	dev_t dev;
	ino_t ino;
	const char *open_path; /* a path that opens this very file */
	const char *path;      /* its name as the process sees it */
	uint64_t start;	       /* where the mapping starts (0 for library dirs) */
};

typedef void (*tls_candidate_fn)(void *ctx, const struct tls_candidate *c);

/* The kernel's internal dev_t (as BPF reads it) in user space's encoding. */
dev_t tls_dev_from_kernel(uint64_t kdev);

/*
 * Opens the file of a files-stream event: exec (fd < 0) through
 * /proc/PID/exe, mmap through /proc/PID/fd/FD or, once that fd is closed,
 * /proc/PID/map_files. The file opened must have dev and ino. Returns an fd
 * (O_RDONLY | O_CLOEXEC) and its path in path, or -errno (-ENOENT: the
 * process or mapping is gone; -ESTALE: the fd now names another file).
 */
int tls_open_event_file(uint32_t pid, int fd, uint64_t addr, dev_t dev, ino_t ino, char *path,
			size_t path_len);

/* Files named like TLS libraries (libssl*.so*, libgnutls*.so*) in the host's library dirs. */
void tls_scan_library_dirs(tls_candidate_fn fn, void *ctx);

/* Every file mapped executable by a running process (its exe and libraries). */
void tls_scan_processes(tls_candidate_fn fn, void *ctx);

#endif
