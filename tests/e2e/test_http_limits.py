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
import selectors
import socket
import threading
import time
import urllib.request

import pytest

from conftest import Agent, parse_metrics

IDLE = 1000
SLOW = 100
IDLE_ADDRS = [f"127.0.1.{i}" for i in range(1, 11)]  # 100 idle clients from each
SLOW_ADDRS = [f"127.0.2.{i}" for i in range(1, 11)]  # 10 slow clients from each
PER_CLIENT = 8  # the agent's limit per source address (src/http/server.c)
REQUEST = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
RECONNECT_S = 2  # a client that was closed comes back after this (so closes do not spin)


class Client:
    def __init__(self, src, slow):
        self.src, self.slow = src, slow
        self.sock = None
        self.sent = 0
        self.closed_at = None
        self.connects = 0
        self.cuts = 0  # slow: closed by the agent well into its head (not refused at once)


class Attack(threading.Thread):
    """The idle and slow clients, driven by one selector; stops when told."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port = port
        self.stop_ev = threading.Event()
        self.sel = selectors.DefaultSelector()
        self.clients = ([Client(IDLE_ADDRS[i % len(IDLE_ADDRS)], False) for i in range(IDLE)] +
                        [Client(SLOW_ADDRS[i % len(SLOW_ADDRS)], True) for i in range(SLOW)])
        self.lock = threading.Lock()
        self.error = None

    def connect(self, c):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind((c.src, 0))
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", self.port))
        c.sock, c.sent, c.closed_at = s, 0, None
        c.connects += 1
        self.sel.register(s, selectors.EVENT_READ, c)

    def close(self, c, now):
        self.sel.unregister(c.sock)
        c.sock.close()
        c.sock, c.closed_at = None, now

    def run(self):
        try:
            for c in self.clients:
                self.connect(c)
            next_byte = time.monotonic()
            while not self.stop_ev.is_set():
                for key, _ in self.sel.select(timeout=0.2):
                    c = key.data
                    try:
                        data = c.sock.recv(4096)
                    except (ConnectionResetError, BrokenPipeError):
                        data = b""
                    except BlockingIOError:
                        continue
                    if not data:  # the agent closed it: refused at once, or cut
                        with self.lock:
                            # A refused client is closed at its accept, long before its 3rd byte.
                            c.cuts += c.slow and c.sent >= 3
                            self.close(c, time.monotonic())
                now = time.monotonic()
                if now >= next_byte:  # the slow clients' next byte of their request head
                    next_byte = now + 1
                    for c in self.clients:
                        if c.slow and c.sock and c.sent < len(REQUEST) - 1:
                            try:
                                c.sock.send(REQUEST[c.sent:c.sent + 1])
                                c.sent += 1
                            except (BlockingIOError, OSError):
                                pass
                with self.lock:
                    for c in self.clients:
                        if c.sock is None and now - c.closed_at >= RECONNECT_S:
                            self.connect(c)
        except Exception as e:  # seen by the test, not lost in a thread
            self.error = e
        finally:
            for c in self.clients:
                if c.sock:
                    c.sock.close()

    def slow_cut(self):
        """Slow clients closed by the agent after sending part of their head."""
        with self.lock:
            return sum(1 for c in self.clients if c.slow and c.cuts)


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
