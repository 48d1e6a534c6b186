"""TCP connection tracing against real sockets on loopback: exact counts, bytes, IPv6, start-up discovery."""
import ipaddress
import json
import os
import random
import select
import socket
import struct
import subprocess
import sys
import threading
import time

import pytest

from bpfmaps import agent_maps, map_keys
from conftest import SOCKET_HOOKS, Agent, cgroup2_root, loopback_dnat


@pytest.fixture(scope="module")
def tcp_tracer():
    a = Agent("--events", "tcp")
    yield a
    a.stop()


class Server:
    """Accepts connections; for each, reads until EOF then sends `reply` bytes and closes."""

    def __init__(self, family=socket.AF_INET, host="127.0.0.1", reply=0, port=0):
        self.sock = socket.socket(family)
        self.sock.bind((host, port))
        self.sock.listen(512)
        self.port = self.sock.getsockname()[1]
        self.reply = reply
        self.received = []
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            n = 0
            while True:
                d = c.recv(1 << 16)
                if not d:
                    break
                n += len(d)
            self.received.append(n)
            if self.reply:
                c.sendall(b"r" * self.reply)
            c.close()

    def close(self):
        self.sock.close()


def events_to(agent, type_, port):
    return [e for e in agent.snapshot() if e["type"] == type_ and e.get("dst", "").endswith(f":{port}")]


def transfer(family, addr, port, nbytes):
    c = socket.socket(family)
    c.connect((addr, port))
    c.sendall(b"s" * nbytes)
    c.shutdown(socket.SHUT_WR)
    got = 0
    while True:
        d = c.recv(1 << 16)
        if not d:
            break
        got += len(d)
    local = c.getsockname()
    fd = c.fileno()
    c.close()
    return got, local, fd


def test_exact_connect_and_accept_counts(tcp_tracer):
    srv = Server()
    n = 200
    try:
        for _ in range(n):
            transfer(socket.AF_INET, "127.0.0.1", srv.port, 10)
        dst = f"127.0.0.1:{srv.port}"
        tcp_tracer.wait_for(lambda evs: len([e for e in evs if e["type"] == "close" and e["dst"] == dst
                                             and e["dir"] == "out"]) == n, what=f"{n} closes")
        time.sleep(0.1)
        connects = events_to(tcp_tracer, "connect", srv.port)
        accepts = events_to(tcp_tracer, "accept", srv.port)
        assert len(connects) == n and len(accepts) == n
        assert {e["pid"] for e in connects + accepts} == {os.getpid()}
        assert all(e["dir"] == "out" and e["duration_ns"] > 0 for e in connects)
        assert all(e["dir"] == "in" for e in accepts)
        assert len({e["src"] for e in connects}) == n  # every connect its own source port
        assert tcp_tracer.metric_sum("container_net_tcp_successful_connects_total", destination=dst) == n
        assert tcp_tracer.metric_sum("container_net_tcp_active_connections", destination=dst) == 0
        assert tcp_tracer.metric_sum("container_net_tcp_connection_time_seconds_total", destination=dst) > 0
        assert tcp_tracer.metric_sum("container_net_tcp_bytes_sent_total", destination=dst) == 10 * n
    finally:
        srv.close()


def test_exact_refused_count(tcp_tracer):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    n = 100
    for _ in range(n):
        c = socket.socket()
        with pytest.raises(ConnectionRefusedError):
            c.connect(("127.0.0.1", port))
        c.close()
    dst = f"127.0.0.1:{port}"
    tcp_tracer.wait_for(lambda evs: len([e for e in evs if e["type"] == "connect_error" and e["dst"] == dst]) == n,
                        what=f"{n} refused connects")
    errs = events_to(tcp_tracer, "connect_error", port)
    assert len(errs) == n
    assert all(e["error"] == "refused" and e["errno"] == 111 and e["pid"] == os.getpid() for e in errs)
    assert tcp_tracer.metric_sum("container_net_tcp_failed_connects_total", destination=dst) == n
    assert not events_to(tcp_tracer, "connect", port)


