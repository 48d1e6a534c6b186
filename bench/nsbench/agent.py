"""An agent or tracer process a benchmark measures: started with its stderr kept, killed with
this script (PR_SET_PDEATHSIG), ready when its /metrics answers (nodescope) or it prints a
ready line (the floor), and stopped with a signal and a deadline."""

import ctypes
import json
import os
import re
import select
import signal
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request

from .cli import warn
from .metrics import fetch, parse_metrics

PR_SET_PDEATHSIG = 1
READY_TIMEOUT_S = 30.0
TERM_TIMEOUT_S = 5.0


def pdeathsig():
    # If this script dies without cleaning up, don't leave the child running.
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except Exception:
        pass


class Agent:
    """One process, stdin from /dev/null, stdout to /dev/null unless `stdout` says otherwise,
    stderr to a temporary file. With metrics_port it is ready when GET /metrics answers (the
    agent's HTTP server answers only once its event loop runs, which is after
    {"type":"ready"} in trace mode or "nodescope: ready" in metrics mode)."""

    def __init__(self, name, argv, metrics_port=None, stdout=subprocess.DEVNULL):
        self.name, self.argv, self.metrics_port = name, argv, metrics_port
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=stdout,
                                     stderr=self.stderr, preexec_fn=pdeathsig)

    @property
    def pid(self):
        return self.proc.pid

    def stderr_text(self):
        self.stderr.flush()
        self.stderr.seek(0)
        return self.stderr.read().decode("utf-8", "replace")

    def scrape(self):
        return parse_metrics(fetch(self.metrics_port))

    def exited_msg(self):
        rc = self.proc.returncode
        how = f"was killed by signal {-rc}" if rc < 0 else f"exited with status {rc}"
        err = self.stderr_text().rstrip()
        if len(err) > 2000:
            err = "...\n" + err[-2000:]
        msg = f"{self.name} {how}"
        msg += f"; its stderr:\n{err}" if err else " (no stderr output)"
        return msg

    def ready(self):
        """One look: is it ready? (Polled by wait_ready every 0.1 s.)"""
        try:
            self.scrape()
            return True
        except (urllib.error.URLError, OSError, ValueError):
            return False

    def wait_ready(self, timeout=READY_TIMEOUT_S):
        """Returns None when ready, else a reason."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return self.exited_msg()
            if self.ready():
                return None
            time.sleep(0.1)
        return f"{self.name} was not ready within {timeout:g} s"

    def hooks_attached(self):
        """nodescope --debug-hook-signals: whether its probes are attached (/healthz 200; 503
        "no probe attached" while detached)."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/healthz", timeout=5) as r:
                return r.status == 200
        except urllib.error.HTTPError:
            return False

    stop_signal = signal.SIGTERM

    def stop(self, timeout=TERM_TIMEOUT_S):
        """stop_signal, wait, SIGKILL after the timeout. Returns how it ended, in words."""
        if self.proc.poll() is not None:
            return f"had already exited (status {self.proc.returncode})"
        self.proc.send_signal(self.stop_signal)
        try:
            rc = self.proc.wait(timeout)
            return f"died of signal {-rc}" if rc < 0 else f"exited with status {rc}"
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            desc = f"did NOT exit within {timeout:g} s; sent SIGKILL"
            warn(f"{self.name} {desc}")
            return desc


class LibbpfTool(Agent):
    """A libbpf-tools tracer (execsnoop, tcpconnect, tcplife): its stdout, a block-buffered
    pipe whose lines arrive in bursts, read in big chunks by a thread that hands each batch of
    lines to count() under self.lock; stopped with SIGINT (on which the tools flush stdout)."""

    stop_signal = signal.SIGINT

    def __init__(self, name, argv):
        super().__init__(name, argv, stdout=subprocess.PIPE)
        self.lock = threading.Lock()
        self.lines = 0
        self._stable_since, self._last = None, None
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def count(self, lines):
        """Called with self.lock held for each batch of complete lines (bytes, no newline)."""

    def _read(self):
        fd = self.proc.stdout.fileno()
        rest = b""
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            data = rest + chunk
            lines = data.split(b"\n")
            rest = lines.pop()
            with self.lock:
                self.lines += len(lines)
                self.count(lines)

    def tool_lost(self):
        """Events the tool reported lost on stderr so far ("Lost N events on CPU #c!")."""
        n = 0
        for m in re.finditer(r"lost (\d+) events", self.stderr_text(), re.IGNORECASE):
            n += int(m.group(1))
        return n

    def ready(self):
        # The tools print their header only into the block-buffered pipe, so watch the fds
        # instead: attached once it holds a BPF link or perf event and its fd set has not
        # changed for 0.5 s.
        from .procfs import bpf_fd_kinds
        kinds = bpf_fd_kinds(self.pid)
        attached = any(k in kinds for k in ("anon_inode:bpf_link", "anon_inode:[perf_event]"))
        stable = attached and kinds == self._last
        self._last = kinds
        if not stable:
            self._stable_since = None
            return False
        if self._stable_since is None:
            self._stable_since = time.monotonic()
        return time.monotonic() - self._stable_since >= 0.5

    def stop(self, timeout=TERM_TIMEOUT_S):
        desc = super().stop(timeout)
        self.reader.join(10)
        return desc


class LoadGenerator:
    """A load generator of bench/gen/ that prints a line when set up, waits for a line on
    stdin, runs, and prints its result as one line of JSON. `what` names it in errors."""

    def __init__(self, argv, what, preexec_fn=pdeathsig):
        self.argv, self.what = argv, what
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, preexec_fn=preexec_fn)

    def first_line(self):
        return self.proc.stdout.readline().decode().strip()

    def failed(self, line):
        """(status, its stderr or the line it printed) once it has exited."""
        rc = self.proc.wait()
        err = self.proc.stderr.read().decode("utf-8", "replace").strip()
        return rc, err or line or "no output"

    def run(self, timeout):
        """Says go, waits for the result (dies after timeout seconds): the JSON object."""
        from .cli import die
        self.proc.stdin.write(b"go\n")
        self.proc.stdin.flush()
        out = [None]

        def read():
            out[0] = self.proc.stdout.readline()
        t = threading.Thread(target=read, daemon=True)
        t.start()
        t.join(timeout)
        if out[0] is None:
            self.kill()
            die(f"{self.what} did not finish within {timeout:g} s")
        rc = self.proc.wait()
        err = self.proc.stderr.read().decode("utf-8", "replace").strip()
        try:
            return json.loads(out[0].decode())
        except ValueError:
            die(f"{self.what} failed (status {rc}): {err or 'no result'}")

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class Floor(Agent):
    """build/bench-floor: empty BPF programs on a set of hooks (bench/floor/floor.c), ready
    once it prints "ready" (every program attached)."""

    def __init__(self, name, floor_path, sets, obj=None):
        argv = [str(floor_path)] + (["--object", str(obj)] if obj else []) + list(sets)
        super().__init__(name, argv, stdout=subprocess.PIPE)
        self._out = b""

    def _read_out(self):
        fd = self.proc.stdout.fileno()
        while select.select([fd], [], [], 0)[0]:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            self._out += chunk

    def ready(self):
        self._read_out()
        return b"ready\n" in self._out

    def hooks_attached(self):
        """After SIGUSR1 (detach) or SIGUSR2 (attach again): the last state it printed."""
        self._read_out()
        last = self._out.rstrip(b"\n").rsplit(b"\n", 1)[-1]
        return last in (b"ready", b"attached")
