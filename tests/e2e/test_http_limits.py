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
import resource
import time
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
