"""Runs a program as a Kubernetes DaemonSet without hostNetwork runs the agent: the host's PID
namespace, a network namespace of its own.

    podns_run.py NETNS PROGRAM [ARGS...]

NETNS is a name under /run/netns (ip netns add). The program runs in a private copy of the
caller's mount namespace (so it sees the host's cgroups, tracefs and /proc, as the DaemonSet's
mounts give them) where /proc/1/ns/net and /proc/1/ns/uts, what the agent reads of PID 1's, are
the caller's: a node's PID 1 is in the host's, and where this runs (a sandbox whose PID 1 hides
its namespace links from root) they could not be read otherwise. The caller's namespaces are the
host's for the tests. Signals reach the program itself: it is exec'd, not forked.
"""
import ctypes
import os
import sys

CLONE_NEWNS, CLONE_NEWNET = 0x00020000, 0x40000000
MS_BIND, MS_REC, MS_PRIVATE = 0x1000, 0x4000, 1 << 18
libc = ctypes.CDLL(None, use_errno=True)


def check(rc, what):
    if rc != 0:
        err = ctypes.get_errno()
        sys.exit(f"podns_run: {what}: {os.strerror(err)}")


def main():
    netns, argv = sys.argv[1], sys.argv[2:]
    host = f"/proc/{os.getpid()}/ns"
    pod = os.open(f"/run/netns/{netns}", os.O_RDONLY)
    check(libc.unshare(CLONE_NEWNS), "unshare(mount)")
    check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "make / private")
    check(libc.mount(b"podns_run", b"/proc/1/ns", b"tmpfs", 0, None), "tmpfs on /proc/1/ns")
    for name in ("net", "uts"):
        open(f"/proc/1/ns/{name}", "w").close()
        check(libc.mount(f"{host}/{name}".encode(), f"/proc/1/ns/{name}".encode(), None, MS_BIND,
                         None), f"bind /proc/1/ns/{name}")
    check(libc.setns(pod, CLONE_NEWNET), f"setns({netns})")
    os.close(pod)
    os.execv(argv[0], argv)


if __name__ == "__main__":
    main()
