"""The programs the Makefile builds for bench/ (`make bench-tools`, part of `make` on x86):
the load generators of bench/gen/ in build/bench/, the floor's loader build/bench-floor and
its BPF objects build/bench/*.bpf.o. A script asks for one by name; one that is missing or
older than its source is built then with make, so a fresh clone works after `make` as
before it."""

import subprocess
from pathlib import Path

from .cli import die, progress

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
BUILD = REPO_ROOT / "build"
DEFAULT_AGENT = BUILD / "nodescope"

# name -> (built file, its source)
_TOOLS = {
    "exec-gen": ("bench/exec-gen", "bench/gen/exec-gen.c"),
    "tcp-gen": ("bench/tcp-gen", "bench/gen/tcp-gen.c"),
    "syscall-gen": ("bench/syscall-gen", "bench/gen/syscall-gen.c"),
    "link-close": ("bench/link-close", "bench/gen/link-close.c"),
    "dns-gen": ("bench/dns-gen", "bench/gen/dns-gen.c"),
    "bench-floor": ("bench-floor", "bench/floor/floor.c"),
    "empty.bpf.o": ("bench/empty.bpf.o", "bench/floor/empty.bpf.c"),
    "dispatch.bpf.o": ("bench/dispatch.bpf.o", "bench/floor/dispatch.bpf.c"),
    "capture.bpf.o": ("bench/capture.bpf.o", "bench/floor/capture.bpf.c"),
}


def _stale(out, src):
    return not out.exists() or out.stat().st_mtime < src.stat().st_mtime


def tool(name):
    """The path of a bench tool, built first (make bench-tools) if it is missing or stale."""
    rel, src = _TOOLS[name]
    out = BUILD / rel
    if _stale(out, REPO_ROOT / src):
        progress(f"building {out.relative_to(REPO_ROOT)}: make bench-tools")
        r = subprocess.run(["make", "-C", str(REPO_ROOT), "-s", "bench-tools"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if r.returncode != 0 or not out.exists():
            die(f"cannot build {out} (make bench-tools; it needs cc, clang and libbpf-dev: "
                f"make deps):\n" + r.stdout.decode("utf-8", "replace")[-3000:])
    return out


# The floors the per-request benchmarks share: config name -> (bench-floor's arguments, with
# tool names for its objects, and what the config measures).
CAPTURE_FLOORS = {
    "floor": (["--object", "empty.bpf.o", "nodescope"],
              "build/bench-floor: empty BPF programs on every hook nodescope attaches (the least "
              "any agent on them costs a request)"),
    "floor-capture": (["--object", "capture.bpf.o", "capture"],
                      "build/bench-floor capture: the least a capture of every tracked socket's "
                      "reads and writes costs (bench/floor/capture.bpf.c: all at the syscall's exit, "
                      "the fd looked up, 64 bytes copied into a fixed ring record, the ring drained "
                      "on a timer)"),
    "floor-capture-cpu": (["--object", "capture.bpf.o", "capture-cpu"],
                          "build/bench-floor capture-cpu: floor-capture with one ring per CPU "
                          "(an array of ring buffers indexed by the CPU): no two CPUs' records "
                          "share a ring"),
    "floor-copy": (["--object", "capture.bpf.o", "copy"],
                   "build/bench-floor copy: floor-capture without its records (the same 64 bytes "
                   "read onto the BPF stack and dropped): what reading the bytes costs before any "
                   "record"),
    "floor-sock-capture": (["--object", "capture.bpf.o", "sock-capture"],
                           "build/bench-floor sock-capture: floor-capture from the socket tracepoints "
                           "sock_send_length and sock_recv_length (Linux 6.4+) instead of the syscall "
                           "hooks, the socket by its kernel address, the buffer from the task's saved "
                           "registers: nothing runs for any other syscall"),
    "floor-sock-hooks": (["--object", "capture.bpf.o", "sock-hooks"],
                         "build/bench-floor sock-hooks: empty programs on those two socket "
                         "tracepoints"),
}


def capture_floor_argv(name):
    """bench-floor's command line for one of CAPTURE_FLOORS, its objects built first."""
    args, _ = CAPTURE_FLOORS[name]
    return [str(tool("bench-floor"))] + [str(tool(a)) if a.endswith(".bpf.o") else a for a in args]
