"""Process events from the real agent: exec, exit (code, signal), wrappers, fork."""
import os
import signal
import subprocess
import time

import pytest

from conftest import by_pid, cgroup2_root


def run(argv):
    p = subprocess.Popen(argv)
    p.wait()
    return p


def exit_of(pid):
    return lambda evs: next((e for e in evs if e["type"] == "exit" and e["pid"] == pid), None)


def test_thousand_short_lived_true(tracer):
    pids = []
    for _ in range(1000):
        p = run(["/bin/true"])
        assert p.returncode == 0
        pids.append(p.pid)
    want = set(pids)

    def all_exited(evs):
        return {e["pid"] for e in evs if e["type"] == "exit" and e["pid"] in want} == want

    tracer.wait_for(all_exited, timeout=60, what="1000 exits")
    evs = tracer.snapshot()
    for pid in pids:
        execs = by_pid(evs, pid, "exec")
        exits = by_pid(evs, pid, "exit")
        assert [e["exe"] for e in execs] == ["/bin/true"], pid
        assert execs[0]["ppid"] == os.getpid()
        assert execs[0]["comm"] == "true"
        assert execs[0]["uid"] == 0
        assert len(exits) == 1 and exits[0]["code"] == 0 and exits[0]["signal"] == 0
        assert 0 < exits[0]["duration_ns"] < 10 * 10**9
        assert execs[0]["ts"] <= exits[0]["ts"]
        forks = by_pid(evs, pid, "fork")
        assert len(forks) == 1 and forks[0]["ppid"] == os.getpid()


def test_failing_exit_code(tracer):
    p = run(["sh", "-c", "exit 3"])
    assert p.returncode == 3
    ev = tracer.wait_for(exit_of(p.pid), what="exit of sh -c 'exit 3'")
    assert ev["code"] == 3 and ev["signal"] == 0


def test_killed_by_signal(tracer):
    for sig in (signal.SIGKILL, signal.SIGTERM):
        p = subprocess.Popen(["sleep", "30"])
        tracer.wait_for(lambda evs: by_pid(evs, p.pid, "exec"), what="exec of sleep")
        p.send_signal(sig)
        p.wait()
        ev = tracer.wait_for(exit_of(p.pid), what=f"exit of sleep killed by {sig.name}")
        assert ev["signal"] == sig and ev["code"] == 0
        assert ev["duration_ns"] > 0


def test_wrapper_exec_shows_two_execs(tracer):
    p = run(["/bin/sh", "-c", "exec /bin/true"])
    assert p.returncode == 0
    tracer.wait_for(exit_of(p.pid), what="exit of the wrapped process")
    execs = by_pid(tracer.snapshot(), p.pid, "exec")
    assert [e["exe"] for e in execs] == ["/bin/sh", "/bin/true"]
    assert execs[1]["args"] == "/bin/true"


def test_args_and_odd_bytes_in_trace_are_valid_json(tracer, tmp_path):
    # A program name with a quote, a backslash, a newline and invalid UTF-8.
    target = os.fsencode(str(tmp_path)) + b'/od"d\\\nme\xff'
    os.symlink("/bin/true", target)
    p = subprocess.Popen([target, "arg one", "two"])
    p.wait()
    ev = tracer.wait_for(lambda evs: next(iter(by_pid(evs, p.pid, "exec")), None))
    # The reader parsed the line with json.loads, so it was valid JSON; bytes survive.
    assert ev["exe"].encode("latin-1") == target
    assert ev["args"].encode("latin-1") == target + b" arg one two"


def test_forked_child_without_exec(tracer):
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    os.waitpid(pid, 0)
    ev = tracer.wait_for(exit_of(pid), what="exit of forked child")
    assert ev["code"] == 7
    forks = by_pid(tracer.snapshot(), pid, "fork")
    assert len(forks) == 1 and forks[0]["ppid"] == os.getpid()
    assert not by_pid(tracer.snapshot(), pid, "exec")


def test_threads_are_not_processes(tracer):
    script = "import threading\nts=[threading.Thread(target=lambda: None) for _ in range(20)]\n" \
             "[t.start() for t in ts]\n[t.join() for t in ts]\n"
    p = run(["/usr/bin/python3", "-c", script])
    assert p.returncode == 0
    tracer.wait_for(exit_of(p.pid), what="exit of threaded python")
    evs = tracer.snapshot()
    assert len(by_pid(evs, p.pid, "exit")) == 1
    assert not [e for e in evs if e["type"] == "fork" and e.get("ppid") == p.pid]


def test_short_lived_process_in_a_container_cgroup(agent_factory):
    """Moved into a cgroup v2 just before exec and gone at once: still its container's."""
    name = f"/nodescope-e2e-cg-{os.getpid()}"
    path = cgroup2_root() + name
    os.makedirs(path, exist_ok=True)
    try:
        agent = agent_factory("--events", "proc")
        p = run(["/bin/sh", "-c", f"echo $$ > {path}/cgroup.procs; exec /bin/true"])
        ex = agent.wait_for(exit_of(p.pid), what="exit of the process in the cgroup")
        assert ex["container"] == name
        execs = by_pid(agent.snapshot(), p.pid, "exec")
        assert [e["container"] for e in execs][-1] == name
        assert agent.metric("container_process_exits_total", container_id=name,
                            status="success") == 1
    finally:
        for _ in range(50):
            try:
                os.rmdir(path)
                break
            except OSError:
                time.sleep(0.1)


@pytest.fixture(scope="module")
def threads_exit(build_client):
    return build_client("threads_exit.c", "-pthread")


def test_one_exit_per_process_when_threads_exit_together(tracer, threads_exit):
    """Busy threads all leaving at once (exit() from a side thread, SIGKILL, SIGTERM): several of
    them can be in the exit path together, and exactly one exit is reported per process."""
    runs = []
    # Pids wrap at 32768 here, and this makes ~5,500 of them: another process that had one of
    # these pids may exit meanwhile (a shell's long `sleep`, seen once). So only this test's
    # lines count, and of those the exits of threads_exit.
    start = len(tracer.snapshot())

    def exits(evs, pid):
        return [e for e in by_pid(evs[start:], pid, "exit") if e.get("comm") == "threads_exit"]

    # Before the fix about 1 in 100 of these was reported twice.
    for i in range(300):
        p = subprocess.Popen([threads_exit, "16", "exit", "7"])
        assert p.wait(30) == 7
        runs.append((p.pid, 7, 0))
    for sig in (signal.SIGKILL, signal.SIGTERM) * 10:
        p = subprocess.Popen([threads_exit, "16", "wait"], stdout=subprocess.PIPE)
        assert p.stdout.readline() == b"ready\n"
        time.sleep(0.01)
        p.send_signal(sig)
        assert p.wait(30) == -sig
        runs.append((p.pid, 0, int(sig)))
    for pid, code, sig in runs:
        tracer.wait_for(lambda evs: exits(evs, pid), what=f"exit of {pid}")
    time.sleep(0.5)  # a duplicate would come right behind the first
    evs = tracer.snapshot()
    for pid, code, sig in runs:
        seen = exits(evs, pid)
        assert len(seen) == 1, seen
        assert seen[0]["code"] == code and seen[0]["signal"] == sig, seen
