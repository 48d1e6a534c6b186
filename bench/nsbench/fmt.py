"""Markdown cells and the medians behind them."""

import statistics


def med(values):
    """Median of the values that are not None, or None."""
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def fmt(v, spec=".1f", none="—"):
    return none if v is None else format(v, spec)


def fmt_pct(v, spec=".1f"):
    return "—" if v is None else f"{v * 100:{spec}}%"


def md(s):
    """A table cell: pipes escaped, on one line."""
    return str(s).replace("|", "\\|").replace("\n", " ")


def paired_ratio(values, base_values):
    """Median over rounds of a config's figure over the baseline's in the same round ({round:
    value} each). A round runs every config within a minute or so, so a machine slower for a
    while slows the baseline with them: the paired ratio sees less of that than the ratio of
    the medians, whose numerator and denominator may come from different rounds."""
    return med([v / base_values[k] for k, v in values.items()
                if v is not None and base_values.get(k)])
