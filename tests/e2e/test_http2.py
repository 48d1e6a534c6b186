"""HTTP/2 against a real nghttpd, cleartext (h2c: h2load with ten streams at once, nghttp, curl with
prior knowledge) and inside TLS (curl --http2, ALPN h2): every request counted under HTTP's
families with Coroot's status classes, on both sides, each stream paired by its id."""
import os
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

from conftest import cgroup2_root, free_port
from nginx import self_signed_cert

NGHTTPD = shutil.which("nghttpd") or "/usr/sbin/nghttpd"
H2LOAD = shutil.which("h2load") or "/usr/bin/h2load"
NGHTTP = shutil.which("nghttp") or "/usr/bin/nghttp"
CURL = shutil.which("curl") or "/usr/bin/curl"
OUT = "container_http_requests_total"
IN = "container_http_inbound_requests_total"


def msum(metrics, name, **labels):
    want = set(labels.items())
    return sum(v for k, v in metrics.get(name, {}).items() if want <= set(k))


def start_nghttpd(tls):
    for tool in (NGHTTPD, H2LOAD, NGHTTP):
        if not os.access(tool, os.X_OK):
            pytest.fail(f"{tool} is missing: apt-get install nghttp2-server nghttp2-client")
    d = tempfile.mkdtemp(prefix="nodescope-e2e-h2.")
    with open(os.path.join(d, "index.html"), "w") as f:
        f.write("hello\n")
    port = free_port()
    argv = [NGHTTPD, "-d", d, str(port)]
    if tls:
        key, crt = self_signed_cert(d)
        argv += [key, crt]
    else:
        argv.insert(1, "--no-tls")
    # Its own cgroup, as a service has: its inbound series are told from others'.
    container = f"/nodescope-e2e-h2-{port}"
    os.makedirs(cgroup2_root() + container, exist_ok=True)
    procs = cgroup2_root() + container + "/cgroup.procs"

    def enter_cgroup():
        with open(procs, "w") as f:
            f.write("0")
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=enter_cgroup)
    deadline = time.monotonic() + 15
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if p.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"nghttpd did not start: {argv}")
            time.sleep(0.05)
    return p, port, d, container


@pytest.fixture
def nghttpd():
    p, port, d, container = start_nghttpd(tls=False)
    yield port, container
    p.terminate()
    p.wait(10)
    shutil.rmtree(d, ignore_errors=True)
    os.rmdir(cgroup2_root() + container)


@pytest.fixture
def nghttpd_tls():
    p, port, d, container = start_nghttpd(tls=True)
    yield port, container
    p.terminate()
    p.wait(10)
    shutil.rmtree(d, ignore_errors=True)
    os.rmdir(cgroup2_root() + container)


def wait_delta(agent, m0, want, timeout=15):
    deadline = time.monotonic() + timeout
    while True:
        m = agent.metrics()
        got = {k: msum(m, k[0], **dict(k[1])) - msum(m0, k[0], **dict(k[1])) for k in want}
        if got == want or time.monotonic() > deadline:
            assert got == want
            return m
        time.sleep(0.2)


def test_h2c_streams_each_paired(agent_factory, nghttpd):
    port, container = nghttpd
    agent = agent_factory()
    addr = f"127.0.0.1:{port}"
    m0 = agent.metrics()
    out = subprocess.run([H2LOAD, "-n", "50", "-c", "1", "-m", "10", f"http://{addr}/index.html"],
                         capture_output=True, text=True, timeout=60)
    assert "50 succeeded" in out.stdout, out.stdout
    subprocess.run([NGHTTP, f"http://{addr}/missing"], capture_output=True, timeout=30)
    out = subprocess.run([CURL, "-s", "--http2-prior-knowledge", f"http://{addr}/index.html"],
                         capture_output=True, text=True, timeout=30)
    assert out.stdout == "hello\n"
    m = wait_delta(agent, m0, {
        (OUT, frozenset({("destination", addr), ("status", "2xx")})): 51,
        (OUT, frozenset({("destination", addr), ("status", "4xx")})): 1,
        (IN, frozenset({("container_id", container), ("status", "2xx")})): 51,
        (IN, frozenset({("container_id", container), ("status", "4xx")})): 1,
    })
    assert msum(m, "nodescope_l7_unpaired_total", proto="http2") == 0
    evs = [e for e in agent.snapshot() if e.get("proto") == "http2" and e.get("dir") == "out"]
    assert sorted({(e["op"], e["statement"], e["status"]) for e in evs}) == \
        [("GET", "GET /index.html", "2xx"), ("GET", "GET /missing", "4xx")]


def test_h2_inside_tls(agent_factory, nghttpd_tls):
    port, container = nghttpd_tls
    agent = agent_factory()
    addr = f"127.0.0.1:{port}"
    m0 = agent.metrics()
    n = 5
    for _ in range(n):
        out = subprocess.run([CURL, "-sk", "--http2", f"https://{addr}/index.html"],
                             capture_output=True, text=True, timeout=30)
        assert out.stdout == "hello\n", out
    wait_delta(agent, m0, {
        (OUT, frozenset({("destination", addr), ("status", "2xx")})): n,
        (IN, frozenset({("container_id", container), ("status", "2xx")})): n,
    })
    evs = [e for e in agent.snapshot() if e.get("proto") == "http2" and e.get("dst") == addr]
    assert len(evs) == 2 * n and all(e["tls"] for e in evs)