@pytest.mark.parametrize("family,host", [(socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")])
def test_bytes_match_to_the_byte(tcp_tracer, family, host):
    srv = Server(family, host, reply=77777)
    try:
        sent = 1000003
        got, local, fd = transfer(family, host, srv.port, sent)
        assert got == 77777
        dst = f"[{host}]:{srv.port}" if family == socket.AF_INET6 else f"{host}:{srv.port}"
        src = f"[{local[0]}]:{local[1]}" if family == socket.AF_INET6 else f"{local[0]}:{local[1]}"
        out = tcp_tracer.wait_for(lambda evs: next((e for e in evs if e["type"] == "close" and e["dst"] == dst
                                                    and e["dir"] == "out"), None), what="client close")
        inn = tcp_tracer.wait_for(lambda evs: next((e for e in evs if e["type"] == "close" and e["dst"] == dst
                                                    and e["dir"] == "in"), None), what="server close")
        assert out["src"] == src and out["fd"] == fd and out["pid"] == os.getpid()
        assert (out["bytes_sent"], out["bytes_received"]) == (sent, 77777)
        assert (inn["bytes_sent"], inn["bytes_received"]) == (77777, sent)
        assert inn["src"] == src
        assert out["duration_ns"] > 0
        assert tcp_tracer.metric_sum("container_net_tcp_bytes_sent_total", destination=dst) == sent
        assert tcp_tracer.metric_sum("container_net_tcp_bytes_received_total", destination=dst) == 77777
    finally:
        srv.close()


def test_v4_mapped_address_prints_as_ipv4(tcp_tracer):
    srv = Server(socket.AF_INET6, "::", reply=0)
    try:
        c = socket.socket(socket.AF_INET6)
        c.connect(("::ffff:127.0.0.1", srv.port))
        c.close()
        ev = tcp_tracer.wait_for(lambda evs: next(iter(events_to(tcp_tracer, "connect", srv.port)), None))
        assert ev["dst"] == f"127.0.0.1:{srv.port}"
        assert ev["src"].startswith("127.0.0.1:")
    finally:
        srv.close()


def test_listen_and_listen_close(tcp_tracer):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    addr = f"127.0.0.1:{s.getsockname()[1]}"
    ev = tcp_tracer.wait_for(lambda evs: next((e for e in evs if e["type"] == "listen" and e["addr"] == addr), None))
    assert ev["pid"] == os.getpid() and ev["fd"] == s.fileno()
    assert tcp_tracer.metric_sum("container_net_tcp_listen_info", listen_addr=addr) == 1
    # proxy="" as Coroot's agent has it but for docker's port bindings: the server takes any value as proxied.
    assert tcp_tracer.metric_sum("container_net_tcp_listen_info", listen_addr=addr, proxy="") == 1
    s.close()
    tcp_tracer.wait_for(lambda evs: next((e for e in evs if e["type"] == "listen_close" and e["addr"] == addr), None))
    assert tcp_tracer.metric_sum("container_net_tcp_listen_info", listen_addr=addr) == 0


def test_reused_fd_is_two_connections(tcp_tracer):
    srv = Server(reply=0)
    try:
        fixed_fd = 555  # both connections on the same fd number
        for n in (111, 222):
            s = socket.socket()
            os.dup2(s.fileno(), fixed_fd)
            s.close()
            c = socket.socket(fileno=fixed_fd)
            c.connect(("127.0.0.1", srv.port))
            c.sendall(b"s" * n)
            c.shutdown(socket.SHUT_WR)
            while c.recv(65536):
                pass
            c.close()
        dst = f"127.0.0.1:{srv.port}"
        tcp_tracer.wait_for(lambda evs: len([e for e in evs if e["type"] == "close" and e["dst"] == dst
                                             and e["dir"] == "out"]) == 2)
        closes = [e for e in events_to(tcp_tracer, "close", srv.port) if e["dir"] == "out"]
        assert sorted(e["bytes_sent"] for e in closes) == [111, 222]
        assert {e["fd"] for e in closes} == {fixed_fd}
        assert len({e["src"] for e in closes}) == 2
        assert tcp_tracer.metric_sum("container_net_tcp_active_connections", destination=dst) == 0
    finally:
        srv.close()


HOLDER = r"""
import socket, sys, time
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen()
c = socket.create_connection(srv.getsockname())
a, _ = srv.accept()
print(srv.getsockname()[1], c.getsockname()[1], flush=True)
sys.stdin.readline()            # hold everything open until told
c.sendall(b"x" * 5000); c.shutdown(socket.SHUT_WR)
while a.recv(65536): pass
a.close(); c.close(); srv.close()
print("done", flush=True)
"""


def test_connections_open_before_start_are_active(agent_factory):
    holder = subprocess.Popen([sys.executable, "-c", HOLDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        port, cport = map(int, holder.stdout.readline().split())
        agent = agent_factory("--events", "tcp")
        dst = f"127.0.0.1:{port}"
        assert agent.metric_sum("container_net_tcp_active_connections", destination=dst) == 1
        assert agent.metric_sum("container_net_tcp_listen_info", listen_addr=dst) == 1
        holder.stdin.write("go\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "done"
        ev = agent.wait_for(lambda evs: next((e for e in evs if e["type"] == "close" and e["dst"] == dst
                                              and e["dir"] == "out"), None), what="close of the old connection")
        assert ev["pid"] == holder.pid and ev["src"] == f"127.0.0.1:{cport}"
        # Sent before the agent's counters existed is still the kernel's count: all 5000 bytes.
        assert ev["bytes_sent"] == 5000
        assert agent.metric_sum("container_net_tcp_active_connections", destination=dst) == 0
        assert agent.metric_sum("container_net_tcp_bytes_sent_total", destination=dst) == 5000
        agent.wait_for(lambda evs: any(e["type"] == "listen_close" and e["addr"] == dst for e in evs))
        assert agent.metric_sum("container_net_tcp_listen_info", listen_addr=dst) == 0
    finally:
        holder.kill()
        holder.wait()


def test_second_listen_call_keeps_one_listener(tcp_tracer):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(5)
    s.listen(50)  # changes the backlog only
    addr = f"127.0.0.1:{s.getsockname()[1]}"
    # A line per listen(2) call from the syscall hooks; the socket hooks' callback comes once.
    lines = 1 if SOCKET_HOOKS else 2
    tcp_tracer.wait_for(lambda evs: len([e for e in evs if e["type"] == "listen" and e["addr"] == addr]) == lines)
    assert tcp_tracer.metric_sum("container_net_tcp_listen_info", listen_addr=addr) == 1
    s.close()
    tcp_tracer.wait_for(lambda evs: any(e["type"] == "listen_close" and e["addr"] == addr for e in evs))
    assert tcp_tracer.metric_sum("container_net_tcp_listen_info", listen_addr=addr) == 0


@pytest.fixture
def dnat():
    """Connections to 127.0.0.1:<front> are rewritten to a server's port."""
    back = Server(reply=5)
    with loopback_dnat(back.port) as front:
        yield front, back
    back.close()


def test_nat_gives_the_actual_destination(tcp_tracer, dnat):
    front, back = dnat
    for _ in range(3):
        got, _, _ = transfer(socket.AF_INET, "127.0.0.1", front, 10)
        assert got == 5
    dst, actual = f"127.0.0.1:{front}", f"127.0.0.1:{back.port}"
    tcp_tracer.wait_for(lambda evs: len([e for e in evs if e["type"] == "close" and e["dst"] == dst
                                         and e["dir"] == "out"]) == 3, what="3 closes")
    assert tcp_tracer.metric_sum("container_net_tcp_successful_connects_total", destination=dst,
                                 actual_destination=actual) == 3
    assert tcp_tracer.metric_sum("container_net_tcp_bytes_sent_total", destination=dst,
                                 actual_destination=actual) == 30
    # Without NAT, actual_destination is the destination itself.
    srv = Server()
    try:
        transfer(socket.AF_INET, "127.0.0.1", srv.port, 1)
        plain = f"127.0.0.1:{srv.port}"
        tcp_tracer.wait_for(lambda evs: any(e["type"] == "close" and e["dst"] == plain for e in evs))
        assert tcp_tracer.metric_sum("container_net_tcp_successful_connects_total", destination=plain,
                                     actual_destination=plain) == 1
    finally:
        srv.close()


def test_bpf_tracking_drops_are_exported(tcp_tracer):
    m = tcp_tracer.metrics()["nodescope_bpf_tracking_dropped_total"]
    reasons = {dict(k)["reason"] for k in m}
    assert reasons == {"socket_table_full", "pending_table_full", "l7_socket_table_full",
                       "l7_calls_table_full", "tls_calls_table_full", "tls_socket_unknown",
                       "files_seen_table_full", "hold_table_full", "l7_records_busy"}
    # Every table has room; plaintext of a TLS session opened before the agent may lack its socket.
    assert all(v == 0 for k, v in m.items() if dict(k)["reason"] != "tls_socket_unknown")


def _recv_exactly(sock, n):
    buf = b""
    while len(buf) < n:
        d = sock.recv(n - len(buf))
        assert d, "connection closed early"
        buf += d
    return buf


def _wait_reset(sock):
    """Until the peer's reset has closed sock (POLLHUP), its unread bytes still queued."""
    p = select.poll()
    p.register(sock, select.POLLHUP)
    for _ in range(200):
        if any(ev & select.POLLHUP for _, ev in p.poll(50)):
            return
    pytest.fail("no reset arrived")


def test_response_read_after_a_reset_is_captured(tcp_tracer):
    """A response, then a reset: the client reads the response after its connection closed. Its
    socket's entry stays while bytes wait in the receive queue, so that read is captured and pairs
    with its request; read before the reset, it is captured as ever."""
    response = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    dst = f"127.0.0.1:{srv.getsockname()[1]}"

    def exchange(read_before_reset):
        c = socket.create_connection(srv.getsockname())
        s, _ = srv.accept()
        c.sendall(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        assert s.recv(100).startswith(b"GET /")
        s.sendall(response)
        if read_before_reset:
            assert _recv_exactly(c, len(response)) == response
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()  # a reset, not a FIN
        _wait_reset(c)
        if not read_before_reset:
            assert _recv_exactly(c, len(response)) == response  # queued before the reset
        c.close()

    def answered(n):
        got = 0
        for _ in range(200):
            got = tcp_tracer.metric_sum("container_http_requests_total", destination=dst, status="2xx")
            if got >= n:
                break
            time.sleep(0.05)
        return got

    try:
        exchange(read_before_reset=True)
        assert answered(1) == 1
        exchange(read_before_reset=False)
        assert answered(2) == 2
    finally:
        srv.close()


# Connects from fd 200 (past the lowest fds an exit's loop looks at), sends a request, and exits
# without reading the answer or closing: the kernel closes the fd, bytes unread, with a reset.
EXITS_WITH_BYTES_UNREAD = """
import os, socket, sys
s = socket.socket()
os.dup2(s.fileno(), 200)
s.close()
c = socket.socket(fileno=200)
c.connect(("127.0.0.1", int(sys.argv[1])))
c.sendall(b"GET / HTTP/1.1\\r\\nHost: t\\r\\n\\r\\n")
print(c.fileno(), flush=True)
sys.stdin.readline()
os._exit(0)
"""


def test_exit_with_bytes_unread_takes_the_entry(tcp_tracer):
    """A connection closed with bytes queued keeps its socket's entry for the reads to come, unless
    the close is its owner's exit: then nobody reads, and the entry goes with the process."""
    maps = agent_maps(tcp_tracer, "l7_socks")
    assert len(maps) == 1, maps
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    p = subprocess.Popen([sys.executable, "-c", EXITS_WITH_BYTES_UNREAD, str(srv.getsockname()[1])],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    key = p.pid << 32 | 200
    try:
        assert int(p.stdout.readline()) == 200
        s, _ = srv.accept()
        assert s.recv(100).startswith(b"GET /")
        s.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")  # queued, never read
        assert key in map_keys(maps[0]["id"])
    finally:
        p.stdin.write("\n")
        p.stdin.close()
        p.wait(timeout=10)
    try:
        assert key not in map_keys(maps[0]["id"])
    finally:
        s.close()
        srv.close()


def test_destination_cap_per_container(agent_factory):
    agent = agent_factory("--events", "tcp", "--max-destinations", "2")
    servers = [Server() for _ in range(3)]
    try:
        for srv in servers:
            transfer(socket.AF_INET, "127.0.0.1", srv.port, 1)
        dsts = [f"127.0.0.1:{s.port}" for s in servers]
        agent.wait_for(lambda evs: len({e["dst"] for e in evs if e["type"] == "close"
                                        and e["dir"] == "out" and e["dst"] in dsts}) == 3,
                       what="3 closes")
        counted = [d for d in dsts
                   if agent.metric_sum("container_net_tcp_successful_connects_total", destination=d)]
        assert counted == dsts[:2]  # the first two destinations of this container
        assert agent.metric("nodescope_tcp_destinations_dropped_total") >= 1
    finally:
        for srv in servers:
            srv.close()


def service_server_port():
    """A free port below the default ephemeral range (a service's, not one the kernel hands out)."""
    for _ in range(100):
        port = random.randrange(20000, 32000)
        with socket.socket() as s:
            try:
                s.bind(("0.0.0.0", port))
            except OSError:
                continue
        return port
    raise AssertionError("no free port in 20000-32000")


def service_server():
    """A Server on such a port."""
    return Server(port=service_server_port())


def closed(agent, dst):
    agent.wait_for(lambda evs: [e for e in evs if e["type"] == "close" and e.get("dir") == "out"
                                and e.get("dst") == dst], what=f"the close to {dst}")


def transfer_in_cgroup(rel, port):
    """One connect to 127.0.0.1:port from a process of its own in the v2 cgroup rel (made here),
    so that no other process's destination counts in that container."""
    path = cgroup2_root() + rel
    os.makedirs(path, exist_ok=True)
    client = ("import socket; c = socket.create_connection(('127.0.0.1', %d)); c.sendall(b'x'); "
              "c.shutdown(socket.SHUT_WR); c.recv(1); c.close()" % port)
    p = subprocess.run(["/bin/sh", "-c", f"echo $$ > {path}/cgroup.procs; exec {sys.executable} -c \"{client}\""],
                       timeout=30)
    assert p.returncode == 0


def test_idle_destinations_expire_and_free_their_place(agent_factory):
    """As Coroot: a destination idle for the idle time (10 min; 2 s here) loses its series at a
    scrape, and its place under --max-destinations goes to the next one. The connects come from
    a cgroup of the test's own; the default ephemeral range keeps the scrapes out."""
    a = agent_factory("--events", "tcp", "--max-destinations", "1", "--debug-series-idle", "2s",
                      ephemeral_ports=None)
    first, second = service_server(), service_server()
    d1, d2 = f"127.0.0.1:{first.port}", f"127.0.0.1:{second.port}"
    rel = f"/system.slice/nodescope-e2e-dests{os.getpid()}.service"
    name = "container_net_tcp_successful_connects_total"
    try:
        transfer_in_cgroup(rel, first.port)
        closed(a, d1)
        assert a.has_series(name, container_id=rel, destination=d1)
        transfer_in_cgroup(rel, second.port)
        closed(a, d2)
        assert not a.has_series(name, container_id=rel, destination=d2)  # over the cap
        dropped = a.metric("nodescope_tcp_destinations_dropped_total")
        assert dropped >= 1
        time.sleep(2.2)
        assert not a.has_series(name, destination=d1)  # idle 2.2 s since the first scrape saw it
        a.metrics()  # recounted: the container has no destination with series now
        transfer_in_cgroup(rel, second.port)
        a.wait_for(lambda evs: len([e for e in evs if e["type"] == "close" and e.get("dir") == "out"
                                    and e.get("dst") == d2]) == 2, what="the second close to d2")
        assert a.metric_sum(name, container_id=rel, destination=d2) == 1
    finally:
        first.close()
        second.close()
        try:
            os.rmdir(cgroup2_root() + rel)
        except OSError:
            pass


def namespace_addresses(family):
    """What the root network namespace has, read with ip(8): the addresses of interfaces not down,
    without link-local and multicast ones, as "ip:port" templates."""
    links = json.loads(subprocess.run(["ip", "-j", "addr", "show"], capture_output=True, text=True,
                                      check=True).stdout)
    out = set()
    for link in links:
        if link.get("operstate") == "DOWN":
            continue
        for a in link.get("addr_info", []):
            ip = ipaddress.ip_address(a["local"])
            if ip.is_link_local or ip.is_multicast or (family == socket.AF_INET and ip.version != 4):
                continue
            out.add(f"[{ip}]:{{}}" if ip.version == 6 else f"{ip}:{{}}")
    return out


def test_wildcard_listen_shows_the_namespace_addresses(tcp_tracer):
    """As Coroot: a listen on 0.0.0.0 is one listen_addr per address of its network namespace
    (here the agent's own, so loopback is one), not 0.0.0.0."""
    p = service_server_port()
    srv = socket.socket()
    try:
        srv.bind(("0.0.0.0", p))
        srv.listen()
        tcp_tracer.wait_for(lambda evs: [e for e in evs if e["type"] == "listen"
                                         and e.get("addr") == f"0.0.0.0:{p}"], what="the listen")
        want = {t.format(p) for t in namespace_addresses(socket.AF_INET)}
        assert f"127.0.0.1:{p}" in want
        got = {dict(k)["listen_addr"] for k, v in
               tcp_tracer.metrics().get("container_net_tcp_listen_info", {}).items()
               if v and dict(k)["listen_addr"].endswith(f":{p}")}
        assert got == want
        assert not tcp_tracer.has_series("container_net_tcp_listen_info", listen_addr=f"0.0.0.0:{p}")
    finally:
        srv.close()
    tcp_tracer.wait_for(lambda evs: [e for e in evs if e["type"] == "listen_close"
                                     and e.get("addr") == f"0.0.0.0:{p}"], what="the close")
    for addr in want:  # every expanded address goes with the listener
        assert not tcp_tracer.has_series("container_net_tcp_listen_info", listen_addr=addr)


def test_open_connection_keeps_its_destination(agent_factory):
    """A destination with a connection open keeps its counters however long they stay still
    (Coroot keeps the destination); once closed, they expire."""
    a = agent_factory("--events", "tcp", "--debug-series-idle", "2s", ephemeral_ports=None)
    srv = service_server()
    dst = f"127.0.0.1:{srv.port}"
    name = "container_net_tcp_successful_connects_total"
    try:
        c = socket.create_connection(("127.0.0.1", srv.port))
        a.wait_for(lambda evs: [e for e in evs if e["type"] == "connect" and e.get("dst") == dst],
                   what="the connect")
        assert a.metric_sum(name, destination=dst) == 1
        time.sleep(2.2)
        a.metrics()
        time.sleep(2.2)
        assert a.metric_sum(name, destination=dst) == 1
        assert a.metric_sum("container_net_tcp_active_connections", destination=dst) == 1
        c.close()
        closed(a, dst)
        a.metrics()
        time.sleep(2.2)
        assert not a.has_series(name, destination=dst)
        assert not a.has_series("container_net_tcp_active_connections", destination=dst)
    finally:
        srv.close()


def test_ephemeral_ports_left_out_of_the_metrics(agent_factory):
    """Coroot's --ephemeral-port-range (default 32768-60999): a listen or a destination on a port
    the kernel handed out is no service; traced, but not a series."""
    a = agent_factory("--events", "tcp", "--ephemeral-port-range", "32768-60999")
    fixed = socket.socket()
    for port in range(23456, 23556):  # below the range
        try:
            fixed.bind(("127.0.0.1", port))
            break
        except OSError:
            continue
    fixed.listen()
    handed = socket.socket()
    handed.bind(("127.0.0.1", 0))
    handed.listen()
    eph = handed.getsockname()[1]
    assert 32768 <= eph <= 60999, eph  # this machine's ip_local_port_range
    addrs = {f"127.0.0.1:{fixed.getsockname()[1]}": 1, f"127.0.0.1:{eph}": 0}
    for addr in addrs:
        c = socket.create_connection(tuple([addr.split(":")[0], int(addr.split(":")[1])]))
        c.close()
    a.wait_for(lambda evs: len([e for e in evs if e["type"] == "connect" and e["dst"] in addrs]) == 2,
               what="both connects")
    for addr, want in addrs.items():
        assert a.metric_sum("container_net_tcp_listen_info", listen_addr=addr) == want, addr
        assert a.metric_sum("container_net_tcp_successful_connects_total", destination=addr) == want, addr
    fixed.close()
    handed.close()


def test_bytes_exact_whichever_side_closes_first(tcp_tracer):
    """A FIN takes a sequence number: counted out of the bytes only when one was received
    (close() marks the socket shut for reading without any FIN)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    size = 5_000_000
    results = {}
    # Only closes from here on: a source port is reused (a /metrics scrape's, say, earlier on).
    first_event = len(tcp_tracer.snapshot())

    def serve(first):
        c, _ = srv.accept()
        c.sendall(b"x" * size)
        if first == "server":
            c.close()
        else:
            c.recv(1)  # the client's FIN: it closed first, and its socket is gone by
            time.sleep(0.5)  # the time this FIN reaches it (closed in FIN_WAIT2)
            c.close()

    for first in ("client", "server"):
        t = threading.Thread(target=serve, args=(first,))
        t.start()
        c = socket.create_connection(srv.getsockname())
        got = 0
        while got < size:
            d = c.recv(1 << 20)
            assert d
            got += len(d)
        if first == "server":
            assert c.recv(1) == b""  # its FIN
        src = "127.0.0.1:%d" % c.getsockname()[1]
        c.close()
        t.join(10)
        results[first] = src
    srv.close()
    for first, src in results.items():
        ev = tcp_tracer.wait_for(lambda evs: next((e for e in evs[first_event:] if e["type"] == "close"
                                                   and e["src"] == src and e["dir"] == "out"), None),
                                 what=f"close of {src}")
        assert ev["bytes_received"] == size, (first, ev)
def test_bytes_of_open_connections_at_each_scrape(tcp_tracer):
    """A connection that stays open shows its bytes at every scrape (read then, nothing at rest),
    and its close adds only the rest: totals exact to the byte."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    c = socket.create_connection(srv.getsockname())
    s, _ = srv.accept()
    dst = "127.0.0.1:%d" % srv.getsockname()[1]

    def exchange(out, back):
        c.sendall(b"o" * out)
        got = 0
        while got < out:
            got += len(s.recv(1 << 20))
        s.sendall(b"b" * back)
        got = 0
        while got < back:
            got += len(c.recv(1 << 20))

    def totals():
        return (tcp_tracer.metric_sum("container_net_tcp_bytes_sent_total", destination=dst),
                tcp_tracer.metric_sum("container_net_tcp_bytes_received_total", destination=dst))

    tcp_tracer.wait_for(lambda evs: any(e["type"] == "connect" and e["dst"] == dst for e in evs),
                        what="the connect")
    exchange(12345, 54321)
    assert totals() == (12345, 54321)  # open: read at this scrape
    exchange(1000, 2000)
    assert totals() == (13345, 56321)
    c.close()
    s.close()
    srv.close()
    tcp_tracer.wait_for(lambda evs: any(e["type"] == "close" and e["dst"] == dst and e["dir"] == "out"
                                        for e in evs), what="the close")
    assert totals() == (13345, 56321)  # the close adds nothing twice
