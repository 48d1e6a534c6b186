#define _GNU_SOURCE /* setns */
#include "uname.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "util/log.h"

static void copy(struct node_uname *out)
{
	struct utsname u;

	if (uname(&u)) {
		*out = (struct node_uname){ 0 };
		return;
	}
	snprintf(out->hostname, sizeof(out->hostname), "%s", u.nodename);
	snprintf(out->kernel_version, sizeof(out->kernel_version), "%s", u.release);
}

int node_uname_host(struct node_uname *out)
{
	int host = open("/proc/1/ns/uts", O_RDONLY | O_CLOEXEC);
	int self = open("/proc/self/ns/uts", O_RDONLY | O_CLOEXEC);
	int err = 0;

	struct stat a, b;

	if (host < 0 || self < 0) {
		err = -errno;
		copy(out);
	} else if (!fstat(host, &a) && !fstat(self, &b) && a.st_ino == b.st_ino &&
		   a.st_dev == b.st_dev) {
		copy(out); /* already there */
	} else if (setns(host, CLONE_NEWUTS)) {
		err = -errno;
		copy(out);
	} else {
		copy(out);
		if (setns(self, CLONE_NEWUTS)) /* only this thread moved, and it moves back */
			log_error("cannot return to own UTS namespace: %s", strerror(errno));
	}
	if (host >= 0)
		close(host);
	if (self >= 0)
		close(self);
	return err;
}
