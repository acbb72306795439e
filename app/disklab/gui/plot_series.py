"""The live plots' series: which plot each goes to, in what unit, and how its samples become a
curve: cut to the time window shown, reduced to the peaks of each pixel column, and broken
where samples are missing.

A gap in the samples is a gap in the line: while a filesystem is made (a 35 s mkfs) or a case
is set up nothing is sampled, and a line joining the last sample before to the first after
draws values that were never measured (CPU "ramping" from 0 to 50 %). Gaps notes each series'
breaks as its samples arrive; a curve's segments across a break are not drawn.
"""

from __future__ import annotations

import numpy as np

from disklab.core.vocab.units import rate_unit, size_unit

# series name -> (plot, label, canonical unit). The application plot is what the tool's
# processes passed to read()/write() (rchar/wchar of its tree, page cache included: what the
# tool does), and the tool's own report of its rate where it prints one (fio status, engine
# intervals, dd progress); the device plot is what reached the disk (diskstats).
LIVE_SERIES: dict[str, tuple[str, str, str]] = {
    "app_wchar_bps": ("app", "write", "B/s"),
    "app_rchar_bps": ("app", "read", "B/s"),
    "tool_bps": ("app", "tool's own report", "B/s"),
    "device_write_bps": ("device", "write", "B/s"),
    "device_read_bps": ("device", "read", "B/s"),
    "dirty_bytes": ("memory", "Dirty", "B"),
    "writeback_bytes": ("memory", "Writeback", "B"),
    "cpu_pct": ("cpu", "CPU", "%"),
}
PLOTS = (  # (key, title, canonical unit)
    ("app", "Application: read+write syscalls of the tool's processes", "B/s"),
    ("device", "Device: bytes to and from the disk (diskstats)", "B/s"),
    ("memory", "Page cache", "B"),
    ("cpu", "CPU", "%"),
)
PLOT_NAMES = {"app": "Application", "device": "Device", "memory": "Page cache", "cpu": "CPU"}
_PLOT_UNITS = {key: unit for key, _title, unit in PLOTS}
SHARE_SEP = ":"  # device_write_bps:a is a target's share of device_write_bps


def shown_unit(unit: str, system: str | None = None) -> tuple[str, float]:
    """A canonical unit as the plots draw it, and its divisor: B/s as MB/s or MiB/s, bytes as
    MB or MiB (the units choice, core.vocab.units, or `system`), % as it is."""
    if unit == "B/s":
        return rate_unit(system)
    if unit == "B":
        return size_unit(system)
    return unit, 1.0


def series_scale(series: str, system: str | None = None) -> float:
    """What a sample of `series` (or of a target's share of it) is divided by to be drawn."""
    return shown_unit(LIVE_SERIES[series.partition(SHARE_SEP)[0]][2], system)[1]


def plot_unit(key: str, system: str | None = None) -> str:
    """A plot's unit as its axis, readout and export name it: 'MB/s', 'MiB', '%'."""
    return shown_unit(_PLOT_UNITS[key], system)[0]
GAP_FACTOR = 3.0  # a step this many sampling periods long is a gap
GAP_MIN_S = 2.0  # and never one shorter than this (a loaded machine's late sample is not)
PERIOD_STEPS = 9  # the sampling period: the median of a series' first steps


