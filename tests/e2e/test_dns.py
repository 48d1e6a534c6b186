"""DNS on UDP against a real dnsmasq on 127.0.0.77:53: dig, glibc (getent, Python), Go's resolver.

Counts are exact: each client's questions are known (dig asks one; glibc asks A and AAAA together
with sendmmsg; Go asks A and AAAA on one socket), and the agent's series are checked by their
deltas. Coroot leaves out empty AAAA answers (asked beside an A), and so does the agent.
"""
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time

import pytest

from bpfmaps import agent_maps, map_keys
from conftest import Agent, not_seen_by_socket_hooks
from l7db import msum, wait_value
from srv_dnsmasq import DIG, Dnsmasq

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = "127.0.0.77"
UPSTREAM = "127.0.0.79"
GO = shutil.which("go") or "/usr/bin/go"
TOTAL = "container_dns_requests_total"
HIST = "container_dns_requests_duration_seconds_total"
IN_TOTAL = "container_dns_inbound_requests_total"
IN_HIST = "container_dns_inbound_requests_duration_seconds_total"


@pytest.fixture(scope="module")
def agent():
    a = Agent()
    yield a
    a.stop()


@pytest.fixture(scope="module")
def dnsmasq(agent):
    """Started after the agent: its socket is found when it binds port 53 (the server side). In a
    cgroup of its own (service.py), so its inbound series are its own."""
    upstream = servfail_upstream()
    # a broken upstream: every question under broken.test fails there (SERVFAIL)
    svc = Dnsmasq(SERVER, f"--server=/broken.test/{UPSTREAM}#{upstream.getsockname()[1]}")
    # The readiness question is counted before any test takes its first reading (records are read
    # in batches): only the one that was answered is.
    counted = lambda: msum(agent.metrics(), TOTAL, domain="a.nodescope.test", status="ok")
    assert wait_value(counted, 1) == 1
    yield svc
    svc.stop()
    upstream.close()


def servfail_upstream():
    """A UDP socket on UPSTREAM (a port not 53: not a DNS socket to the agent) answering every
    question with SERVFAIL, from a thread, until it is closed."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((UPSTREAM, 0))

    def serve():
        while True:
            try:
                q, peer = s.recvfrom(4096)
                s.sendto(q[:2] + bytes([q[2] | 0x80, (q[3] & 0xf0) | 2]) + q[4:], peer)
            except OSError:
                return
    threading.Thread(target=serve, daemon=True).start()
    return s


@pytest.fixture(scope="module")
def resolv_conf():
    d = tempfile.mkdtemp(prefix="nodescope-e2e-dns.")
    path = os.path.join(d, "resolv.conf")
    with open(path, "w") as f:
        f.write(f"nameserver {SERVER}\noptions timeout:2 attempts:1\n")
    yield path
    shutil.rmtree(d, ignore_errors=True)


def with_resolv(resolv_conf, argv):
    """argv run in a mount namespace of its own whose /etc/resolv.conf names the test's server."""
    return ["unshare", "-m", "sh", "-c", 'mount --bind "$0" /etc/resolv.conf && exec "$@"', resolv_conf, *argv]


def wait_delta(agent, m0, want, timeout=15):
    """Waits until every (name, labels) -> count delta in want holds; returns the last metrics."""
    deadline = time.monotonic() + timeout
    while True:
        m = agent.metrics()
        got = {k: msum(m, k[0], **dict(k[1])) - msum(m0, k[0], **dict(k[1])) for k in want}
        if got == want or time.monotonic() > deadline:
            assert got == want
            return m
        time.sleep(0.2)


def key(name=TOTAL, **labels):
    return (name, frozenset(labels.items()))


