"""bench/'s interleaved runs (bench/nsbench/interleave.py): which seconds pair with which."""
import os
import sys
import threading

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from nsbench.interleave import RateSampler, pair_ratios, pairs_table  # noqa: E402

BLOCK = 3


def flips_every(n, t0=1000.0, lag=0.2):
    """Flips at t0 + BLOCK, + 3 BLOCK, ...: off, on, off, ...; each confirmed lag later."""
    out, on = [], True
    for k in range(n):
        sent = t0 + (2 * k + 1) * BLOCK + 0.4
        on = not on
        out.append((sent, sent + lag, on))
    return out


def progress_for(flips, seconds, rate_on, rate_off, t0=1000.0, drift=0.0):
    """The client's per-second report: the hooks' state through the second, a garbage rate for
    a second a flip touches (it must be in no pair), and a drift of the whole machine."""
    out = []
    for i in range(1, seconds + 1):
        t = t0 + i
        touching = [f for f in flips if f[0] <= t and f[1] >= t - 1]
        done = [f for f in flips if f[1] < t - 1]
        on = done[-1][2] if done else True
        rate = 1.0 if touching else (rate_on if on else rate_off)
        out.append((t, rate * (1 + drift * i)))
    return out


def test_each_flip_pairs_the_seconds_either_side():
    fl = flips_every(5)
    ratios = pair_ratios(progress_for(fl, 2 * 5 * BLOCK + 2, 90.0, 100.0), fl, BLOCK)
    assert ratios == [pytest.approx(0.9)] * 5  # the touched seconds' garbage is in none


def test_a_steady_drift_cancels_in_the_median():
    # The pairs alternate which side comes first: a machine slowing down steadily pushes
    # half of them up and half down.
    fl = flips_every(6)
    ratios = sorted(pair_ratios(progress_for(fl, 2 * 6 * BLOCK + 2, 90.0, 100.0, drift=-0.01),
                                fl, BLOCK))
    assert len(ratios) == 6
    assert ratios[2] < 0.9 < ratios[3]
    assert (ratios[2] + ratios[3]) / 2 == pytest.approx(0.9, abs=0.003)


def test_a_flip_without_seconds_on_both_sides_makes_no_pair():
    fl = flips_every(3)
    progress = progress_for(fl, 2 * 3 * BLOCK + 2, 90.0, 100.0)
    last = fl[-1][1]
    assert len(pair_ratios([p for p in progress if p[0] <= last], fl, BLOCK)) == 2


def test_rate_sampler_pairs_only_consecutive_reads():
    # A failed read breaks the chain: the rate is never taken across it, so a count that
    # moved while unseen is not put in one second.
    calls, enough = [], threading.Event()

    def count():
        calls.append(len(calls) + 1)
        if len(calls) >= 8:
            enough.set()
        if len(calls) == 3:
            raise OSError("the server said garbage")
        return 10 * len(calls)

    with RateSampler(count, period_s=0.01) as s:
        assert enough.wait(10)
    n = len(calls)
    assert s.errors == ["the server said garbage"]
    # n reads, one failed: pairs (1, 2), (4, 5), ... (n-1, n)
    assert len(s.progress) == n - 3
    times = [t for t, _ in s.progress]
    assert times == sorted(times)
    assert all(rate > 0 for _, rate in s.progress)


def test_pairs_table_judges_each_row_on_its_own_target():
    rows = pairs_table(["config"], [(["nodescope"], [0.8, 0.82, 0.81, 0.79, 0.83, 0.8], 0.85),
                                    (["floor"], [0.95] * 6, None)])
    assert rows[0] == "| config | pairs | paired ratio (hooks on ÷ off) | target |"
    assert rows[1] == "|---|---:|---:|---|"
    assert rows[2].startswith("| nodescope | 6 | 0.805 (0.790–0.830) | ≥ 0.85: **no**")
    assert rows[3] == "| floor | 6 | 0.950 (0.950–0.950) | — |"
