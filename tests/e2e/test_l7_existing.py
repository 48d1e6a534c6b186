"""Connections opened before the agent started are parsed too: a pool's connections live for days.

The agent finds them at start (/proc and sock_diag, as for its TCP metrics), lets the BPF side
capture their reads and writes, and the L7 side picks the protocol up at the next message
boundary. Each test opens its connections and sends a first request before the agent starts,
then counts exactly what it sends afterwards, on both ends.
"""
import os
import socket

import pytest

from l7db import msum
from nginx import Nginx
from srv_redis import Redis

NGINX_HTTP = """
http {{
    access_log off;
    keepalive_requests 10000;
    keepalive_timeout 120s;
{temp_paths}
    server {{
        listen 127.0.0.1:{port};
        location = /ok {{ return 200 "ok\\n"; }}
        location = /missing {{ return 404; }}
    }}
}}
"""


def l7(events, **want):
    return [e for e in events if e.get("type") == "l7" and all(e.get(k) == v for k, v in want.items())]


def src_of(sock):
    host, port = sock.getsockname()[:2]
    return f"{host}:{port}"


def recv_until(sock, marker, n=1):
    buf = b""
    while buf.count(marker) < n:
        d = sock.recv(65536)
        assert d, "connection closed"
        buf += d
    return buf


@pytest.fixture
def nginx():
    n = Nginx(NGINX_HTTP, workers=1)
    yield n
    n.stop()


@pytest.fixture
def redis():
    r = Redis(tls=False)
    yield r
    r.stop()


def resp(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def test_http_keepalive_connection_opened_before_the_agent(agent_factory, nginx):
    conn = socket.create_connection(("127.0.0.1", nginx.port))
    req = b"GET /ok HTTP/1.1\r\nHost: x\r\n\r\n"
    conn.sendall(req)
    recv_until(conn, b"ok\n")
    src = src_of(conn)
    agent = agent_factory()
    m0 = agent.metrics()
    assert msum(m0, "nodescope_l7_existing_connections_total") >= 2  # both ends of ours
    n = 50
    for i in range(n):
        conn.sendall(req if i % 5 else b"GET /missing HTTP/1.1\r\nHost: x\r\n\r\n")
        recv_until(conn, b"\r\n\r\n" if i % 5 == 0 else b"ok\n")
    # A last request marks the end: any extra event of the connection comes before it.
    conn.sendall(b"GET /drain HTTP/1.1\r\nHost: x\r\n\r\n")
    recv_until(conn, b"\r\n\r\n")
    drained = lambda evs, d: any(e.get("path") == "/drain" for e in l7(evs, src=src, dir=d))
    evs = agent.wait_for(lambda evs: drained(evs, "out") and drained(evs, "in") and evs,
                         what="the marker request on each side")
    outs = [e for e in l7(evs, src=src, dir="out") if e.get("path") != "/drain"]
    ins = [e for e in l7(evs, src=src, dir="in") if e.get("path") != "/drain"]
    assert len(outs) == n and len(ins) == n
    assert [e["status"] for e in outs] == [404 if i % 5 == 0 else 200 for i in range(n)]
    assert all(e["pid"] == os.getpid() and e["dst"] == nginx.addr for e in outs)
    assert all(e["pid"] in nginx.workers() for e in ins)
    m1 = agent.metrics()
    out = lambda m, s: msum(m, "container_http_requests_total", destination=nginx.addr, status=s)
    assert out(m1, "2xx") - out(m0, "2xx") == n - n // 5
    assert out(m1, "4xx") - out(m0, "4xx") == n // 5 + 1  # the marker
    inb = lambda m: msum(m, "container_http_inbound_requests_total", container_id=nginx.container)
    assert inb(m1) - inb(m0) == n + 1
    conn.close()


def test_redis_connection_opened_before_the_agent(agent_factory, redis):
    conn = socket.create_connection(("127.0.0.1", redis.port))
    conn.sendall(resp(b"PING"))
    recv_until(conn, b"\r\n")
    src = src_of(conn)
    agent = agent_factory()
    m0 = agent.metrics()
    n = 40
    # Pipelined in one write, the last one fails: each is paired with its own answer.
    batch = b"".join(resp(b"SET", b"key%d" % i, b"secret-value") for i in range(n - 1))
    batch += resp(b"LPOP", b"key0")
    conn.sendall(batch)
    recv_until(conn, b"\r\n", n)
    evs = agent.wait_for(lambda evs: len(l7(evs, src=src, dir="out")) >= n and
                         len(l7(evs, src=src, dir="in")) >= n and evs, what=f"{n} redis requests each side")
    outs = l7(evs, src=src, dir="out")
    assert [(e["proto"], e["op"], e["status"]) for e in outs] == \
        [("redis", "SET", "ok")] * (n - 1) + [("redis", "LPOP", "failed")]
    assert outs[-1]["error_code"] == "WRONGTYPE"
    assert not any(b"secret-value".decode() in str(e) for e in evs)
    m1 = agent.metrics()
    q = lambda m, s: msum(m, "container_redis_queries_total", destination=redis.addr, status=s)
    assert (q(m1, "ok") - q(m0, "ok"), q(m1, "failed") - q(m0, "failed")) == (n - 1, 1)
    iq = lambda m, s: msum(m, "container_redis_inbound_queries_total", status=s)
    assert (iq(m1, "ok") - iq(m0, "ok"), iq(m1, "failed") - iq(m0, "failed")) == (n - 1, 1)
    conn.close()


class H2Client:
    """A minimal HTTP/2 client on a plain socket (h2c with prior knowledge), its header blocks
    encoded by python3-hpack, which indexes every field: a request names the entries the ones
    before it inserted, as real clients do."""

    def __init__(self, port):
        import hpack
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.enc, self.authority = hpack.Encoder(), f"127.0.0.1:{port}"
        self.stream, self.buf = 1, b""
        self.sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + self.frame(4, 0, 0, b""))

    @staticmethod
    def frame(type_, flags, stream, payload):
        return len(payload).to_bytes(3, "big") + bytes([type_, flags]) + stream.to_bytes(4, "big") + payload

    def read_frame(self):
        while len(self.buf) < 9 or len(self.buf) < 9 + int.from_bytes(self.buf[:3], "big"):
            d = self.sock.recv(65536)
            assert d, "connection closed"
            self.buf += d
        n = int.from_bytes(self.buf[:3], "big")
        f, self.buf = self.buf[:9 + n], self.buf[9 + n:]
        return f[3], f[4], int.from_bytes(f[5:9], "big") & 0x7fffffff

    def get(self, path):
        """One GET, answered before it returns; the answer's :status is not decoded here (the test
        counts what it sent)."""
        sid, self.stream = self.stream, self.stream + 2
        block = self.enc.encode([(":method", "GET"), (":scheme", "http"), (":authority", self.authority),
                                 (":path", path), ("user-agent", "nodescope-e2e")])
        self.sock.sendall(self.frame(1, 0x5, sid, block))  # HEADERS, END_HEADERS | END_STREAM
        while True:
            type_, flags, stream = self.read_frame()
            if type_ == 4 and not flags & 1:
                self.sock.sendall(self.frame(4, 1, 0, b""))  # SETTINGS ack
            if stream == sid and type_ in (0, 1) and flags & 1:
                return


