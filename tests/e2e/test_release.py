"""Releasing probed files: every BPF link really goes, the counters come back, the agent answers meanwhile.

Closing a uprobe link waits for kernel grace periods, so the agent hands released files' links to
closer threads (src/bpf/link_closer.c) instead of closing them in its event loop. These tests check
facts, never timings (those are in bench/idle --release-files and --probed-files): after the release
of many files none of their links is left in the kernel, the per-file gauges are back where they were,
/metrics kept answering throughout, and after SIGTERM with many files probed the process exits only
once every link is gone.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import urllib.request

import pytest

from conftest import Agent, parse_metrics

LIBSSL = "/usr/lib/x86_64-linux-gnu/libssl.so.3"
FILES = 40

# Maps each file PROT_READ|PROT_EXEC and closes its fd, as ld.so maps a library's code; holds the
# mappings until stdin is closed.
MAPPER = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long]
for p in sys.argv[1:]:
    fd = os.open(p, os.O_RDONLY)
    addr = libc.mmap(None, os.fstat(fd).st_size, 0x1 | 0x4, 0x02, fd, 0)
    if addr in (None, ctypes.c_void_p(-1).value):
        sys.exit(f"mmap {p}: errno {ctypes.get_errno()}")
    os.close(fd)
print("mapped", flush=True)
sys.stdin.read()
"""


@pytest.fixture
def copies():
    """FILES copies of the host's libssl, each a new inode the agent probes on its own."""
    d = tempfile.mkdtemp(prefix="nodescope-e2e-linkrelease.")
    paths = []
    for i in range(FILES):
        p = os.path.join(d, f"libssl-copy{i}.so.3")
        shutil.copy(LIBSSL, p)
        paths.append(p)
    yield d, paths
    shutil.rmtree(d, ignore_errors=True)


