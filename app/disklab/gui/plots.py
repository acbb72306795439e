"""The Run page's live plots: application and device throughput, page cache and CPU over time.

One plot stack (issue 29): the plots are painted by gui/livepaint.LiveCanvas in one QPainter pass
per refresh; there is no scene graph behind them. pyqtgraph drawing them for real (one setData
per changed curve a refresh, clipped to view, peak-downsampled, no antialiasing) was measured
against this canvas on bench figure 2 (the Run page's CPU at the 1 s refresh): 0.81 s of CPU a
minute against 0.50 (target 0.6), the GUI thread 0.64 against 0.32; so the canvas stays, and
pyqtgraph is no longer a dependency (bench/README.md).

Each series lives in a SeriesBuffer; a single-shot QTimer redraws (never per sample): new samples
at most once per refresh (1 s by default), a zoom or pan within 100 ms. A curve is handed only
the visible window of its series (clip to view), reduced to the minimum and maximum of each
pixel column (peak_window), so a run of many hours stays smooth (reliability-and-performance.md
B3) and its peaks stay visible at any zoom. While the plots follow the run, their ranges grow
in round steps (Frame) instead of fitting the data at every sample, so the canvas's cached axes
are redrawn only when a range steps up.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPen
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from disklab.core.results.charts import PALETTE
from disklab.core.vocab.units import MiB
from disklab.gui.buffers import SeriesBuffer
from disklab.gui.livepaint import LiveCanvas, Mark, clock, time_unit
from disklab.gui.plot_theme import theme_colours

REDRAW_MS = 100  # a zoom or pan is drawn this soon, and nothing more often
LIVE_GAP_MS = 1000  # new samples are drawn at most once a second (the Run page's default)
STEPS = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)  # each at most 1/3 above the last
MIN_SECONDS = 10.0  # the time axis of a new run spans at least this
HEADROOM = 1.35  # the top quarter of a plot is above its data: the legend sits there

# series name -> (plot, label, scale divisor). The application plot is what the tool's processes
# passed to read()/write() (rchar/wchar of its tree, page cache included: what the tool does),
# and the tool's own report of its rate where it prints one (fio status, engine intervals, dd
# progress); the device plot is what reached the disk (diskstats).
LIVE_SERIES: dict[str, tuple[str, str, float]] = {
    "app_wchar_bps": ("app", "write", MiB),
    "app_rchar_bps": ("app", "read", MiB),
    "tool_bps": ("app", "tool's own report", MiB),
    "device_write_bps": ("device", "write", MiB),
    "device_read_bps": ("device", "read", MiB),
    "dirty_bytes": ("memory", "Dirty", MiB),
    "writeback_bytes": ("memory", "Writeback", MiB),
    "cpu_pct": ("cpu", "CPU", 1.0),
}
# one colour per direction on every plot (the Application plot's write was blue and the
# Device plot's orange): write blue, read orange; Dirty and Writeback likewise
SERIES_COLOURS = {"write": 0, "read": 1, "Dirty": 0, "Writeback": 1}
TARGET_SEP = ":"  # device_write_bps:a is target a's share of device_write_bps (several targets)
TOTAL = "all"  # the targets' total, sampled by the monitor over distinct devices (:all)
DEVICE_SERIES = ("device_write_bps", "device_read_bps")
PER_TARGET = (*DEVICE_SERIES, "tool_bps")  # series a target may split
PLOTS = (
    ("app", "Application: read+write syscalls of the tool's processes", "MiB/s"),
    ("device", "Device: bytes to and from the disk (diskstats)", "MiB/s"),
    ("memory", "Page cache", "MiB"),
    ("cpu", "CPU", "%"),
)
UNIT_TITLES = {"s": "elapsed (s)", "min": "elapsed (min:s)", "h": "elapsed (h:min)"}


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


def step_up(value: float) -> float:
    """The smallest round number (STEPS x a power of ten) >= value (> 0)."""
    exp = math.floor(math.log10(value))
    for m in (*STEPS, 10.0):
        if m * 10.0 ** exp >= value * (1 - 1e-12):
            return m * 10.0 ** exp
    return 10.0 ** (exp + 1)


class Frame:
    """What a plot's range fits instead of its data: a rectangle from time 0 that grows
    (never shrinks) in round steps, so the range, and with it the axes, stay still for most
    samples."""

    def __init__(self) -> None:
        self.right, self.low, self.high = MIN_SECONDS, 0.0, 1.0

    def cover(self, x1: float, y0: float, y1: float) -> bool:
        """Grow to hold [0, x1] x [y0, y1]; True if it grew."""
        right = step_up(x1) if x1 > self.right else self.right
        high = step_up(y1) if y1 > self.high else self.high
        low = -step_up(-y0) if y0 < self.low else self.low
        if (right, low, high) == (self.right, self.low, self.high):
            return False
        self.right, self.low, self.high = right, low, high
        return True

    def reset(self) -> None:
        self.right, self.low, self.high = MIN_SECONDS, 0.0, 1.0


def _pen(index: int, dashed: bool = False) -> QPen:
    """A width-1 pen of the palette's colour `index`, solid or dashed."""
    pen = QPen(QColor(PALETTE[index % len(PALETTE)]))
    pen.setWidth(1)
    pen.setStyle(Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine)
    return pen


