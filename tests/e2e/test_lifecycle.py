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
        info = a.metrics()["nodescope_info"]
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
