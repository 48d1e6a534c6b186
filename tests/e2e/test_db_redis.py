"""Redis tracing (l7) against a private redis-server (Debian's) on loopback: counts against the
server's INFO commandstats (read over its unix socket, which the agent does not see),
redis-benchmark with pipelining, a python3-redis pipeline of N commands each paired, errors with
their code (WRONGTYPE), MULTI/EXEC, pub/sub pushes that answer no request, and TLS (Debian's build
links OpenSSL; python3's ssl module and the server use it), and the latencies of one pipeline's
commands against the client's own timestamps."""
import socket
import time

import pytest
import redis

from l7db import (Counts, assert_histograms_hold, assert_pipelined_latencies, client_cgroup, queries,  # noqa: F401
                  send_and_time, settle, tracer_l7, wait_delta)
from service import need
from srv_redis import Redis

P = "redis"


@pytest.fixture(scope="module")
def srv(tracer_l7):
    s = Redis()
    yield s
    s.stop()


def total_calls(stats):
    return sum(stats.values())


def test_redis_benchmark_pipelined_counts_match_commandstats(tracer_l7, srv, client_cgroup):
    before = Counts(tracer_l7, P, srv)
    s0 = srv.commandstats()
    cg = client_cgroup("redis-benchmark")
    cg.run([need("redis-benchmark", "redis-tools"), "-h", "127.0.0.1", "-p", str(srv.port), "-n", "2000",
            "-c", "2", "-P", "16", "-t", "set,get,lpush", "-q"])
    s1 = srv.commandstats()
    calls = total_calls(s1) - total_calls(s0) - 1  # less the second INFO itself
    assert calls >= 6000
    got = wait_delta(tracer_l7, P, srv, before, lambda c: c.out(container_id=cg.container, status="ok"), calls)
    assert got == calls, f"client side: {got} commands ok, commandstats: {calls}"
    got = wait_delta(tracer_l7, P, srv, before, lambda c: c.inb(status="ok"), calls)
    assert got == calls, f"server side: {got} commands ok, commandstats: {calls}"
    now = Counts(tracer_l7, P, srv)
    assert now.out_hist_count(container_id=cg.container) - before.out_hist_count(container_id=cg.container) == calls
    assert now.in_hist_count() - before.in_hist_count() == calls
    for f in ("unparseable", "lost", "table_full", "unpaired"):
        assert now.drop(f) == before.drop(f), f


def test_python_pipeline_each_command_paired(tracer_l7, srv):
    n = 100  # one write of about 3.4 KiB: within the agent's 4 KiB capture of a write
    c = srv.client()
    p = c.pipeline(transaction=False)
    for i in range(n):
        p.set(f"e2e:p:{i}", i)
    assert p.execute() == [True] * n
    c.close()
    evs = settle(tracer_l7, lambda evs: len([e for e in queries(evs, P, False) if "e2e:p:" in
                                             (e.get("statement") or "")]) >= n, f"{n} pipelined SETs")
    for side in (False, True):
        mine = [e for e in queries(evs, P, side) if "e2e:p:" in (e.get("statement") or "")]
        assert len(mine) == n, (side, len(mine))
        assert all(e["op"].upper() == "SET" and e["status"] == "ok" and e["duration_ns"] > 0 for e in mine)


def test_wrongtype_error_has_its_code(tracer_l7, srv):
    before = Counts(tracer_l7, P, srv)
    c = srv.client()
    c.set("e2e:str", "v")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        c.lpush("e2e:str", "x")
    c.close()
    evs = settle(tracer_l7, lambda evs: len(queries(evs, P, status="failed")) >= 2, "the failed LPUSH")
    for side in (False, True):
        failed = [e for e in queries(evs, P, side, status="failed") if e["op"].upper() == "LPUSH"]
        assert len(failed) == 1 and failed[0].get("error_code") == "WRONGTYPE", failed
    assert wait_delta(tracer_l7, P, srv, before, lambda c: c.out(status="failed"), 1) == 1
    assert wait_delta(tracer_l7, P, srv, before, lambda c: c.inb(status="failed"), 1) == 1
    assert wait_delta(tracer_l7, P, srv, before, lambda c: c.out(status="ok"), 1) == 1


def test_multi_exec_counts_every_command(tracer_l7, srv):
    before = Counts(tracer_l7, P, srv)
    s0 = srv.commandstats()
    c = srv.client()
    p = c.pipeline(transaction=True)
    for i in range(10):
        p.incr("e2e:counter")
    assert p.execute() == list(range(1, 11))
    c.close()
    calls = total_calls(srv.commandstats()) - total_calls(s0) - 1  # MULTI, 10 INCR, EXEC
    assert calls == 12
    assert wait_delta(tracer_l7, P, srv, before, lambda c: c.out(), calls) == calls
    assert wait_delta(tracer_l7, P, srv, before, lambda c: c.inb(), calls) == calls
    now = Counts(tracer_l7, P, srv)
    assert now.drop("unpaired") == before.drop("unpaired")


