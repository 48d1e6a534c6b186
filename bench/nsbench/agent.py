"""An agent or tracer process a benchmark measures: started with its stderr kept, killed with
this script (PR_SET_PDEATHSIG), ready when its /metrics answers (nodescope) or it prints a
ready line (the floor), and stopped with a signal and a deadline."""

import ctypes
import os
import select
import signal
import subprocess
import tempfile
import time
import urllib.error

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

    def stop(self, sig=signal.SIGTERM, timeout=TERM_TIMEOUT_S):
        """Signal, wait, SIGKILL after the timeout. Returns how it ended, in words."""
        if self.proc.poll() is not None:
            return f"had already exited (status {self.proc.returncode})"
        self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout)
            return f"died of signal {-rc}" if rc < 0 else f"exited with status {rc}"
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            warn(f"{self.name} did not exit within {timeout:g} s of {signal.Signals(sig).name}; "
                 f"sent SIGKILL")
            return f"did NOT exit within {timeout:g} s of {signal.Signals(sig).name}; sent SIGKILL"


class Floor(Agent):
    """build/bench-floor: empty BPF programs on a set of hooks (bench/floor/floor.c), ready
    once it prints "ready" (every program attached)."""

    def __init__(self, name, floor_path, sets, obj=None):
        argv = [str(floor_path)] + (["--object", str(obj)] if obj else []) + list(sets)
        super().__init__(name, argv, stdout=subprocess.PIPE)
        self._out = b""

    def ready(self):
        fd = self.proc.stdout.fileno()
        while select.select([fd], [], [], 0)[0]:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            self._out += chunk
        return b"ready\n" in self._out
