"""/metrics stays answerable whatever other local clients do.

While 1,000 idle clients (connected, never sending) and 100 slow ones (a request head at one byte a
second, reconnecting whenever cut) hammer the agent's listener from other source addresses, a
scraper on 127.0.0.1 scrapes again and again: every scrape must be answered, with a whole, parsable
exposition. The attack lasts until the agent has refused the idle clients past its per-address
limit and cut every held idle and slow connection for a late request head (its own counters say
so), so each limit has been at work while the scrapes ran. Nothing here is timed: answered and
right, not fast.
"""
import gzip
import http.client
import resource
import socket
import time
import urllib.error
import urllib.request

import pytest

from conftest import Agent, parse_metrics
from http_attack import IDLE, IDLE_ADDRS, PER_CLIENT, SLOW, Attack

def scrape(port, compressed):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/metrics")
    if compressed:
        req.add_header("Accept-Encoding", "gzip")
    with urllib.request.urlopen(req, timeout=120) as r:
        assert r.status == 200
        body = r.read()
        if compressed:
            assert r.headers.get("Content-Encoding") == "gzip"
            body = gzip.decompress(body)
    text = body.decode()
    assert text.endswith("\n")
    return parse_metrics(text)


def test_scrapes_answered_under_idle_and_slow_clients():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8192)), hard))
    a = Agent(trace=False)
    attack = Attack(a.port)
    attack.start()
    scrapes = 0
    # Not a timing: a bound so a limit that never acts fails the test instead of hanging it.
    give_up = time.monotonic() + 300
    try:
        held_idle = len(IDLE_ADDRS) * PER_CLIENT
        while True:
            m = scrape(a.port, compressed=scrapes % 2 == 1)
            scrapes += 1
            # The whole exposition, every time: the agent's own families and the node's.
            assert m["node_agent_info"] and m["process_start_time_seconds"], sorted(m)[:20]
            assert any(k.startswith("node_") and k != "node_agent_info" for k in m), sorted(m)[:20]
            refused = m.get("nodescope_http_connections_refused_total", {})
            per_client = refused.get(frozenset({("reason", "per_client")}), 0)
            cut = sum(m.get("nodescope_http_head_timeouts_total", {}).values())
            assert attack.error is None, attack.error
            # Done when the per-address limit has turned away the idle clients past it, the
            # held idle ones and every slow client have been cut for a late head at least once.
            if (per_client >= IDLE - held_idle and cut >= held_idle + SLOW
                    and attack.slow_cut() == SLOW):
                break
            assert attack.is_alive()
            if time.monotonic() > give_up:
                pytest.fail(f"the limits never all acted: per_client refusals {per_client}, "
                            f"head timeouts {cut}, slow clients cut {attack.slow_cut()}")
            time.sleep(0.2)
    finally:
        attack.stop_ev.set()
        attack.join(30)
        rc = a.stop()
    assert rc == 0, a.stderr()
    assert attack.error is None, attack.error
    assert scrapes >= 2


def connect(port, src):
    s = socket.create_connection(("127.0.0.1", port), source_address=(src, 0))
    # Not a timing: a bound so a connection the agent wrongly keeps fails the test, not hangs it.
    s.settimeout(300)
    return s


def closed_by_agent(s):
    """Blocks until the agent closes s (its end of stream, or a reset)."""
    try:
        return s.recv(1) == b""
    except ConnectionResetError:
        return True


def scrape_when_let_in(port):
    """A scrape, retried while the agent still refuses it (closes it cannot have processed yet)."""
    for _ in range(100):
        try:
            return scrape(port, compressed=False)
        except (ConnectionError, http.client.RemoteDisconnected, urllib.error.URLError):
            time.sleep(0.1)
    raise AssertionError("never let in")


def test_limits_are_options():
    """--http-max-per-client, --http-max-connections, --http-head-timeout and
    --http-idle-timeout set the server's limits (which its start line states): a third
    connection from one address is refused once two are held, a fourth in all once three are.
    The held ones are never cut meanwhile: an hour for their heads, an hour idle."""
    a = Agent("--http-max-per-client", "2", "--http-max-connections", "3",
              "--http-head-timeout", "1h", "--http-idle-timeout", "1h", trace=False)
    held = []
    try:
        assert ("per client 2 connections, 3 in all, 3600s for a request head, "
                "3600s idle)") in a.stderr(), a.stderr()
        held = [connect(a.port, "127.0.1.1"), connect(a.port, "127.0.1.1")]
        third = connect(a.port, "127.0.1.1")
        assert closed_by_agent(third)  # per_client: its address holds two
        third.close()
        held.append(connect(a.port, "127.0.1.2"))
        fourth = connect(a.port, "127.0.1.3")
        assert closed_by_agent(fourth)  # total: three are held
        fourth.close()
        for s in held:
            s.close()
        held = []
        m = scrape_when_let_in(a.port)
        refused = m["nodescope_http_connections_refused_total"]
        # The scraper's own address never held one: only the third was refused per client.
        assert refused[frozenset({("reason", "per_client")})] == 1, refused
        assert refused[frozenset({("reason", "total")})] >= 1, refused
        assert sum(m.get("nodescope_http_head_timeouts_total", {}).values()) == 0
    finally:
        for s in held:
            s.close()
        rc = a.stop()
    assert rc == 0, a.stderr()

    # A connection that sends nothing is cut once --http-head-timeout has passed, not before.
    b = Agent("--http-head-timeout", "2s", "--http-idle-timeout", "1h", trace=False)
    try:
        assert "2s for a request head, 3600s idle" in b.stderr(), b.stderr()
        t0 = time.monotonic()
        idle = connect(b.port, "127.0.1.4")
        assert closed_by_agent(idle)
        assert time.monotonic() - t0 >= 2.0
        idle.close()
        m = scrape_when_let_in(b.port)
        assert sum(m["nodescope_http_head_timeouts_total"].values()) == 1
    finally:
        rc = b.stop()
    assert rc == 0, b.stderr()
