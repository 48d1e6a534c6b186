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
