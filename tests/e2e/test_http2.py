"""HTTP/2 against a real nghttpd (srv_nghttpd.py), cleartext (h2c: h2load with ten streams at once,
nghttp, curl with prior knowledge) and inside TLS (curl --http2, ALPN h2); nginx with `http2` on
its TLS listener (its OpenSSL's plaintext) under curl --http2 and h2load; a Go client and server
(net/http, standard library only: ALPN h2 inside TLS, Go's TLS probes give the plaintext; Go
1.19's standard library has no h2c). Every request counted under HTTP's families with Coroot's
status classes, on both sides, each stream paired by its id, exactly as the clients counted."""
import json
import re
import subprocess

import pytest

from l7db import msum, wait_value
from nginx import Nginx
from service import Service, need
from srv_nghttpd import Nghttpd

NGINX_H2 = """
http {{
    access_log off;
    keepalive_requests 100000;
    default_type text/plain;
{temp_paths}
    server {{
        listen 127.0.0.1:{port} ssl http2;
        ssl_certificate {crt};
        ssl_certificate_key {key};
        root {d}/www;
        location = /ok {{ return 200 "ok\\n"; }}
        location = /missing {{ return 404; }}
    }}
}}
"""

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


@pytest.fixture
def nginx_h2():
    n = Nginx(NGINX_H2, tls=True, workers=1)
    yield n
    n.stop()


def h2load_2xx(out):
    """h2load's own count: (requests that succeeded, answers of class 2xx)."""
    done = re.search(r"(\d+) succeeded", out)
    codes = re.search(r"status codes: (\d+) 2xx", out)
    assert done and codes, out
    return int(done.group(1)), int(codes.group(1))


def test_nginx_http2_inside_tls(agent_factory, nginx_h2):
    """nginx's server side through its OpenSSL, clients curl --http2 and h2load (ten streams at once)."""
    agent = agent_factory()
    addr = nginx_h2.addr
    m0 = agent.metrics()
    codes = []
    for path in ["/ok"] * 6 + ["/missing"] * 3:
        out = subprocess.run([need("curl", "curl"), "-sk", "--http2", "-o", "/dev/null", "-w", "%{http_version} %{http_code}",
                              f"https://{addr}{path}"], capture_output=True, text=True, timeout=30)
        codes.append(out.stdout)
    assert codes == ["2 200"] * 6 + ["2 404"] * 3, codes
    out = subprocess.run([need("h2load", "nghttp2-client"), "-n", "60", "-c", "1", "-m", "10", f"https://{addr}/ok"],
                         capture_output=True, text=True, timeout=60)
    assert "h2" in out.stdout and h2load_2xx(out.stdout) == (60, 60), out.stdout
    want = {("out", "2xx"): 66, ("out", "4xx"): 3, ("in", "2xx"): 66, ("in", "4xx"): 3}
    assert wait_value(lambda: deltas(agent, m0, nginx_h2), want) == want
    evs = [e for e in agent.snapshot() if e.get("proto") == "http2" and e.get("dst") == addr]
    assert len(evs) == 2 * 69 and all(e["tls"] for e in evs)
    assert msum(agent.metrics(), "nodescope_l7_unpaired_total", proto="http2") == 0


@pytest.fixture
def go_h2(build_go):
    """go_serve.go (net/http's ServeTLS: h2 by ALPN) in its own cgroup, and the client go_h2.go."""
    s = Service("go-h2")
    key, crt = s.cert()
    s.start([build_go("go_serve.go", "-ldflags=-s -w"), s.addr, crt, key])
    s.client = build_go("go_h2.go")
    yield s
    s.stop()


def test_go_http2_client_and_server(agent_factory, go_h2):
    """Both ends Go (crypto/tls linked in, probed at their exec; held until probed, so the client's
    first run cannot beat its probes), one connection, h2 chosen by ALPN."""
    agent = agent_factory("--hold-first-runs")
    m0 = agent.metrics()
    out = subprocess.run([go_h2.client, f"https://{go_h2.addr}", "25", "5"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout)
    assert seen == {"proto": "HTTP/2.0", "2xx": 25, "4xx": 5}, seen
    want = {("out", "2xx"): 25, ("out", "4xx"): 5, ("in", "2xx"): 25, ("in", "4xx"): 5}
    assert wait_value(lambda: deltas(agent, m0, go_h2), want) == want
    evs = [e for e in agent.snapshot() if e.get("proto") == "http2" and e.get("dst") == go_h2.addr]
    assert {(e["dir"], e["statement"], e["status"]) for e in evs} == {
        (d, f"GET {p}", s) for d in ("in", "out") for p, s in (("/ok", "2xx"), ("/missing", "4xx"))}
    assert all(e["tls"] for e in evs)
