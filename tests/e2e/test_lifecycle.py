"""Start-up checks and shutdown: clear errors, documented exit codes, nothing left attached."""
import json
import os
import signal
import subprocess
import time

import pytest

from conftest import AGENT, Agent


def nodescope_programs():
    """Ids of loaded BPF programs that are nodescope's (of any running agent)."""
    out = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, check=True)
    return {p["id"] for p in json.loads(out.stdout) if p.get("name", "").startswith("ns_")}


def test_sigterm_stops_cleanly_and_detaches():
    before = nodescope_programs()
    a = Agent("--events", "proc")
    mine = nodescope_programs() - before
    assert len(mine) >= 4
    t0 = time.monotonic()
    a.proc.send_signal(signal.SIGTERM)
    rc = a.proc.wait(10)
    took = time.monotonic() - t0
    assert rc == 0, a.stderr()
    print(f"shutdown took {took:.3f} s")
    # The kernel frees a detached program after an RCU grace period.
    deadline = time.monotonic() + 5
    while nodescope_programs() & mine and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not (nodescope_programs() & mine), "programs left loaded after exit"


def test_sigint_exits_zero():
    a = Agent(trace=False)
    a.proc.send_signal(signal.SIGINT)
    assert a.proc.wait(10) == 0


def test_not_root_gets_clear_error():
    p = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                        AGENT, "trace"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 3, p.stderr
    assert "run it as root" in p.stderr
    assert p.stdout == ""


def test_root_without_capabilities_gets_clear_error():
    p = subprocess.run(["setpriv", "--inh-caps=-all", "--bounding-set=-all", AGENT, "trace"],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 3, p.stderr
    assert "CAP_BPF" in p.stderr


def test_usage_errors():
    p = subprocess.run([AGENT, "trace", "--events", "nosuch"], capture_output=True, text=True)
    assert p.returncode == 2 and "unknown stream 'nosuch'" in p.stderr
    p = subprocess.run([AGENT, "--bogus"], capture_output=True, text=True)
    assert p.returncode == 2 and "unknown option" in p.stderr
    p = subprocess.run([AGENT, "--help"], capture_output=True, text=True)
    assert p.returncode == 0 and "usage: nodescope" in p.stdout


def test_listen_conflict_is_reported():
    a = Agent(trace=False)
    p = subprocess.run([AGENT, "--listen", f"127.0.0.1:{a.port}"], capture_output=True,
                       text=True, timeout=30)
    a.stop()
    assert p.returncode == 6, p.stderr
    assert "cannot listen" in p.stderr


def test_web_page_and_process_api():
    import urllib.request
    a = Agent(trace=False)
    try:
        page = urllib.request.urlopen(f"http://127.0.0.1:{a.port}/", timeout=10).read().decode()
        assert "<title>nodescope</title>" in page
        procs = json.loads(urllib.request.urlopen(
            f"http://127.0.0.1:{a.port}/api/processes", timeout=10).read())
        mine = [p for p in procs if p["pid"] == os.getpid()]
        assert mine and mine[0]["comm"].startswith("python")
        info = a.metrics()["node_agent_info"]
        assert list(info.values()) == [1.0]
    finally:
        a.stop()


def test_tracefs_is_mounted_when_missing():
    # libbpf looks under debugfs' tracing dir if present, else /sys/kernel/tracing.
    target = "/sys/kernel/debug/tracing" if os.path.exists("/sys/kernel/debug/tracing") \
        else "/sys/kernel/tracing"
    subprocess.run(["umount", target], capture_output=True)
    with open("/proc/mounts") as f:
        if any(line.split()[1] == target for line in f):
            pytest.fail(f"could not unmount {target} to test the automatic mount")
    a = Agent("--events", "proc")
    try:
        assert f"mounted tracefs at {target}" in a.stderr()
    finally:
        a.stop()


def test_stalled_trace_reader_does_not_stall_the_agent():
    """Nobody reads stdout: metrics still answer, events still counted, SIGTERM still works."""
    import urllib.request
    from conftest import free_port, parse_metrics
    port = free_port()
    p = subprocess.Popen([AGENT, "trace", "--events", "proc", "--listen", f"127.0.0.1:{port}"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert p.stdout.readline().strip() == b'{"type":"ready"}'
        n = 1500  # ~4500 lines: far more than a pipe holds
        for _ in range(n):
            os.waitpid(os.posix_spawn("/bin/true", ["/bin/true"], {}), 0)
        key = frozenset({("stream", "proc")})
        deadline = time.monotonic() + 20
        while True:
            body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read()
            m = parse_metrics(body.decode())
            if m["nodescope_events_total"][key] >= 3 * n or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert m["nodescope_events_total"][key] >= 3 * n
        assert m["nodescope_events_lost_total"][key] == 0
        p.send_signal(signal.SIGTERM)
        assert p.wait(10) == 0
    finally:
        p.kill()
        p.wait()
