"""Node metrics (issue 14, per node): Coroot's node_* families, each compared with an independent
reading the test takes itself around the scrape (a counter read before and after brackets the
scraped value), on this machine's real /proc, disk and network interfaces, and on a veth the test
makes in the root network namespace (the host's, as the agent reads it) and removes after.

Only what is deterministic is asserted: brackets, exact constants (MemTotal, the cores, the
addresses given), lower bounds on traffic the test makes itself, and what filters keep out.
"""
import contextlib
import os
import re
import socket
import subprocess
import time

import pytest

import conftest
from netns import PREFIX, delete_stale, run, tool

HZ = os.sysconf("SC_CLK_TCK")
MODES = ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"]
# Coroot's filters (node/disk_linux.go, node/net_linux.go), written again here from their
# regular expressions: the disk name must be the whole match, the interface name a prefix.
DISK_RE = re.compile(r"(dm-\d+|(s|h|xv|v)d[a-z]|md\d+|mmcblk\d+|nvme\d+n\d+|rbd\d+)")
NET_RE = re.compile(r"^(en(p\d+)?p\d+s\d+(f\d+)?|eth\d+|eno\d+|ens\d+|em\d+|bond\d+|p\d+p\d+|"
                    r"enx[0-9a-f]+|br\d+|vmbr\d+)")


def read(path):
    with open(path) as f:
        return f.read()


def cpu_ticks():
    fields = read("/proc/stat").splitlines()[0].split()
    assert fields[0] == "cpu"
    return dict(zip(MODES, map(int, fields[1:9])))


def diskstats():
    out = {}
    for line in read("/proc/diskstats").splitlines():
        f = line.split()
        v = list(map(int, f[3:14]))
        out[f[2]] = {"reads": v[0], "read_bytes": v[2] * 512, "read_time": v[3] / 1000,
                     "writes": v[4], "written_bytes": v[6] * 512, "write_time": v[7] / 1000,
                     "io_time": v[9] / 1000}
    return out


def netdev(name):
    base = f"/sys/class/net/{name}/statistics/"
    return {k: int(read(base + f)) for k, f in (("received_bytes", "rx_bytes"),
                                                ("transmitted_bytes", "tx_bytes"),
                                                ("received_packets", "rx_packets"),
                                                ("transmitted_packets", "tx_packets"))}


def series(metrics, name):
    """{label value of the family's one label (or ()): value} for one-label families."""
    out = {}
    for key, v in metrics.get(name, {}).items():
        labels = dict(key)
        out[next(iter(labels.values())) if len(labels) == 1 else tuple(sorted(labels.items()))] = v
    return out


def bracket(lo, got, hi, what):
    # Counters are exact integers (or integers / 1000 or / HZ, printed to 17 digits).
    assert lo - 1e-9 <= got <= hi + 1e-9, f"{what}: {got} not in [{lo}, {hi}]"


@pytest.fixture(scope="module")
def agent():
    a = conftest.Agent(trace=False)
    yield a
    a.stop()


def test_cpu_uptime_and_memory(agent):
    before_cpu, before_up = cpu_ticks(), float(read("/proc/uptime").split()[0])
    m = agent.metrics()
    after_cpu, after_up = cpu_ticks(), float(read("/proc/uptime").split()[0])

    cpu = series(m, "node_resources_cpu_usage_seconds_total")
    assert sorted(cpu) == sorted(MODES), cpu
    for mode in MODES:  # /proc/stat counts USER_HZ ticks, which the agent asks the kernel for
        bracket(before_cpu[mode] / HZ, cpu[mode], after_cpu[mode] / HZ, mode)
    cores = sum(1 for l in read("/proc/stat").splitlines() if re.match(r"cpu\d+ ", l))
    assert m["node_resources_cpu_logical_cores"][frozenset()] == cores
    bracket(before_up, m["node_uptime_seconds"][frozenset()], after_up, "uptime")

    meminfo = {l.split(":")[0]: int(l.split()[1]) for l in read("/proc/meminfo").splitlines()}
    total = m["node_resources_memory_total_bytes"][frozenset()]
    assert total == meminfo["MemTotal"] * 1024  # KiB: Coroot's 1000 reads 2.3 % low
    for name in ("free", "available", "cached"):
        v = m[f"node_resources_memory_{name}_bytes"][frozenset()]
        assert 0 < v <= total and v % 1024 == 0, (name, v)


