"""Container resource metrics (issue 14): CPU, memory, pressure, delays, restarts and application
types of real workloads in real cgroups made here, each figure checked against an independent
reading (the cgroup's own files, the processes' /proc/PID/schedstat) taken while the workload is
stopped, so nothing races.

This machine is hybrid (v1 hierarchies, cgroup2 at /sys/fs/cgroup/unified with no controllers):
a container's processes are put in a cgroup of the same path in the v1 cpu, cpuacct and memory
hierarchies and in the v2 tree, as a runtime does. Its container_id is the v2 path (Coroot's
choice); CPU and memory come from v1, pressure from v2.
"""
import os
import signal
import subprocess
import time

import pytest

from conftest import cgroup2_root

V1 = "/sys/fs/cgroup"
HIERARCHIES = ("cpu", "cpuacct", "memory")


class Container:
    """A systemd-service-like cgroup in every hierarchy the metrics read."""

    def __init__(self, tag):
        self.id = f"/system.slice/nodescope-e2e-res-{os.getpid()}-{tag}.service"
        self.dirs = {h: f"{V1}/{h}{self.id}" for h in HIERARCHIES}
        self.dirs["v2"] = cgroup2_root() + self.id
        for d in self.dirs.values():
            os.makedirs(d, exist_ok=True)
        self.procs = []

    def run(self, *argv, **kw):
        """Starts argv inside the cgroups (sh moves itself in, then execs it)."""
        procs = " ".join(f"{d}/cgroup.procs" for d in self.dirs.values())
        script = f'for f in {procs}; do echo $$ > "$f"; done; exec "$@"'
        p = subprocess.Popen(["/bin/sh", "-c", script, "sh", *argv], **kw)
        self.procs.append(p)
        return p

    def read(self, hier, name):
        with open(os.path.join(self.dirs[hier], name)) as f:
            return f.read()

    def stat(self, hier, name):
        return dict((k, int(v)) for k, v in (l.split() for l in self.read(hier, name).splitlines()))

    def write(self, hier, name, value):
        with open(os.path.join(self.dirs[hier], name), "w") as f:
            f.write(str(value))

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        for d in self.dirs.values():
            for _ in range(50):  # a killed process leaves its cgroup a moment after wait()
                try:
                    os.rmdir(d)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.1)


@pytest.fixture
def container(request):
    made = []

    def make(tag):
        c = Container(tag)
        made.append(c)
        return c
    yield make
    for c in made:
        c.close()


def series(agent, name, **labels):
    """The value of one series, None when it is not exported."""
    return agent.metrics().get(name, {}).get(frozenset(labels.items()))


def wait_until(cond, what, timeout=60):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def exec_seen(agent, pid, cid):
    agent.wait_for(lambda evs: any(e["type"] == "exec" and e["pid"] == pid and e["container"] == cid
                                   for e in evs), what=f"exec of {pid} in {cid}")


BURN = ["/bin/sh", "-c", "while :; do :; done"]


def stop(pids, reading):
    """SIGSTOPs pids and returns once they are stopped and reading() has stopped changing: the
    signal is delivered after kill() returns, and a task's last slice is accounted when it is
    switched out."""
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)

    def stopped(pid):
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] == "T"
    wait_until(lambda: all(stopped(p) for p in pids), "the processes to stop")
    last = [reading()]

    def settled():
        now = reading()
        same, last[0] = now == last[0], now
        return same
    wait_until(settled, "the accounting to settle")


def test_cpu_quota_usage_and_throttling(agent_factory, container):
    """A burner under a 0.2-core quota: usage, throttling and the limit as the cgroup's files say,
    growing between two scrapes."""
    a = agent_factory("--events", "proc")
    c = container("cpu")
    c.write("cpu", "cpu.cfs_period_us", 100000)
    c.write("cpu", "cpu.cfs_quota_us", 20000)
    p = c.run(*BURN)
    exec_seen(a, p.pid, c.id)
    readings = []
    for target in (0.3, 0.6):
        os.kill(p.pid, signal.SIGCONT)
        wait_until(lambda: int(c.read("cpuacct", "cpuacct.usage")) >= target * 1e9,
                   f"{target} s of CPU")
        # Stopped: the files stay as they are while both read.
        stop([p.pid], lambda: (c.read("cpuacct", "cpuacct.usage"), c.read("cpu", "cpu.stat")))
        m = a.metrics()
        usage = int(c.read("cpuacct", "cpuacct.usage")) / 1e9
        throttled = c.stat("cpu", "cpu.stat")["throttled_time"] / 1e9
        key = frozenset({("container_id", c.id)})
        assert m["container_resources_cpu_usage_seconds_total"][key] == pytest.approx(usage, abs=1e-9)
        assert m["container_resources_cpu_throttled_seconds_total"][key] == pytest.approx(throttled, abs=1e-9)
        assert m["container_resources_cpu_limit_cores"][key] == pytest.approx(0.2)
        readings.append((usage, throttled))
    # Under a fifth of a core, a burner is throttled in every period it runs out of quota.
    assert readings[1][0] > readings[0][0] and readings[1][1] > readings[0][1] > 0, readings
    assert c.stat("cpu", "cpu.stat")["nr_throttled"] > 0
    # Pressure from the v2 tree: the burner waited for its quota (some), and is alone (full = some).
    some = series(a, "container_resources_cpu_pressure_waiting_seconds_total", container_id=c.id, kind="some")
    assert some is not None and some > 0
    # No quota: no limit series (Coroot's), usage still there.
    c.write("cpu", "cpu.cfs_quota_us", -1)
    assert series(a, "container_resources_cpu_limit_cores", container_id=c.id) is None
    assert series(a, "container_resources_cpu_usage_seconds_total", container_id=c.id) > 0


