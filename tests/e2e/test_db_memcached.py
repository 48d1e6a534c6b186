"""memcached tracing (l7) against a private memcached (Debian's) on loopback: counts against the
server's own `stats` (cmd_get, cmd_set), a multi-key get as one request, noreply sets counted but
never paired, and a failed command (incr of a non-number)."""
import pytest
from pymemcache.exceptions import MemcacheClientError

from l7db import Counts, queries, settle, tracer_l7, wait_delta  # noqa: F401
from srv_memcached import Memcached

P = "memcached"


@pytest.fixture(scope="module")
def mc(tracer_l7):
    s = Memcached()
    yield s
    s.stop()


def test_gets_and_sets_match_stats(tracer_l7, mc):
    n = 200
    before = Counts(tracer_l7, P, mc)
    s0 = mc.stats()  # one `stats` request, counted
    c = mc.client(default_noreply=False)
    for i in range(n):
        assert c.set(f"e2e:{i}", str(i))
    for i in range(n):
        assert c.get(f"e2e:{i}") == str(i).encode()
    assert c.get("e2e:missing") is None  # a miss is an answer, not a failure
    c.close()
    s1 = mc.stats()  # and this one
    assert s1["cmd_set"] - s0["cmd_set"] == n and s1["cmd_get"] - s0["cmd_get"] == n + 1
    want = 2 * n + 1 + 2  # the sets, the gets, and the two `stats`
    got = wait_delta(tracer_l7, P, mc, before, lambda c: c.out(status="ok"), want)
    assert got == want, f"client side: {got} ok, stats: {want}"
    got = wait_delta(tracer_l7, P, mc, before, lambda c: c.inb(status="ok"), want)
    assert got == want, f"server side: {got} ok, stats: {want}"
    now = Counts(tracer_l7, P, mc)
    assert now.out() - before.out() == want
    assert now.in_hist_count() - before.in_hist_count() == want
    for f in ("unparseable", "lost", "table_full", "unpaired"):
        assert now.drop(f) == before.drop(f), f


def test_multi_get_is_one_request(tracer_l7, mc):
    c = mc.client(default_noreply=False)
    for i in range(5):
        c.set(f"e2e:multi:{i}", "v")
    got = c.get_many([f"e2e:multi:{i}" for i in range(5)])
    assert len(got) == 5
    c.close()
    evs = settle(tracer_l7, lambda evs: any(e["op"] in ("get", "gets") and "e2e:multi:" in (e.get("statement") or "")
                                            for e in queries(evs, P, True)), "the multi-key get")
    for side in (False, True):
        gets = [e for e in queries(evs, P, side) if e["op"] in ("get", "gets") and "e2e:multi:" in
                (e.get("statement") or "")]
        assert len(gets) == 1 and gets[0]["status"] == "ok", gets


def test_noreply_sets_are_counted_never_paired(tracer_l7, mc):
    before = Counts(tracer_l7, P, mc)
    c = mc.client(default_noreply=True)
    for i in range(50):
        c.set(f"e2e:noreply:{i}", "v")
    assert c.get("e2e:noreply:49") == b"v"  # the sets have all been served by then
    c.close()
    assert wait_delta(tracer_l7, P, mc, before, lambda c: c.out(), 51) == 51
    assert wait_delta(tracer_l7, P, mc, before, lambda c: c.inb(), 51) == 51
    now = Counts(tracer_l7, P, mc)
    assert now.drop("unpaired") == before.drop("unpaired")


def test_failed_command(tracer_l7, mc):
    before = Counts(tracer_l7, P, mc)
    c = mc.client(default_noreply=False)
    c.set("e2e:text", "abc")
    with pytest.raises(MemcacheClientError):
        c.incr("e2e:text", 1)
    c.close()
    assert wait_delta(tracer_l7, P, mc, before, lambda c: c.out(status="failed"), 1) == 1
    assert wait_delta(tracer_l7, P, mc, before, lambda c: c.inb(status="failed"), 1) == 1
    evs = tracer_l7.snapshot()
    failed = [e for e in queries(evs, P, False, status="failed")]
    assert failed and failed[-1]["op"] == "incr", failed
