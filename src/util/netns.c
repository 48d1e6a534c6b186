#define _GNU_SOURCE /* setns */
#include "netns.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "log.h"

bool netns_is_own(const char *ns_path)
{
	struct stat a, b;
	return !stat(ns_path, &a) && !stat("/proc/self/ns/net", &b) && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

int netns_socket(const char *ns_path, int (*open_fn)(void))
{
	if (netns_is_own(ns_path))
		return open_fn();
	int target = open(ns_path, O_RDONLY | O_CLOEXEC);
	if (target < 0)
		return -errno;
	int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0 || setns(target, CLONE_NEWNET)) {
		int err = -errno;
		close(target);
		if (self >= 0)
			close(self);
		return err;
	}
	int fd = open_fn();
	/* Staying in the other namespace would make every later socket its: say it loudly. */
	if (setns(self, CLONE_NEWNET))
		log_error("cannot return to own network namespace: %s", strerror(errno));
	close(target);
	close(self);
	return fd;
}
