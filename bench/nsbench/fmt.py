"""Markdown cells and the medians behind them."""

import math
import statistics


def med(values):
    """Median of the values that are not None, or None."""
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def fmt(v, spec=".1f", none="—"):
    return none if v is None else format(v, spec)


def fmt_pct(v, spec=".1f"):
    return "—" if v is None else f"{v * 100:{spec}}%"


def count(n, word):
    """`1 round`, `3 rounds`."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def md(s):
    """A table cell: pipes escaped, on one line."""
    return str(s).replace("|", "\\|").replace("\n", " ")


def paired_ratios(values, base_values):
    """Each round's ratio of a config's figure to the baseline's in the same round ({round:
    value} each), for the rounds that have both. A round runs every config within a minute or
    so, so a machine slower for a while slows the baseline with them: the median of these sees
    less of that than the ratio of the medians, whose numerator and denominator may come from
    different rounds."""
    return [v / base_values[k] for k, v in values.items() if v is not None and base_values.get(k)]


def median_interval(values, level=0.95):
    """Where the median of what was sampled lies, without assuming a distribution: (low, high,
    coverage), the order statistics x(k) and x(n+1-k) for the largest k whose interval holds
    the median with probability >= level (the count of values below the median is binomial with
    p = 1/2); min and max, with the smaller coverage they have, when even they fall short (fewer
    than 6 values for 95 %). None without values."""
    xs = sorted(v for v in values if v is not None)
    n = len(xs)
    if not n:
        return None

    def coverage(k):  # P(k <= B <= n - k), B ~ Binomial(n, 1/2)
        return 1 - 2 * sum(math.comb(n, i) for i in range(k)) / 2 ** n

    k = 1
    while k + 1 <= (n + 1) // 2 and coverage(k + 1) >= level:
        k += 1
    return xs[k - 1], xs[n - k], coverage(k)


def target_verdict(target, ratios, level=0.95):
    """Whether a throughput target (a ratio to the baseline) is met, judged on the interval of
    the median paired ratio (median_interval): "yes" when all of it is at or above the target,
    "no" when all of it is below, "undecided" when the rounds' spread straddles it, or when too
    few rounds give even min–max the probability level (fewer than 6 for 95 %): more rounds
    narrow it. Returns (verdict, interval or None)."""
    iv = median_interval(ratios, level)
    if iv is None:
        return None, None
    lo, hi, coverage = iv
    if coverage < level:
        return "undecided", iv
    return ("yes" if lo >= target else "no" if hi < target else "undecided"), iv


def fmt_paired(ratios):
    """A paired-ratio cell: the median and, from 3 rounds on, its interval (median_interval):
    `0.820 (0.748–0.929)`."""
    iv = median_interval(ratios)
    if iv is None:
        return "—"
    if len(ratios) < 3:
        return f"{med(ratios):.3f}"
    return f"{med(ratios):.3f} ({iv[0]:.3f}–{iv[1]:.3f})"


def fmt_verdict(target, verdict, iv):
    """A target cell: `≥ 0.9: yes (paired 0.912–0.951, 95 %)`."""
    if verdict is None:
        return "—"
    v = "**no**" if verdict == "no" else verdict
    lo, hi, cov = iv
    return f"≥ {target:g}: {v} (paired {lo:.3f}–{hi:.3f}, {cov * 100:.0f} %)"
