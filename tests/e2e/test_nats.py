"""NATS against a real nats-server: messages published (produce) and delivered (consume) are counted
in Coroot's container_nats_messages_total{method}, with no histogram and no inbound family. The
client is written here over a socket (Debian has no NATS client library)."""
import shutil
import socket
import subprocess
import time

import pytest

from conftest import free_port

NATS = shutil.which("nats-server") or "/usr/sbin/nats-server"
TOTAL = "container_nats_messages_total"


def msum(metrics, name, **labels):
    want = set(labels.items())
    return sum(v for k, v in metrics.get(name, {}).items() if want <= set(k))


@pytest.fixture
def nats():
    port = free_port()
    p = subprocess.Popen([NATS, "-a", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 15
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if p.poll() is not None or time.monotonic() > deadline:
                pytest.fail("nats-server did not start (apt-get install nats-server)")
            time.sleep(0.05)
    yield f"127.0.0.1:{port}", port
    p.terminate()
    p.wait(10)


def read_until(sock, buf, marker, n=1):
    while buf.count(marker) < n:
        d = sock.recv(65536)
        assert d, "nats-server closed the connection"
        buf += d
    return buf


def test_publish_and_deliver(agent_factory, nats):
    addr, port = nats
    agent = agent_factory()
    m0 = agent.metrics()
    s = socket.create_connection(("127.0.0.1", port))
    read_until(s, b"", b"\r\n")  # INFO
    s.sendall(b'CONNECT {"verbose":false,"pedantic":false}\r\nSUB orders 1\r\nPING\r\n')
    read_until(s, b"", b"PONG\r\n")
    n = 25
    for i in range(n):
        s.sendall(b"PUB orders 5\r\nhello\r\n")
    s.sendall(b"PING\r\n")
    got = read_until(s, b"", b"\r\nhello\r\n", n)
    read_until(s, got, b"PONG\r\n")
    s.close()
    want = {"produce": n, "consume": n}
    deadline = time.monotonic() + 15
    while True:
        m = agent.metrics()
        got = {k: msum(m, TOTAL, destination=addr, method=k, status="ok") -
               msum(m0, TOTAL, destination=addr, method=k, status="ok") for k in want}
        if got == want or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert got == want
    assert not any(name.startswith("container_nats_inbound") or name.startswith("container_nats_messages_duration")
                   for name in m)