def peak_window(t: np.ndarray, y: np.ndarray, lo: float | None, hi: float | None,
                bins: int) -> tuple[np.ndarray, np.ndarray]:
    """The samples of [lo, hi] (None: the whole run) as a curve of at most about 2 * bins + 2
    points: one sample beyond each end (so the line reaches the edges), then, when there are
    more than 2 * bins samples, the minimum and the maximum of each of `bins` equal runs of
    samples, in time order, at their own times, plus the first and the last sample. What a
    pixel column shows is then exactly what all its samples would draw: every peak and dip.

    Why not pyqtgraph's clipToView and peak downsampling: they keep ~5 points per pixel and
    redo bounds and clipping over the whole buffer on every redraw (bench figure 3)."""
    n = len(t)
    i0 = 0 if lo is None else max(int(np.searchsorted(t, lo, "left")) - 1, 0)
    i1 = n if hi is None else min(int(np.searchsorted(t, hi, "right")) + 1, n)
    if i1 - i0 <= 2 * max(bins, 1):
        return t[i0:i1], y[i0:i1]
    k = -(-(i1 - i0) // bins)  # samples per bin, rounded up: at most `bins` bins
    full = (i1 - i0) // k * k
    tw, yw = t[i0:i0 + full].reshape(-1, k), y[i0:i0 + full].reshape(-1, k)
    rows = np.arange(len(yw))
    a, b = yw.argmin(axis=1), yw.argmax(axis=1)
    first, second = np.minimum(a, b), np.maximum(a, b)
    ts = np.empty(2 * len(yw))
    ys = np.empty(2 * len(yw))
    ts[0::2], ts[1::2] = tw[rows, first], tw[rows, second]
    ys[0::2], ys[1::2] = yw[rows, first], yw[rows, second]
    parts_t, parts_y = [t[i0:i0 + 1], ts], [y[i0:i0 + 1], ys]
    if full < i1 - i0:  # the last, shorter run
        tail_t, tail_y = t[i0 + full:i1], y[i0 + full:i1]
        j = sorted({int(tail_y.argmin()), int(tail_y.argmax())})
        parts_t.append(tail_t[j])
        parts_y.append(tail_y[j])
    parts_t.append(t[i1 - 1:i1])
    parts_y.append(y[i1 - 1:i1])
    return np.concatenate(parts_t), np.concatenate(parts_y)


def visible_span(t: np.ndarray, y: np.ndarray, connect: np.ndarray | str,
                 lo: float | None, hi: float | None) -> tuple[float, float, float, float] | None:
    """(first time, last time, lowest value, highest value) of a curve of points (`t` in order,
    `connect` as pyqtgraph takes it) as it is seen in the window [lo, hi] (None: all of it):
    the values of the points inside, and where the line crosses an edge, its value there. The
    point beyond each edge (peak_window) is there so that the line reaches the edge; its own
    value may be far above anything seen (the last second of a fast case beside a slow one)."""
    n = len(t)
    if not n:
        return None
    if lo is None or hi is None:
        return float(t[0]), float(t[-1]), float(y.min()), float(y.max())
    a, b = int(np.searchsorted(t, lo, "left")), int(np.searchsorted(t, hi, "right"))
    values = [float(y[a:b].min()), float(y[a:b].max())] if b > a else []
    for i, at in ((a - 1, lo), (b - 1, hi)):  # the segments from point i to i + 1
        if 0 <= i < n - 1 and (isinstance(connect, str) or connect[i]) and t[i + 1] > t[i]:
            share = (at - t[i]) / (t[i + 1] - t[i])
            if 0.0 <= share <= 1.0:
                values.append(float(y[i] + share * (y[i + 1] - y[i])))
    if not values:
        return None
    return float(t[0]), float(t[-1]), min(values), max(values)


class Gaps:
    """A series' breaks: the times of the samples after which nothing was sampled for longer
    than a gap (GAP_FACTOR sampling periods, GAP_MIN_S at least), or where the owner ended the
    line (a tool's own report belongs to one case)."""

    def __init__(self) -> None:
        self.breaks: list[float] = []
        self._array: np.ndarray | None = None
        self._last: float | None = None
        self._steps: list[float] = []
        self.limit = GAP_MIN_S

    def note(self, t: float) -> None:
        """A sample at `t` (in time order): a break before it if it comes after a gap."""
        last, self._last = self._last, t
        if last is None:
            return
        step = t - last
        if len(self._steps) < PERIOD_STEPS and step > 0:
            self._steps.append(step)
            period = sorted(self._steps)[len(self._steps) // 2]
            self.limit = max(GAP_MIN_S, GAP_FACTOR * period)
        if step > self.limit:
            self.end(last)

    def end(self, t: float) -> None:
        """No line from the sample at `t` to the next."""
        if not self.breaks or self.breaks[-1] != t:
            self.breaks.append(t)
            self._array = None

    def clear(self) -> None:
        self.__init__()  # type: ignore[misc]

    def array(self) -> np.ndarray:
        if self._array is None:
            self._array = np.asarray(self.breaks, dtype=np.float64)
        return self._array

    def connect(self, t: np.ndarray) -> np.ndarray | str:
        """pyqtgraph's `connect` for a curve of points at times `t` (samples of the series, in
        order): 'all', or per point whether its segment to the next is drawn (not when a
        break lies in [t[i], t[i + 1]))."""
        if not self.breaks or len(t) < 2:
            return "all"
        before = np.searchsorted(self.array(), t, "left")
        joined = np.ones(len(t), dtype=bool)
        joined[:-1] = before[1:] == before[:-1]
        return joined

    def broken(self, t0: float, t1: float) -> bool:
        """Whether a break lies in [min, max) of t0 and t1: no sample joins them."""
        lo, hi = min(t0, t1), max(t0, t1)
        b = self.array()
        return bool(len(b)) and int(np.searchsorted(b, hi, "left")) > int(
            np.searchsorted(b, lo, "left"))


def log_values(y: np.ndarray, connect: np.ndarray | str) -> tuple[np.ndarray, np.ndarray]:
    """`y` for a log axis: log10 of the positive values; a value at or below zero has no
    place there, so it stands at the lowest positive one and no segment reaches it."""
    positive = y > 0
    out = np.log10(np.where(positive, y, 1.0))
    out[~positive] = out[positive].min() if positive.any() else 0.0
    joined = np.ones(len(y), dtype=bool) if isinstance(connect, str) else connect.copy()
    joined[:-1] &= positive[:-1] & positive[1:]
    return out, joined


def value_at(t: np.ndarray, y: np.ndarray, gaps: Gaps, x: float) -> tuple[float, float] | None:
    """The sample nearest to time `x` as (time, value); None before the first, after the last
    or inside a gap (nothing was measured there)."""
    n = len(t)
    if not n or x < t[0] or x > t[-1]:
        return None
    i = int(np.searchsorted(t, x))
    candidates = [j for j in (i - 1, i) if 0 <= j < n]
    j = min(candidates, key=lambda k: abs(t[k] - x))
    if (len(candidates) == 2 and gaps.broken(float(t[i - 1]), float(t[i]))
            and abs(float(t[j]) - x) > gaps.limit / GAP_FACTOR):
        return None  # inside a gap, more than a sampling period from either side
    return float(t[j]), float(y[j])
