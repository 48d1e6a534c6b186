"""ClickHouse tracing (l7) against a private clickhouse-server (Debian 12's 18.16) on loopback,
driven by clickhouse-client over the native protocol: each query paired with its end of stream
(ok) or its exception (failed, with ClickHouse's error code), on both sides, its literals
stripped."""
import pytest

from l7db import Counts, assert_secret_absent, client_cgroup, settle, tracer_l7, wait_delta, with_text  # noqa: F401
from service import need
from srv_clickhouse import ClickHouse

P = "clickhouse"


@pytest.fixture(scope="module")
def ch(tracer_l7):
    s = ClickHouse()
    yield s
    s.stop()


def client(ch, cg, query, check=True):
    return cg.run([need("clickhouse-client", "clickhouse-client"), "--host", "127.0.0.1", "--port",
                   str(ch.port), "--query", query], check=check)


def test_queries_and_an_exception(tracer_l7, ch, client_cgroup):
    secret = "e2e-secret-ch-9e0f"
    cg = client_cgroup("clickhouse-client")
    before = Counts(tracer_l7, P, ch)
    n = 5
    for i in range(n):
        out = client(ch, cg, f"SELECT number AS ch_marker FROM system.numbers WHERE '{secret}' != '' "
                             f"LIMIT {i + 3}")
        assert len(out.stdout.split()) == i + 3
    failed = client(ch, cg, "SELECT * FROM e2e_no_such_table", check=False)
    assert failed.returncode != 0 and "Code: 60" in failed.stderr, failed.stderr
    evs = settle(tracer_l7, lambda evs: len(with_text(evs, P, "ch_marker", inbound_=True)) >= n
                 and len(with_text(evs, P, "ch_marker", inbound_=False)) >= n
                 and len(with_text(evs, P, "e2e_no_such_table")) >= 2, f"{n} queries and the failed one")
    for side in (False, True):
        mine = with_text(evs, P, "ch_marker", inbound_=side)
        assert len(mine) == n and all(e["status"] == "ok" for e in mine), (side, mine)
        bad = with_text(evs, P, "e2e_no_such_table", inbound_=side)
        assert len(bad) == 1 and (bad[0]["status"], bad[0].get("error_code")) == ("failed", "60"), bad
    assert_secret_absent(tracer_l7, secret)
    assert wait_delta(tracer_l7, P, ch, before, lambda c: c.out(container_id=cg.container, status="failed"), 1) == 1
    assert wait_delta(tracer_l7, P, ch, before, lambda c: c.inb(status="failed"), 1) == 1
