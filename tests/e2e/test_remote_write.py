"""Remote write into a real Prometheus (Debian's, started here on loopback with its remote-write
receiver): every series of a /metrics scrape arrives with its labels; a receiver stopped and
restarted loses no sample; the spool's cap drops the oldest batches and counts them; and the
interval timer exists only when remote write is configured."""
import hashlib
import os
import subprocess

import pytest

from conftest import AGENT, Agent, free_port, wait_until
from prometheus import Prometheus  # tests/prometheus.py

JOB = "coroot-node-agent"
RW = "nodescope_remote_write_"


@pytest.fixture
def prometheus(tmp_path):
    p = Prometheus(tmp_path)
    yield p
    p.stop()


def rw_agent(tmp_path, url, *args):
    return Agent("--metrics-endpoint", url, "--scrape-interval", "1s",
                 "--wal-dir", str(tmp_path / "wal"), *args, trace=False)


def value(agent, name, **labels):
    return agent.metric_sum(name, **labels)


def wait_all_sent(agent, after_collections):
    """Until a collection later than after_collections is written and the spool is empty."""
    def done():
        m = agent.metrics()
        collections = sum(m.get(RW + "collections_total", {}).values())
        batches = sum(m.get(RW + "spool_batches", {}).values())
        return collections > after_collections and batches == 0
    wait_until(done, "the spool to be sent", timeout=120)


def instance():
    """Coroot's instance label: the machine id, or md5 of it and the DMI UUID without dashes."""
    with open("/etc/machine-id") as f:
        machine_id = f.read().strip()
    try:
        with open("/sys/devices/virtual/dmi/id/product_uuid") as f:
            uuid = f.read().strip().replace("-", "")
    except OSError:
        uuid = ""
    if not uuid or uuid == machine_id:
        return machine_id
    return hashlib.md5((machine_id + uuid).encode()).hexdigest()


def scrape_keys(agent):
    """The series of a /metrics scrape as Prometheus stores them: with __name__, job and
    instance, and without labels whose value is empty (no label in Prometheus' model)."""
    keys = set()
    for name, series in agent.metrics(keep_node_labels=True).items():
        for labels in series:
            d = {k: v for k, v in labels if v != ""}
            d.update(__name__=name, job=JOB, instance=instance())
            keys.add(frozenset(d.items()))
    return keys


def test_every_series_arrives_with_its_labels(tmp_path, prometheus):
    prometheus.start()
    a = rw_agent(tmp_path, prometheus.url)
    try:
        wait_until(lambda: value(a, RW + "samples_sent_total") > 0, "a first batch to be sent",
                   timeout=120)
        before = scrape_keys(a)
        wait_all_sent(a, value(a, RW + "collections_total") + 1)
        after = scrape_keys(a)
        # In both scrapes, so in every collection between them (a series made or removed in
        # between, by the machine's other processes, may or may not be in one).
        expected = before & after
        assert len(expected) > 100, len(expected)
        stored = {frozenset(s.items())
                  for s in prometheus.api("series", **{"match[]": f'{{job="{JOB}"}}'})}
        missing = expected - stored
        assert not missing, sorted(dict(k).get("__name__") for k in missing)[:20]
        # Coroot's up series: job and instance only.
        up = prometheus.api("query", query="up")["result"]
        assert [u["metric"] for u in up] == [{"__name__": "up", "job": JOB, "instance": instance()}]
        assert up[0]["value"][1] == "1"
        # Values too: the agent's version info, and a histogram's buckets are cumulative.
        info = prometheus.api("query", query="node_agent_info")["result"]
        assert info and info[0]["value"][1] == "1"
        assert value(a, RW + "requests_failed_total") == 0
        assert value(a, RW + "batches_dropped_total") == 0
    finally:
        a.stop()


