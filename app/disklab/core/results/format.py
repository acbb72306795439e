"""The one way DiskLab writes a figure, a parameter set or a delta as text.

`disklab show`, `disklab compare`, the GUI's tables and every export (HTML, Markdown, SVG) call
`format_value` for a figure, so the same mean reads the same on every surface.

The choice, made for people comparing storage: one display unit per canonical unit (B/s as
MB/s, ns as µs, bytes as MB; MiB/s and MiB in the IEC units choice, core.vocab.units), never
switched per value. A column of a comparison then reads in one unit, lines up with the axis of
its chart, and 980 MB/s next to 1380 MB/s is not misread as 980 against 1.35. Figures carry
three significant digits (whole numbers are never rounded away: 1380, 105, 95.4, 2.50,
0.0123), which is finer than the run-to-run noise of any disk benchmark and never falls into
scientific notation.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from disklab.core.results.rows import row_params
from disklab.core.vocab.model import SIZE_KEYS
from disklab.core.vocab.units import format_size, number, rate_unit, size_unit

MISSING = "–"  # a figure that is not there (not measured, or no baseline to compare with)


def display_unit(unit: str) -> tuple[str, float]:
    """Canonical unit -> (display unit, divisor): B/s shows as MB/s (MiB/s), ns as µs, B as MB
    (MiB), in the units choice of core.vocab.units."""
    if unit == "B/s":
        return rate_unit()
    if unit == "ns":
        return "µs", 1000.0
    if unit == "B":
        return size_unit()
    return unit, 1.0


def format_value(value: float | None, unit: str) -> str:
    """THE text of one figure, in its display unit: '1380 MB/s', '86.5 µs', '12500 op/s'."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    shown, div = display_unit(unit)
    return f"{number(value / div)} {shown}".rstrip()


def format_stddev(stddev: float | None, n: int, unit: str) -> str:
    """The stddev of a mean over n repeats; empty when there is none (a single repeat)."""
    if stddev is None or n < 2:
        return ""
    return format_value(stddev, unit)


def format_mean_std(mean: float | None, stddev: float | None, n: int, unit: str) -> str:
    """'105 MB/s ± 13.5 MB/s' (both figures written by format_value), or the mean alone."""
    text = format_value(mean, unit)
    spread = format_stddev(stddev, n, unit) if mean is not None else ""
    return f"{text} ± {spread}" if spread else text


def format_delta(pct: float | None) -> str:
    """A change against a baseline in per cent: '+4.2 %', '-20.0 %'; MISSING without one."""
    return MISSING if pct is None else f"{pct:+.1f} %"


def format_signed(value: float | None, unit: str) -> str:
    """A signed figure in its display unit: '+281 MB/s', '-183 MB/s' (a difference)."""
    if value is None or not math.isfinite(value):
        return MISSING
    text = format_value(value, unit)
    return text if text.startswith("-") else f"+{text}"


def format_spread(n: int, cv: float | None) -> str:
    """How far a mean can be trusted: 'n=3, CV 4.1 %' (CV: stddev over mean), 'n=1'."""
    if n < 2 or cv is None:
        return f"n={n}"
    return f"n={n}, CV {100.0 * cv:.1f} %"


def format_cv(cv: float | None) -> str:
    """A coefficient of variation in per cent: '4.1 %'; empty without one (n < 2)."""
    return "" if cv is None else f"{100.0 * cv:.1f} %"


def format_p(p: float | None) -> str:
    """A p-value as a reviewer reads it: 'p = 0.78', 'p = 0.012', 'p < 0.001'."""
    if p is None:
        return MISSING
    if p < 0.001:
        return "p < 0.001"
    # three significant digits below 0.1, so a p of 0.0497 never reads as 0.05
    return f"p = {p:.3g}" if p < 0.1 else f"p = {p:.2f}"


def format_interval(low: float | None, high: float | None, unit: str, alpha: float) -> str:
    """The confidence interval of a difference: '95 % CI -183 … +281 MB/s'."""
    level = f"{100.0 * (1.0 - alpha):g} % CI"
    if low is None or high is None:
        return f"{level} {MISSING}"
    shown, _div = display_unit(unit)
    low_text = format_signed(low, unit).removesuffix(f" {shown}")
    return f"{level} {low_text} … {format_signed(high, unit)}"