@dataclass
class LiveCurve:
    """A curve: its legend name, pen and plot, and the points it was last drawn with."""

    name: str
    pen: QPen
    plot: str
    visible: bool = True
    t: np.ndarray = field(default_factory=lambda: np.empty(0))
    y: np.ndarray = field(default_factory=lambda: np.empty(0))

    def data(self) -> tuple[np.ndarray, np.ndarray]:
        return self.t, self.y


@dataclass
class Marker:
    """A case, configuration or phase boundary: a line on every plot, a label on the timeline
    strip above them when there is room, its details on hover (the canvas's Mark)."""

    x: float
    label: str
    kind: str  # "case" | "config" | "phase"
    detail: str
    mark: Mark
    width: float = 0.0  # of the label, in pixels


class LivePlots(QWidget):
    """Application and device throughput, Dirty/Writeback and CPU over time, x shared, under a
    timeline strip that names the cases and configurations; painted by one LiveCanvas.

    The x range is the whole run (`window` None) or the window the user zoomed or panned to
    (wheel, drag on the canvas); "Follow the run" slides a zoomed window with the newest
    samples, "Whole run" (or a double click) brings the whole run back."""

    follow_changed = Signal(bool)

    def __init__(self, parent: QWidget | None = None, which: Sequence[str] | None = None):
        super().__init__(parent)
        which = tuple(which or (key for key, _t, _u in PLOTS))
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        bar = QHBoxLayout()
        self.follow_box = QCheckBox("Follow the run")
        self.follow_box.setChecked(True)
        self.follow_box.setToolTip(
            "Keep the newest samples in view: the whole run, or a zoomed window sliding with "
            "it. Panning back in time turns it off. Zoom: mouse wheel; pan: drag; the whole "
            "run: double click.")
        self.follow_box.toggled.connect(self.set_follow)
        self.whole_btn = QPushButton("Whole run")
        self.whole_btn.setToolTip("Show the whole run again after a zoom or pan")
        self.whole_btn.clicked.connect(self.show_whole_run)
        bar.addWidget(self.follow_box)
        bar.addWidget(self.whole_btn)
        bar.addStretch(1)
        lay.addLayout(bar)
        rows = [p for p in PLOTS if p[0] in which]
        background, foreground = theme_colours()
        self.canvas = LiveCanvas(rows, background=background, foreground=foreground)
        self.canvas.zoom = self.set_window
        self.canvas.theme = theme_colours
        self.canvas.whole = self.show_whole_run
        lay.addWidget(self.canvas, 1)
        self.plot_keys = tuple(key for key, _t, _u in rows)
        self.curves: dict[str, LiveCurve] = {}
        self.buffers: dict[str, SeriesBuffer] = {}
        self.markers: list[Marker] = []
        self.targets: list[str] = []  # targets seen in this run's series, in order
        self._progress: dict[str, tuple[str, float, int]] = {}  # target -> (case, t, bytes)
        self.frames: dict[str, Frame] = {key: Frame() for key in self.plot_keys}
        self._peaks: dict[str, tuple[float, float]] = {}  # plot key -> (min, max) of its values
        self._legends: dict[str, tuple] = {}  # plot key -> legend entries handed to the canvas
        self._fresh: set[str] = set()  # series with samples not drawn yet
        self.window: tuple[float, float] | None = None  # None: the whole run
        self._drawn_window: tuple[float, float] | tuple[()] | None = ()  # () before any
        self._t_last = 0.0
        self.t0: float | None = None
        self._dirty = False
        self._labels_dirty = False
        self.redraws = 0
        self.follow = True
        self._sliding = False  # the window is being moved by follow, not by the user
        self.live_gap_ms = LIVE_GAP_MS  # the refresh rate the Run page chose
        self.driven = False  # True: new samples wait for the owner's redraw() (its own tick)
        self._last_redraw = 0.0  # time.monotonic() of the last redraw that drew something
        # started by the first change after a redraw, not ticking while nothing arrives (an
        # idle 10 Hz timer cost 0.06 s of CPU a minute)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.timeout.connect(self.redraw)
        self._unit = "s"
        self._font_metrics = QFontMetrics(QFont())
        for series, (plot_key, label, _div) in LIVE_SERIES.items():
            if plot_key not in self.frames:
                continue
            colour = (2 if plot_key == "cpu" else 3 if series == "tool_bps"
                      else SERIES_COLOURS[label])
            self.curves[series] = LiveCurve(label, _pen(colour, dashed=series == "tool_bps"),
                                            plot_key)
            self.buffers[series] = SeriesBuffer()

    def legend(self, plot: str) -> list[str]:
        """The names in a plot's legend, in order: its visible curves."""
        return [c.name for c in self.curves.values() if c.plot == plot and c.visible]

    def clear(self) -> None:
        for series in [s for s in self.curves if TARGET_SEP in s]:
            del self.curves[series]
            self.canvas.drop_curve(series)
        for series in [s for s in self.buffers if TARGET_SEP in s]:
            del self.buffers[series]
        for series in DEVICE_SERIES:  # the case's own curves again, as a one-target run has them
            if series in self.curves:
                self.curves[series].visible = True
        self.targets.clear()
        self._progress.clear()
        for buf in self.buffers.values():
            buf.clear()
        self.markers.clear()
        self.canvas.set_marks([])
        for frame in self.frames.values():
            frame.reset()
        self._peaks.clear()
        self._t_last = 0.0
        self.t0 = None
        self.window = None
        self.set_follow(True)
        self._fresh.update(self.curves)  # drawn empty
        self._touch()
        self.redraw()

    # --- the x range: the whole run, or a window the user chose
    def set_follow(self, on: bool) -> None:
        """Keep the newest data in view (a zoomed window slides with the run)."""
        if on == self.follow and self.follow_box.isChecked() == on:
            return
        self.follow = on
        if self.follow_box.isChecked() != on:
            self.follow_box.setChecked(on)
        if on:
            self._slide()
        self.follow_changed.emit(on)

    def show_whole_run(self) -> None:
        self.window = None
        self.set_follow(True)
        self._labels_dirty = True
        self._touch(urgent=True)

    def set_window(self, lo: float, hi: float) -> None:
        """The user zoomed or panned (the canvas's wheel and drag): show [lo, hi]; a window
        that ends before the newest sample stops following the run."""
        if hi <= lo:
            return
        self.window = (float(lo), float(hi))
        if (not self._sliding and self.follow
                and hi < self._t_last - 0.02 * (hi - lo)):
            self.set_follow(False)  # panned back in time: stay there
        self._labels_dirty = True
        self._touch(urgent=True)

    def x_range(self) -> tuple[float, float]:
        """The time span shown: the whole run's frame, or the window chosen."""
        if self.window is not None:
            return self.window
        return (0.0, max((f.right for f in self.frames.values()), default=MIN_SECONDS))

    def _slide(self) -> None:
        """Follow: a zoomed window keeps its width and ends at the newest sample."""
        if self.window is None:
            return
        lo, hi = self.window
        if self._t_last > hi or self._t_last < lo:
            width = hi - lo
            self._sliding = True
            try:
                self.set_window(self._t_last - width * 0.95, self._t_last + width * 0.05)
            finally:
                self._sliding = False

    def _touch(self, urgent: bool = False) -> None:
        """Something to draw, in one redraw for all that arrives meanwhile: within REDRAW_MS for
        a view the user moved (`urgent`), else live_gap_ms after the last redraw at the
        soonest."""
        self._dirty = True
        if self.driven and not urgent:
            return
        delay = REDRAW_MS
        if not urgent:
            since = (time.monotonic() - self._last_redraw) * 1000
            delay = max(REDRAW_MS, int(self.live_gap_ms - since))
        if not self.timer.isActive() or self.timer.remainingTime() > delay:
            self.timer.start(delay)

    def add_sample(self, series: str, t: float, value: float) -> None:
        """Record one point; drawn at the next timer tick. A target's share of a series
        (device_write_bps:a, several targets) gets a curve of its own, and the targets' sum at
        each sample time a curve named "all"."""
        base, _sep, target = series.partition(TARGET_SEP)
        if target and base in PER_TARGET and math.isfinite(value):
            self._add_target_sample(base, target, t, value)
            return
        spec = LIVE_SERIES.get(series)
        if spec is None or series not in self.buffers or not math.isfinite(value):
            return
        if self.t0 is None:
            self.t0 = t
        y = value / spec[2]
        self.buffers[series].append(t - self.t0, y)
        self._fresh.add(series)
        self._t_last = max(self._t_last, t - self.t0)
        lo, hi = self._peaks.get(spec[0], (y, y))
        self._peaks[spec[0]] = (min(lo, y), max(hi, y))
        self._touch()

    def break_line(self, series: str, t: float) -> None:
        """End a series' line at `t`: the next sample starts a new one. The tool's own report
        belongs to one case; joined across cases, the dashed line drew the engine's
        ~1300 MiB/s straight across the fio runs of 72-154 MiB/s between them."""
        buf = self.buffers.get(series)
        if buf is None or not len(buf) or self.t0 is None:
            return
        last = buf.data()[1][-1]
        if math.isfinite(last):
            buf.append(max(t - self.t0, float(buf.data()[0][-1])), math.nan)
            self._fresh.add(series)
            self._touch()

    def add_target_progress(self, case_id: str, target: str, t: float, done_bytes: int) -> None:
        """A target's bytes so far in a case (Progress with `target`): its rate since the
        previous report of the same case is the tool's own rate on that target."""
        last = self._progress.get(target)
        self._progress[target] = (case_id, t, done_bytes)
        if last is None or last[0] != case_id or t <= last[1] or done_bytes < last[2]:
            return
        self._add_target_sample("tool_bps", target, t, (done_bytes - last[2]) / (t - last[1]))

    def _add_target_sample(self, base: str, target: str, t: float, value: float) -> None:
        """One target's point, or the targets' device total (target "all"): the monitor sums
        the distinct devices (core.run.monitor.TargetDisks), since two targets on one filesystem
        are one disk's bytes, which a sum of the targets' curves would count twice. The tool's
        own rates have no total curve: targets report their bytes at different times, so
        their rates do not add up per instant."""
        self._target_point(f"{base}{TARGET_SEP}{target}", t, value)

    def _target_point(self, series: str, t: float, value: float) -> None:
        """Record a per-target (or total) point; its curve appears with its first non-zero
        value (a write-only run shows no read curves per target)."""
        base, _sep, target = series.partition(TARGET_SEP)
        plot_key, label, div = LIVE_SERIES[base]
        if plot_key not in self.frames:
            return
        if self.t0 is None:
            self.t0 = t
        y = value / div
        self.buffers.setdefault(series, SeriesBuffer()).append(t - self.t0, y)
        self._fresh.add(series)
        self._t_last = max(self._t_last, t - self.t0)
        lo, hi = self._peaks.get(plot_key, (y, y))
        self._peaks[plot_key] = (min(lo, y), max(hi, y))
        if series not in self.curves and y > 0:
            self._target_curve(series, base, target, label)
        self._touch()

    def _target_curve(self, series: str, base: str, target: str, label: str) -> None:
        """A target's curve: a colour per target (the total black), dashed for reads and the
        tool's own report. The case's single device curve steps aside (in a placed case it is
        one target's device): "all", the targets' sum, says the whole."""
        if target != TOTAL and target not in self.targets:
            self.targets.append(target)
        colour = len(PALETTE) - 1 if target == TOTAL else 4 + self.targets.index(target)
        dashed = base != "device_write_bps"
        name = f"{'tool' if base == 'tool_bps' else label} {target}"
        self.curves[series] = LiveCurve(name, _pen(colour, dashed=dashed), LIVE_SERIES[base][0])
        own = self.curves.get(base) if base in DEVICE_SERIES else None
        if own is not None:
            own.visible = False

    def add_marker(self, t: float, label: str, kind: str = "case", detail: str = "") -> None:
        """A case, configuration or phase boundary: a dashed vertical line on every plot with
        `detail` on hover; cases and configurations are named on the timeline strip where
        their labels do not overlap (the hidden ones are still on hover)."""
        if self.t0 is None:
            self.t0 = t
        x = t - self.t0
        tip = f"{clock(x, 'min')} {label}" + (f"\n{detail}" if detail else "")
        width = self._font_metrics.horizontalAdvance(label) + 8 if kind != "phase" else 0.0
        self.markers.append(Marker(x, label, kind, detail, Mark(x, label, kind, tip), width))
        self.canvas.set_marks([m.mark for m in self.markers])
        self._labels_dirty = True
        self._touch()

    def _place_labels(self, x: tuple[float, float]) -> None:
        """Show a label only where it does not overlap the one before it on its row (cases
        above, configurations below), left to right, over the x range `x` shown; the rest
        are on hover."""
        width = float(self.canvas.plot_width())
        lo, hi = x
        scale = width / (hi - lo) if hi > lo else 0.0
        right_edge = {"case": -1e9, "config": -1e9}
        moved = False
        for m in self.markers:
            if m.kind == "phase":
                continue
            px = (m.x - lo) * scale
            fits = -2 <= px <= width and px >= right_edge[m.kind] and scale > 0
            if fits:
                right_edge[m.kind] = px + m.width
            if m.mark.shown != fits:
                m.mark.shown = fits
                moved = True
        if moved:
            self.canvas.set_marks(self.canvas.marks)

    def _time_unit(self, x: tuple[float, float]) -> None:
        """The time axis's title says how its ticks read (s, min:s, h:min) for the span shown."""
        self._unit = time_unit(x[1] - x[0])

    def redraw(self) -> None:
        """Timer slot: hand the canvas, for each curve whose samples or view changed, the
        visible window of its buffer (clip to view) reduced to about two points per pixel
        column (peak_window); ranges, legends and markers; then one paint."""
        if not self._dirty:
            return
        self._dirty = False
        self._last_redraw = time.monotonic()
        if self.follow:
            self._slide()
        canvas = self.canvas
        window = self.window
        moved = window != self._drawn_window
        self._drawn_window = window
        bins = max(canvas.plot_width(), 100)
        lo, hi = window or (None, None)
        fresh, self._fresh = self._fresh, set()
        for series, curve in self.curves.items():
            if not curve.visible:
                canvas.drop_curve(series)
                continue
            if not (moved or series in fresh):
                continue
            t, y = self.buffers[series].data()
            curve.t, curve.y = peak_window(t, y, lo, hi, bins)
            canvas.set_curve(series, curve.plot, curve.pen, curve.t, curve.y)
        for key, frame in self.frames.items():
            lo_y, hi_y = self._peaks.get(key, (0.0, 0.0))
            frame.cover(self._t_last, lo_y, hi_y * HEADROOM)  # the legend's row stays clear
        x = self.x_range()
        self._time_unit(x)
        if self.markers and (moved or self._labels_dirty or window is None):
            self._place_labels(x)
        self._labels_dirty = False
        canvas.set_ranges(x, {k: (f.low, f.high) for k, f in self.frames.items()},
                          UNIT_TITLES[self._unit])
        for key in self.frames:
            entries = tuple((c.name, c.pen) for c in self.curves.values()
                            if c.plot == key and c.visible)
            if entries != self._legends.get(key):
                self._legends[key] = entries
                canvas.set_legend(key, entries)
        canvas.update()  # one paint of the canvas per refresh
        self.redraws += 1

    def series_data(self, series: str) -> tuple[np.ndarray, np.ndarray]:
        return self.buffers[series].data()

    def latest(self, series: str) -> float | None:
        """The newest value of a series as plotted (MiB/s, MiB or %), None before any."""
        buf = self.buffers.get(series)
        if buf is None or not len(buf):
            return None
        return float(buf.data()[1][-1])


def series_names() -> Sequence[str]:
    return tuple(LIVE_SERIES)
