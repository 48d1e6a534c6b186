"""bench/'s shared statistics (bench/nsbench/fmt.py): the interval a target is judged on."""
import math
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from nsbench.fmt import count, fmt_paired, fmt_verdict, median_interval, paired_ratios, target_verdict  # noqa: E402


def binomial_cdf(n, k):
    return sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n


@pytest.mark.parametrize("n", range(1, 41))
def test_interval_is_the_widest_order_statistics_reaching_95_percent(n):
    lo, hi, cov = median_interval(list(range(1, n + 1)))
    k = lo  # the values are their own ranks
    assert hi == n + 1 - k
    assert cov == pytest.approx(1 - 2 * binomial_cdf(n, k - 1))
    if n < 6:
        assert (lo, hi) == (1, n) and cov < 0.95  # min and max fall short: said so
    else:
        assert cov >= 0.95
        # one rank further in would no longer reach 95 %
        assert k + 1 > (n + 1) // 2 or 1 - 2 * binomial_cdf(n, k) < 0.95


def test_known_intervals():
    assert median_interval([3, 1, 2, 7, 5, 4, 6]) == (1, 7, pytest.approx(0.984375))
    lo, hi, _ = median_interval(range(1, 26))
    assert (lo, hi) == (8, 18)
    assert median_interval([]) is None
    assert median_interval([None, 2.0]) == (2.0, 2.0, 0.0)


def test_verdicts():
    assert target_verdict(0.9, [0.91, 0.95, 0.93, 0.97, 0.92, 0.94, 0.96])[0] == "yes"
    assert target_verdict(0.9, [0.81, 0.85, 0.83, 0.87, 0.82, 0.84, 0.86])[0] == "no"
    # one round below among seven: min–max straddles 0.9
    assert target_verdict(0.9, [0.95, 0.85, 0.93, 0.97, 0.92, 0.94, 0.96])[0] == "undecided"
    assert target_verdict(0.9, []) == (None, None)
    # all five above, all five below: min–max holds the median with 94 % only, short of 95 %
    assert target_verdict(0.9, [0.91, 0.95, 0.93, 0.97, 0.92])[0] == "undecided"
    assert target_verdict(0.9, [0.81, 0.85, 0.83, 0.87, 0.82])[0] == "undecided"
    assert target_verdict(0.9, [0.81, 0.85, 0.83, 0.87, 0.82], level=0.9)[0] == "no"
    assert fmt_verdict(0.9, *target_verdict(0.9, [0.8, 0.85, 0.82, 0.81, 0.84, 0.83])) == \
        "≥ 0.9: **no** (paired 0.800–0.850, 97 %)"


def test_paired_ratios_skip_rounds_without_both():
    assert paired_ratios({0: 90.0, 1: None, 2: 80.0}, {0: 100.0, 1: 100.0, 2: 0}) == [0.9]


def test_paired_cell_shows_the_interval_from_three_rounds():
    assert fmt_paired([]) == "—"
    assert fmt_paired([0.9, 0.8]) == "0.850"
    assert fmt_paired([0.9, 0.8, 0.85]) == "0.850 (0.800–0.900)"


def test_count_says_one_round_and_rounds():
    assert count(1, "round") == "1 round"
    assert count(3, "round") == "3 rounds"
    assert count(0, "pair") == "0 pairs"
