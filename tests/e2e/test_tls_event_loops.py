"""TLS plaintext from event loops that keep OpenSSL on memory BIOs: Node.js (the machine's Node 20 with
its OpenSSL linked in, and Debian's nodejs 18 on the system libssl, run from an extracted package),
Python asyncio and aiohttp. SSL_write/SSL_read never touch the socket there; the loop moves the
ciphertext. Each client makes 200 requests over 20 concurrent keep-alive connections on one loop and
prints which local port carried each; every request must be reported once, by the client's pid, on
the connection that carried it (per local port, the counts match exactly). The same for the servers'
inbound side.
"""
import collections
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import pytest

from conftest import Agent, free_port
from nginx import Nginx, self_signed_cert
from test_tls import NGINX_TLS

HERE = os.path.dirname(os.path.abspath(__file__))
CLIENTS = os.path.join(HERE, "clients")
NODE = shutil.which("node") or "/usr/bin/node"
# Debian 12's nodejs 18 (system libssl3), extracted by `make test-e2e` (scripts/fetch-debian-node.sh).
NODE18 = os.path.join(os.path.dirname(os.path.dirname(HERE)), "build", "node18", "node")
N, CONNS = 200, 20


@pytest.fixture(scope="module")
def loop_tracer():
    a = Agent("--events", "l7,files")
    yield a
    a.stop()


@pytest.fixture(scope="module")
def nginx(loop_tracer):
    n = Nginx(NGINX_TLS, tls=True, workers=1)
    yield n
    n.stop()


def node_of(kind):
    node = NODE18 if kind == "node18" else NODE
    if not os.access(node, os.X_OK):
        pytest.fail(f"{node} is missing (the machine's Node.js; Debian's is fetched by make test-e2e)")
    return node


def client_argv(kind, port, path):
    if kind.startswith("node"):
        return [node_of(kind), os.path.join(CLIENTS, "node_https_client.js"), str(port), str(N), str(CONNS), path]
    return [sys.executable, os.path.join(CLIENTS, f"py_{kind}_client.py"), str(port), str(N), str(CONNS), path]


def run_client(kind, port, path):
    """Runs the client; returns its pid and {local port: requests it carried}."""
    p = subprocess.Popen(client_argv(kind, port, path), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, (kind, p.returncode, err.decode(errors="replace")[-2000:])
    lines = [l.split() for l in out.decode().splitlines()]
    assert len(lines) == N, lines[:5]
    return p.pid, collections.Counter(int(port) for port, _, _ in lines)


def port_of(addr):
    return int(addr.rsplit(":", 1)[1])


def l7_of(agent, pid, direction, path):
    return [e for e in agent.snapshot() if e.get("type") == "l7" and e.get("pid") == pid
            and e.get("dir") == direction and e.get("path") == path]


@pytest.mark.parametrize("kind", ["node", "node18", "asyncio", "aiohttp"])
def test_client_on_memory_bios(loop_tracer, nginx, kind):
    path = f"/in/{kind}"
    pid, carried = run_client(kind, nginx.port, path)
    assert len(carried) == CONNS, carried
    loop_tracer.wait_for(lambda evs: len(l7_of(loop_tracer, pid, "out", path)) >= N, timeout=30,
                         what=f"{N} {kind} requests")
    time.sleep(0.3)
    evs = l7_of(loop_tracer, pid, "out", path)
    assert len(evs) == N
    for e in evs:
        assert e["tls"] is True and e["method"] == "GET" and e["status"] == 200, e
        assert e["dst"] == nginx.addr, e
    # Each request on the connection that carried it: the same count per local port.
    assert collections.Counter(port_of(e["src"]) for e in evs) == carried


@pytest.fixture(scope="module")
def cert():
    d = tempfile.mkdtemp(prefix="nodescope-e2e-loops.")
    key, crt = self_signed_cert(d)
    yield crt, key
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("kind", ["node", "node18", "asyncio", "aiohttp"])
def test_server_on_memory_bios(loop_tracer, cert, kind):
    crt, key = cert
    port = free_port()
    if kind.startswith("node"):
        argv = [node_of(kind), os.path.join(CLIENTS, "node_https_server.js")]
    else:
        argv = [sys.executable, os.path.join(CLIENTS, f"py_{kind}_server.py")]
    srv = subprocess.Popen(argv + [f"127.0.0.1:{port}", crt, key], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
    try:
        assert srv.stdout.readline() == b"listening\n", srv.stderr.read()
        # The client is itself a memory-BIO loop (asyncio): both sides are checked.
        client, carried = run_client("asyncio", port, "/ok")
        loop_tracer.wait_for(lambda evs: len(l7_of(loop_tracer, srv.pid, "in", "/ok")) >= N, timeout=30,
                             what=f"{N} requests into {kind}")
        time.sleep(0.3)
        evs = l7_of(loop_tracer, srv.pid, "in", "/ok")
        assert len(evs) == N
        for e in evs:
            assert e["tls"] is True and e["status"] == 200 and e["dst"] == f"127.0.0.1:{port}", e
        # Inbound, the client's port is the source.
        assert collections.Counter(port_of(e["src"]) for e in evs) == carried
        assert collections.Counter(port_of(e["src"]) for e in l7_of(loop_tracer, client, "out", "/ok")) == carried
    finally:
        srv.terminate()
        srv.wait(10)


def test_node_server_writing_another_socket_inside_ssl_read(loop_tracer, cert):
    """Node runs the handshake-done handler inside SSL_read: the handler's write to a plain TCP
    socket is not the session's ciphertext, and must not take the session to that socket."""
    crt, key = cert
    side = socket.socket()
    side.bind(("127.0.0.1", 0))
    side.listen(1)
    port = free_port()
    srv = subprocess.Popen([NODE, os.path.join(CLIENTS, "node_https_server.js"), f"127.0.0.1:{port}", crt, key,
                            str(side.getsockname()[1])], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert srv.stdout.readline() == b"listening\n", srv.stderr.read()
        conn, _ = side.accept()
        client, carried = run_client("asyncio", port, "/ok")
        loop_tracer.wait_for(lambda evs: len(l7_of(loop_tracer, srv.pid, "in", "/ok")) >= N, timeout=30,
                             what=f"{N} requests into node with a side socket")
        time.sleep(0.3)
        evs = l7_of(loop_tracer, srv.pid, "in", "/ok")
        assert len(evs) == N
        assert collections.Counter(port_of(e["src"]) for e in evs) == carried
        conn.settimeout(10)
        assert conn.recv(65536).startswith(b"tls ")  # the side writes did happen
        conn.close()
    finally:
        side.close()
        srv.terminate()
        srv.wait(10)


def test_no_plaintext_left_unbound(loop_tracer):
    m = loop_tracer.metrics()
    assert m["nodescope_l7_tls_unbound_dropped_total"][frozenset()] == 0
    assert m["nodescope_bpf_tracking_dropped_total"][frozenset({("reason", "tls_socket_unknown")})] == 0
