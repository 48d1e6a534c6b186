"""Clients that try to keep others off the agent's HTTP listener: many idle connections and slow
ones sending a request head a byte a second, from loopback addresses other than 127.0.0.1 (the
scraper's), each reconnecting some time after the agent closed it. Used by
tests/e2e/test_http_limits.py and bench/scrape-under-attack."""
import selectors
import socket
import threading
import time

IDLE = 1000
SLOW = 100
IDLE_ADDRS = [f"127.0.1.{i}" for i in range(1, 11)]  # 100 idle clients from each
SLOW_ADDRS = [f"127.0.2.{i}" for i in range(1, 11)]  # 10 slow clients from each
PER_CLIENT = 8  # the agent's default --http-max-per-client
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