class Mapper:
    def __init__(self, paths):
        self.proc = subprocess.Popen([sys.executable, "-c", MAPPER, *paths], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line = self.proc.stdout.readline()
        assert line == b"mapped\n", (line, self.proc.stderr.read())

    def stop(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(10)


def probed_paths(agent, d):
    return {e["file"] for e in agent.snapshot() if e.get("type") == "tls_probe"
            and e.get("file", "").startswith(d + "/") and e.get("probes", 0) > 0}


def released_paths(agent, d):
    return {e["file"] for e in agent.snapshot() if e.get("type") == "tls_release"
            and e.get("file", "").startswith(d + "/")}


def links_of(pid, d):
    """{link id: path} of the process' uprobe links on files under d (from its fdinfo)."""
    out = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") != "anon_inode:bpf_link":
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                info = dict(line.split(":", 1) for line in f.read().splitlines() if ":" in line)
        except OSError:
            continue
        path = info.get("path", "").strip()
        if path.startswith(d + "/"):
            out[int(info["link_id"])] = path
    return out


def kernel_link_ids():
    out = subprocess.run(["bpftool", "-j", "link", "show"], capture_output=True, check=True)
    return {link["id"] for link in json.loads(out.stdout)}


def gauges_match_lines(agent):
    """The agent's TLS gauges equal what its tls_probe and tls_release lines add up to. Other
    programs on the node may be probed or released meanwhile: their lines count too, and the
    reader thread may lag a scrape, so callers wait for this rather than assert it once."""
    m = agent.metrics()
    evs = agent.snapshot()
    probes = [e for e in evs if e.get("type") == "tls_probe" and e.get("probes", 0) > 0]
    releases = [e for e in evs if e.get("type") == "tls_release"]
    files = len(probes) - len(releases)
    uprobes = sum(e["probes"] for e in probes) - sum(e["probes"] for e in releases)
    got = (m["nodescope_tls_probed_files"][frozenset()], m["nodescope_tls_uprobes"][frozenset()])
    return got == (files, uprobes)


def wait_gauges_match_lines(agent):
    agent.wait_for(lambda _: gauges_match_lines(agent), timeout=30,
                   what="nodescope_tls_probed_files and nodescope_tls_uprobes to match the lines")


def probe_all(agent, paths, d):
    """Maps the files and waits until the agent has probed every one of them."""
    m = Mapper(paths)
    agent.wait_for(lambda _: len(probed_paths(agent, d)) == len(paths), timeout=60,
                   what=f"{len(paths)} files probed")
    return m


def release_all(agent, d, n):
    """Runs fresh executables until the agent has released all n files (each new one brings the
    sweep along; no timer does it), then waits until its closer threads have closed every link."""
    deadline = 60
    trig_dir = tempfile.mkdtemp(prefix="nodescope-e2e-trigger.")
    try:
        for k in range(int(deadline / 0.3)):
            if len(released_paths(agent, d)) == n:
                break
            t = os.path.join(trig_dir, f"true{k}")
            shutil.copy("/bin/true", t)
            subprocess.run([t], check=True)
            try:
                agent.wait_for(lambda _: len(released_paths(agent, d)) == n, timeout=0.3)
            except AssertionError:
                pass
        assert len(released_paths(agent, d)) == n
    finally:
        shutil.rmtree(trig_dir, ignore_errors=True)
    # Handed over in the sweep that released them; closed once the closer says so. Perf-event
    # links close one at a time in the kernel, as many as the node had probed files released.
    agent.wait_for(lambda _: agent.metric("nodescope_bpf_links_closing") == 0, timeout=300,
                   what="every released link closed")


def test_release_of_many_files_removes_every_link(copies):
    d, paths = copies
    a = Agent("--events", "files", "--tls-release-after", "1")
    mapper = None
    try:
        mapper = probe_all(a, paths, d)
        links = links_of(a.proc.pid, d)
        per_file = {}
        for path in links.values():
            per_file[path] = per_file.get(path, 0) + 1
        assert set(per_file) == set(paths) and set(per_file.values()) == {2}, per_file
        assert set(links) <= kernel_link_ids()
        wait_gauges_match_lines(a)
        closed0 = a.metric("nodescope_bpf_links_closed_total")

        # Scrape /metrics without pause from another thread while the files are released.
        answers, errors, stop = [], [], threading.Event()

        def scrape():
            while not stop.is_set():
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{a.port}/metrics", timeout=60) as r:
                        answers.append(parse_metrics(r.read().decode()))
                except OSError as e:
                    errors.append(e)
                stop.wait(0.01)

        t = threading.Thread(target=scrape, daemon=True)
        t.start()
        mapper.stop()  # nothing maps them any more
        release_all(a, d, FILES)
        # Every scrape was answered, up to one sent after the release was over.
        n = len(answers)
        a.wait_for(lambda _: len(answers) >= n + 2 or errors, timeout=60,
                   what="a scrape after the release")
        stop.set()
        t.join(70)
        assert not errors, errors[:3]
        assert answers[-1]["nodescope_tls_files_released_total"][frozenset()] >= FILES

        # Every link of those files is gone from the kernel and from the agent's fds.
        assert not links_of(a.proc.pid, d)
        assert not (set(links) & kernel_link_ids())
        assert a.metric("nodescope_bpf_links_closed_total") - closed0 >= 2 * FILES
        # Each file released once, with the uprobes it was probed with; the gauges agree.
        probed = {e["file"]: e["probes"] for e in a.snapshot() if e.get("type") == "tls_probe"
                  and e["file"] in per_file}
        released = [e for e in a.snapshot() if e.get("type") == "tls_release" and e["file"] in per_file]
        assert sorted(e["file"] for e in released) == sorted(paths)
        assert all(e["probes"] == probed[e["file"]] for e in released), (released, probed)
        wait_gauges_match_lines(a)
    finally:
        if mapper:
            mapper.stop()
        a.stop()


def test_sigterm_with_many_probed_files_exits_after_every_link_is_gone(copies):
    d, paths = copies
    a = Agent("--events", "files")
    mapper = None
    try:
        mapper = probe_all(a, paths, d)
        links = links_of(a.proc.pid, d)
        assert len(links) == 2 * FILES
        a.proc.send_signal(signal.SIGTERM)
        assert a.proc.wait(120) == 0, a.stderr()
        # The process is gone only once its closer threads had closed every link.
        assert not (set(links) & kernel_link_ids())
    finally:
        if mapper:
            mapper.stop()
        a.stop()


def test_release_with_perf_event_uprobes(copies):
    """Kernels before 6.6: one perf-event uprobe link per site, destroyed by the closer too."""
    d, paths = copies
    paths = paths[:3]
    a = Agent("--events", "files", "--tls-release-after", "1", "--debug-kernel-lacks", "uprobe_multi")
    mapper = None
    try:
        mapper = probe_all(a, paths, d)
        wait_gauges_match_lines(a)
        mapper.stop()
        release_all(a, d, len(paths))
        # One perf-event link per uprobe, each closed by the closer.
        ours = [e for e in a.snapshot() if e.get("type") == "tls_release" and e["file"].startswith(d + "/")]
        assert a.metric("nodescope_bpf_links_closed_total") >= sum(e["probes"] for e in ours) > 0
        wait_gauges_match_lines(a)
        assert a.stop(timeout=300) == 0
    finally:
        if mapper:
            mapper.stop()
        a.stop()
