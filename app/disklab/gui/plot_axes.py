"""The live plots' axes: elapsed time at round seconds, minutes or hours, and values at the
nice numbers of core/results/svg.nice_ticks (the one home of nice-number ticks: the exported
charts and the live plots step alike).

pyqtgraph's own spacing puts time ticks at 1000 s and 2000 s and gives a short plot a single
labelled tick; these axes read as a person counts time and always show a scale.
"""

from __future__ import annotations

import math

import pyqtgraph as pg

from disklab.core.results.svg import nice_ticks

TICK_PX = 90  # about one time label per this many pixels
Y_TICK_PX = 40  # about one value tick per this many pixels
LABEL_HALF_PX = 7  # half a tick label's height at the plots' 8 pt
NICE_SECONDS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600,
                43200, 86400)
UNIT_TITLES = {"s": "elapsed (s)", "min": "elapsed (min:s)", "h": "elapsed (h:min)"}


def time_unit(span: float) -> str:
    """How a time axis spanning `span` seconds is labelled: 's', 'min' (m:ss) or 'h' (h:mm)."""
    return "s" if span < 120 else "min" if span < 2 * 3600 else "h"


def clock(seconds: float, unit: str) -> str:
    """A tick label: '45 s' under 2 min, '12:30' (min:s) under 2 h, '5:20' (h:min) beyond."""
    whole = round(seconds)
    if unit == "s":
        return f"{whole} s"
    if unit == "min":
        return f"{whole // 60}:{whole % 60:02d}"
    return f"{whole // 3600}:{whole % 3600 // 60:02d}"


def time_step(span: float, pixels: float) -> float:
    """Seconds between time labels: a round second, minute or hour (never 1000 s, 2000 s)."""
    want = span / max(2.0, pixels / TICK_PX)
    return float(next((s for s in NICE_SECONDS if s >= want),
                      NICE_SECONDS[-1] * math.ceil(want / NICE_SECONDS[-1])))


def value_ticks(lo: float, hi: float, pixels: float) -> list[float]:
    """Nice values within [lo, hi], about one per Y_TICK_PX pixels, each at least
    LABEL_HALF_PX from both ends: pyqtgraph draws no label that would cross the plot's edge,
    and a 52 px plot of 0-2100 MiB/s ticked at 0 and 2000 showed no number at all. Two where
    the plot is tall enough for two labels, else the finest that has one."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return []
    margin = (hi - lo) * LABEL_HALF_PX / pixels if pixels > 0 else 0.0
    best: list[float] = []
    for count in range(max(2, int(pixels / Y_TICK_PX)), 16):  # finer until two fall inside
        values = [v for v in nice_ticks(lo, hi, count) if lo + margin <= v <= hi - margin]
        if len(values) >= 2:
            return values
        if len(values) > len(best):
            best = values
    return best


class TimeAxis(pg.AxisItem):
    """Elapsed time from the run's start, ticks at round seconds, minutes or hours. No SI
    prefix: the title names the unit (plots.time_title), and pyqtgraph's prefix check re-set
    the title's HTML at every move of the time window, four axes a refresh."""

    def __init__(self, orientation: str = "bottom") -> None:
        super().__init__(orientation)
        self.enableAutoSIPrefix(False)

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list:
        span = maxVal - minVal
        if span <= 0 or size <= 0:
            return []
        step = time_step(span, size)
        first = math.ceil(max(minVal, 0.0) / step - 1e-9)
        last = math.floor(maxVal / step + 1e-9)
        return [(step, [k * step for k in range(first, last + 1)])]

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        lo, hi = self.range
        unit = time_unit(hi - lo)
        return [clock(v, unit) for v in values]


class ValueAxis(pg.AxisItem):
    """A value axis in the plot's unit as it is (no SI prefix: the title says MiB/s), at
    nice numbers; in log mode pyqtgraph's own decades."""

    def __init__(self, orientation: str = "left") -> None:
        super().__init__(orientation)
        self.enableAutoSIPrefix(False)

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list:
        if self.logMode:
            return super().tickValues(minVal, maxVal, size)
        values = value_ticks(minVal, maxVal, size)
        if not values:
            return super().tickValues(minVal, maxVal, size)
        return [(values[1] - values[0] if len(values) > 1 else maxVal - minVal, values)]

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        if self.logMode:
            return super().tickStrings(values, scale, spacing)
        decimals = max(0, -math.floor(math.log10(spacing) + 1e-9)) if 0 < spacing < 1 else 0
        return [f"{v:.{decimals}f}" if decimals else f"{round(v):d}" for v in values]