HOG = r"""
import sys
sys.stdout.write("ready\n"); sys.stdout.flush()
sys.stdin.readline()
b = bytearray(%d)
for i in range(0, len(b), 4096):
    b[i] = 1
sys.stdout.write("touched\n"); sys.stdout.flush()
sys.stdin.readline()
"""


def test_memory_hog_rss_and_limit(agent_factory, container):
    """A process that touches 64 MiB: rss grows by that within 5 %, and equals the cgroup's own
    total_rss + total_mapped_file; the limit and the cache as memory.limit_in_bytes and total_cache."""
    size = 64 << 20
    a = agent_factory("--events", "proc")
    c = container("mem")
    c.write("memory", "memory.limit_in_bytes", 512 << 20)
    p = c.run("/usr/bin/python3", "-c", HOG % size, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline() == "ready\n"
    exec_seen(a, p.pid, c.id)

    def check():
        m = a.metrics()  # the hog waits on stdin: its memory stays as it is while both read
        st = c.stat("memory", "memory.stat")
        key = frozenset({("container_id", c.id)})
        rss = m["container_resources_memory_rss_bytes"][key]
        assert rss == st["total_rss"] + st["total_mapped_file"]
        assert m["container_resources_memory_cache_bytes"][key] == st["total_cache"]
        assert m["container_resources_memory_limit_bytes"][key] == 512 << 20
        return rss

    before = check()
    p.stdin.write("\n")
    p.stdin.flush()
    assert p.stdout.readline() == "touched\n"
    after = check()
    assert abs((after - before) - size) < 0.05 * size, (before, after)


def test_cpu_contention_delay(agent_factory, container):
    """Two burners pinned to one CPU wait for each other: the container's CPU delay is the sum of
    their run delays (taskstats), which /proc/PID/schedstat reports too."""
    a = agent_factory("--events", "proc")
    c = container("delay")
    cpu = sorted(os.sched_getaffinity(0))[0]
    ps = [c.run("/usr/bin/taskset", "-c", str(cpu), *BURN) for _ in range(2)]
    for p in ps:
        exec_seen(a, p.pid, c.id)
    wait_until(lambda: int(c.read("cpuacct", "cpuacct.usage")) >= 1e9, "1 s of CPU")
    def run_delay(pid):
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[1]) / 1e9

    stop([p.pid for p in ps], lambda: [run_delay(p.pid) for p in ps])

    delay = series(a, "container_resources_cpu_delay_seconds_total", container_id=c.id)
    expected = sum(run_delay(p.pid) for p in ps)
    assert expected > 0.2  # each waited while the other ran
    assert delay == pytest.approx(expected, abs=1e-6)
    assert series(a, "container_resources_disk_delay_seconds_total", container_id=c.id) is not None


def test_restart_counted_once(agent_factory, container):
    """A container's only process killed and a new one started in it: container_restarts_total goes
    from 0 to 1; a second process of the same run adds nothing. Its application type is python."""
    a = agent_factory("--events", "proc")
    c = container("restart")
    sleeper = ["/usr/bin/python3", "-c", "import time; time.sleep(3600)"]
    p1 = c.run(*sleeper)
    exec_seen(a, p1.pid, c.id)
    assert series(a, "container_restarts_total", container_id=c.id) == 0
    assert series(a, "container_application_type", container_id=c.id, application_type="python") == 1
    p1.kill()
    p1.wait()
    a.wait_for(lambda evs: any(e["type"] == "exit" and e["pid"] == p1.pid for e in evs), what="exit")
    p2 = c.run(*sleeper)
    exec_seen(a, p2.pid, c.id)
    assert series(a, "container_restarts_total", container_id=c.id) == 1
    p3 = c.run("/bin/sleep", "3600")
    exec_seen(a, p3.pid, c.id)
    assert series(a, "container_restarts_total", container_id=c.id) == 1
    # Both programs' types; none once the python process is gone.
    p2.kill()
    p2.wait()
    a.wait_for(lambda evs: any(e["type"] == "exit" and e["pid"] == p2.pid for e in evs), what="exit")
    assert series(a, "container_application_type", container_id=c.id, application_type="python") is None


