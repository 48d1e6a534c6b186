"""PostgreSQL tracing (l7) against a private PostgreSQL (Debian's postgresql) on loopback: counts
against pg_stat_statements, both sides (the client's outbound series, the server's inbound one),
the simple and extended protocols (pgbench -M simple/extended/prepared), pipelined batches,
sslmode=require (through libpq's and the server's OpenSSL), errors with their SQLSTATE, literals
stripped from the traced statements, a connection opened before the agent started, and the
latencies of one batch's queries against the client's own timestamps.

The clients run in cgroups of their own (ClientCgroup) and as their own role, so the client's
series and pg_stat_statements' calls of that role count the same queries; the test reads the
server's statistics over the unix socket, which the agent (tracing TCP) does not see."""
import socket
import struct
import time

import psycopg2
import pytest

from l7db import (Counts, assert_histograms_hold, assert_pipelined_latencies, assert_secret_absent,  # noqa: F401
                  client_cgroup, send_and_time, settle, tracer_l7, wait_delta, wait_value, with_text)
from srv_postgres import Postgres, pg_bin

P = "postgres"
N = 200  # pgbench transactions per client


@pytest.fixture(scope="module")
def pg(tracer_l7):
    # Started after the agent (the connections are new to it).
    s = Postgres()
    yield s
    s.stop()


_roles = iter(range(1, 1000))


def new_role(pg):
    """A role of its own for one client run: pg_stat_statements counts per role."""
    role = f"e2e_client_{next(_roles)}"
    pg.sql(f"CREATE ROLE {role} LOGIN SUPERUSER")
    return role


def pgbench(pg, cgroups, tmp_path, script, mode, role, sslmode="disable", clients=2, tx=N):
    path = tmp_path / "script.sql"
    path.write_text(script)
    cg = cgroups("pgbench")
    out = cg.run([pg_bin("pgbench"), "-n", "-M", mode, "-c", str(clients), "-t", str(tx),
                  "-f", str(path)], env=pg.env(user=role, sslmode=sslmode))
    assert f"number of transactions actually processed: {clients * tx}/" in out.stdout, out.stdout
    return cg.container


# PostgreSQL serves each connection in a backend the postmaster forks after accept(): the server
# side is seen because a fork copies its parent's tracked sockets.


def check_counts(tracer, pg, before, container, role, want_min, server_side=True):
    """The client's outbound count (and the server's inbound count) and pg_stat_statements'
    calls of the role are one number (the role ran nothing else)."""
    calls = pg.role_calls(role)
    assert calls >= want_min
    got = wait_delta(tracer, P, pg, before, lambda c: c.out(container_id=container, status="ok"), calls)
    assert got == calls, f"client side: {got} queries ok, pg_stat_statements: {calls}"
    now = Counts(tracer, P, pg)
    assert now.out(container_id=container) - before.out(container_id=container) == calls  # none failed
    assert now.out_hist_count(container_id=container) - before.out_hist_count(container_id=container) == calls
    for f in ("unparseable", "lost", "table_full", "unpaired"):
        assert now.drop(f) == before.drop(f), f
    if server_side:
        # The server side saw the same queries (no other client ran meanwhile over TCP).
        got = wait_delta(tracer, P, pg, before, lambda c: c.inb(status="ok"), calls)
        assert got == calls, f"server side: {got} queries ok, pg_stat_statements: {calls}"
        assert Counts(tracer, P, pg).in_hist_count() - before.in_hist_count() == calls


@pytest.mark.parametrize("mode", ["simple", "extended", "prepared"])
def test_pgbench_counts_match_pg_stat_statements(tracer_l7, pg, client_cgroup, tmp_path, mode):
    role = new_role(pg)
    before = Counts(tracer_l7, P, pg)
    script = "\\set id random(1, 100000)\nSELECT abalance FROM (SELECT :id AS aid, 0 AS abalance) t " \
             "WHERE aid = :id;\n"
    container = pgbench(pg, client_cgroup, tmp_path, script, mode, role)
    check_counts(tracer_l7, pg, before, container, role, 2 * N)


