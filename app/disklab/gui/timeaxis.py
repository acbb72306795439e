"""How the live plots' axes read: time ticks at round seconds, minutes or hours with labels in
s, min:s or h:min, and value ticks of 1, 2 or 5 x a power of ten, at least two on any plot (the
Device plot, short at 1280 x 820, kept only its `0` tick for minutes: issue 29)."""

from __future__ import annotations

import math

Y_TICK_PX = 40  # about one y tick per this many pixels
TICK_PX = 90  # about one time label per this many pixels
NICE_SECONDS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600,
                43200, 86400)
LEGEND_ALPHA = 215  # legends are read over the curves: a background of the plot's colour


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


def nice_step(span: float, pixels: float) -> float:
    """1, 2 or 5 x a power of ten, about one per Y_TICK_PX pixels, and never more than the
    span: a short plot (the Device plot at 1280 x 820) with a range of 0-1200 got a step of
    2000, and its axis said only "0" for minutes."""
    want = span / max(2.0, pixels / Y_TICK_PX)  # at least two steps: a scale, not one mark
    exp = math.floor(math.log10(want)) if want > 0 else 0
    for m in (1.0, 2.0, 5.0, 10.0):
        if m * 10.0 ** exp >= want:
            return m * 10.0 ** exp
    return 10.0 ** (exp + 1)


def ticks(lo: float, hi: float, step: float) -> list[float]:
    """Multiples of `step` within [lo, hi]."""
    if step <= 0 or hi <= lo:
        return []
    first = math.ceil(lo / step - 1e-9)
    return [k * step for k in range(first, math.floor(hi / step + 1e-9) + 1)]


def tick_text(value: float, step: float) -> str:
    """A y tick label with as many decimals as the step needs ('150', '2.5', '0.05')."""
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step < 1 else 0
    return f"{value:.{decimals}f}" if decimals else f"{round(value):d}"


