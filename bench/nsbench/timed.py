"""An agent started and timed: spawn, ready, SIGTERM and exit, each moment taken when it happens
(bench/idle's start-up and shutdown timing; bench/scrape's agent)."""

import json
import os
import shlex
import signal
import subprocess
import threading
import time

from .agent import READY_TIMEOUT_S, TERM_TIMEOUT_S, pdeathsig
from .ports import free_port
from .procfs import sample

READY_LINE = '{"type":"ready"}'           # trace mode says so on stdout
METRICS_READY_LINE = "nodescope: ready"   # metrics mode says so on stderr


def kib_to_mib(v):
    # "/proc/PID/status" reports e.g. "VmRSS:     1234 kB"
    return int(v.split()[0]) / 1024.0


def is_ready_line(raw):
    line = raw.strip().decode("utf-8", "replace")
    if line == READY_LINE:
        return True
    try:
        return json.loads(line) == {"type": "ready"}
    except ValueError:
        return False


class TimedStart:
    """One start of the agent, timed: spawn -> ready line -> (hold) -> SIGTERM -> exit.
    Ready is {"type":"ready"} on stdout (trace) or "nodescope: ready" on stderr (metrics
    mode), whichever comes first. Both pipes are read to the end by threads, and a third
    thread sits in waitpid, so each moment is taken when it happens (not polled)."""

    def __init__(self, argv, clk_tck):
        self.argv, self.clk_tck = argv, clk_tck
        self.lock = threading.Lock()
        self.ready = threading.Event()
        self.exited = threading.Event()
        self.t_ready = self.t_exit = self.cpu_ms = self.cpu_term_ms = self.cpu_total_ms = None
        self.err_lines = []
        self.t_spawn = time.monotonic()
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, preexec_fn=pdeathsig)
        self.threads = [threading.Thread(target=f, daemon=True)
                        for f in (self._read_out, self._read_err, self._wait)]
        for t in self.threads:
            t.start()

    def _cpu_now(self):
        """The agent's CPU so far, all threads (schedstat ns when the kernel has it), in ms."""
        try:
            s = sample(self.proc.pid)
            return s["sched_ns"] / 1e6 if s["sched_ok"] else s["ticks"] / self.clk_tck * 1000.0
        except (ProcessLookupError, FileNotFoundError, ValueError, KeyError):
            return None

    def _mark_ready(self):
        t = time.monotonic()
        with self.lock:
            if self.ready.is_set():
                return
            self.t_ready = t
            self.cpu_ms = self._cpu_now()
            self.ready.set()

    def _read_out(self):
        for raw in iter(self.proc.stdout.readline, b""):
            if not self.ready.is_set() and is_ready_line(raw):
                self._mark_ready()

    def _read_err(self):
        for raw in iter(self.proc.stderr.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\n")
            if not self.ready.is_set() and line.strip() == METRICS_READY_LINE:
                self._mark_ready()
            with self.lock:
                self.err_lines.append(line)
                del self.err_lines[:-40]

    def _wait(self):
        # wait4 rather than Popen.wait: the same moment, plus the child's total CPU time.
        # Signals go out with os.kill (not Popen.send_signal, which polls and could reap).
        while True:
            try:
                _, status, ru = os.wait4(self.proc.pid, 0)
                break
            except InterruptedError:
                continue
            except ChildProcessError:
                status, ru = None, None
                break
        self.t_exit = time.monotonic()
        if status is not None:
            self.proc.returncode = os.waitstatus_to_exitcode(status)
            self.cpu_total_ms = (ru.ru_utime + ru.ru_stime) * 1000.0
        elif self.proc.returncode is None:
            self.proc.returncode = 0
        self.exited.set()

    def wait_ready(self, timeout):
        """True once ready; False if the agent exited first or the timeout passed."""
        deadline = time.monotonic() + timeout
        while not self.ready.wait(0.05):
            if self.exited.is_set() or time.monotonic() >= deadline:
                return self.ready.is_set()
        return True

    def stderr_tail(self):
        for t in self.threads[:2]:
            t.join(2)
        with self.lock:
            return [l for l in self.err_lines if l.strip()][-8:]

    def stop(self, timeout=TERM_TIMEOUT_S):
        """SIGTERM, wait up to timeout s for the exit, then SIGKILL.
        Returns (ms from SIGTERM to exit, or None if it had to be killed, exit status)."""
        if self.exited.is_set():
            return None, self.proc.returncode
        self.cpu_term_ms = self._cpu_now()
        t_term = time.monotonic()
        try:
            os.kill(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        if not self.exited.wait(timeout):
            try:
                os.kill(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.exited.wait()
            return None, self.proc.returncode
        for t in self.threads:
            t.join(5)
        return (self.t_exit - t_term) * 1000.0, self.proc.returncode


def status_text(rc):
    if rc is None:
        return "?"
    return f"signal {-rc}" if rc < 0 else f"status {rc}"


def start_metrics_agent(agent_path, extra, clk_tck, used_ports):
    """A TimedStart of PATH --listen 127.0.0.1:PORT [extra], ready and answering /metrics."""
    for attempt in range(3):
        port = free_port(used_ports)
        if port is None:
            raise RuntimeError("no free TCP port on 127.0.0.1")
        st = TimedStart([agent_path, "--listen", f"127.0.0.1:{port}"] + list(extra), clk_tck)
        try:
            ok = st.wait_ready(READY_TIMEOUT_S)
        except BaseException:
            st.stop()
            raise
        if ok:
            return st, port
        exited_first = st.exited.is_set()
        _, rc = st.stop()
        if exited_first and rc == 6 and attempt < 2:
            continue        # the port was taken meanwhile
        why = (f"exited ({status_text(rc)}) before it was ready" if exited_first
               else f"was not ready within {READY_TIMEOUT_S:g} s (stopped: {status_text(rc)})")
        raise RuntimeError(f"{shlex.join(st.argv)} {why}; its stderr: "
                           + (" / ".join(st.stderr_tail()) or "(none)"))
    raise RuntimeError("could not start the agent")