def test_server_side_counts_match_pg_stat_statements(tracer_l7, pg, client_cgroup, tmp_path):
    role = new_role(pg)
    before = Counts(tracer_l7, P, pg)
    container = pgbench(pg, client_cgroup, tmp_path, "SELECT 1 AS server_side;\n", "extended", role,
                        clients=1, tx=100)
    check_counts(tracer_l7, pg, before, container, role, 100, server_side=True)


def test_server_side_failed_query_has_its_sqlstate(tracer_l7, pg):
    before = Counts(tracer_l7, P, pg)
    c = connect(pg)
    with c.cursor() as cur:
        with pytest.raises(psycopg2.errors.UndefinedTable):
            cur.execute("SELECT * FROM e2e_missing_in WHERE id = 1")
    c.close()
    evs = settle(tracer_l7, lambda evs: with_text(evs, P, "e2e_missing_in", inbound_=True),
                 "the failed query, server side")
    failed = with_text(evs, P, "e2e_missing_in", inbound_=True)
    assert len(failed) == 1 and (failed[0]["status"], failed[0].get("error_code")) == ("failed", "42P01"), failed
    assert wait_delta(tracer_l7, P, pg, before, lambda c: c.inb(status="failed"), 1) == 1


def test_trace_lines_stay_json_under_load(tracer_l7, pg, client_cgroup, tmp_path):
    """pgbench's select-only load for a few seconds at full speed (tens of thousands of trace
    lines a second): every stdout line is one JSON object (the reader fails the test on any
    other), and each query the client made is a trace line of its container unless the agent
    counted lines dropped for a slow reader."""
    role = new_role(pg)
    dropped0 = tracer_l7.metric_sum("nodescope_trace_lines_dropped_total")
    script = tmp_path / "load.sql"
    script.write_text("SELECT 1 AS under_load;\n")
    cg = client_cgroup("pgbench-load")
    out = cg.run([pg_bin("pgbench"), "-n", "-M", "prepared", "-c", "4", "-j", "2", "-T", "3", "-f", str(script)],
                 env=pg.env(user=role))
    assert "number of transactions actually processed" in out.stdout, out.stdout
    calls = pg.role_calls(role)
    mine = lambda evs: [e for e in with_text(evs, P, "under_load", inbound_=False)  # noqa: E731
                        if e.get("container") == cg.container]
    dropped = lambda: tracer_l7.metric_sum("nodescope_trace_lines_dropped_total") - dropped0  # noqa: E731
    deadline = time.monotonic() + 30
    while len(mine(tracer_l7.snapshot())) + dropped() < calls and time.monotonic() < deadline:
        time.sleep(0.5)
    time.sleep(0.3)  # an extra (wrong) line would show too
    tracer_l7.assert_json_lines()
    got = len(mine(tracer_l7.snapshot()))
    assert calls > 1000, calls
    if dropped() == 0:
        assert got == calls, f"{got} trace lines, pg_stat_statements: {calls}"
    else:
        assert got <= calls <= got + dropped(), (got, calls, dropped())


def test_pipelined_batches_each_paired(tracer_l7, pg, client_cgroup, tmp_path):
    """pgbench's \\startpipeline: 5 queries in one batch, one Sync; each its own request."""
    role = new_role(pg)
    before = Counts(tracer_l7, P, pg)
    script = "\\startpipeline\n" + "".join(f"SELECT {i} AS pipelined_{i};\n" for i in range(5)) + \
             "\\endpipeline\n"
    container = pgbench(pg, client_cgroup, tmp_path, script, "extended", role, clients=1, tx=50)
    check_counts(tracer_l7, pg, before, container, role, 250)
    evs = tracer_l7.snapshot()
    for i in range(5):
        mine = [e for e in with_text(evs, P, f"pipelined_{i}", inbound_=False)]
        assert len(mine) == 50, (i, len(mine))
        assert all(e["status"] == "ok" and e["duration_ns"] > 0 for e in mine), mine[:3]


