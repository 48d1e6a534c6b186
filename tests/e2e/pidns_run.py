"""Runs a program the way a container with its own hostname but the host's PID 1 would see the
node (tests of what an agent reads "as PID 1 sees it"):

    pidns_run.py [--own-net] HOSTNAME PROGRAM [ARGS...]

It enters a new PID and mount namespace, where its child is PID 1 (in the caller's UTS namespace,
with a /proc of the new PID namespace mounted), and that PID 1 runs PROGRAM in a UTS namespace
of its own named HOSTNAME. SIGTERM, SIGINT and SIGHUP are passed down to PROGRAM, and each level
exits as PROGRAM did, so the caller sees PROGRAM's exit. --own-net: PROGRAM also gets a network
namespace of its own, empty (a pod's, where the host's is PID 1's).
"""
import ctypes
import os
import signal
import socket
import sys

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWPID, CLONE_NEWNET = 0x00020000, 0x04000000, 0x20000000, 0x40000000
MS_REC, MS_PRIVATE = 0x4000, 1 << 18
libc = ctypes.CDLL(None, use_errno=True)


def check(rc, what):
    if rc != 0:
        err = ctypes.get_errno()
        sys.exit(f"pidns_run: {what}: {os.strerror(err)}")


def relay(pid):
    """Passes signals to pid, waits for it, and ends the same way it did."""
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda s, _f: os.kill(pid, s))
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(os.WEXITSTATUS(status))


def main():
    own_net = sys.argv[1] == "--own-net"
    hostname, argv = sys.argv[1 + own_net], sys.argv[2 + own_net:]
    check(libc.unshare(CLONE_NEWPID | CLONE_NEWNS), "unshare(PID, mount)")
    pid = os.fork()
    if pid:
        relay(pid)
    # PID 1 of the new namespace, still in the caller's UTS namespace.
    check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "make / private")
    check(libc.mount(b"proc", b"/proc", b"proc", 0, None), "mount /proc")
    pid = os.fork()
    if pid:
        relay(pid)
    check(libc.unshare(CLONE_NEWUTS | (CLONE_NEWNET if own_net else 0)), "unshare(UTS, net)")
    socket.sethostname(hostname)
    os.execv(argv[0], argv)


if __name__ == "__main__":
    main()
