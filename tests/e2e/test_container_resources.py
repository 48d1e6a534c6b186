"""Container resource metrics (issue 14): CPU, memory, pressure, delays, restarts and application
types of real workloads in real cgroups made here, each figure checked against an independent
reading (the cgroup's own files, the processes' /proc/PID/schedstat) taken while the workload is
stopped, so nothing races.

This machine is hybrid (v1 hierarchies, cgroup2 at /sys/fs/cgroup/unified with no controllers):
a container's processes are put in a cgroup of the same path in the v1 cpu, cpuacct, memory and
blkio hierarchies and in the v2 tree, as a runtime does. Its container_id is the v2 path (Coroot's
choice); CPU, memory and disk I/O come from v1, pressure from v2.
"""
import os
import signal
import subprocess
import time

import pytest

from conftest import cgroup2_root, wait_until

V1 = "/sys/fs/cgroup"
HIERARCHIES = ("cpu", "cpuacct", "memory", "blkio")


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
    wait_until(lambda: all(stopped(p) for p in pids), "the processes to stop", timeout=60)
    last = [reading()]

    def settled():
        now = reading()
        same, last[0] = now == last[0], now
        return same
    wait_until(settled, "the accounting to settle", timeout=60)


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
                   f"{target} s of CPU", timeout=60)
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


def check_cpu_contention_delay(agent, c):
    """Two burners of container c pinned to one CPU wait for each other: c's CPU delay, as agent
    reports it, is the sum of their run delays (taskstats), which /proc/PID/schedstat reports
    too."""
    cpu = sorted(os.sched_getaffinity(0))[0]
    ps = [c.run("/usr/bin/taskset", "-c", str(cpu), *BURN) for _ in range(2)]
    for p in ps:
        exec_seen(agent, p.pid, c.id)
    wait_until(lambda: int(c.read("cpuacct", "cpuacct.usage")) >= 1e9, "1 s of CPU", timeout=60)

    def run_delay(pid):
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[1]) / 1e9

    stop([p.pid for p in ps], lambda: [run_delay(p.pid) for p in ps])

    delay = series(agent, "container_resources_cpu_delay_seconds_total", container_id=c.id)
    expected = sum(run_delay(p.pid) for p in ps)
    assert expected > 0.2  # each waited while the other ran
    assert delay == pytest.approx(expected, abs=1e-6)


def test_cpu_contention_delay(agent_factory, container):
    """check_cpu_contention_delay; and the disk delay is exported too."""
    a = agent_factory("--events", "proc")
    c = container("delay")
    check_cpu_contention_delay(a, c)
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


class LoopFs:
    """An ext4 file system on a loop device, mounted at mnt."""

    def __init__(self, img, mnt, size_mib=160):
        subprocess.run(["truncate", "-s", f"{size_mib}M", str(img)], check=True)
        subprocess.run(["mkfs.ext4", "-q", "-F", str(img)], check=True)
        os.makedirs(mnt, exist_ok=True)
        subprocess.run(["mount", "-o", "loop", str(img), str(mnt)], check=True)
        self.mnt = mnt
        self.dev = os.path.basename(subprocess.run(["findmnt", "-no", "SOURCE", str(mnt)], check=True,
                                                   capture_output=True, text=True).stdout.strip())
        with open(f"/sys/block/{self.dev}/dev") as f:
            self.majmin = f.read().strip()

    def close(self):
        # Lazily when still busy (a test that failed with a writer alive): the loop device goes
        # with the last reference.
        if subprocess.run(["umount", str(self.mnt)]).returncode:
            subprocess.run(["umount", "-l", str(self.mnt)], check=True)


@pytest.fixture
def loop_fs(tmp_path):
    """Makes LoopFs at mnt (default tmp_path/mnt). Ask for it before `container`, so that the
    containers' processes are gone before it is unmounted."""
    made = []

    def make(mnt=None):
        fs = LoopFs(tmp_path / f"img{len(made)}", mnt or tmp_path / f"mnt{len(made)}")
        made.append(fs)
        return fs
    yield make
    for fs in made:
        fs.close()


def count_block_io(majmin):
    """Makes the kernel's v1 blkio.throttle.* files count the I/O of disk majmin. Kernels since
    "blk-throttle: delay initialization until configuration" (a3166c51702b) count nothing for a
    disk until a throttle rule was written for it; writing "MAJ:MIN 0" (no limit) to the root
    cgroup's file is such a rule, and limits nothing."""
    with open(f"{V1}/blkio/blkio.throttle.read_bps_device", "w") as f:
        f.write(f"{majmin} 0")


def blkio(c, majmin):
    """The container's (reads, read bytes, writes, written bytes) on majmin, from its cgroup."""
    def rw(name):
        r = w = 0
        for line in c.read("blkio", name).splitlines():
            f = line.split()
            if len(f) == 3 and f[0] == majmin and f[1] in ("Read", "Write"):
                r, w = (int(f[2]), w) if f[1] == "Read" else (r, int(f[2]))
        return r, w
    (reads, writes), (rbytes, wbytes) = rw("blkio.throttle.io_serviced"), rw("blkio.throttle.io_service_bytes")
    return reads, rbytes, writes, wbytes


