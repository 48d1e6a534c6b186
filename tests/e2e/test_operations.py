"""What an operator relies on: /healthz, gzip on request, the process_* self-metrics, the log line
format, and SIGHUP re-reading instead of stopping."""
import gzip
import os
import re
import signal
import subprocess
import time
import urllib.error
import urllib.request

from conftest import Agent, parse_metrics

LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (error|warn|info|debug) "
                      r"(nodescope|libbpf|libmicrohttpd): ")


def get(port, path, headers=None):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def test_healthz_ready():
    a = Agent(trace=False)
    try:
        status, _, body = get(a.port, "/healthz")
        assert (status, body) == (200, b"ok\n")
        assert a.metric("nodescope_probes_attached") > 0
    finally:
        assert a.stop() == 0


def test_gzip_when_asked():
    a = Agent(trace=False)
    try:
        # The page does not change between two requests: the gzipped body is the plain one.
        status, h, plain = get(a.port, "/")
        assert status == 200 and "Content-Encoding" not in h
        status, h, packed = get(a.port, "/", {"Accept-Encoding": "gzip, deflate"})
        assert status == 200 and h.get("Content-Encoding") == "gzip", h
        assert len(packed) < len(plain) and gzip.decompress(packed) == plain
        # gzip;q=0 refuses it.
        _, h, body = get(a.port, "/", {"Accept-Encoding": "gzip;q=0, identity"})
        assert "Content-Encoding" not in h and body == plain
        # /metrics, gzipped when asked: the same families declared (series come and go between
        # two scrapes: the agent sees these very requests), the same values where they stay.
        _, _, text = get(a.port, "/metrics")
        _, h, packed = get(a.port, "/metrics", {"Accept-Encoding": "gzip"})
        assert h.get("Content-Encoding") == "gzip" and h.get("Vary") == "Accept-Encoding"
        unpacked = gzip.decompress(packed).decode()
        types = lambda t: [l for l in t.splitlines() if l.startswith("# TYPE ")]
        assert types(text.decode()) == types(unpacked) and len(types(unpacked)) > 50
        m_plain, m_gz = parse_metrics(text.decode()), parse_metrics(unpacked)
        stable = {k for k in m_plain if k.startswith(("node_agent_info", "process_max_fds"))}
        assert stable and all(m_plain[k] == m_gz[k] for k in stable)
    finally:
        assert a.stop() == 0


def proc_stat(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return fields  # fields[0] is field 3 (state)


def test_process_metrics():
    a = Agent(trace=False)
    try:
        pid = a.proc.pid
        m = a.metrics()
        tck = os.sysconf("SC_CLK_TCK")
        with open("/proc/stat") as f:
            btime = int(next(l for l in f if l.startswith("btime ")).split()[1])
        st = proc_stat(pid)
        one = lambda name: list(m[name].values())[0]
        assert one("process_start_time_seconds") == btime + int(st[19]) / tck
        cpu = one("process_cpu_seconds_total")
        assert 0 < cpu <= (int(st[11]) + int(st[12])) / tck  # read before this later stat
        rss = one("process_resident_memory_bytes")
        assert 0 < rss <= one("process_virtual_memory_bytes")
        with open(f"/proc/{pid}/limits") as f:
            soft = next(l for l in f if l.startswith("Max open files")).split()[3]
        assert one("process_max_fds") == int(soft)
        # Its BPF maps, programs, links and ring buffers at least, fewer than it may have.
        assert 10 < one("process_open_fds") < int(soft)
    finally:
        assert a.stop() == 0


def test_log_lines_and_sighup():
    a = Agent(trace=False)
    try:
        a.proc.send_signal(signal.SIGHUP)
        a.wait_for(lambda _: "SIGHUP: node identity re-read" in a.stderr(), what="the SIGHUP line")
        assert a.proc.poll() is None  # still running
        assert get(a.port, "/healthz")[0] == 200
        # The node's identity labels are set again, on every series as before.
        m = a.metrics(keep_node_labels=True)
        assert all("machine_id" in dict(k) for k in m["node_agent_info"])
    finally:
        assert a.stop() == 0
    lines = [l for l in a.stderr().splitlines() if l]
    assert lines and all(LOG_LINE.match(l) for l in lines), lines
    assert any(l.endswith(" info nodescope: ready") for l in lines)


def test_debug_hook_signals_detach_and_attach_the_probes():
    """--debug-hook-signals (bench/db --interleave): SIGUSR1 detaches the probes, /healthz says so
    and a process run meanwhile is not seen; SIGUSR2 attaches them again and the next one is."""
    a = Agent("--debug-hook-signals", "--events", "proc")
    try:
        attached = a.metric("nodescope_probes_attached")
        assert attached > 0
        a.proc.send_signal(signal.SIGUSR1)
        a.wait_for(lambda _: get(a.port, "/healthz")[0] == 503, what="/healthz not ready")
        assert b"no probe attached" in get(a.port, "/healthz")[2]
        assert a.metric("nodescope_probes_attached") == 0
        unseen = subprocess.Popen(["/bin/true"])
        unseen.wait()
        a.proc.send_signal(signal.SIGUSR2)
        a.wait_for(lambda _: get(a.port, "/healthz")[0] == 200, what="/healthz ready again")
        assert a.metric("nodescope_probes_attached") == attached
        seen = subprocess.Popen(["/bin/true"])
        seen.wait()
        a.wait_for(lambda evs: any(e["type"] == "exit" and e["pid"] == seen.pid for e in evs),
                   what="the exit of the process run after SIGUSR2")
        # The proc stream is one ring, in order: had the first run been seen, it came before.
        assert not [e for e in a.events if e.get("pid") == unseen.pid], "seen while detached"
        assert "SIGUSR1: probes detached" in a.stderr() and "SIGUSR2: probes attached again" in a.stderr()
    finally:
        assert a.stop() == 0

