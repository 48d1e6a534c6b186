"""gRPC on Debian's python3-grpcio, server and client (srv_grpc.py): unary calls ending OK and with
chosen error statuses, server-streaming, client-streaming and bidirectional calls, over h2c and
inside TLS (grpcio's TLS is the system libssl on memory BIOs). Every call is one request under
HTTP's families with Coroot's gRPC status label (grpc:OK, grpc:NOT_FOUND, ...), on both sides,
counted exactly as the client counted its calls.

gRPC's core writes with sendmsg, every HPACK name and value its own iovec (28 for a channel's
first request), all captured (up to 32 iovecs and the capture size). Inside TLS each SSL_write is
one such piece."""
import pytest

from l7db import msum, wait_value
from srv_grpc import GrpcServer

OUT = "container_http_requests_total"
IN = "container_http_inbound_requests_total"
CALLS = ("unary:OK:20", "unary:NOT_FOUND:3", "unary:INTERNAL:2", "unary:PERMISSION_DENIED:1",
         "server_stream:4", "client_stream:3", "bidi:2")
STATUSES = ("grpc:OK", "grpc:NOT_FOUND", "grpc:INTERNAL", "grpc:PERMISSION_DENIED")


def counts(agent, server):
    """{(side, status): requests so far} for the server's address and container, and each side's
    total over every status (a call counted under a wrong label shows there)."""
    m = agent.metrics()
    out = {("out", s): msum(m, OUT, destination=server.addr, status=s) for s in STATUSES}
    ins = {("in", s): msum(m, IN, container_id=server.container, status=s) for s in STATUSES}
    tot = {("out", "all"): msum(m, OUT, destination=server.addr),
           ("in", "all"): msum(m, IN, container_id=server.container)}
    return {**out, **ins, **tot}


def expected(seen):
    """What the agent must have counted, from the client's own report."""
    want = {}
    for side in ("out", "in"):
        for s in STATUSES:
            want[(side, s)] = seen.get(s, 0)
        want[(side, "all")] = sum(seen.values())
    return want


def run_and_check(agent, server):
    c0 = counts(agent, server)
    seen = server.call(*CALLS)
    assert seen == {"grpc:OK": 29, "grpc:NOT_FOUND": 3, "grpc:INTERNAL": 2, "grpc:PERMISSION_DENIED": 1}, seen
    want = expected(seen)
    delta = lambda: {k: v - c0[k] for k, v in counts(agent, server).items()}
    assert wait_value(delta, want) == want
    m = agent.metrics()
    for field in ("unpaired", "unparseable", "lost", "truncated"):
        assert msum(m, f"nodescope_l7_{field}_total", proto="http2") == 0, field
    return agent.snapshot()


@pytest.fixture
def grpc_h2c():
    s = GrpcServer()
    yield s
    s.stop()


@pytest.fixture
def grpc_tls():
    s = GrpcServer(tls=True)
    yield s
    s.stop()


def test_grpc_h2c_unary_errors_and_streams(agent_factory, grpc_h2c):
    agent = agent_factory()
    evs = run_and_check(agent, grpc_h2c)
    outs = [e for e in evs if e.get("proto") == "http2" and e.get("dir") == "out" and e.get("dst") == grpc_h2c.addr]
    assert {(e["op"], e["statement"]) for e in outs} == {
        ("POST", "POST /nodescope.Echo/" + m) for m in ("Unary", "ServerStream", "ClientStream", "Bidi")}
    assert sorted({e["status"] for e in outs}) == sorted(STATUSES)
    assert not any(e["tls"] for e in outs)


def test_grpc_inside_tls(agent_factory, grpc_tls):
    agent = agent_factory()
    evs = run_and_check(agent, grpc_tls)
    outs = [e for e in evs if e.get("proto") == "http2" and e.get("dst") == grpc_tls.addr]
    assert outs and all(e["tls"] for e in outs)