IO_FAMILIES = ("container_resources_disk_reads_total", "container_resources_disk_read_bytes_total",
               "container_resources_disk_writes_total", "container_resources_disk_written_bytes_total")

# Holds FILE open for writing (so the agent knows the volume) and waits.
HOLD = ("import sys\nf = open(sys.argv[1], 'ab')\nsys.stdout.write('ready\\n'); sys.stdout.flush()\n"
        "sys.stdin.readline()\n")


def test_disk_io_within_1pct(agent_factory, loop_fs, container):
    """dd with direct I/O in a container writes then reads 32 MiB on a loop-device ext4: the
    container's disk I/O series on that volume grow by 32 MiB within 1 % each way, and exactly as
    the cgroup's own blkio.throttle.io_service_bytes / io_serviced (read after dd has exited, with
    the volume held open by a waiting process of the container)."""
    size = 32 << 20
    fs = loop_fs()
    count_block_io(fs.majmin)
    a = agent_factory("--events", "proc")
    c = container("dio")
    data = str(fs.mnt / "data")
    holder = c.run("/usr/bin/python3", "-c", HOLD, data, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                   stderr=subprocess.DEVNULL, text=True)
    assert holder.stdout.readline() == "ready\n"
    exec_seen(a, holder.pid, c.id)
    key = frozenset({("container_id", c.id), ("mount_point", str(fs.mnt)), ("device", fs.dev),
                     ("volume", "")})

    def agent_io():
        m = a.metrics()
        assert key in m["container_resources_disk_size_bytes"]  # the volume is known
        return tuple(m.get(f, {}).get(key, 0) for f in IO_FAMILIES)
    before, cg_before = agent_io(), blkio(c, fs.majmin)
    for argv in (["dd", "if=/dev/zero", f"of={data}", "bs=1M", f"count={size >> 20}", "oflag=direct",
                  "conv=notrunc", "status=none"],
                 ["dd", f"if={data}", "of=/dev/null", "bs=1M", "iflag=direct", "status=none"]):
        assert c.run(*argv).wait() == 0, argv
    after, cg_after = agent_io(), blkio(c, fs.majmin)
    grew = [x - y for x, y in zip(after, before)]
    cg_grew = [x - y for x, y in zip(cg_after, cg_before)]
    print("FIGURES disk io: agent grew", grew, "cgroup grew", cg_grew, "dd bytes", size)
    assert grew == cg_grew, (grew, cg_grew)
    reads, rbytes, writes, wbytes = grew
    assert abs(wbytes - size) <= 0.01 * size, grew
    assert abs(rbytes - size) <= 0.01 * size, grew
    assert writes >= size >> 20 and reads >= size >> 20, grew  # at least one per 1 MiB block


@pytest.fixture
def delay_accounting():
    """kernel.task_delayacct on for the test (container_resources_disk_delay_seconds_total needs
    it), then as it was."""
    path = "/proc/sys/kernel/task_delayacct"
    with open(path) as f:
        old = f.read().strip()
    with open(path, "w") as f:
        f.write("1")
    yield
    with open(path, "w") as f:
        f.write(old)


# Direct I/O of MiB mebibytes to FILE (written, synced, read back) when told, then waits.
DIO = r"""
import mmap, os, sys
path, mib = sys.argv[1], int(sys.argv[2])
buf = mmap.mmap(-1, 1 << 20)  # page-aligned, as O_DIRECT wants
buf.write(b"x" * (1 << 20))
fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_DIRECT)
sys.stdout.write("ready\n"); sys.stdout.flush()
sys.stdin.readline()
for i in range(mib):
    os.pwrite(fd, buf, i << 20)
os.fsync(fd)
for i in range(mib):
    os.preadv(fd, [buf], i << 20)
sys.stdout.write("done\n"); sys.stdout.flush()
sys.stdin.readline()
"""


