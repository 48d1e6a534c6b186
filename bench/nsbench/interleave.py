"""One client run with the agent's hooks turned off and on every few seconds (nodescope
--debug-hook-signals, or bench-floor: SIGUSR1 detaches the programs, SIGUSR2 attaches them
again), paired flip by flip. Rounds of separate runs are a minute apart, and on a shared
machine the baseline drifts by a fifth in a minute; the seconds either side of a flip are
seconds apart and share the drift.

The client reports its own rate each second with a wall-clock timestamp (pgbench -P 1
--progress-timestamp); each flip makes a pair, the seconds just before it against those just
after it."""

import signal
import time


def flip(agent, on, timeout=5.0):
    """Turns the hooks on or off (agent: a nodescope with --debug-hook-signals or a floor, whose
    hooks_attached() says where they are); returns (sent, confirmed) wall times, or None if
    they did not follow within timeout."""
    sent = time.time()
    agent.proc.send_signal(signal.SIGUSR2 if on else signal.SIGUSR1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if agent.hooks_attached() == on:
            return sent, time.time()
        time.sleep(0.02)
    return None


def run_flipping(client, agent, block_s, seconds):
    """While client (a Popen) runs, flips the hooks at block_s, 3 block_s, 5 block_s, ... seconds
    (starting on: the client's connections are made with the hooks on, so the agent tracks them,
    and keeps them tracked across the flips). Returns [(sent, confirmed, on after)], or raises
    RuntimeError."""
    flips, on, t0 = [], True, time.time()
    k = 0
    while (2 * k + 2) * block_s <= seconds:
        pause = t0 + (2 * k + 1) * block_s - time.time()
        if pause > 0:
            time.sleep(pause)
        if client.poll() is not None:
            break
        on = not on
        w = flip(agent, on)
        if w is None:
            raise RuntimeError(f"{agent.name}'s hooks were not {'attached' if on else 'detached'} "
                               "within 5 s of the signal")
        flips.append((*w, on))
        k += 1
    if not on:
        flip(agent, True)
    return flips


def pair_ratios(progress, flips, block_s):
    """One pair per flip: the client's seconds within block_s before the flip against those
    within block_s after it (a second touching the flip, from the signal to /healthz saying so,
    in neither), the one with the hooks on over the one with them off. Flips are 2 block_s
    apart, so no second is in two pairs, and the pairs alternate which side comes first.
    progress: [(wall time at the second's end, rate)]."""
    ratios = []
    for sent, confirmed, on_after in flips:
        before = [r for t, r in progress if t - 1 >= sent - block_s and t <= sent]
        after = [r for t, r in progress if t - 1 >= confirmed and t <= confirmed + block_s]
        if not before or not after:
            continue
        on, off = (after, before) if on_after else (before, after)
        ratios.append((sum(on) / len(on)) / (sum(off) / len(off)))
    return ratios