def test_dig_answers_and_failures(agent, dnsmasq):
    m0 = agent.metrics()
    ev0 = len(agent.snapshot())
    for args, want in ((["a.nodescope.test"], "10.1.2.3"), (["AAAA", "both.nodescope.test"], "fd00::4"),
                       (["x.nx.nodescope.test"], ""), (["elsewhere.example"], "")):
        out = subprocess.run([DIG, "+short", "+time=2", "+tries=1", f"@{SERVER}", *args],
                             capture_output=True, text=True, timeout=20)
        assert out.stdout.strip() == want, out
    wait_delta(agent, m0, {
        key(request_type="TypeA", domain="a.nodescope.test", status="ok"): 1,
        key(request_type="TypeAAAA", domain="both.nodescope.test", status="ok"): 1,
        key(request_type="TypeA", domain="x.nx.nodescope.test", status="nxdomain"): 1,
        key(request_type="TypeA", domain="elsewhere.example", status="refused"): 1,
        key(HIST + "_count"): 4,
        # dnsmasq's side, with Coroot's generic status: 0 is "unknown", others their number
        key(IN_TOTAL, container_id=dnsmasq.container, status="unknown"): 2,
        key(IN_TOTAL, container_id=dnsmasq.container, status="3"): 1,
        key(IN_TOTAL, container_id=dnsmasq.container, status="5"): 1,
        key(IN_HIST + "_count", container_id=dnsmasq.container): 4,
    })
    m = agent.metrics()
    assert msum(m, "ip_to_fqdn", ip="10.1.2.3", fqdn="a.nodescope.test") == 1
    assert msum(m, "ip_to_fqdn", ip="fd00::4", fqdn="both.nodescope.test") == 1
    evs = [e for e in agent.snapshot()[ev0:] if e.get("type") == "l7" and e.get("proto") == "dns"
           and e.get("dst") == f"{SERVER}:53"]
    assert sorted((e["op"], e["statement"], e["status"]) for e in evs) == sorted([
        ("TypeA", "a.nodescope.test", "ok"), ("TypeAAAA", "both.nodescope.test", "ok"),
        ("TypeA", "x.nx.nodescope.test", "nxdomain"), ("TypeA", "elsewhere.example", "refused")])
    assert all(e["dst"] == f"{SERVER}:53" and e["duration_ns"] > 0 for e in evs)


def test_glibc_asks_a_and_aaaa_together(agent, dnsmasq, resolv_conf):
    """getent ahosts and Python's getaddrinfo: glibc sends both questions in one sendmmsg."""
    m0 = agent.metrics()
    out = subprocess.run(with_resolv(resolv_conf, ["getent", "ahosts", "both.nodescope.test"]),
                         capture_output=True, text=True, timeout=20)
    assert "10.1.2.4" in out.stdout and "fd00::4" in out.stdout, out
    py = "import socket; print(sorted({a[4][0] for a in socket.getaddrinfo('a.nodescope.test', 80)}))"
    out = subprocess.run(with_resolv(resolv_conf, ["python3", "-c", py]), capture_output=True, text=True, timeout=20)
    assert out.stdout.strip() == "['10.1.2.3']", out
    # a.nodescope.test has no AAAA: dnsmasq answers it empty, which is left out.
    wait_delta(agent, m0, {
        key(request_type="TypeA", domain="both.nodescope.test", status="ok"): 1,
        key(request_type="TypeAAAA", domain="both.nodescope.test", status="ok"): 1,
        key(request_type="TypeA", domain="a.nodescope.test", status="ok"): 1,
        key(request_type="TypeAAAA", domain="a.nodescope.test"): 0,
    })


def test_go_resolver(agent, dnsmasq):
    d = tempfile.mkdtemp(prefix="nodescope-e2e-go-dns.")
    try:
        env = dict(os.environ, HOME=d, GOCACHE=os.path.join(d, "cache"), GO111MODULE="off", GOFLAGS="",
                   CGO_ENABLED="0")
        exe = os.path.join(d, "resolve")
        p = subprocess.run([GO, "build", "-o", exe, os.path.join(HERE, "clients", "go_resolve.go")],
                           env=env, capture_output=True, cwd=d)
        assert p.returncode == 0, p.stderr.decode(errors="replace")
        m0 = agent.metrics()
        out = subprocess.run([exe, f"{SERVER}:53", "both.nodescope.test", "x.nx.nodescope.test"],
                             capture_output=True, text=True, timeout=30)
        assert out.stdout.split("\n")[:2] == ["both.nodescope.test 10.1.2.4,fd00::4", "x.nx.nodescope.test error"], out
        wait_delta(agent, m0, {
            key(request_type="TypeA", domain="both.nodescope.test", status="ok"): 1,
            key(request_type="TypeAAAA", domain="both.nodescope.test", status="ok"): 1,
            key(request_type="TypeA", domain="x.nx.nodescope.test", status="nxdomain"): 1,
            key(request_type="TypeAAAA", domain="x.nx.nodescope.test", status="nxdomain"): 1,
        })
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_domains_past_the_cap_are_other(agent_factory, dnsmasq):
    a = agent_factory("--max-fqdns-per-container", "2")
    m0 = a.metrics()
    for i in range(4):
        subprocess.run([DIG, "+short", "+time=2", "+tries=1", f"@{SERVER}", f"h{i}.a.nodescope.test"],
                       capture_output=True, timeout=20)
    wait_delta(a, m0, {
        key(domain="h0.a.nodescope.test", status="nxdomain"): 1,
        key(domain="h1.a.nodescope.test", status="nxdomain"): 1,
        key(domain="~other", status="nxdomain"): 2,
    })