def test_receiver_outage_loses_no_sample(tmp_path, prometheus):
    """Prometheus stopped while many batches are collected, then started again: every
    collection's samples arrive, in order. nodescope_remote_write_collections_total counts the
    collections and is in each, so its stored samples must be 1, 2, ... N without a gap."""
    prometheus.start()
    # Small requests: a collection is several batches, so their order matters too.
    a = rw_agent(tmp_path, prometheus.url, "--max-series-per-write", "50")
    try:
        wait_until(lambda: value(a, RW + "samples_sent_total") > 0, "a first batch to be sent",
                   timeout=120)
        prometheus.stop()
        stopped_at = value(a, RW + "collections_total")
        # At least 15 collections (1 s apart) while nobody receives them.
        wait_until(lambda: value(a, RW + "collections_total") >= stopped_at + 15, "15 collections",
                   timeout=120)
        assert value(a, RW + "requests_failed_total") > 0
        assert value(a, RW + "spool_batches") >= 15
        assert len(os.listdir(tmp_path / "wal" / "spool")) >= 15
        prometheus.start()
        wait_all_sent(a, value(a, RW + "collections_total"))
        last = value(a, RW + "collections_total")
        series = prometheus.raw_samples(RW + "collections_total")
        assert len(series) == 1, series.keys()
        samples = next(iter(series.values()))
        values = [v for _, v in samples]
        assert values == [float(i) for i in range(1, len(values) + 1)], values
        assert values[-1] >= last >= stopped_at + 15
        times = [t for t, _ in samples]
        assert times == sorted(times)
        # Every batch of every collection: each of the agent's own series (which come and go
        # with nothing on the machine) and up (the first of each collection) has a sample at
        # each collection's time from its first one on.
        own = prometheus.raw_samples(f'{{__name__=~"{RW}.*|nodescope_.*|up",job="{JOB}"}}')
        assert len(own) > 20, len(own)
        for labels, ss in own.items():
            got = [t for t, _ in ss]
            first = times.index(got[0])
            assert got == times[first:first + len(got)] and got[-1] == times[-1], \
                (dict(labels)["__name__"], sorted(set(times[first:]) - set(got)))
        # Nothing was dropped; what was sent is what was collected.
        assert value(a, RW + "batches_dropped_total") == 0
        assert value(a, RW + "spool_bytes") == 0
    finally:
        a.stop()


def test_spool_cap_drops_the_oldest(tmp_path):
    """No receiver at first, and a 64 KiB spool: the oldest batches go, counted with their
    samples; the spool never holds more than the cap; what is left arrives once a receiver
    listens, and it is the newest, without a gap."""
    cap = 64 * 1024
    prometheus = Prometheus(tmp_path)  # not started yet: its port refuses
    a = rw_agent(tmp_path, prometheus.url, "--max-spool-size", "64KB", "--max-series-per-write", "50")
    try:
        wait_until(lambda: value(a, RW + "batches_dropped_total", reason="spool_full") >= 10,
                   "the spool to drop 10 batches", timeout=120)
        assert value(a, RW + "samples_dropped_total", reason="spool_full") >= 10
        assert 0 < value(a, RW + "spool_bytes") <= cap
        spool = tmp_path / "wal" / "spool"
        assert sum(os.path.getsize(spool / f) for f in os.listdir(spool)) <= cap
        prometheus.start()
        wait_all_sent(a, value(a, RW + "collections_total"))
        values = [v for _, v in next(iter(prometheus.raw_samples(RW + "collections_total").values()))]
        # The oldest collections are gone, the rest is there without a gap.
        assert values[0] > 1
        assert values == [float(i) for i in range(int(values[0]), int(values[0]) + len(values))]
        assert value(a, RW + "samples_sent_total") > 0
    finally:
        a.stop()
        prometheus.stop()


def armed_timers(pid):
    """How many of the process' timerfds are armed (fdinfo it_value not zero)."""
    n = 0
    fd_dir = f"/proc/{pid}/fd"
    for fd in os.listdir(fd_dir):
        try:
            if os.readlink(f"{fd_dir}/{fd}") != "anon_inode:[timerfd]":
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                info = f.read()
        except OSError:
            continue
        if "it_value: (0, 0)" not in info:
            n += 1
    return n


def test_interval_timer_only_when_configured(tmp_path, agent_factory):
    # Without remote write the idle agent comes to rest with no timer armed, and makes no spool.
    plain = agent_factory("--wal-dir", str(tmp_path / "plain"), trace=False)
    wait_until(lambda: armed_timers(plain.proc.pid) == 0, "no armed timer", timeout=60)
    assert not (tmp_path / "plain").exists()
    assert not any(n.startswith(RW) for n in plain.metrics())
    # With it, its interval timer is armed at all times (the receiver need not exist).
    rw = agent_factory("--metrics-endpoint", f"http://127.0.0.1:{free_port()}/api/v1/write",
                       "--scrape-interval", "1h", "--wal-dir", str(tmp_path / "rw"), trace=False)
    assert armed_timers(rw.proc.pid) >= 1
    assert (tmp_path / "rw" / "spool").is_dir()


def test_bad_remote_write_flags():
    for args, what in ((["--metrics-endpoint", "127.0.0.1:9090"], "--metrics-endpoint"),
                       (["--max-spool-size", "10"], "--max-spool-size"),
                       (["--max-spool-size", "5TB"], "--max-spool-size"),
                       (["--scrape-interval", "0"], "--scrape-interval")):
        p = subprocess.run([AGENT] + args, capture_output=True, text=True, timeout=30)
        assert p.returncode == 2, (args, p.stderr)
        assert what in p.stderr
