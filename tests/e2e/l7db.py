"""What the database and cache e2e tests (test_db_*.py) share: reading the agent's per-protocol
series (Coroot's container_<proto>_queries_* families and nodescope_l7_*_total drop counters) and
its `l7` trace lines, and waiting for a count to reach what the server's own statistics say."""
import json
import os
import time
from collections import Counter

import pytest

from conftest import Agent
from service import ClientCgroup

CATALOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "coroot_catalog.json")
# The drop counters every protocol exports, as nodescope_l7_<field>_total{proto}.
DROP_FIELDS = ("messages", "unparseable", "truncated", "lost", "table_full", "unpaired")
# Drops that mean a message was misread or missed (not "messages", a count of what was parsed).
LOSSES = ("unparseable", "truncated", "lost", "table_full", "unpaired")


def names(proto, noun="queries"):
    """(outbound total, outbound histogram, inbound total, inbound histogram) metric names."""
    return (f"container_{proto}_{noun}_total", f"container_{proto}_{noun}_duration_seconds_total",
            f"container_{proto}_inbound_{noun}_total",
            f"container_{proto}_inbound_{noun}_duration_seconds_total")


def msum(metrics, name, **labels):
    want = set(labels.items())
    return sum(v for k, v in metrics.get(name, {}).items() if want <= set(k))


class Counts:
    """One scrape of the agent, read for one protocol and one server. Subtract two for a delta."""

    def __init__(self, agent, proto, server):
        self.m = agent.metrics()
        self.proto, self.server = proto, server
        self.out_name, self.out_hist, self.in_name, self.in_hist = names(proto)

    def out(self, status=None, container_id=None):
        """Queries sent to the server by any client (or by one container's)."""
        labels = {"destination": self.server.addr}
        if status:
            labels["status"] = status
        if container_id:
            labels["container_id"] = container_id
        return msum(self.m, self.out_name, **labels)

    def inb(self, status=None):
        """Queries the server answered (its own container's inbound series)."""
        labels = {"container_id": self.server.container}
        if status:
            labels["status"] = status
        return msum(self.m, self.in_name, **labels)

    def out_hist_count(self, container_id=None):
        labels = {"destination": self.server.addr}
        if container_id:
            labels["container_id"] = container_id
        return msum(self.m, self.out_hist + "_count", **labels)

    def in_hist_count(self):
        return msum(self.m, self.in_hist + "_count", container_id=self.server.container)

    def drop(self, field):
        return msum(self.m, f"nodescope_l7_{field}_total", proto=self.proto)


def wait_value(fn, want, timeout=20):
    """Polls fn() until it returns want (the agent reads its ring asynchronously); returns the
    last value for the caller to assert, so a wrong count fails with the number it reached."""
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v == want or time.monotonic() > deadline:
            return v
        time.sleep(0.1)


def wait_delta(agent, proto, server, before, fn, want, timeout=20):
    """Waits until fn(Counts now) - fn(before) == want; returns that delta."""
    return wait_value(lambda: fn(Counts(agent, proto, server)) - fn(before), want, timeout)


def inbound(e):
    return e.get("dir") == "in" if "dir" in e else bool(e.get("inbound"))


def queries(events, proto, inbound_=None, **want):
    """The agent's l7 trace lines of a protocol with the given keys (inbound_: one side only)."""
    return [e for e in events if e.get("type") == "l7" and e.get("proto") == proto
            and (inbound_ is None or inbound(e) == inbound_)
            and all(e.get(k) == v for k, v in want.items())]


def with_text(events, proto, fragment, inbound_=None):
    """The lines whose statement contains fragment (a marker the test put in its queries)."""
    return [e for e in queries(events, proto, inbound_) if fragment in (e.get("statement") or "")]


def settle(agent, pred, what, timeout=20):
    """Waits for pred(events), then a little longer so an extra (wrong) line would show too."""
    agent.wait_for(pred, timeout=timeout, what=what)
    time.sleep(0.3)
    return agent.snapshot()


def assert_secret_absent(agent, *secrets):
    """No trace line carries any of the literals (the statement's literals are stripped)."""
    text = "\n".join(json.dumps(e) for e in agent.snapshot())
    for s in secrets:
        assert s not in text, f"literal {s!r} leaked into the trace"


def send_and_time(sock, wire, n, answers):
    """Writes a pipeline of n requests in one call and reads until all n are answered; returns
    what was read and, per answer, the nanoseconds from before the write to after the read that
    completed it. answers(buf) counts the whole answers in buf. The agent stamps a request when
    its write starts and an answer when its read returns: its latencies lie within these."""
    buf, got_at = b"", []
    t_send = time.monotonic_ns()
    sock.sendall(wire)
    while len(got_at) < n:
        chunk = sock.recv(65536)
        assert chunk, "the server closed the connection"
        t = time.monotonic_ns()
        buf += chunk
        got_at += [t - t_send] * (answers(buf) - len(got_at))
    return buf, got_at