def format_ratio_interval(low: float | None, high: float | None) -> str:
    """The interval of a ratio of means: '×0.54 … ×1.70'; 'ratio unbounded' when the
    baseline's mean is not clearly away from zero; 'ratio not bounded below, at most ×162'
    when the other mean is not (Fieller's interval then reaches below zero, which no ratio of
    two figures that cannot be negative is: '×-39.2' would be a number nobody measured)."""
    if low is None or high is None:
        return "ratio unbounded"
    if low < 0:
        return f"ratio not bounded below, at most ×{number(high)}"
    return f"×{number(low)} … ×{number(high)}"


def format_direction(higher_is_better: bool) -> str:
    """Which way a figure is better, said next to every table and chart."""
    return "higher is better" if higher_is_better else "lower is better"


def format_excluded(reasons: Mapping[str, int], included: bool) -> str:
    """What every surface says about the runs that did not complete: how many, why, and
    whether they count: '2 runs excluded from the means: 1 cancelled, 1 failed (…)'."""
    total = sum(reasons.values())
    if not total:
        return ""
    runs = "1 run" if total == 1 else f"{total} runs"
    why = ", ".join(f"{n} {status}" for status, n in sorted(reasons.items()))
    if included:
        return (f"{runs} did not complete ({why}): their partial figures are included in the "
                "means, as asked")
    return (f"{runs} excluded from the means, comparisons and charts ({why}); their partial "
            "figures are kept and shown; include partial runs to count them")


def format_left_out(statuses: Iterable[str]) -> str:
    """The runs left out of one mean, and why: '1 run excluded (cancelled)',
    '2 runs excluded (1 cancelled, 1 failed)'; empty when none."""
    counts: dict[str, int] = {}
    for status in statuses:
        counts[status] = counts.get(status, 0) + 1
    total = sum(counts.values())
    if not total:
        return ""
    runs = "1 run" if total == 1 else f"{total} runs"
    why = (next(iter(counts)) if len(counts) == 1 and total == 1
           else ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    return f"{runs} excluded ({why})"


def format_params(params: Mapping[str, Any] | None, skip: Iterable[str] = ()) -> str:
    """Parameters as people read them: 'mode=write block_size=1m' (sizes in the plan's own
    spelling, lists comma separated)."""
    if not params:
        return ""
    skip = set(skip)
    parts = []
    for key, value in params.items():
        if key in skip or value is None:
            continue
        if isinstance(value, int) and not isinstance(value, bool) and key in SIZE_KEYS:
            value = format_size(value)
        elif isinstance(value, list | tuple):
            value = ",".join(map(str, value))
        parts.append(f"{key}={value}")
    return " ".join(parts)


def figure_label(row: Mapping[str, Any], skip: Iterable[str] = ()) -> str:
    """A test as a column or category name: tool, metric and the parameters not in `skip`."""
    metric = str(row.get("metric", ""))
    test = metric.split(":")[0]
    params = row_params(row)
    # 'engine write mode=write' says write twice
    shown = format_params(params, {*skip, *(k for k, v in params.items() if v == test)})
    return " ".join(p for p in (str(row.get("tool", "")), metric, shown) if p)


class FigureLabels:
    """figure_label(row, skip) for many rows, each distinct test made once: a comparison of a
    10,000-run session labels 6,000 rows that name 1,200 tests (the configurations share
    them), and formatting the parameters was a fifth of its time. Rows whose parameters cannot
    be a key (a list among them) are labelled each time."""

    def __init__(self, skip: Iterable[str] = ()):
        self.skip = frozenset(skip)
        self._made: dict[tuple[Any, ...], str] = {}

    def __call__(self, row: Mapping[str, Any]) -> str:
        params = row.get("params")
        try:
            key = (row.get("tool", ""), row.get("metric", ""),
                   tuple(params.items()) if isinstance(params, Mapping) else params)
            text = self._made.get(key)
        except TypeError:  # unhashable parameter values
            return figure_label(row, self.skip)
        if text is None:
            text = self._made[key] = figure_label(row, self.skip)
        return text


def format_fact(value: Any) -> str:
    """A host or configuration fact as one line of text (lists joined, dicts as JSON)."""
    if value is None:
        return MISSING
    if isinstance(value, list | tuple):
        return ",".join(map(str, value))
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True)
    return str(value)


def confidence_words(alpha: float) -> str:
    """The (1 - alpha) confidence level as a reader expects it: "95 %", "99.9 %", and for an
    alpha so small that 1 - alpha prints as 100 % (1e-16), "1 - 1e-16" instead of a false 100 %."""
    level = f"{100 * (1 - alpha):g}"
    return f"{level} %" if level != "100" else f"1 - {alpha:g}"
