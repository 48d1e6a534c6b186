#include "procfs.h"

#include "util/file.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int procfs_parse_stat(const char *text, long clk_tck, struct procfs_stat *out)
{
	const char *open = strchr(text, '(');
	const char *close = strrchr(text, ')');
	if (!open || !close || close < open || clk_tck <= 0)
		return -EINVAL;
	size_t n = close - open - 1;
	if (n > sizeof(out->comm) - 1)
		n = sizeof(out->comm) - 1;
	memcpy(out->comm, open + 1, n);
	out->comm[n] = '\0';

	/* After ") ": field 3 state, 4 ppid, ... 22 starttime. */
	const char *p = close + 1;
	unsigned long long v[20] = { 0 };
	char state = 0;
	if (sscanf(p, " %c", &state) != 1)
		return -EINVAL;
	p += 2;
	for (int field = 4; field <= 22; field++) {
		while (*p == ' ')
			p++;
		char *end;
		errno = 0;
		long long x = strtoll(p, &end, 10);
		if (end == p || errno)
			return -EINVAL;
		v[field - 4] = (unsigned long long)x;
		p = end;
	}
	out->state = state;
	out->ppid = (uint32_t)v[0];
	out->start_ns = v[22 - 4] * (1000000000ull / (unsigned long long)clk_tck);
	return 0;
}

int procfs_read_stat(pid_t pid, struct procfs_stat *out)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	ssize_t n = file_read_small(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	return procfs_parse_stat(buf, sysconf(_SC_CLK_TCK), out);
}

int procfs_read_exe(pid_t pid, char *out, size_t outlen)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(path, out, outlen - 1);
	if (n < 0) {
		out[0] = '\0';
		return -errno;
	}
	out[n] = '\0';
	return 0;
}

int procfs_foreach_pid(void (*fn)(void *ctx, pid_t pid), void *ctx)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	if (!d)
		return -errno;
	while ((de = readdir(d)))
		if (isdigit((unsigned char)de->d_name[0]))
			fn(ctx, (pid_t)strtol(de->d_name, NULL, 10));
	closedir(d);
	return 0;
}