def assert_pipelined_latencies(lines, least_s, got_at_ns, side):
    """Each request's traced latency lies between the least time the server spent on the requests
    up to its own and what the client measured up to its answer (send_and_time): both bounds hold
    whatever the machine's speed, so nothing races."""
    assert len(lines) == len(least_s), (side, lines)
    for e, lo, hi in zip(lines, least_s, got_at_ns):
        assert e["status"] == "ok", e
        assert lo * 1e9 <= e["duration_ns"] <= hi, (side, e["statement"], lo, e["duration_ns"], hi)


def assert_histograms_hold(agent, proto, server, before, out_lines, in_lines):
    """Once both sides counted their lines' requests, each side's duration histogram moved by
    exactly the lines' latencies, each in its own buckets."""
    wait_delta(agent, proto, server, before, lambda c: c.out(), len(out_lines))
    wait_delta(agent, proto, server, before, lambda c: c.inb(), len(in_lines))
    m0, m1 = before.m, Counts(agent, proto, server).m
    _, out_hist, _, in_hist = names(proto)
    for hist, labels, lines in ((out_hist, {"destination": server.addr}, out_lines),
                                (in_hist, {"container_id": server.container}, in_lines)):
        durations = [e["duration_ns"] / 1e9 for e in lines]
        les = {dict(k)["le"] for k in m1[hist + "_bucket"]}
        got = {le: msum(m1, hist + "_bucket", le=le, **labels) - msum(m0, hist + "_bucket", le=le, **labels)
               for le in les}
        want = {le: sum(d <= float(le) for d in durations) for le in les}
        assert got == want, (hist, durations, got)
        assert msum(m1, hist + "_count", **labels) - msum(m0, hist + "_count", **labels) == len(lines)


def db_tracer():
    """A module's tracing agent: metrics and the l7 trace lines."""
    return Agent("--events", "l7")


@pytest.fixture(scope="module")
def tracer_l7():
    a = db_tracer()
    yield a
    a.stop()


@pytest.fixture(scope="module")
def client_cgroup():
    """Makes ClientCgroups removed at the module's end (not while the agent may still be
    attributing the clients' last queries to them)."""
    made = []

    def make(name):
        cg = ClientCgroup(name)
        made.append(cg)
        return cg

    yield make
    for cg in made:
        cg.remove()


def assert_both_sides(agent, m0, proto, noun, client, server, want, secret):
    """The client's container (a ClientCgroup) asked and the server (a Service) answered exactly
    the requests of want, a Counter of trace lines (op, statement, status, error code): counted
    so in Coroot's families since the scrape m0, outbound by destination and inbound, with
    Coroot's label sets (its catalog's), no drop counted, and traced so on both sides, secret nowhere."""
    out_name, out_hist, in_name, in_hist = names(proto, noun)
    n = sum(want.values())
    by_status = {st: sum(v for k, v in want.items() if k[2] == st) for st in ("ok", "failed", "unknown")}

    def delta(name, **labels):
        return msum(agent.metrics(), name, **labels) - msum(m0, name, **labels)
    out = dict(container_id=client.container, destination=server.addr)
    inb = dict(container_id=server.container)
    assert wait_value(lambda: (delta(out_name, **out), delta(in_name, **inb)), (n, n)) == (n, n)
    for st, v in by_status.items():
        assert (delta(out_name, status=st, **out), delta(in_name, status=st, **inb)) == (v, v), st
    assert (delta(out_hist + "_count", **out), delta(in_hist + "_count", **inb)) == (n, n)
    m = agent.metrics(keep_node_labels=True)
    with open(CATALOG) as f:
        catalog = json.load(f)
    for name in (out_name, out_hist, in_name, in_hist):
        fam = catalog["families"][name]
        labels = set(catalog["every_series"]) | set(catalog["container_series"]) | set(fam["labels"])
        series = m[name + ("_count" if fam["type"] == "histogram" else "")]
        assert series and all(set(dict(k)) == labels for k in series), (name, list(series))
    for field in LOSSES:
        assert delta(f"nodescope_l7_{field}_total", proto=proto) == 0, field

    def lines(evs, container):
        return [e for e in evs if e.get("type") == "l7" and e.get("proto") == proto and e.get("container") == container]
    evs = settle(agent, lambda evs: len(lines(evs, client.container)) >= n and len(lines(evs, server.container)) >= n,
                 f"{n} {proto} {noun}, both sides")
    for side, container in (("out", client.container), ("in", server.container)):
        mine = lines(evs, container)
        assert all(e["dir"] == side and e["duration_ns"] > 0 for e in mine), mine
        got = Counter((e["op"], e["statement"], e["status"], e.get("error_code")) for e in mine)
        assert got == want, (side, got, want)
    assert not any(secret in json.dumps(e) for e in evs)