PY = "/usr/bin/python3"
SILENT = "127.0.0.78"


@pytest.fixture(scope="module")
def silent_server():
    """A UDP socket on SILENT:53 that reads questions and never answers."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((SILENT, 53))
    yield s
    s.close()


def dnspython(proto, want):
    """Asks SERVER each name of want (name -> response code) with dnspython's dns.query.udp (an
    unconnected socket: sendto, recvfrom) or dns.query.tcp, in a process of its own."""
    py = ("import sys, dns.message, dns.query\n"
          "for n in sys.argv[2:]:\n"
          f"    r = getattr(dns.query, sys.argv[1])(dns.message.make_query(n, 'A'), '{SERVER}', timeout=5)\n"
          "    print(n, r.rcode())\n")
    out = subprocess.run([PY, "-c", py, proto, *want], capture_output=True, text=True, timeout=30)
    assert out.stdout.split("\n")[:-1] == [f"{n} {rc}" for n, rc in want.items()], out


def test_dnspython_unconnected_socket(agent, dnsmasq):
    """dnspython sends with sendto and reads with recvfrom on a socket it never connects."""
    m0 = agent.metrics()
    dnspython("udp", {"a.nodescope.test": 0, "y.nx.nodescope.test": 3})
    wait_delta(agent, m0, {
        key(request_type="TypeA", domain="a.nodescope.test", status="ok"): 1,
        key(request_type="TypeA", domain="y.nx.nodescope.test", status="nxdomain"): 1,
        key(IN_TOTAL, container_id=dnsmasq.container, status="unknown"): 1,
        key(IN_TOTAL, container_id=dnsmasq.container, status="3"): 1,
    })


@not_seen_by_socket_hooks("an unconnected socket's answer comes with no source (the kernel copies it "
                          "out after the hook): it pairs by id alone")
@pytest.mark.parametrize("api", ["sendto", "sendmsg"])
def test_unconnected_same_id_to_two_servers(agent, dnsmasq, silent_server, api):
    """One socket asks a silent server and dnsmasq with the same id, in both orders: dnsmasq's
    answer pairs with the question sent to it (by id and address), never with the other."""
    m0 = agent.metrics()
    client = os.path.join(HERE, "clients", "dns_unconnected.py")
    for qid, asks in ((4242, [f"{SILENT}=a.nodescope.test", f"{SERVER}=x1.nx.nodescope.test"]),
                      (4243, [f"{SERVER}=x2.nx.nodescope.test", f"{SILENT}=a.nodescope.test"])):
        out = subprocess.run([PY, client, api, str(qid), *asks], capture_output=True, text=True, timeout=30)
        assert out.stdout.split("\n") == [f"{SERVER} 3", ""], out
    wait_delta(agent, m0, {
        key(request_type="TypeA", domain="x1.nx.nodescope.test", status="nxdomain"): 1,
        key(request_type="TypeA", domain="x2.nx.nodescope.test", status="nxdomain"): 1,
        key(domain="a.nodescope.test"): 0,
        key(IN_TOTAL, container_id=dnsmasq.container, status="3"): 2,
    })


# Asks SERVER once on an unconnected socket, prints the socket's fd, then exits at a line on stdin
# without closing it: the kernel closes it, and no close(2) tells the agent.
LEAVES_SOCKET_OPEN = (
    "import os, socket, sys\n"
    "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
    "name = b''.join(bytes([len(p)]) + p for p in b'a.nodescope.test'.split(b'.')) + b'\\0'\n"
    "s.sendto(bytes.fromhex('123401000001000000000000') + name + bytes.fromhex('00010001'), "
    f"('{SERVER}', 53))\n"
    "s.recvfrom(512)\n"
    "print(s.fileno(), flush=True)\n"
    "sys.stdin.readline()\n"
    "os._exit(0)\n")


def test_dns_socket_left_open_goes_with_its_process(agent, dnsmasq):
    """An unconnected DNS socket is tracked from its first question; when its process exits
    without closing it, its entry in the agent's socket table goes with the process, not when
    another process gets the same pid."""
    maps = agent_maps(agent, "l7_socks")
    assert len(maps) == 1, maps
    m0 = agent.metrics()
    p = subprocess.Popen([PY, "-c", LEAVES_SOCKET_OPEN], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    try:
        sock = p.pid << 32 | int(p.stdout.readline())
        assert sock in map_keys(maps[0]["id"])
    finally:
        p.stdin.write("\n")
        p.stdin.close()
        p.wait(timeout=10)
    assert sock not in map_keys(maps[0]["id"])
    # its question was seen (and is counted before the next test's first reading)
    wait_delta(agent, m0, {key(request_type="TypeA", domain="a.nodescope.test", status="ok"): 1})


def test_servfail_from_a_broken_upstream(agent, dnsmasq):
    """dnsmasq forwards broken.test to an upstream that fails every question: the client sees
    SERVFAIL, counted as Coroot names it ("servfail"); dnsmasq's side as code 2."""
    m0 = agent.metrics()
    out = subprocess.run([DIG, "+time=3", "+tries=1", f"@{SERVER}", "q.broken.test"],
                         capture_output=True, text=True, timeout=20)
    assert "status: SERVFAIL" in out.stdout, out
    wait_delta(agent, m0, {
        key(request_type="TypeA", domain="q.broken.test", status="servfail"): 1,
        key(IN_TOTAL, container_id=dnsmasq.container, status="2"): 1,
    })


