#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

ssize_t file_read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, size - 1);
	int err = -errno;
	close(fd);
	if (n < 0)
		return err;
	buf[n] = '\0';
	return n;
}

const char *file_host_root(void)
{
	return access("/proc/1/root/", X_OK) == 0 ? "/proc/1/root" : "";
}