@pytest.fixture
def nghttpd():
    from srv_nghttpd import Nghttpd
    s = Nghttpd()
    yield s
    s.stop()


def test_http2_connection_seen_from_its_middle(agent_factory, nghttpd):
    """An h2c connection whose HPACK tables were filled before the agent started: a request whose
    :path names an entry inserted before is counted (op "unknown"), one whose fields are all known
    is decoded, and a path first sent afterwards is learnt and decoded from then on. Each block
    naming a lost entry is counted in nodescope_l7_undecoded_total{proto="http2"}."""
    c = H2Client(nghttpd.port)
    c.get("/index.html")
    c.get("/missing")  # its :path now an entry of the client's table
    src = src_of(c.sock)
    agent = agent_factory()
    m0 = agent.metrics()
    plan = ["/index.html"] * 10 + ["/missing"] * 5 + ["/fresh"] * 3
    for p in plan:
        c.get(p)
    n = len(plan)
    # A last request marks the end: any extra event of the connection comes before it.
    c.get("/drain")
    drained = lambda evs, d: any(e.get("statement") == "GET /drain" for e in l7(evs, src=src, dir=d))
    evs = agent.wait_for(lambda evs: drained(evs, "out") and drained(evs, "in") and evs,
                         what="the marker request on each side")
    for d in ("out", "in"):
        got = [(e["proto"], e["statement"], e["status"]) for e in l7(evs, src=src, dir=d)]
        assert got == [("http2", "GET /index.html", "2xx")] * 10 + [("http2", "unknown", "4xx")] * 5 + \
            [("http2", "GET /fresh", "4xx")] * 3 + [("http2", "GET /drain", "4xx")], d
    m1 = agent.metrics()
    out = lambda m, s: msum(m, "container_http_requests_total", destination=nghttpd.addr, status=s)
    assert (out(m1, "2xx") - out(m0, "2xx"), out(m1, "4xx") - out(m0, "4xx")) == (10, 8 + 1)
    inb = lambda m, s: msum(m, "container_http_inbound_requests_total", container_id=nghttpd.container, status=s)
    assert (inb(m1, "2xx") - inb(m0, "2xx"), inb(m1, "4xx") - inb(m0, "4xx")) == (10, 8 + 1)
    undecoded = lambda m: msum(m, "nodescope_l7_undecoded_total", proto="http2")
    # every request names the :authority and user-agent entries (client side), every answer the
    # server's date and server entries (server side): two blocks each, seen from both ends
    assert undecoded(m1) - undecoded(m0) >= 2 * n
    c.sock.close()
