"""memcached tracing (l7) against a private memcached (Debian's) on loopback: the client's
counts against the server's own `stats` (cmd_get, cmd_set), a multi-key get as one request,
noreply sets (no answer, so no query and no latency) that leave the pairing intact, and a failed
command (incr of a non-number). memcached answers a get with one sendmsg() of several iovecs
(the VALUE line, the data, END): the server side is whole only when every iovec is captured."""
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


def sets_and_gets(mc, n):
    """n sets, n gets and a miss; returns the server's cmd_set and cmd_get deltas and how many
    requests were sent over TCP in all (the two `stats` included)."""
    s0 = mc.stats()
    c = mc.client(default_noreply=False)
    for i in range(n):
        assert c.set(f"e2e:{i}", str(i))
    for i in range(n):
        assert c.get(f"e2e:{i}") == str(i).encode()
    assert c.get("e2e:missing") is None  # a miss is an answer, not a failure
    c.close()
    s1 = mc.stats()
    return s1["cmd_set"] - s0["cmd_set"], s1["cmd_get"] - s0["cmd_get"], 2 * n + 1 + 2


def test_gets_and_sets_match_stats(tracer_l7, mc):
    n = 200
    before = Counts(tracer_l7, P, mc)
    sets, gets, want = sets_and_gets(mc, n)
    assert (sets, gets) == (n, n + 1)
    got = wait_delta(tracer_l7, P, mc, before, lambda c: c.out(status="ok"), want)
    assert got == want, f"client side: {got} ok, stats: {want}"
    now = Counts(tracer_l7, P, mc)
    assert now.out() - before.out() == want
    assert now.out_hist_count() - before.out_hist_count() == want
    for f in ("unparseable", "table_full", "unpaired", "lost"):
        assert now.drop(f) == before.drop(f), f


def test_server_side_gets_and_sets_match_stats(tracer_l7, mc):
    """Each get's answer is one sendmsg of the VALUE line, the data and END: with only the first
    iovec captured the answer never ends and the server's side pairs nothing after it."""
    before = Counts(tracer_l7, P, mc)
    sets, gets, want = sets_and_gets(mc, 20)
    assert (sets, gets) == (20, 21)
    got = wait_delta(tracer_l7, P, mc, before, lambda c: c.inb(status="ok"), want)
    assert got == want, f"server side: {got} ok, stats: {want}"
    now = Counts(tracer_l7, P, mc)
    assert now.inb() - before.inb() == want
    assert now.in_hist_count() - before.in_hist_count() == want
    for f in ("unparseable", "table_full", "unpaired", "lost"):
        assert now.drop(f) == before.drop(f), f


def test_multi_get_is_one_request(tracer_l7, mc):
    c = mc.client(default_noreply=False)
    for i in range(5):
        c.set(f"e2e:multi:{i}", "v")
    got = c.get_many([f"e2e:multi:{i}" for i in range(5)])
    assert len(got) == 5
    c.close()
    evs = settle(tracer_l7, lambda evs: any(e["op"] == "get" and "e2e:multi:" in e.get("statement", "")
                                            for e in queries(evs, P, False)), "the multi-key get")
    gets = [e for e in queries(evs, P, False) if e["op"] == "get" and "e2e:multi:" in e.get("statement", "")]
    assert len(gets) == 1 and gets[0]["status"] == "ok", gets


def test_noreply_sets_leave_the_pairing_intact(tracer_l7, mc):
    """noreply sets get no answer: not queries (no latency), and the get after them is paired with
    its own answer."""
    before = Counts(tracer_l7, P, mc)
    c = mc.client(default_noreply=True)
    for i in range(50):
        c.set(f"e2e:noreply:{i}", "v")
    assert c.get("e2e:noreply:49") == b"v"  # the sets have all been served by then
    c.close()
    assert wait_delta(tracer_l7, P, mc, before, lambda c: c.out(status="ok"), 1) == 1
    evs = tracer_l7.snapshot()
    got = [e for e in queries(evs, P, False) if "e2e:noreply:" in e.get("statement", "")]
    assert [(e["op"], e["statement"], e["status"]) for e in got] == [("get", "get e2e:noreply:49", "ok")]
    now = Counts(tracer_l7, P, mc)
    assert now.out() - before.out() == 1
    assert now.drop("unpaired") == before.drop("unpaired")


def test_failed_command(tracer_l7, mc):
    before = Counts(tracer_l7, P, mc)
    c = mc.client(default_noreply=False)
    c.set("e2e:text", "abc")
    with pytest.raises(MemcacheClientError):
        c.incr("e2e:text", 1)
    c.close()
    assert wait_delta(tracer_l7, P, mc, before, lambda c: c.out(status="failed"), 1) == 1
    evs = tracer_l7.snapshot()
    failed = [e for e in queries(evs, P, False, status="failed")]
    assert failed and failed[-1]["op"] == "incr", failed
