"""Nothing lost silently: with a tiny ring buffer (or perf buffers) and a frozen reader, received +
lost = sent."""
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import Agent, cgroup2_root

N = 2000
EVENTS_PER_PROCESS = 3  # fork, exec, exit

# Runs in its own cgroup v2 so the agent (--cgroup) counts nothing else on the node.
LAUNCHER = r"""
import os, sys
with open(sys.argv[1] + "/cgroup.procs", "w") as f:
    f.write(str(os.getpid()))
print("ready", flush=True)
sys.stdin.readline()
for _ in range(int(sys.argv[2])):
    os.waitpid(os.posix_spawn("/bin/true", ["/bin/true"], {}), 0)
print("done", flush=True)
sys.stdin.readline()
"""


@pytest.fixture
def storm_cgroup():
    path = os.path.join(cgroup2_root(), f"nodescope-e2e-storm-{os.getpid()}")
    os.makedirs(path, exist_ok=True)
    yield path
    for _ in range(50):
        try:
            os.rmdir(path)
            return
        except OSError:
            time.sleep(0.1)


def counters(agent):
    m = agent.metrics()
    key = frozenset({("stream", "proc")})
    return m["nodescope_events_total"][key], m["nodescope_events_lost_total"][key]


def settle(agent):
    last = None
    while True:
        c = counters(agent)
        if c == last:
            return c
        last = c
        time.sleep(0.5)


# Ring buffer, and per-CPU perf buffers as on kernels before 5.8 (4k is then 32 KiB a CPU).
@pytest.mark.parametrize("kernel", [[], ["--debug-kernel-lacks", "ring_buffer"]], ids=["ring", "perf"])
def test_exec_storm_with_tiny_ring_buffer(storm_cgroup, kernel):
    agent = Agent("--ringbuf-size", "proc=4k", "--cgroup", storm_cgroup, *kernel, trace=False)
    launcher = subprocess.Popen([sys.executable, "-c", LAUNCHER, storm_cgroup, str(N)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert launcher.stdout.readline().strip() == "ready"
        ev0, lost0 = settle(agent)
        # Freeze the reader so the 4 KiB ring must overflow.
        os.kill(agent.proc.pid, signal.SIGSTOP)
        try:
            launcher.stdin.write("go\n")
            launcher.stdin.flush()
            assert launcher.stdout.readline().strip() == "done"
        finally:
            os.kill(agent.proc.pid, signal.SIGCONT)
        ev1, lost1 = settle(agent)
        received, lost = ev1 - ev0, lost1 - lost0
        print(f"received {received:.0f} lost {lost:.0f} of {N * EVENTS_PER_PROCESS}")
        assert lost > 0, "the ring buffer should have overflowed"
        assert received + lost == N * EVENTS_PER_PROCESS
    finally:
        launcher.kill()
        launcher.wait()
        agent.stop()


def test_cgroup_filter_rejects_other_directories():
    from conftest import AGENT
    p = subprocess.run([AGENT, "trace", "--cgroup", "/tmp"], capture_output=True, text=True,
                       timeout=30)
    assert p.returncode == 2 and "not a cgroup v2 directory" in p.stderr