def disk_of(path):
    """The whole disk the file system holding path is on (a partition's parent)."""
    st = os.stat(path)
    sysdir = os.path.realpath(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
    if os.path.exists(os.path.join(sysdir, "partition")):
        sysdir = os.path.dirname(sysdir)
    return os.path.basename(sysdir)


def test_disks(agent, tmp_path):
    before = diskstats()
    m = agent.metrics()
    after = diskstats()
    kept = {d for d in before if DISK_RE.fullmatch(d)}
    assert kept, "no disk here that Coroot's filter keeps"
    families = ["reads", "writes", "read_bytes", "written_bytes", "read_time", "write_time",
                "io_time"]
    for fam in families:
        name = f"node_resources_disk_{fam}_total" if fam in ("reads", "writes", "read_bytes",
                                                               "written_bytes") \
            else f"node_resources_disk_{fam}_seconds_total"
        got = series(m, name)
        assert set(got) == kept, (name, sorted(got), sorted(kept))  # no loop, zram, partitions
        for d in kept:
            bracket(before[d][fam], got[d], after[d][fam], f"{name}{{device={d}}}")

    # 4 MiB written and read back past the page cache (O_DIRECT): the disk's counters grow
    # by at least that much.
    dev = disk_of(tmp_path)
    assert dev in kept, f"the test's file system is on {dev}, which Coroot's filter leaves out"
    data = tmp_path / "direct"
    reads, writes = "node_resources_disk_read_bytes_total", "node_resources_disk_written_bytes_total"
    first = agent.metrics()
    subprocess.run(["dd", "if=/dev/zero", f"of={data}", "bs=1M", "count=4", "oflag=direct",
                    "conv=fsync", "status=none"], check=True)
    second = agent.metrics()
    subprocess.run(["dd", f"if={data}", "of=/dev/null", "bs=1M", "iflag=direct", "status=none"],
                   check=True)
    third = agent.metrics()
    assert series(second, writes)[dev] - series(first, writes)[dev] >= 4 << 20
    assert series(third, reads)[dev] - series(second, reads)[dev] >= 4 << 20
    assert (series(third, "node_resources_disk_reads_total")[dev] >
            series(second, "node_resources_disk_reads_total")[dev])
    assert (series(second, "node_resources_disk_writes_total")[dev] >
            series(first, "node_resources_disk_writes_total")[dev])


@contextlib.contextmanager
def host_veth():
    """A veth whose end in the root network namespace is named eth<N> (Coroot's filter keeps
    it), the other end in a namespace of its own; deleted after, even when the test fails."""
    ip = tool("ip")
    delete_stale(ip)
    name = f"eth{60000 + os.getpid() % 5000}"
    ns = f"{PREFIX}{os.getpid()}-node"
    run(ip, "link", "delete", name, check=False)  # ours, from a run that died
    run(ip, "netns", "delete", ns, check=False)
    run(ip, "netns", "add", ns)
    try:
        run(ip, "link", "add", name, "type", "veth", "peer", "name", "peer0", "netns", ns)
        run(ip, "-n", ns, "addr", "add", "10.254.77.2/24", "dev", "peer0")
        yield ip, name, ns
    finally:
        run(ip, "link", "delete", name, check=False)
        run(ip, "netns", "delete", ns, check=False)


def wait_operstate(name, want):
    """The kernel sets a veth's operational state a moment after `ip link set up` (linkwatch):
    the scrape is compared with it only once it says what the test set up."""
    deadline = time.monotonic() + 10
    while read(f"/sys/class/net/{name}/operstate").strip() != want:
        assert time.monotonic() < deadline, f"{name} never became {want}"
        time.sleep(0.05)


def test_network_interfaces(agent):
    with host_veth() as (ip, name, ns):
        run(ip, "addr", "add", "10.254.77.1/24", "dev", name)
        run(ip, "addr", "add", "fd42:77::1/64", "dev", name, "nodad")
        run(ip, "addr", "add", "169.254.77.1/16", "dev", name)  # link-local: left out
        run(ip, "addr", "add", "fe80::77/64", "dev", name, "nodad")  # link-local: left out
        run(ip, "link", "set", name, "up")
        # The peer is down: this end is up but has no carrier, so its state is "down".
        wait_operstate(name, "down")
        m = agent.metrics()
        assert series(m, "node_net_interface_up")[name] == 0

        run(ip, "-n", ns, "link", "set", "peer0", "up")
        wait_operstate(name, "up")
        before = netdev(name)
        m = agent.metrics()
        after = netdev(name)
        assert series(m, "node_net_interface_up")[name] == 1
        ips = {dict(k)["ip"] for k in m["node_net_interface_ip"] if dict(k)["interface"] == name}
        assert ips == {"10.254.77.1", "fd42:77::1"}, ips
        assert all(v == 1 for v in m["node_net_interface_ip"].values())
        for fam, v in before.items():
            bracket(v, series(m, f"node_net_{fam}_total")[name], after[fam], fam)

        # The interfaces shown are those of the root namespace Coroot's filter keeps: never lo.
        names = {n for n in os.listdir("/sys/class/net") if NET_RE.match(n.lower())}
        shown = set(series(m, "node_net_interface_up"))
        assert name in shown and "lo" not in shown and "peer0" not in shown, shown
        assert shown == names, (shown, names)
        assert not [k for k in m["node_net_interface_ip"] if dict(k)["interface"] == "lo"]

        # 200 datagrams of 1000 bytes to the peer: at least 200 frames of 1042 bytes out.
        first = agent.metrics()
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            for _ in range(200):
                s.sendto(b"x" * 1000, ("10.254.77.2", 9))
        second = agent.metrics()
        tx = {f: series(second, f"node_net_transmitted_{f}_total")[name] -
              series(first, f"node_net_transmitted_{f}_total")[name] for f in ("bytes", "packets")}
        assert tx["packets"] >= 200 and tx["bytes"] >= 200 * 1042, tx

    # Gone from the node, gone from the exposition.
    m = agent.metrics()
    for fam in ("node_net_interface_up", "node_net_received_bytes_total",
                "node_net_transmitted_packets_total"):
        assert name not in series(m, fam), fam
    assert not [k for k in m["node_net_interface_ip"] if dict(k)["interface"] == name]


def test_node_info_and_cloud_info(agent_factory, agent):
    m = agent.metrics(keep_node_labels=True)
    info = [dict(k) for k in m["node_info"]]
    assert len(info) == 1
    u = os.uname()
    assert info[0]["hostname"] == u.nodename and info[0]["kernel_version"] == u.release, info
    # Node series carry the node's identity and no zone (Coroot: only container series do).
    assert set(info[0]) == {"hostname", "kernel_version", "machine_id", "system_uuid"}
    cloud = [dict(k) for k in m["node_cloud_info"]]
    assert len(cloud) == 1 and cloud[0]["provider"] == expected_provider(), cloud
    assert all(cloud[0][k] == "" for k in ("account_id", "availability_zone_id", "local_ipv4",
                                           "public_ipv4", "region", "availability_zone",
                                           "instance_type", "instance_life_cycle"))

    b = agent_factory("--provider", "my-cloud", "--region", "eu-1", "--availability-zone",
                      "eu-1b", "--instance-type", "c5.large", "--instance-life-cycle", "spot",
                      trace=False)
    cloud = [dict(k) for k in b.metrics()["node_cloud_info"]]
    assert cloud == [{"provider": "my-cloud", "account_id": "", "instance_id": cloud[0]["instance_id"],
                      "instance_type": "c5.large", "instance_life_cycle": "spot",
                      "region": "eu-1", "availability_zone": "eu-1b",
                      "availability_zone_id": "", "local_ipv4": "", "public_ipv4": ""}], cloud
    node = b.metrics(keep_node_labels=True)
    assert not [k for n, fam in node.items() if n.startswith("node_") and n != "node_cloud_info"
                for k in fam if "az" in dict(k) or "region" in dict(k)]


def test_node_info_names_pid1s_host(agent_factory, monkeypatch, tmp_path):
    """As Coroot: node_info's hostname is taken in PID 1's UTS namespace, so an agent in a
    container with a hostname of its own (and the host's PID namespace) names the host. Here
    PID 1 is pidns_run.py's (in this test's UTS namespace) and the agent has its own."""
    wrapper = tmp_path / "agent"
    here = os.path.dirname(os.path.abspath(__file__))
    wrapper.write_text(f"#!/bin/sh\nexec /usr/bin/python3 {here}/pidns_run.py inner-ctr-name "
                       f"{conftest.AGENT} \"$@\"\n")
    wrapper.chmod(0o755)
    monkeypatch.setattr(conftest, "AGENT", str(wrapper))
    a = agent_factory(trace=False)
    info = [dict(k) for k in a.metrics()["node_info"]]
    assert info == [{"hostname": os.uname().nodename, "kernel_version": os.uname().release}], info
    assert os.uname().nodename != "inner-ctr-name"
    assert a.stop() == 0


def expected_provider():
    """Coroot's provider from DMI (node/metadata/detect_linux.go), read here independently."""
    def dmi(name):
        try:
            return read(f"/sys/class/dmi/id/{name}")
        except OSError:
            return ""
    try:
        if read("/sys/hypervisor/uuid").lower().startswith("ec2"):
            return "AWS"
    except OSError:
        pass
    board = {"Amazon EC2": "AWS", "Google": "GCP", "Microsoft Corporation": "Azure",
             "DigitalOcean": "DigitalOcean"}.get(dmi("board_vendor").strip())
    sys_ = {"Hetzner": "Hetzner", "Alibaba Cloud": "Alibaba",
            "Scaleway": "Scaleway"}.get(dmi("sys_vendor").strip())
    if board or sys_:
        return board or sys_
    if dmi("chassis_vendor").startswith("IBM:Cloud Compute Server"):
        return "IBM"
    return "Oracle" if dmi("chassis_asset_tag").strip() == "OracleCloud.com" else ""


def test_read_errors_exported(agent):
    errors = series(agent.metrics(), "nodescope_node_read_errors_total")
    assert set(errors) == {"stat", "uptime", "meminfo", "diskstats", "netlink"}, errors
    assert all(v == 0 for v in errors.values()), errors
