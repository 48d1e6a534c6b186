"""NATS against a real nats-server (srv_nats.py): messages published (produce) and delivered
(consume) are counted in Coroot's container_nats_messages_total{method}, with no histogram and no
inbound family. The client is written here over a socket (Debian has no NATS client library)."""
import socket

import pytest

from l7db import msum, wait_value
from srv_nats import Nats

TOTAL = "container_nats_messages_total"


@pytest.fixture
def nats():
    n = Nats()
    yield n
    n.stop()


def read_until(sock, buf, marker, n=1):
    while buf.count(marker) < n:
        d = sock.recv(65536)
        assert d, "nats-server closed the connection"
        buf += d
    return buf


def test_publish_and_deliver(agent_factory, nats):
    agent = agent_factory()
    m0 = agent.metrics()
    s = socket.create_connection(("127.0.0.1", nats.port))
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

    def counts():
        m = agent.metrics()
        return {k: msum(m, TOTAL, destination=nats.addr, method=k, status="ok") -
                msum(m0, TOTAL, destination=nats.addr, method=k, status="ok") for k in ("produce", "consume")}
    assert wait_value(counts, {"produce": n, "consume": n}) == {"produce": n, "consume": n}
    assert not any(name.startswith(("container_nats_inbound", "container_nats_messages_duration"))
                   for name in agent.metrics())
