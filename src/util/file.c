#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "strbuf.h"

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

ssize_t file_read_all(const char *path, struct strbuf *out, size_t max)
{
	char chunk[16384];
	ssize_t n, err = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	strbuf_reset(out);
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (out->len + (size_t)n > max) {
			err = -EFBIG;
			break;
		}
		strbuf_append(out, chunk, (size_t)n);
	}
	close(fd);
	if (!err && out->oom)
		err = -ENOMEM;
	if (!err && !out->buf)
		strbuf_append(out, "", 0); /* an empty file is "" too */
	return err ? err : (ssize_t)out->len;
}

const char *file_host_root(void)
{
	return access("/proc/1/root/", X_OK) == 0 ? "/proc/1/root" : "";
}