def test_vanished_cgroup_is_counted(agent_factory, container):
    """The cgroup a container's CPU was read from is removed under it (its process moved out):
    one read error is counted, the exposition stays whole, and the next scrape finds the cgroup
    anew (the v2 cpu.stat, as Coroot reads when the v1 cpu hierarchy is at its root)."""
    a = agent_factory("--events", "proc")
    c = container("vanish")
    p = c.run("/bin/sleep", "3600")
    exec_seen(a, p.pid, c.id)
    assert series(a, "container_resources_cpu_usage_seconds_total", container_id=c.id) is not None
    errors = series(a, "nodescope_container_resource_read_errors_total", source="cpu")
    with open(f"{V1}/cpu/cgroup.procs", "w") as f:
        f.write(str(p.pid))
    os.rmdir(c.dirs["cpu"])
    m = a.metrics()
    assert m["nodescope_container_resource_read_errors_total"][frozenset({("source", "cpu")})] == errors + 1
    assert series(a, "nodescope_container_resource_read_errors_total", source="cpu") == errors + 1
    assert series(a, "container_resources_cpu_usage_seconds_total", container_id=c.id) is not None


def test_many_containers_scraped_in_slices(agent_factory, container):
    """40 containers: a scrape is read in several slices between event reads, and four scrapes at
    once are all answered in full (they share the collection under way)."""
    import threading
    import urllib.request
    from conftest import parse_metrics

    a = agent_factory("--events", "proc")
    cs = [container(f"many{i}") for i in range(40)]
    ps = [c.run("/bin/sleep", "3600") for c in cs]
    for c, p in zip(cs, ps):
        exec_seen(a, p.pid, c.id)
    before = a.metrics()
    bodies = []

    def get():
        with urllib.request.urlopen(f"http://127.0.0.1:{a.port}/metrics", timeout=30) as r:
            bodies.append(parse_metrics(r.read().decode()))
    threads = [threading.Thread(target=get) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(bodies) == 4
    for m in bodies:
        usage = m["container_resources_cpu_usage_seconds_total"]
        assert all(frozenset({("container_id", c.id)}) in usage for c in cs)
    after = a.metrics()
    scrapes = after["nodescope_container_resource_scrapes_total"][frozenset()] - \
        before["nodescope_container_resource_scrapes_total"][frozenset()]
    slices = after["nodescope_container_resource_slices_total"][frozenset()] - \
        before["nodescope_container_resource_slices_total"][frozenset()]
    assert 1 <= scrapes <= 5  # the four shared one or more collections, then this one
    assert slices >= 2 * scrapes, (slices, scrapes)


def test_volume_written_to(agent_factory, container, tmp_path):
    """A container writing to a file system of its own (ext4 on a loop device, mounted here):
    the volume is found from the file it holds open for writing (no probe), named by its mount
    point and disk, and its size, used and reserved bytes are statfs's, read while the writer
    waits. /proc, pipes and read-only files make no volume. (This kernel's v1 blkio files count
    no I/O, so the I/O families are only checked to follow the cgroup's files: none here.)"""
    img, mnt = tmp_path / "img", tmp_path / "mnt"
    os.makedirs(mnt)
    subprocess.run(["truncate", "-s", "64M", str(img)], check=True)
    subprocess.run(["mkfs.ext4", "-q", str(img)], check=True)
    subprocess.run(["mount", "-o", "loop", str(img), str(mnt)], check=True)
    p = None
    try:
        dev = os.path.basename(subprocess.run(["findmnt", "-no", "SOURCE", str(mnt)], check=True,
                                              capture_output=True, text=True).stdout.strip())
        a = agent_factory("--events", "proc")
        c = container("disk")
        writer = ("import sys\nf = open(%r, 'wb')\nf.write(b'x' * (8 << 20)); f.flush()\n"
                  "g = open('/etc/hostname')\nsys.stdout.write('ready\\n'); sys.stdout.flush()\n"
                  "sys.stdin.readline()\n") % str(mnt / "data")
        # stderr to /dev/null: pytest's capture file (on /) would be a volume it writes to too.
        p = c.run("/usr/bin/python3", "-c", writer, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                  stderr=subprocess.DEVNULL, text=True)
        assert p.stdout.readline() == "ready\n"
        exec_seen(a, p.pid, c.id)
        m = a.metrics()
        st = os.statvfs(mnt)
        key = frozenset({("container_id", c.id), ("mount_point", str(mnt)), ("device", dev),
                         ("volume", "")})
        assert m["container_resources_disk_size_bytes"][key] == st.f_blocks * st.f_bsize
        assert m["container_resources_disk_used_bytes"][key] == (st.f_blocks - st.f_bfree) * st.f_bsize
        assert m["container_resources_disk_reserved_bytes"][key] == (st.f_bfree - st.f_bavail) * st.f_bsize
        mounts = {dict(k)["mount_point"] for k in m["container_resources_disk_size_bytes"]
                  if dict(k)["container_id"] == c.id}
        assert mounts == {str(mnt)}, mounts
    finally:
        if p:
            p.kill()
            p.wait()
        subprocess.run(["umount", str(mnt)], check=True)
