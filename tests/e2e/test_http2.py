"""HTTP/2 against a real nghttpd (srv_nghttpd.py), cleartext (h2c: h2load with ten streams at once,
nghttp, curl with prior knowledge) and inside TLS (curl --http2, ALPN h2): every request counted
under HTTP's families with Coroot's status classes, on both sides, each stream paired by its id."""
import subprocess

import pytest

from l7db import msum, wait_value
from service import need
from srv_nghttpd import Nghttpd

OUT = "container_http_requests_total"
IN = "container_http_inbound_requests_total"


@pytest.fixture
def nghttpd():
    s = Nghttpd()
    yield s
    s.stop()


@pytest.fixture
def nghttpd_tls():
    s = Nghttpd(tls=True)
    yield s
    s.stop()


def deltas(agent, m0, server):
    """{(side, status class): requests since m0} for the server's address and container."""
    m = agent.metrics()
    out = {("out", s): msum(m, OUT, destination=server.addr, status=s) - msum(m0, OUT, destination=server.addr, status=s)
           for s in ("2xx", "4xx")}
    ins = {("in", s): msum(m, IN, container_id=server.container, status=s) -
           msum(m0, IN, container_id=server.container, status=s) for s in ("2xx", "4xx")}
    return {**out, **ins}


def test_h2c_streams_each_paired(agent_factory, nghttpd):
    agent = agent_factory()
    addr = nghttpd.addr
    m0 = agent.metrics()
    out = subprocess.run([need("h2load", "nghttp2-client"), "-n", "50", "-c", "1", "-m", "10",
                          f"http://{addr}/index.html"], capture_output=True, text=True, timeout=60)
    assert "50 succeeded" in out.stdout, out.stdout
    subprocess.run([need("nghttp", "nghttp2-client"), f"http://{addr}/missing"], capture_output=True, timeout=30)
    out = subprocess.run([need("curl", "curl"), "-s", "--http2-prior-knowledge", f"http://{addr}/index.html"],
                         capture_output=True, text=True, timeout=30)
    assert out.stdout == "hello\n"
    want = {("out", "2xx"): 51, ("out", "4xx"): 1, ("in", "2xx"): 51, ("in", "4xx"): 1}
    assert wait_value(lambda: deltas(agent, m0, nghttpd), want) == want
    assert msum(agent.metrics(), "nodescope_l7_unpaired_total", proto="http2") == 0
    evs = [e for e in agent.snapshot() if e.get("proto") == "http2" and e.get("dir") == "out"]
    assert sorted({(e["op"], e["statement"], e["status"]) for e in evs}) == \
        [("GET", "GET /index.html", "2xx"), ("GET", "GET /missing", "4xx")]


def test_h2_inside_tls(agent_factory, nghttpd_tls):
    agent = agent_factory()
    addr = nghttpd_tls.addr
    m0 = agent.metrics()
    n = 5
    for _ in range(n):
        out = subprocess.run([need("curl", "curl"), "-sk", "--http2", f"https://{addr}/index.html"],
                             capture_output=True, text=True, timeout=30)
        assert out.stdout == "hello\n", out
    want = {("out", "2xx"): n, ("out", "4xx"): 0, ("in", "2xx"): n, ("in", "4xx"): 0}
    assert wait_value(lambda: deltas(agent, m0, nghttpd_tls), want) == want
    evs = [e for e in agent.snapshot() if e.get("proto") == "http2" and e.get("dst") == addr]
    assert len(evs) == 2 * n and all(e["tls"] for e in evs)
