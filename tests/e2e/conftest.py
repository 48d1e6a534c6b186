"""Shared fixtures for the end-to-end tests: the real agent, as root, with its real BPF programs."""
import json
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.request

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
AGENT = os.path.join(ROOT, "build", "nodescope")


def pytest_sessionstart(session):
    # Fail loudly, never skip: these tests are the proof that the BPF side works.
    if os.geteuid() != 0:
        pytest.exit("e2e tests must run as root (sudo make check)", returncode=1)
    if not os.access(AGENT, os.X_OK):
        pytest.exit(f"{AGENT} is missing: run make first", returncode=1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def parse_metrics(text):
    """Prometheus text -> {name: {frozenset(labels.items()): value}}."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        head, value = line.rsplit(" ", 1)
        labels = {}
        if "{" in head:
            name, rest = head.split("{", 1)
            rest = rest.rstrip("}")
            i = 0
            while i < len(rest):
                eq = rest.index("=", i)
                key = rest[i:eq]
                j = eq + 2
                val = []
                while rest[j] != '"':
                    if rest[j] == "\\":
                        j += 1
                        val.append({"n": "\n"}.get(rest[j], rest[j]))
                    else:
                        val.append(rest[j])
                    j += 1
                labels[key] = "".join(val)
                i = j + 2  # past '",'
        else:
            name = head
        out.setdefault(name, {})[frozenset(labels.items())] = float(value)
    return out


class Agent:
    """One running nodescope, its JSON lines collected by a reader thread."""

    def __init__(self, *args, trace=True, listen=True):
        self.port = free_port() if listen else None
        cmd = [AGENT] + (["trace"] if trace else [])
        if listen:
            cmd += ["--listen", f"127.0.0.1:{self.port}"]
        cmd += list(args)
        self.cmd = cmd
        self.events = []
        self.cond = threading.Condition()
        self.ready = False
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.stderr_lines = []
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        self._wait_ready(trace)

    def _read_stdout(self):
        for raw in self.proc.stdout:
            ev = json.loads(raw)
            with self.cond:
                if ev.get("type") == "ready":
                    self.ready = True
                self.events.append(ev)
                self.cond.notify_all()

    def _read_stderr(self):
        for raw in self.proc.stderr:
            line = raw.decode(errors="replace").rstrip("\n")
            with self.cond:
                self.stderr_lines.append(line)
                if line == "nodescope: ready":
                    self.ready = True
                self.cond.notify_all()

    def stderr(self):
        with self.cond:
            return "\n".join(self.stderr_lines)

    def _wait_ready(self, trace):
        deadline = time.monotonic() + 30
        with self.cond:
            while not self.ready:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    break
                self.cond.wait(0.2)
        if not self.ready:
            self.stop()
            pytest.fail(f"agent did not become ready: {self.cmd}\nstderr:\n{self.stderr()}")

    def wait_for(self, pred, timeout=20, what="event"):
        """Waits until pred(events) is truthy; returns its value."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                v = pred(self.events)
                if v:
                    return v
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"timed out waiting for {what}")
                self.cond.wait(min(left, 0.5))

    def snapshot(self):
        with self.cond:
            return list(self.events)

    def metrics(self):
        url = f"http://127.0.0.1:{self.port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as r:
            return parse_metrics(r.read().decode())

    def metric(self, name, **labels):
        series = self.metrics().get(name, {})
        return series.get(frozenset(labels.items()), 0.0)

    def metric_sum(self, name, **labels):
        """Sum of the series of name whose labels include the given ones."""
        want = set(labels.items())
        return sum(v for k, v in self.metrics().get(name, {}).items() if want <= set(k))

    def stop(self, timeout=5):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


@pytest.fixture
def agent_factory():
    agents = []

    def make(*args, **kw):
        a = Agent(*args, **kw)
        agents.append(a)
        return a

    yield make
    for a in agents:
        a.stop()


@pytest.fixture(scope="module")
def tracer():
    """A tracing agent shared by the tests of one module."""
    a = Agent("--events", "proc")
    yield a
    a.stop()


def cgroup2_root():
    """Where the unified (v2) cgroup hierarchy is mounted."""
    with open("/proc/mounts") as f:
        for line in f:
            dev, mnt, fstype = line.split()[:3]
            if fstype == "cgroup2":
                return mnt
    pytest.fail("no cgroup2 hierarchy mounted")


def by_pid(events, pid, type_=None):
    return [e for e in events if e.get("pid") == pid and (type_ is None or e["type"] == type_)]
