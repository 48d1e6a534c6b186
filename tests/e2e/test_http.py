"""HTTP/1.x tracing (l7) against a real nginx on loopback: exact counts, attribution, durations, bodies, pipelining.

One nginx (Debian's package, run as root in the foreground with a config written into a temporary
directory) and one tracing agent serve the whole module. Every count is a delta over what the test
itself sent, so the tests do not depend on their order.
"""
import errno
import http.client
import http.server
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

import pytest

from conftest import Agent, free_port, loopback_dnat
from nginx import Nginx, ppid_of

CURL = shutil.which("curl") or "/usr/bin/curl"
BIG = 300 * 1024          # /big: a static file served with sendfile, far past the 4 KiB capture
POST_BODY = 100 * 1024    # request bodies, also far past the capture
CHUNKED = 12 * 16384      # /chunked: a chunked response of this many body bytes
SLOW_S = 0.3              # /slow: the backend sleeps this long before answering
BUCKETS = ["0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "+Inf"]
OUT_TOTAL = "container_http_requests_total"
OUT_HIST = "container_http_requests_duration_seconds_total"
IN_TOTAL = "container_http_inbound_requests_total"
IN_HIST = "container_http_inbound_requests_duration_seconds_total"

NGINX_HTTP = """
http {{
    access_log off;
    sendfile on;
    keepalive_requests 2000;
    keepalive_timeout 60s;
    default_type application/octet-stream;
{temp_paths}
    server {{
        listen 127.0.0.1:{port};
        root {d}/www;
        location = /ok {{ return 200 "ok\\n"; }}
        location = /boom {{ return 500; }}
        location = /slow {{ proxy_pass http://127.0.0.1:{backend}; }}
        location = /chunked {{ proxy_pass http://127.0.0.1:{backend}; proxy_buffering off; }}
        location = /nginx_status {{ stub_status; }}
    }}
}}
"""


# ---------------------------------------------------------------- fixtures

class Backend(http.server.ThreadingHTTPServer):
    """What nginx proxies /slow and /chunked to: a Python server in this process."""
    daemon_threads = True


class BackendHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # nginx's proxy default; each request its own connection

    def log_message(self, *a):
        pass

    def do_GET(self):
        if self.path == "/slow":
            time.sleep(SLOW_S)
            body = b"slow\n"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif self.path == "/chunked":
            # No length: the body ends with the connection, and nginx re-frames it as chunked.
            self.send_response(200)
            self.end_headers()
            for _ in range(CHUNKED // 16384):
                self.wfile.write(b"c" * 16384)
                self.wfile.flush()
        else:
            self.send_error(404)


@pytest.fixture(scope="module")
def l7_tracer():
    a = Agent("--events", "l7")
    yield a
    a.stop()


@pytest.fixture(scope="module")
def backend():
    srv = Backend(("127.0.0.1", 0), BackendHandler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.shutdown()
    srv.server_close()


@pytest.fixture(scope="module")
def nginx(l7_tracer, backend):
    # Started after the agent: only connections opened after it started are seen.
    n = Nginx(NGINX_HTTP, files={"www/big": bytes(range(256)) * (BIG // 256)},
              backend=backend.server_address[1])
    yield n
    n.stop()


# ---------------------------------------------------------------- helpers

def l7(events, **want):
    return [e for e in events if e.get("type") == "l7" and all(e.get(k) == v for k, v in want.items())]


def msum(metrics, name, **labels):
    want = set(labels.items())
    return sum(v for k, v in metrics.get(name, {}).items() if want <= set(k))


def settle(agent, pred, what, timeout=20):
    """Waits for pred(events), then a little longer so any extra (wrong) event would show too."""
    agent.wait_for(pred, timeout=timeout, what=what)
    time.sleep(0.3)
    return agent.snapshot()


def wait_metrics(agent, fn, want, timeout=10):
    """Polls /metrics until fn(metrics) == want; returns the last value (the caller asserts)."""
    deadline = time.monotonic() + timeout
    while True:
        v = fn(agent.metrics())
        if v == want or time.monotonic() > deadline:
            return v
        time.sleep(0.05)


def src_of(sock):
    host, port = sock.getsockname()[:2]
    return f"{host}:{port}"


def get(conn, path, method="GET", **kw):
    conn.request(method, path, **kw)
    r = conn.getresponse()
    body = r.read()
    return r.status, body


def read_responses(sock, n):
    """Reads n HTTP/1.1 responses with Content-Length bodies from a raw socket: [(status, body)]."""
    buf = b""
    out = []
    while len(out) < n:
        while b"\r\n\r\n" not in buf:
            d = sock.recv(65536)
            assert d, f"connection closed after {len(out)} responses"
            buf += d
        head, buf = buf.split(b"\r\n\r\n", 1)
        status = int(head.split(b" ", 2)[1])
        length = int(re.search(rb"(?im)^content-length:\s*(\d+)", head).group(1))
        while len(buf) < length:
            d = sock.recv(65536)
            assert d, "connection closed inside a body"
            buf += d
        out.append((status, buf[:length]))
        buf = buf[length:]
    return out


# ---------------------------------------------------------------- tests

def test_curl_requests_client_and_server_side(l7_tracer, nginx):
    dst = nginx.addr
    m0 = l7_tracer.metrics()
    cases = [("/ok", "/ok", 200), ("/missing", "/missing", 404), ("/boom", "/boom", 500),
             ("/ok?x=1", "/ok", 200)]
    runs = []  # (pid, path, status, src)
    for url_path, path, status in cases:
        p = subprocess.Popen([CURL, "-sS", "--noproxy", "*", "-o", "/dev/null", "-w", "%{http_code} %{local_port}",
                              f"http://{dst}{url_path}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = p.communicate(timeout=20)
        assert p.returncode == 0, err
        code, lport = out.split()
        assert int(code) == status
        runs.append((p.pid, path, status, f"127.0.0.1:{lport}"))
    pids = {r[0] for r in runs}
    evs = settle(l7_tracer, lambda evs: all(l7(evs, pid=pid, dir="out") for pid in pids)
                 and all(l7(evs, dir="in", src=src) for _, _, _, src in runs), "curl's l7 events")
    workers = set(nginx.workers())
    for pid, path, status, src in runs:
        outs = l7(evs, pid=pid)
        assert len(outs) == 1, outs
        o = outs[0]
        assert (o["proto"], o["dir"], o["method"], o["path"], o["status"], o["src"], o["dst"], o["tls"]) == \
            ("http", "out", "GET", path, status, src, dst, False), o
        assert o["duration_ns"] > 0
        ins = l7(evs, dir="in", src=src)
        assert len(ins) == 1, ins
        i = ins[0]
        assert (i["method"], i["path"], i["status"], i["dst"]) == ("GET", path, status, dst), i
        assert i["pid"] in workers and ppid_of(i["pid"]) == nginx.proc.pid, (i, workers)
        assert 0 < i["duration_ns"] <= o["duration_ns"]

    def by_status(name, **labels):
        return lambda m: {s: msum(m, name, status=s, **labels) - msum(m0, name, status=s, **labels)
                          for s in ("2xx", "4xx", "5xx")}
    want = {"2xx": 2, "4xx": 1, "5xx": 1}  # Coroot's status classes
    assert wait_metrics(l7_tracer, by_status(OUT_TOTAL, destination=dst), want) == want
    assert wait_metrics(l7_tracer, by_status(IN_TOTAL, container_id=nginx.container), want) == want
    m1 = l7_tracer.metrics()
    assert msum(m1, OUT_TOTAL, destination=dst, actual_destination=dst) - \
        msum(m0, OUT_TOTAL, destination=dst, actual_destination=dst) == 4
    assert msum(m1, OUT_HIST + "_count", destination=dst) - msum(m0, OUT_HIST + "_count", destination=dst) == 4


def test_1000_keepalive_requests_on_one_connection(l7_tracer, nginx):
    dst = nginx.addr
    m0 = l7_tracer.metrics()
    first = len(l7_tracer.snapshot())
    conn = http.client.HTTPConnection("127.0.0.1", nginx.port, timeout=10)
    conn.connect()
    src = src_of(conn.sock)
    n = 1000
    for _ in range(n):
        assert get(conn, "/ok") == (200, b"ok\n")
    # Still the same connection: http.client reconnects silently if nginx closed it.
    assert src_of(conn.sock) == src
    conn.close()
    # Everything this process sent to nginx since the test began, whatever its source address.
    mine = lambda evs: l7(evs[first:], dst=dst, pid=os.getpid(), dir="out")
    evs = settle(l7_tracer, lambda evs: len(mine(evs)) >= n, f"{n} out events")
    outs = mine(evs)
    assert len(outs) == n
    assert {e["src"] for e in outs} == {src}  # one connection: one source port
    assert all((e["method"], e["path"], e["status"]) == ("GET", "/ok", 200) for e in outs)
    ins = l7(evs, dir="in", src=src)
    assert len(ins) == n
    assert len({e["pid"] for e in ins}) == 1 and ins[0]["pid"] in nginx.workers()
    got = wait_metrics(l7_tracer, lambda m: msum(m, OUT_TOTAL, destination=dst) - msum(m0, OUT_TOTAL, destination=dst), n)
    assert got == n
    m1 = l7_tracer.metrics()
    assert msum(m1, OUT_TOTAL, destination=dst, status="2xx") - msum(m0, OUT_TOTAL, destination=dst, status="2xx") == n
    assert msum(m1, OUT_HIST + "_count", destination=dst) - msum(m0, OUT_HIST + "_count", destination=dst) == n
    assert msum(m1, IN_TOTAL, container_id=nginx.container) - msum(m0, IN_TOTAL, container_id=nginx.container) == n
    # each request and each response, parsed on the client's side and on nginx's
    assert msum(m1, "nodescope_l7_messages_total", proto="http") - \
        msum(m0, "nodescope_l7_messages_total", proto="http") >= 4 * n
    for drop in ("unparseable", "unpaired", "table_full"):
        name = f"nodescope_l7_{drop}_total"
        assert msum(m1, name, proto="http") == msum(m0, name, proto="http"), name
    assert msum(m1, "nodescope_events_lost_total", stream="l7") == 0


def test_bodies_past_the_capture_are_skipped_on_keepalive(l7_tracer, nginx):
    """Request and response bodies far larger than what is captured, then more requests on the same connection."""
    dst = nginx.addr
    m0 = l7_tracer.metrics()
    conn = http.client.HTTPConnection("127.0.0.1", nginx.port, timeout=10)
    conn.connect()
    src = src_of(conn.sock)
    chunks = [bytes([65 + i % 26]) * 8192 for i in range(POST_BODY // 8192)]
    expect = []  # (method, path, status)

    def step(method, path, status, body=None, **kw):
        st, data = get(conn, path, method, body=body, **kw)
        assert st == status, (method, path, st)
        expect.append((method, path.split("?")[0], status))
        return data

    step("GET", "/ok", 200)
    step("POST", "/ok", 200, b"p" * POST_BODY)                      # Content-Length request body
    step("POST", "/ok?chunked", 200, iter(chunks), encode_chunked=True)  # chunked request body
    assert step("GET", "/big", 200) == bytes(range(256)) * (BIG // 256)  # Content-Length response, sendfile
    step("GET", "/ok", 200)
    assert step("GET", "/chunked", 200) == b"c" * CHUNKED            # chunked response (nginx re-frames)
    for _ in range(5):
        step("GET", "/ok", 200)
    step("GET", "/missing", 404)
    step("POST", "/ok", 200, b"q" * POST_BODY)
    step("GET", "/ok", 200)
    assert src_of(conn.sock) == src  # never reconnected
    conn.close()
    n = len(expect)
    evs = settle(l7_tracer, lambda evs: len(l7(evs, dir="out", src=src)) >= n, f"{n} out events")
    outs = l7(evs, dir="out", src=src)
    assert [(e["method"], e["path"], e["status"]) for e in outs] == expect
    assert all(e["pid"] == os.getpid() and e["dst"] == dst for e in outs)

    def delta(m):
        return {s: msum(m, OUT_TOTAL, destination=dst, status=s) - msum(m0, OUT_TOTAL, destination=dst, status=s)
                for s in ("2xx", "4xx")}
    want = {"2xx": n - 1, "4xx": 1}
    assert wait_metrics(l7_tracer, delta, want) == want


def test_slow_request_duration_and_histogram_buckets(l7_tracer, nginx, backend):
    dst = nginx.addr
    upstream = f"127.0.0.1:{backend.server_address[1]}"
    m0 = l7_tracer.metrics()
    conn = http.client.HTTPConnection("127.0.0.1", nginx.port, timeout=10)
    conn.connect()
    src = src_of(conn.sock)
    t0 = time.monotonic()
    assert get(conn, "/slow") == (200, b"slow\n")
    elapsed_ns = (time.monotonic() - t0) * 1e9
    conn.close()
    evs = settle(l7_tracer, lambda evs: l7(evs, dir="out", src=src) and l7(evs, dir="in", src=src)
                 and l7(evs, dir="out", dst=upstream, path="/slow"), "the slow request's events")
    outs = l7(evs, dir="out", src=src)
    assert len(outs) == 1
    o = outs[0]
    assert (o["path"], o["status"], o["pid"]) == ("/slow", 200, os.getpid())
    assert SLOW_S * 1e9 <= o["duration_ns"] <= elapsed_ns
    i = l7(evs, dir="in", src=src)[0]
    assert SLOW_S * 1e9 <= i["duration_ns"] <= o["duration_ns"]
    # nginx is a client too: its request to the backend, from the worker that served ours.
    ups = l7(evs, dir="out", dst=upstream, path="/slow")
    assert len(ups) == 1 and ups[0]["pid"] == i["pid"] and ups[0]["status"] == 200
    assert SLOW_S * 1e9 <= ups[0]["duration_ns"] <= i["duration_ns"]

    def bucket(m, le):
        return msum(m, OUT_HIST + "_bucket", destination=dst, le=le) - \
            msum(m0, OUT_HIST + "_bucket", destination=dst, le=le)
    assert wait_metrics(l7_tracer, lambda m: bucket(m, "+Inf"), 1) == 1
    m1 = l7_tracer.metrics()
    got = {le: bucket(m1, le) for le in BUCKETS}
    assert got == {le: (0 if float(le) < SLOW_S else 1) for le in BUCKETS}
    assert got["0.25"] == 0 and got["0.5"] == 1
    assert msum(m1, OUT_HIST + "_count", destination=dst) - msum(m0, OUT_HIST + "_count", destination=dst) == 1
    s = msum(m1, OUT_HIST + "_sum", destination=dst) - msum(m0, OUT_HIST + "_sum", destination=dst)
    assert SLOW_S <= s <= elapsed_ns / 1e9 + 1e-6
    # The server side's histogram puts it in the same buckets.
    ib = {le: msum(m1, IN_HIST + "_bucket", container_id=nginx.container, le=le) -
          msum(m0, IN_HIST + "_bucket", container_id=nginx.container, le=le) for le in ("0.25", "0.5")}
    assert ib == {"0.25": 0, "0.5": 1}


def test_inbound_counts_what_nginx_served(l7_tracer, nginx):
    """container_http_inbound_requests_total against nginx's own count (stub_status)."""
    listen = nginx.addr
    m0 = l7_tracer.metrics()
    stub0 = nginx.stub_requests()
    sent = {"2xx": 0, "4xx": 0, "5xx": 0}
    for path, status, n in (("/ok", 200, 20), ("/boom", 500, 5)):   # each on its own connection
        for _ in range(n):
            c = http.client.HTTPConnection("127.0.0.1", nginx.port, timeout=10)
            assert get(c, path)[0] == status
            c.close()
            sent[f"{status // 100}xx"] += 1
    c = http.client.HTTPConnection("127.0.0.1", nginx.port, timeout=10)
    c.connect()
    src = src_of(c.sock)
    for path, status, n, body in (("/ok", 200, 30, None), ("/missing", 404, 5, None), ("/big", 200, 1, None),
                                  ("/ok", 200, 1, b"b" * POST_BODY), ("/ok", 200, 10, None)):
        for _ in range(n):
            assert get(c, path, "POST" if body else "GET", body=body)[0] == status
            sent[f"{status // 100}xx"] += 1
    assert src_of(c.sock) == src
    c.close()
    stub1 = nginx.stub_requests()
    served = sum(sent.values())
    assert stub1 - stub0 - 1 == served  # nginx agrees on what it served between the two status reads
    want = dict(sent)
    want["2xx"] += 2  # the two stub_status requests
    mine = {"container_id": nginx.container}
    delta = lambda m: {s: msum(m, IN_TOTAL, status=s, **mine) - msum(m0, IN_TOTAL, status=s, **mine) for s in want}
    got = wait_metrics(l7_tracer, delta, want)
    # The keep-alive connection's server-side events, in order.
    ins = l7(l7_tracer.snapshot(), dir="in", src=src)
    assert [(e["method"], e["path"]) for e in ins] == \
        [("GET", "/ok")] * 30 + [("GET", "/missing")] * 5 + [("GET", "/big"), ("POST", "/ok")] + [("GET", "/ok")] * 10
    assert {e["pid"] for e in ins} <= set(nginx.workers())
    assert got == want
    m1 = l7_tracer.metrics()
    assert msum(m1, IN_HIST + "_count", **mine) - msum(m0, IN_HIST + "_count", **mine) == served + 2


def test_pipelined_requests_in_one_write(l7_tracer, nginx):
    dst = nginx.addr
    paths = [("/ok", 200), ("/missing", 404), ("/boom", 500)]  # 500 last: nginx closes after it
    # Only requests from here on: a source port is reused (a /metrics scrape's, say, earlier on).
    first_event = len(l7_tracer.snapshot())
    s = socket.create_connection(("127.0.0.1", nginx.port), timeout=10)
    src = src_of(s)
    s.sendall(b"".join(f"GET {p}?n={i} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
                       for i, (p, _) in enumerate(paths)))   # one write, three requests
    got = read_responses(s, 3)
    s.close()
    assert [st for st, _ in got] == [st for _, st in paths]
    evs = settle(l7_tracer, lambda evs: len(l7(evs[first_event:], dir="out", src=src)) >= 3
                 and len(l7(evs[first_event:], dir="in", src=src)) >= 3, "3 pipelined requests")
    evs = evs[first_event:]
    for d in ("out", "in"):
        es = l7(evs, dir=d, src=src)
        assert [(e["method"], e["path"], e["status"]) for e in es] == [("GET", p, st) for p, st in paths], (d, es)
        assert [e["ts"] for e in es] == sorted(e["ts"] for e in es)
        assert all(e["dst"] == dst and e["duration_ns"] > 0 for e in es)
    assert {e["pid"] for e in l7(evs, dir="out", src=src)} == {os.getpid()}


@pytest.fixture(scope="module")
def http_get32(build_client):
    """A 32-bit (ia32) HTTP client, built here with gcc -m32 (Debian's gcc-multilib). Skipped,
    saying why, on a kernel that runs no 32-bit program (IA32 emulation not built, or off:
    ia32_emulation=0 or CONFIG_IA32_EMULATION_DEFAULT_DISABLED): it has no compat syscalls to
    misread."""
    path = build_client("http_get32.c", "-m32")
    try:
        subprocess.run([path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10)
    except OSError as e:
        if e.errno != errno.ENOEXEC:
            raise
        pytest.skip(f"this kernel ({os.uname().release}) refuses 32-bit programs (ENOEXEC: "
                    "IA32 emulation off), so no process makes compat syscalls")
    return path


def test_32bit_process_syscalls_are_not_misread(agent_factory, nginx, http_get32):
    """A 32-bit process's syscalls come from another table (its read is our close, its pipe our
    connect, its getegid our listen): they are skipped, so it gets no wrong event, and the 64-bit
    processes around it (nginx serving it, curl beside it) are counted exactly."""
    a = agent_factory("--events", "tcp,l7")
    n = 10
    bound, pids32, curl_pids = [], [], []
    for i in range(n):
        p = subprocess.Popen([http_get32, str(nginx.port), f"/m32/{i}"], stdout=subprocess.PIPE)
        out, _ = p.communicate(timeout=10)
        assert p.returncode == 0 and out.startswith(b"HTTP/1.1 404"), (p.returncode, out)
        bound.append(int(out.split(b"bound ")[1]))
        pids32.append(p.pid)
        c = subprocess.Popen([CURL, "-s", "-o", "/dev/null", f"http://{nginx.addr}/m64/{i}"])
        assert c.wait(10) == 0
        curl_pids.append(c.pid)

    def served(evs):
        return len([e for e in l7(evs, dir="in") if e["path"].startswith(("/m32/", "/m64/"))]) >= 2 * n

    evs = settle(a, served, f"{2 * n} inbound requests")
    inbound = [e for e in l7(evs, dir="in") if e["path"].startswith(("/m32/", "/m64/"))]
    assert sorted(e["path"] for e in inbound) == sorted([f"/m32/{i}" for i in range(n)] +
                                                        [f"/m64/{i}" for i in range(n)])
    out64 = [e for e in l7(evs, dir="out") if e["path"].startswith("/m64/")]
    assert sorted(e["pid"] for e in out64) == sorted(curl_pids), out64
    # Nothing on the client side from the 32-bit process: not a wrong path, pid or socket.
    assert not [e for e in l7(evs, dir="out") if e["path"].startswith("/m32/")]
    # Its getegid with a bound socket's fd in edi is not a listen().
    assert not [e for e in evs if e["type"] == "listen" and e["pid"] in pids32], evs
    # What TCP itself saw of it stays right: one connection each to nginx, bytes exact.
    for pid in pids32:
        closes = [e for e in evs if e["type"] == "close" and e["pid"] == pid]
        assert len(closes) == 1 and closes[0]["dst"] == nginx.addr, closes


def test_actual_destination_after_nat(l7_tracer, nginx):
    """HTTP through a DNAT rule: destination is what the client dialled, actual_destination where
    conntrack sent it (as for the TCP metrics), not a copy of the destination."""
    with loopback_dnat(nginx.port) as front:
        dst = f"127.0.0.1:{front}"
        m0 = l7_tracer.metrics()
        for _ in range(3):
            c = http.client.HTTPConnection("127.0.0.1", front, timeout=10)
            assert get(c, "/ok")[0] == 200
            c.close()
        got = wait_metrics(l7_tracer, lambda m: msum(m, OUT_TOTAL, destination=dst, actual_destination=nginx.addr)
                           - msum(m0, OUT_TOTAL, destination=dst, actual_destination=nginx.addr), 3)
        assert got == 3, {k: v for k, v in l7_tracer.metrics()[OUT_TOTAL].items() if ("destination", dst) in k}
        assert msum(l7_tracer.metrics(), OUT_TOTAL, destination=dst, actual_destination=dst) == 0


def tracer_pid(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"^TracerPid:\s+(\d+)", f.read(), re.M).group(1))


def test_batched_reads_run_at_the_batch_nice(agent_factory, nginx, tmp_path):
    """The agent waits at --nice (-20), so a new program's first mapping wakes it before busy
    work; by default (--batch-nice 0), while the l7 stream has a batch open (requests keep
    coming) it sleeps and reads at 0, so reading a busy server's requests does not preempt the
    server, and once the batch closes it is back at -20. Seen as the setpriority calls the agent
    makes (strace) around three requests. With --batch-nice -20 (as --nice) it makes none."""
    strace = shutil.which("strace")
    assert strace, "strace is required by this test: apt-get install strace (make deps)"
    pattern = re.compile(r"setpriority\(PRIO_PROCESS, 0, (-?\d+)\)\s+= 0")
    for extra, switches in (((), True), (("--batch-nice", "-20"), False)):
        a = agent_factory("--events", "l7", *extra)
        log = tmp_path / f"strace{len(extra)}.log"
        st = subprocess.Popen([strace, "-f", "-qq", "-e", "trace=setpriority", "-o", str(log),
                               "-p", str(a.proc.pid)], stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 10
            while tracer_pid(a.proc.pid) != st.pid:
                assert st.poll() is None and time.monotonic() < deadline, st.stderr.read()
                time.sleep(0.02)
            for i in range(3):
                c = subprocess.run([CURL, "-sS", "--noproxy", "*", "-o", "/dev/null",
                                    f"http://{nginx.addr}/nice/{i}"], timeout=20)
                assert c.returncode == 0
            settle(a, lambda evs: len([e for e in l7(evs, dir="out")
                                       if e["path"].startswith("/nice/")]) == 3,
                   "the three requests, read from the l7 stream")
            # The batch closes two empty periods after the last record: back at -20.
            deadline = time.monotonic() + 10
            while switches and -20 not in [int(v) for v in pattern.findall(log.read_text())]:
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.05)
        finally:
            st.terminate()
            st.wait(10)
        text = log.read_text()
        asked = [int(v) for v in pattern.findall(text)]
        if not switches:
            assert asked == [], text
            continue
        # Alternating between the two (a batch may be open as strace attaches or detaches),
        # with a whole lowering and return among them, and no failed call.
        assert set(asked) == {0, -20}, text
        assert all(x != y for x, y in zip(asked, asked[1:])), text
        assert 0 in asked and -20 in asked[asked.index(0):], text
        assert not re.search(r"=\s+-1", text), text