def test_sslmode_require_through_openssl(tracer_l7, pg, client_cgroup, tmp_path):
    role = new_role(pg)
    before = Counts(tracer_l7, P, pg)
    container = pgbench(pg, client_cgroup, tmp_path, "SELECT 1 AS over_tls;\n", "extended", role, sslmode="require",
                        clients=1, tx=100)
    check_counts(tracer_l7, pg, before, container, role, 100)
    evs = tracer_l7.snapshot()
    mine = with_text(evs, P, "over_tls", inbound_=False)
    assert len(mine) == 100 and all(e["tls"] for e in mine), mine[:3]


def connect(pg):
    c = psycopg2.connect(pg.dsn())
    c.autocommit = True
    return c


def test_failed_query_has_its_sqlstate(tracer_l7, pg):
    before = Counts(tracer_l7, P, pg)
    c = connect(pg)
    with c.cursor() as cur:
        with pytest.raises(psycopg2.errors.UndefinedTable):
            cur.execute("SELECT * FROM e2e_no_such_table WHERE id = 1")
        cur.execute("SELECT 1 AS after_the_error")
    c.close()
    evs = settle(tracer_l7, lambda evs: with_text(evs, P, "e2e_no_such_table", inbound_=False)
                 and with_text(evs, P, "after_the_error", inbound_=False), "the failed query")
    failed = with_text(evs, P, "e2e_no_such_table", inbound_=False)
    assert len(failed) == 1, failed
    assert (failed[0]["status"], failed[0].get("error_code")) == ("failed", "42P01"), failed[0]
    ok = with_text(evs, P, "after_the_error", inbound_=False)
    assert len(ok) == 1 and ok[0]["status"] == "ok", ok
    assert wait_delta(tracer_l7, P, pg, before, lambda c: c.out(status="failed"), 1) == 1


def test_literals_are_stripped_from_statements(tracer_l7, pg):
    secret, number = "e2e-secret-4f1d9c", "987654321"
    c = connect(pg)
    with c.cursor() as cur:
        cur.execute(f"SELECT '{secret}' AS leak_check, {number} AS n WHERE 1 IN (1, 2, 3)")
    c.close()
    evs = settle(tracer_l7, lambda evs: with_text(evs, P, "leak_check"), "the query")
    for e in with_text(evs, P, "leak_check"):
        assert e["statement"].startswith("SELECT ?"), e
        assert e["status"] == "ok", e
    assert_secret_absent(tracer_l7, secret, number)


def test_sql_prepare_and_execute(tracer_l7, pg):
    """psycopg2 with server-side prepared statements (PREPARE / EXECUTE): each EXECUTE a query."""
    c = connect(pg)
    with c.cursor() as cur:
        cur.execute("PREPARE e2e_prep(int) AS SELECT $1 + 1 AS prepared_in_sql")
        for i in range(20):
            cur.execute("EXECUTE e2e_prep(%s)", (i,))
            assert cur.fetchone() == (i + 1,)
    c.close()
    evs = settle(tracer_l7, lambda evs: len(with_text(evs, P, "e2e_prep(", inbound_=False)) >= 20,
                 "20 EXECUTEs")
    ex = [e for e in with_text(evs, P, "e2e_prep(", inbound_=False) if e["statement"].startswith("EXECUTE")]
    assert len(ex) == 20 and all(e["status"] == "ok" for e in ex), ex[:3]