def test_disk_delay(agent_factory, loop_fs, container, delay_accounting):
    """With kernel.task_delayacct=1, a process doing 64 MiB of direct I/O each way waits for the
    disk: the container's disk delay grows, and is the process's own block I/O delay as
    /proc/PID/stat (delayacct_blkio_ticks, in clock ticks) says, read while it waits on stdin."""
    fs = loop_fs()
    a = agent_factory("--events", "proc")
    c = container("ddelay")
    p = c.run("/usr/bin/python3", "-c", DIO, str(fs.mnt / "data"), "64", stdin=subprocess.PIPE,
              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert p.stdout.readline() == "ready\n"
    exec_seen(a, p.pid, c.id)
    assert series(a, "nodescope_delay_accounting_enabled") == 1
    before = series(a, "container_resources_disk_delay_seconds_total", container_id=c.id)
    p.stdin.write("\n")
    p.stdin.flush()
    assert p.stdout.readline() == "done\n"
    delay = series(a, "container_resources_disk_delay_seconds_total", container_id=c.id)
    with open(f"/proc/{p.pid}/stat") as f:
        ticks = int(f.read().rpartition(")")[2].split()[39])  # field 42
    hz = os.sysconf("SC_CLK_TCK")
    print("FIGURES disk delay: before", before, "after", delay, "ticks", ticks)
    assert delay > before, (before, delay)
    assert ticks >= 1, ticks  # 128 MiB of direct I/O on a loop device waits for more than a tick
    # The same nanoseconds, which /proc/PID/stat rounds down to ticks.
    assert ticks / hz <= delay + 1e-9 and delay < (ticks + 1) / hz, (delay, ticks)


def test_volume_written_to(agent_factory, loop_fs, container, tmp_path):
    """A container writing to a Kubernetes volume: an ext4 on a loop device mounted at the host
    path kubelet gives a CSI volume (/var/lib/kubelet/pods/UID/volumes/kubernetes.io~csi/pvc-ID/mount,
    under tmp_path) and bind-mounted into the container's own mount namespace at /data's place,
    as a runtime does. The volume is found from the file the container holds open for writing
    (no probe), labelled with its mount point inside the container, its disk and Coroot's volume
    name (pvc-ID, from the host path); its size, used and reserved bytes are statfs's, read while
    the writer waits. /proc, pipes and read-only files make no volume."""
    pvc = "pvc-0b6f3c9e-5d0a-4c5e-9a7b-1f2e3d4c5b6a"
    host = tmp_path / "var/lib/kubelet/pods/8d3c1c55-6f0e-4f61-b3f0-2b7a1f9d0c11/volumes" \
        / "kubernetes.io~csi" / pvc / "mount"
    fs = loop_fs(host)
    inside = tmp_path / "data"
    os.makedirs(inside)
    a = agent_factory("--events", "proc")
    c = container("disk")
    writer = ("import sys\nf = open(%r, 'wb')\nf.write(b'x' * (8 << 20)); f.flush()\n"
              "g = open('/etc/hostname')\nsys.stdout.write('ready\\n'); sys.stdout.flush()\n"
              "sys.stdin.readline()\n") % str(inside / "data")
    # stderr to /dev/null: pytest's capture file (on /) would be a volume it writes to too.
    p = c.run("/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
              f'mount --bind {host} {inside} && exec "$@"', "sh", "/usr/bin/python3", "-c", writer,
              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert p.stdout.readline() == "ready\n"
    exec_seen(a, p.pid, c.id)
    m = a.metrics()
    st = os.statvfs(host)
    key = frozenset({("container_id", c.id), ("mount_point", str(inside)), ("device", fs.dev),
                     ("volume", pvc)})
    assert m["container_resources_disk_size_bytes"][key] == st.f_blocks * st.f_bsize
    assert m["container_resources_disk_used_bytes"][key] == (st.f_blocks - st.f_bfree) * st.f_bsize
    assert m["container_resources_disk_reserved_bytes"][key] == (st.f_bfree - st.f_bavail) * st.f_bsize
    mounts = {(dict(k)["mount_point"], dict(k)["volume"]) for k in m["container_resources_disk_size_bytes"]
              if dict(k)["container_id"] == c.id}
    assert mounts == {(str(inside), pvc)}, mounts


def test_dotnet_application_type(agent_factory, container, tmp_path):
    """Coroot's two .NET rules on real processes (Debian has no .NET runtime): `dotnet NAME.dll`
    (python3 run through a symlink named dotnet, its script named App.dll) and an apphost (a C
    program linked with the apphost's run path, $ORIGIN/netcoredeps). Both containers get
    application_type="dotnet"; the same C program without that run path does not."""
    src = tmp_path / "wait.c"
    src.write_text("#include <unistd.h>\nint main(void) { pause(); return 0; }\n")
    subprocess.run(["cc", "-o", str(tmp_path / "Accounting"), str(src), "-Wl,-rpath,$ORIGIN/netcoredeps"],
                   check=True)
    subprocess.run(["cc", "-o", str(tmp_path / "plain"), str(src)], check=True)
    os.symlink("/usr/bin/python3", tmp_path / "dotnet")
    (tmp_path / "App.dll").write_text("import time\ntime.sleep(3600)\n")
    a = agent_factory("--events", "proc")
    argv = {"dll": [str(tmp_path / "dotnet"), str(tmp_path / "App.dll")],
            "apphost": [str(tmp_path / "Accounting")], "plain": [str(tmp_path / "plain")]}
    cs = {tag: container(tag) for tag in argv}
    for tag, c in cs.items():
        exec_seen(a, c.run(*argv[tag]).pid, c.id)
    m = a.metrics()["container_application_type"]
    types = {tag: {dict(k)["application_type"] for k in m if dict(k)["container_id"] == c.id}
             for tag, c in cs.items()}
    assert types == {"dll": {"dotnet", "python"}, "apphost": {"dotnet"}, "plain": set()}, types