def test_server_started_before_the_agent(agent_factory):
    """A dnsmasq already bound when the agent starts: its socket is found by the start-up scan
    (/proc/net/udp), and the questions it answers from then on are counted."""
    early = "127.0.0.81"
    svc = Dnsmasq(early)
    try:
        a = agent_factory()
        m0 = a.metrics()
        for name, want in (("a.nodescope.test", "10.1.2.3"), ("x.nx.nodescope.test", "")):
            out = subprocess.run([DIG, "+short", "+time=2", "+tries=1", f"@{early}", name],
                                 capture_output=True, text=True, timeout=20)
            assert out.stdout.strip() == want, out
        wait_delta(a, m0, {
            key(IN_TOTAL, container_id=svc.container, status="unknown"): 1,
            key(IN_TOTAL, container_id=svc.container, status="3"): 1,
        })
    finally:
        svc.stop()


def test_tcp(agent, dnsmasq):
    """DNS over TCP (the 2-byte length before each message), in the same families. dnspython
    writes a question with its length in one send; dig +tcp writes the length and the question
    from two buffers in one writev (captured across its iovecs); dnsmasq reads the length a byte
    at a time, then the question, and answers in one write."""
    m0 = agent.metrics()
    dnspython("tcp", {"a.nodescope.test": 0, "z.nx.nodescope.test": 3})
    out = subprocess.run([DIG, "+tcp", "+short", "+time=2", "+tries=1", f"@{SERVER}", "both.nodescope.test"],
                         capture_output=True, text=True, timeout=20)
    assert out.stdout.strip() == "10.1.2.4", out
    wait_delta(agent, m0, {
        key(request_type="TypeA", domain="a.nodescope.test", status="ok"): 1,
        key(request_type="TypeA", domain="z.nx.nodescope.test", status="nxdomain"): 1,
        key(request_type="TypeA", domain="both.nodescope.test", status="ok"): 1,
        key(IN_TOTAL, container_id=dnsmasq.container, status="unknown"): 2,
        key(IN_TOTAL, container_id=dnsmasq.container, status="3"): 1,
        key(IN_HIST + "_count", container_id=dnsmasq.container): 3,
    })