def test_connection_opened_before_the_agent(agent_factory, pg):
    """A pooled connection lives for days: its queries are parsed once the agent sees a message
    boundary (the first queries may go by while it joins; every one after it is counted)."""
    c = connect(pg)
    cur = c.cursor()
    cur.execute("SELECT 1")
    late = agent_factory("--events", "l7")
    seen = False
    for i in range(50):
        cur.execute(f"SELECT {i} AS joining")
        if wait_value(lambda: bool(with_text(late.snapshot(), P, "joining", inbound_=False)), True, 1):
            seen = True
            break
    assert seen, "no query of the pre-existing connection was parsed"
    for i in range(10):
        cur.execute(f"SELECT {i} AS after_join")
    c.close()
    evs = settle(late, lambda evs: len(with_text(evs, P, "after_join", inbound_=False)) >= 10,
                 "10 queries")
    mine = with_text(evs, P, "after_join", inbound_=False)
    assert len(mine) == 10 and all(e["status"] == "ok" for e in mine), mine


def pg_msg(kind, body):
    return kind + struct.pack("!I", len(body) + 4) + body


def pg_answers(buf, kind=b"Z"):
    """How many whole messages of a kind the server's bytes hold."""
    n, at = 0, 0
    while at + 5 <= len(buf):
        size = struct.unpack("!I", buf[at + 1:at + 5])[0]
        if at + 1 + size > len(buf):
            break
        n += buf[at:at + 1] == kind
        at += 1 + size
    return n


def test_batched_latencies_against_client_timestamps(tracer_l7, pg):
    """One write of five extended-protocol queries, each with its own Sync, two of them sleeping:
    the server flushes its answers at each Sync (ReadyForQuery), so they come back a known time
    apart. Each query's traced latency, both sides, lies between the sleeps served before its
    answer (pg_sleep never wakes early) and what the client measured up to the read that brought
    it."""
    sleep_s = 0.3
    tag = f"e2e_pglat_{time.monotonic_ns()}"
    queries_ = [f"SELECT 0 AS {tag}_0", f"SELECT pg_sleep({sleep_s}) AS {tag}_1", f"SELECT 2 AS {tag}_2",
                f"SELECT pg_sleep({sleep_s}) AS {tag}_3", f"SELECT 4 AS {tag}_4"]
    least = [0.0, sleep_s, sleep_s, 2 * sleep_s, 2 * sleep_s]
    wire = b"".join(pg_msg(b"P", b"\0" + q.encode() + b"\0" + struct.pack("!H", 0)) +
                    pg_msg(b"B", b"\0\0" + struct.pack("!HHH", 0, 0, 0)) +
                    pg_msg(b"E", b"\0" + struct.pack("!I", 0)) + pg_msg(b"S", b"") for q in queries_)
    before = Counts(tracer_l7, P, pg)
    with socket.create_connection(("127.0.0.1", pg.port)) as s:
        # The startup message (trust authentication) up to the first ReadyForQuery.
        body = struct.pack("!I", 196608) + b"user\0postgres\0database\0postgres\0\0"
        s.sendall(struct.pack("!I", len(body) + 4) + body)
        hello = b""
        while not pg_answers(hello):
            chunk = s.recv(65536)
            assert chunk, hello
            hello += chunk
        buf, got_at = send_and_time(s, wire, len(queries_), pg_answers)
        s.sendall(pg_msg(b"X", b""))
    assert pg_answers(buf, b"C") == 5 and pg_answers(buf, b"E") == 0, buf
    assert all(lo * 1e9 <= t for lo, t in zip(least, got_at)), got_at

    def mine(evs, side):
        return with_text(evs, P, tag, inbound_=side)
    evs = settle(tracer_l7, lambda evs: len(mine(evs, False)) >= 5 and len(mine(evs, True)) >= 5,
                 "the batch's queries, both sides")
    for side in (False, True):
        lines = mine(evs, side)
        assert [f"{tag}_{i}" in e["statement"] for i, e in enumerate(lines)] == [True] * 5, (side, lines)
        assert_pipelined_latencies(lines, least, got_at, side)
    assert_histograms_hold(tracer_l7, P, pg, before, mine(evs, False), mine(evs, True))