def test_pubsub_messages_are_not_requests(tracer_l7, srv):
    """A subscribed connection receives pushes: not responses, so nothing unpaired or counted."""
    before = Counts(tracer_l7, P, srv)
    sub_client = srv.client()
    sub = sub_client.pubsub()
    sub.subscribe("e2e:chan")
    assert sub.get_message(timeout=10)["type"] == "subscribe"
    pub = srv.client()
    for i in range(20):
        assert pub.publish("e2e:chan", f"m{i}") == 1
    for i in range(20):
        m = sub.get_message(timeout=10)
        assert m and m["data"] == f"m{i}".encode(), m
    sub.close()
    sub_client.close()
    pub.close()
    evs = settle(tracer_l7, lambda evs: len([e for e in queries(evs, P, True) if e["op"] == "PUBLISH"
                                             and "e2e:chan" in e.get("statement", "")]) >= 20, "20 PUBLISHes")
    for side in (False, True):
        pubs = [e for e in queries(evs, P, side) if e["op"] == "PUBLISH" and "e2e:chan" in e.get("statement", "")]
        assert len(pubs) == 20 and all(e["status"] == "ok" for e in pubs), (side, pubs[:3])
    # The subscribed connection's pushes are not answers: none is a query, none unpaired.
    subs = [e for e in queries(evs, P) if e["op"] != "PUBLISH" and "e2e:chan" in e.get("statement", "")]
    assert all(e["op"] in ("SUBSCRIBE", "UNSUBSCRIBE") for e in subs), subs
    now = Counts(tracer_l7, P, srv)
    assert now.drop("unpaired") == before.drop("unpaired")
    assert now.drop("unparseable") == before.drop("unparseable")


def test_pipeline_past_the_capture_is_counted_as_a_drop(tracer_l7, srv):
    """A pipeline written in one call far past the 4 KiB capture: the commands the agent could
    not see are not invented, and what it missed shows in the drop counters."""
    n = 400
    before = Counts(tracer_l7, P, srv)
    c = srv.client()
    p = c.pipeline(transaction=False)
    for i in range(n):
        p.set(f"e2e:big:{i}", i)
    assert p.execute() == [True] * n
    assert c.ping()  # answered after the whole pipeline
    c.close()
    wait_delta(tracer_l7, P, srv, before, lambda c: c.out(), n + 1, timeout=5)
    now = Counts(tracer_l7, P, srv)
    seen = now.out() - before.out()
    drops = sum(now.drop(f) - before.drop(f) for f in ("truncated", "lost", "unpaired", "unparseable", "table_full"))
    assert seen <= n + 1
    assert seen == n + 1 or drops > 0, f"{seen} of {n + 1} commands counted and no drop counted"


def test_tls_commands_counted(tracer_l7, srv):
    before = Counts(tracer_l7, P, srv)
    c = srv.client(tls=True)
    for i in range(50):
        c.set(f"e2e:tls:{i}", "v")
    c.close()
    evs = settle(tracer_l7, lambda evs: len([e for e in queries(evs, P, True) if "e2e:tls:" in
                                             (e.get("statement") or "")]) >= 50, "50 SETs over TLS")
    for side in (False, True):
        mine = [e for e in queries(evs, P, side) if "e2e:tls:" in (e.get("statement") or "")]
        assert len(mine) == 50 and all(e["status"] == "ok" for e in mine), (side, len(mine))
    assert wait_delta(tracer_l7, P, srv, before, lambda c: c.inb(status="ok"), 50) == 50


def test_pipelined_latencies_against_client_timestamps(tracer_l7, srv):
    """One write of five commands, two of them BLPOPs that time out: Redis answers the commands
    before a BLPOP at once and those after it only when it has timed out, so the answers come back
    in bursts a known time apart. Each command's traced latency, both sides, lies between the
    BLPOP timeouts served before its answer (Redis unblocks strictly after the timeout, in
    milliseconds of its clock) and what the client measured up to the read that brought it."""
    blpop_s = 0.3
    tag = f"e2e:lat:{time.monotonic_ns()}"
    cmds = [["GET", f"{tag}:0"], ["BLPOP", f"{tag}:1", str(blpop_s)], ["GET", f"{tag}:2"],
            ["BLPOP", f"{tag}:3", str(blpop_s)], ["GET", f"{tag}:4"]]
    least = [0.0, blpop_s, blpop_s, 2 * blpop_s, 2 * blpop_s]
    wire = b"".join(b"*%d\r\n" % len(c) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a.encode()) for a in c)
                    for c in cmds)
    before = Counts(tracer_l7, P, srv)
    with socket.create_connection(("127.0.0.1", srv.port)) as s:
        # Every answer is one line: $-1 (GET of no key) or *-1 (BLPOP timed out).
        buf, got_at = send_and_time(s, wire, len(cmds), lambda b: b.count(b"\r\n"))
    assert buf == b"$-1\r\n*-1\r\n$-1\r\n*-1\r\n$-1\r\n", buf
    assert all(lo * 1e9 <= t for lo, t in zip(least, got_at)), got_at

    def mine(evs, side):
        return [e for e in queries(evs, P, side) if tag in (e.get("statement") or "")]
    evs = settle(tracer_l7, lambda evs: len(mine(evs, False)) >= 5 and len(mine(evs, True)) >= 5,
                 "the pipeline's commands, both sides")
    for side in (False, True):
        lines = mine(evs, side)
        assert [(e["op"].upper(), e["statement"].split()[1]) for e in lines] == [(c[0], c[1]) for c in cmds], \
            (side, lines)
        assert_pipelined_latencies(lines, least, got_at, side)
    assert_histograms_hold(tracer_l7, P, srv, before, mine(evs, False), mine(evs, True))
