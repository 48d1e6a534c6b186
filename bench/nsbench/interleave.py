"""One client run with the agent's hooks turned off and on every few seconds (nodescope
--debug-hook-signals, or bench-floor: SIGUSR1 detaches the programs, SIGUSR2 attaches them
again), paired flip by flip. Rounds of separate runs are a minute apart, and on a shared
machine the baseline drifts by a fifth in a minute; the seconds either side of a flip are
seconds apart and share the drift.

The client reports its own rate each second with a wall-clock timestamp (pgbench -P 1
--progress-timestamp), or a RateSampler reads the server's count of requests each second
(nginx's stub_status, under wrk); each flip makes a pair, the seconds just before it against
those just after it."""

import signal
import threading
import time

from .fmt import fmt_paired, fmt_verdict, target_verdict


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


class RateSampler:
    """A client that reports no rate of its own (wrk says only its total at the end): the
    server's cumulative count of requests, read every second on a thread, made into the
    per-second rates pair_ratios takes. count() returns the count, or raises OSError."""

    def __init__(self, count, period_s=1.0):
        self.count, self.period_s = count, period_s
        self.progress, self.errors = [], []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        last = None
        t0 = time.time()
        k = 0
        while not self._stop.is_set():
            try:
                c, t = self.count(), time.time()
            except OSError as e:
                self.errors.append(str(e))
                last = None
            else:
                if last is not None and t > last[1]:
                    # the rate over the real interval, stamped at its end as pgbench's are
                    self.progress.append((t, (c - last[0]) / (t - last[1])))
                last = (c, t)
            k += 1
            self._stop.wait(max(0.0, t0 + k * self.period_s - time.time()))

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def pairs_table(head, rows):
    """The Markdown table of an interleaved run: head, the leading columns' names; rows, [(their
    cells, the pairs' ratios, the throughput target or None)]."""
    out = ["| " + " | ".join(head) + " | pairs | paired ratio (hooks on ÷ off) | target |",
           "|" + "---|" * len(head) + "---:|---:|---|"]
    for cells, ratios, target in rows:
        verdict = fmt_verdict(target, *target_verdict(target, ratios)) if target else "—"
        out.append("| " + " | ".join(cells) + f" | {len(ratios)} | {fmt_paired(ratios)} | {verdict} |")
    return out


def pairs_notes(block_s, rate):
    """The notes under pairs_table (rate: where the seconds' rates come from, e.g. "pgbench's
    report")."""
    return [
        f"- each flip (SIGUSR1 detaches the agent's probes, SIGUSR2 attaches them again; the flip "
        f"lasts until /healthz says so) pairs the seconds of {rate} in the {block_s} s before it "
        f"with those in the {block_s} s after it, a second the flip touches in neither; the ratio is "
        "the mean rate with the hooks on over the mean with them off. The pairs alternate which "
        "side comes first, so a steady drift of the machine cancels in their median.",
        "- hooks off is the agent idle with nothing attached: the kernel runs no program of its, "
        "as with no agent; its memory and maps stay. Hooks on is the agent as in its config (the "
        "sockets it tracks stay tracked across the flips); a capture floor (bench-floor) takes "
        "the same signals and prints its state on stdout.",
        "- in brackets, the interval that holds the median of the pairs' ratios with the "
        "probability the target column shows (order statistics); the target is judged on it."]
