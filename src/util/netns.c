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

#define HOST_NETNS "/proc/1/ns/net"

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

bool netns_is_own(const char *ns_path)
{
	struct stat a, b;
	return !stat(ns_path, &a) && !stat("/proc/self/ns/net", &b) && same_file(&a, &b);
}

uint64_t netns_inode(const char *ns_path)
{
	struct stat st;
	return stat(ns_path, &st) ? 0 : (uint64_t)st.st_ino;
}

uint64_t netns_host_inode(void)
{
	uint64_t ino = netns_inode(HOST_NETNS);
	return ino ? ino : netns_inode("/proc/self/ns/net");
}

int netns_socket_of(const char *ns_path, uint64_t ino, int (*open_fn)(void))
{
	struct stat a, b;
	int target = open(ns_path, O_RDONLY | O_CLOEXEC);
	if (target < 0)
		return -errno;
	if (fstat(target, &a)) {
		int err = -errno;
		close(target);
		return err;
	}
	/* The path is /proc/PID/...: PID may be another process's by now. */
	if (ino && (uint64_t)a.st_ino != ino) {
		close(target);
		return -ESTALE;
	}
	if (!stat("/proc/self/ns/net", &b) && same_file(&a, &b)) {
		close(target);
		return open_fn();
	}
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

int netns_socket(const char *ns_path, int (*open_fn)(void))
{
	return netns_socket_of(ns_path, 0, open_fn);
}

int netns_host_socket(int (*open_fn)(void), const char *what)
{
	int fd = netns_socket(HOST_NETNS, open_fn);
	if (fd >= 0)
		return fd;
	int own = open_fn();
	/* Failing in both (no such protocol: a module not loaded) is the caller's to say. */
	if (own >= 0 && fd != -ENOENT)
		log_warn("cannot enter PID 1's network namespace (%s): %s the agent's own",
			 strerror(-fd), what);
	return own;
}
