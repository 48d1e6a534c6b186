#include "preflight.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "exit_codes.h"
#include "util/log.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static int has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return (d[cap / 32].effective >> (cap % 32)) & 1;
}

int preflight_privileges(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };

	if (syscall(SYS_capget, &hdr, data) < 0) {
		log_error("cannot read own capabilities: %s", strerror(errno));
		return NS_EXIT_PRIVILEGE;
	}
	if (has_cap(data, CAP_SYS_ADMIN))
		return 0;
	if (has_cap(data, CAP_BPF) && has_cap(data, CAP_PERFMON) &&
	    has_cap(data, CAP_SYS_RESOURCE) && has_cap(data, CAP_DAC_READ_SEARCH) &&
	    has_cap(data, CAP_SYS_PTRACE))
		return 0;
	log_error("not enough privileges to load BPF programs (running as uid %u).\n"
		  "run it as root (sudo nodescope ...), or grant CAP_SYS_ADMIN, or all of\n"
		  "CAP_BPF, CAP_PERFMON, CAP_SYS_RESOURCE, CAP_DAC_READ_SEARCH and CAP_SYS_PTRACE.",
		  (unsigned)geteuid());
	return NS_EXIT_PRIVILEGE;
}

int preflight_btf_at(const char *vmlinux_btf)
{
	if (access(vmlinux_btf, R_OK) == 0)
		return 0;
	int err = errno;
	struct utsname u;
	uname(&u);
	log_error("cannot load BPF: kernel %s has no BTF (%s: %s).\n"
		  "nodescope needs a kernel built with CONFIG_DEBUG_INFO_BTF=y (5.8 or newer).",
		  u.release, vmlinux_btf, strerror(err));
	return NS_EXIT_KERNEL;
}

int preflight_btf(void)
{
	return preflight_btf_at("/sys/kernel/btf/vmlinux");
}

static int dir_has_events(const char *dir)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/events", dir);
	return access(p, F_OK) == 0;
}

int preflight_tracefs(void)
{
	/* libbpf looks under debugfs' tracing folder when that exists, else tracefs. */
	static const char *const dirs[] = { "/sys/kernel/debug/tracing", "/sys/kernel/tracing" };
	const char *target = dirs[1];

	if (access(dirs[0], F_OK) == 0)
		target = dirs[0];
	if (dir_has_events(target))
		return 0;
	mkdir(target, 0700);
	if (mount("tracefs", target, "tracefs", 0, NULL) == 0 && dir_has_events(target)) {
		log_info("mounted tracefs at %s", target);
		return 0;
	}
	log_error("tracefs is not mounted and mounting it at %s failed: %s.\n"
		  "mount it (mount -t tracefs tracefs /sys/kernel/tracing) or run with\n"
		  "the permission to mount (root in the initial mount namespace).",
		  target, strerror(errno));
	return NS_EXIT_KERNEL;
}

int preflight_memlock(void)
{
	struct rlimit r = { RLIM_INFINITY, RLIM_INFINITY };

	if (setrlimit(RLIMIT_MEMLOCK, &r) == 0)
		return 0;
	/* Only fatal on kernels that still account BPF memory to memlock (< 5.11);
	 * on newer ones the memory cgroup accounts it and the limit is ignored. */
	struct utsname u;
	unsigned maj = 0, min = 0;
	uname(&u);
	sscanf(u.release, "%u.%u", &maj, &min);
	if (maj > 5 || (maj == 5 && min >= 11))
		return 0;
	log_error("cannot raise RLIMIT_MEMLOCK (%s); kernel %s charges BPF maps to it.\n"
		  "run as root or raise the limit (ulimit -l unlimited).",
		  strerror(errno), u.release);
	return NS_EXIT_PRIVILEGE;
}

int preflight_all(void)
{
	int rc;

	if ((rc = preflight_privileges()) || (rc = preflight_btf()) ||
	    (rc = preflight_memlock()) || (rc = preflight_tracefs()))
		return rc;
	return 0;
}
