"""Nothing lost silently: with a tiny ring buffer and a frozen reader, received + lost = sent."""
import os
import signal
import time

from conftest import Agent

N = 2000
EVENTS_PER_PROCESS = 3  # fork, exec, exit


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


def test_exec_storm_with_tiny_ring_buffer():
    agent = Agent("--ringbuf-size", "proc=4k", trace=False)
    try:
        ev0, lost0 = settle(agent)
        # Freeze the reader so the 4 KiB ring must overflow; spawn without exec'ing
        # anything else (posix_spawn from this already-running process).
        os.kill(agent.proc.pid, signal.SIGSTOP)
        try:
            for _ in range(N):
                pid = os.posix_spawn("/bin/true", ["/bin/true"], {})
                os.waitpid(pid, 0)
        finally:
            os.kill(agent.proc.pid, signal.SIGCONT)
        ev1, lost1 = settle(agent)
        received, lost = ev1 - ev0, lost1 - lost0
        print(f"received {received:.0f} lost {lost:.0f} of {N * EVENTS_PER_PROCESS}")
        assert lost > 0, "the ring buffer should have overflowed"
        assert received + lost == N * EVENTS_PER_PROCESS
    finally:
        agent.stop()
