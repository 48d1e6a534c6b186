"""--hold-first-runs never leaves a process stopped.

A process that runs or maps a file not probed yet is stopped (SIGSTOP from the BPF side) until the
agent has probed that file, then continued (SIGCONT). Here the agent is killed with SIGKILL at many
moments while fresh programs start all the time, and its watchdog is killed too: every one of those
programs must run to its end. (That held first runs are all captured is in test_go_tls.py and
test_tls.py.)
"""
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time

from conftest import AGENT, Agent


class FreshLaunches:
    """A thread that keeps starting fresh copies of /bin/true (a new inode each, so each is held)
    and records, for each, whether it exited within the deadline."""

    def __init__(self, directory, deadline=20):
        self.dir = directory
        self.deadline = deadline
        self.stuck = []
        self.launched = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        i = 0
        while not self.stop.is_set():
            exe = os.path.join(self.dir, f"t{i}")
            shutil.copy("/bin/true", exe)
            p = subprocess.Popen([exe])
            try:
                p.wait(self.deadline)
            except subprocess.TimeoutExpired:
                self.stuck.append((p.pid, proc_state(p.pid)))
                p.kill()
                p.wait()
            os.unlink(exe)
            self.launched += 1
            i += 1

    def finish(self):
        self.stop.set()
        self.thread.join(self.deadline + 10)
        assert not self.thread.is_alive()


def proc_state(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
        return stat[stat.rindex(")") + 2]
    except OSError:
        return "gone"


def wait_stopped(pid):
    """Waits until pid is stopped (state T); deterministic once something holds it."""
    deadline = time.monotonic() + 10
    while proc_state(pid) != "T" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert proc_state(pid) == "T"


def held_first_run(agent, directory):
    """Freezes the agent (SIGSTOP), then starts a program never seen before: it is held at its
    exec. Returns its Popen."""
    exe = os.path.join(directory, "true")
    shutil.copy("/bin/true", exe)
    os.kill(agent.proc.pid, signal.SIGSTOP)
    p = subprocess.Popen([exe])
    wait_stopped(p.pid)
    return p


def watchdog_of(agent_pid):
    out = subprocess.run(["ps", "-o", "pid=,comm=", "--ppid", str(agent_pid)], capture_output=True, text=True).stdout
    for line in out.splitlines():
        pid, comm = line.split()
        if comm == "nodescope-hold":
            return int(pid)
    return None


def test_sigkill_at_any_moment_leaves_nothing_stopped():
    d = tempfile.mkdtemp(prefix="nodescope-e2e-hold.")
    launches = FreshLaunches(d)
    try:
        # Killed right after start-up and at growing ages, with first runs arriving throughout.
        for delay in (0, 0.001, 0.005, 0.02, 0.05, 0.1, 0.3):
            a = Agent("--events", "files", "--hold-first-runs", listen=False)
            before = launches.launched
            time.sleep(delay)
            a.proc.send_signal(signal.SIGKILL)
            a.proc.wait()
            # Launches go on after the kill: none may wait forever.
            deadline = time.monotonic() + 20
            while launches.launched < before + 5 and time.monotonic() < deadline:
                time.sleep(0.01)
            assert launches.launched >= before + 5, (delay, launches.launched, launches.stuck)
    finally:
        launches.finish()
        shutil.rmtree(d, ignore_errors=True)
    assert launches.stuck == [], launches.stuck


def test_held_while_the_agent_is_stopped_then_continued_by_the_watchdog():
    """The agent itself frozen (SIGSTOP) holds the next first run; SIGKILL then must free it."""
    d = tempfile.mkdtemp(prefix="nodescope-e2e-hold.")
    a = Agent("--events", "files", "--hold-first-runs", listen=False)
    try:
        # Deterministic: it is stopped at its exec until someone continues it.
        p = held_first_run(a, d)
        a.proc.send_signal(signal.SIGKILL)
        a.proc.wait()
        assert p.wait(10) == 0
    finally:
        if a.proc.poll() is None:
            a.proc.kill()
            a.proc.wait()
        shutil.rmtree(d, ignore_errors=True)


def test_watchdog_gone_turns_holds_off(agent_factory):
    a = agent_factory("--events", "files", "--hold-first-runs")
    wd = watchdog_of(a.proc.pid)
    assert wd, "no nodescope-hold watchdog under the agent"
    os.kill(wd, signal.SIGKILL)
    a.wait_for(lambda _: "first runs are no longer held" in a.stderr(), timeout=10, what="watchdog notice")
    d = tempfile.mkdtemp(prefix="nodescope-e2e-hold.")
    try:
        held = a.metrics()["nodescope_first_run_hold_seconds_count"][frozenset()]
        os.kill(a.proc.pid, signal.SIGSTOP)
        try:
            exe = os.path.join(d, "true")
            shutil.copy("/bin/true", exe)
            # Not held any more: it runs to its end although the agent is frozen.
            assert subprocess.run([exe], timeout=10).returncode == 0
        finally:
            os.kill(a.proc.pid, signal.SIGCONT)
        assert a.metrics()["nodescope_first_run_hold_seconds_count"][frozenset()] == held
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_clean_stop_continues_what_is_held(agent_factory):
    """SIGTERM while a first run is held: it goes on, and the agent exits cleanly."""
    a = agent_factory("--events", "files", "--hold-first-runs")
    d = tempfile.mkdtemp(prefix="nodescope-e2e-hold.")
    try:
        p = held_first_run(a, d)
        os.kill(a.proc.pid, signal.SIGTERM)
        os.kill(a.proc.pid, signal.SIGCONT)
        assert p.wait(10) == 0
        assert a.proc.wait(10) == 0
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_hold_needs_tls():
    p = subprocess.run([AGENT, "--no-tls", "--hold-first-runs"], capture_output=True, text=True)
    assert p.returncode == 2 and "--hold-first-runs" in p.stderr and "--no-tls" in p.stderr, p
