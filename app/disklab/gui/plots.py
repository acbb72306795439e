"""The Run page's live plots, drawn by pyqtgraph.

Live plots keep each series in a SeriesBuffer and redraw from a single-shot QTimer (never per
sample): new samples at most once per refresh (1 s by default), a zoom or pan within 100 ms.
Each refresh hands each curve whose data or view changed one `setData` with only the visible
window of its series (clip to view), reduced to the minimum and maximum of each pixel column
(peak_window: peak downsampling), drawn with width-1 pens and no antialiasing, so a run of many
hours stays smooth (reliability-and-performance.md B3) and its peaks stay visible at any zoom.

While the plots follow the run, their ranges grow in steps (Frame) instead of fitting the data at
every sample, and axes, titles, legends and marker labels are cached as pixmaps: a new sample then
repaints the curves and blits the rest (bench figure 2, measured on the Run page at the 1 s
refresh). pyqtgraph gives zoom (mouse wheel), pan (drag), axes, legends and the "A" button (the
whole run) for free; tests read what is drawn from these items and from the widget's pixels.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics
from PySide6.QtWidgets import (
    QCheckBox,
    QGraphicsItem,
    QHBoxLayout,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from disklab.core.results.charts import PALETTE
from disklab.core.units import MiB
from disklab.gui.buffers import SeriesBuffer
from disklab.gui.plot_theme import PLOT_OPTIONS
from disklab.gui.timeaxis import (
    LEGEND_ALPHA,
    NICE_SECONDS,
    TICK_PX,
    clock,
    nice_step,
    time_unit,
)

pg.setConfigOptions(**PLOT_OPTIONS)  # the theme app.py chose before pyqtgraph was imported

REDRAW_MS = 100  # a zoom or pan is drawn this soon, and nothing more often
LIVE_GAP_MS = 1000  # new samples are drawn at most once a second: a redraw of the four plots
# costs the GUI thread ~6 ms, and at the sampler's 2 Hz that alone was 0.7 s of CPU a minute
STEPS = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)  # each at most 1/3 above the last
MIN_SECONDS = 10.0  # the time axis of a new run spans at least this

TIMELINE_PX = 38  # the strip above the plots that names cases and configurations
AXIS_PX = 62  # left axes of one width (room for "20000"), so plots and timeline line up
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


class Frame(pg.GraphicsObject):
    """An invisible rectangle that a plot's auto-range fits instead of its curves (which are
    added with ignoreBounds). It grows in round steps, so the range, and with it the axes, stay
    still for most samples. pyqtgraph's auto-range itself stays in charge: a zoom or pan turns
    it off, and the "A" button brings back the whole run."""

    def __init__(self) -> None:
        super().__init__()
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemHasNoContents)
        self.rect = QRectF(0.0, 0.0, MIN_SECONDS, 1.0)

    def cover(self, x1: float, y0: float, y1: float) -> bool:
        """Grow (never shrink) to hold [0, x1] x [y0, y1]; True if it grew."""
        r = self.rect  # in data coordinates: r.top() is the lowest y, r.bottom() the highest
        left, right, low, high = r.left(), r.right(), r.top(), r.bottom()
        if x1 > right:
            right = step_up(x1)
        if y1 > high:
            high = step_up(y1)
        if y0 < low:
            low = -step_up(-y0)
        if (right, low, high) == (r.right(), r.top(), r.bottom()):
            return False
        self.prepareGeometryChange()
        self.rect = QRectF(left, low, right - left, high - low)
        self.informViewBoundsChanged()
        return True

    def reset(self) -> None:
        self.prepareGeometryChange()
        self.rect = QRectF(0.0, 0.0, MIN_SECONDS, 1.0)
        self.informViewBoundsChanged()

    def boundingRect(self) -> QRectF:
        return self.rect

    def dataBounds(self, ax: int, frac: float = 1.0,
                   orthoRange: object = None) -> tuple[float, float]:
        r = self.rect
        return (r.left(), r.right()) if ax == 0 else (r.top(), r.bottom())

    def paint(self, *_args: object) -> None:
        pass


class LiveCurve(pg.PlotCurveItem):
    """A live curve's bounds at little cost. pyqtgraph recomputes a curve's bounding rect after
    every setData with nanmin/nanmax and the view's pixel vectors, several Python calls a curve
    per redraw (bench figure 2); the data handed here are finite (the buffers refuse the rest)
    and sorted in time, so the first and last times and a plain min/max are the bounds. No pixel
    padding for the pen: the view repaints 2 pixels around every changed rect anyway
    (QGraphicsView's antialiasing margin) and the plot repaints wholly at each refresh."""

    def dataBounds(self, ax: int, frac: float = 1.0,
                   orthoRange: object = None) -> tuple[float | None, float | None]:
        if frac < 1.0 or orthoRange is not None:
            return super().dataBounds(ax, frac, orthoRange)
        cache = self._boundsCache[ax]
        if cache is not None and cache[0] == (frac, orthoRange):
            return cache[1]
        x, y = self.xData, self.yData
        if x is None or y is None or not len(x):
            return (None, None)
        b = (float(x[0]), float(x[-1])) if ax == 0 else (float(np.nanmin(y)),
                                                          float(np.nanmax(y)))
        self._boundsCache[ax] = [(frac, orthoRange), b]
        return b

    def pixelPadding(self) -> float:
        return 0.0


def _cache(item: QGraphicsItem) -> None:
    """Paint `item` and its children (text, legend samples) into pixmaps that are redrawn only
    when they change. Every curve repaint exposes the axes, titles, legends and marker labels
    too, and text is laid out again at each paint: with the cache it is blitted instead."""
    item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
    for child in item.childItems():
        _cache(child)


def _pen(index: int, dashed: bool = False) -> QColor:
    style = Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine
    return pg.mkPen(PALETTE[index % len(PALETTE)], width=1, style=style)


def _legend_brush() -> object:
    """The plots' own background (light or dark theme), nearly opaque."""
    colour = pg.mkColor(pg.getConfigOption("background"))
    colour.setAlpha(LEGEND_ALPHA)
    return pg.mkBrush(colour)


class TimeAxis(pg.AxisItem):
    """Elapsed time with ticks at round seconds, minutes or hours (never at 1000 s, 2000 s),
    so a run of hours reads in hours and a zoom on a minute in seconds."""

    def tickSpacing(self, minVal: float, maxVal: float, size: float) -> list[tuple[float, float]]:
        span = maxVal - minVal
        if span <= 0 or size <= 0:
            return super().tickSpacing(minVal, maxVal, size)
        want = span / max(2.0, size / TICK_PX)
        major = next((s for s in NICE_SECONDS if s >= want),
                     NICE_SECONDS[-1] * math.ceil(want / NICE_SECONDS[-1]))
        return [(float(major), 0.0)]

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        lo, hi = self.range
        unit = time_unit(hi - lo)
        return [clock(v, unit) if v >= 0 else "" for v in values]


class ValueAxis(pg.AxisItem):
    """A value axis with at least two labelled ticks however short its plot (nice_step), in
    the plot's unit as it is (no SI prefix: the title says MiB/s)."""

    def __init__(self, orientation: str = "left") -> None:
        super().__init__(orientation)
        self.enableAutoSIPrefix(False)

    def tickSpacing(self, minVal: float, maxVal: float, size: float) -> list[tuple[float, float]]:
        span = maxVal - minVal
        if span <= 0 or size <= 0:
            return super().tickSpacing(minVal, maxVal, size)
        return [(nice_step(span, size), 0.0)]


UNIT_TITLES = {"s": "elapsed (s)", "min": "elapsed (min:s)", "h": "elapsed (h:min)"}


@dataclass
class Marker:
    """A case, configuration or phase boundary: a line on every plot, a label on the timeline
    strip above them when there is room, its details on hover."""

    x: float
    label: str
    kind: str  # "case" | "config" | "phase"
    detail: str
    lines: list[pg.InfiniteLine]
    text: pg.TextItem | None = None
    width: float = 0.0  # of the label, in pixels


class LivePlots(QWidget):
    """Application and device throughput, Dirty/Writeback and CPU over time, x axes linked,
    under a timeline strip that names the cases and configurations.

    pyqtgraph draws them (`layout_widget`, `plots` by key, `curves` by series): one setData per
    curve whose data or view changed, once per refresh."""

    follow_changed = Signal(bool)

    def __init__(self, parent: QWidget | None = None, which: Sequence[str] | None = None):
        super().__init__(parent)
        which = tuple(which or (key for key, _t, _u in PLOTS))
        self.layout_widget = pg.GraphicsLayoutWidget(self)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        bar = QHBoxLayout()
        self.follow_box = QCheckBox("Follow the run")
        self.follow_box.setChecked(True)
        self.follow_box.setToolTip(
            "Keep the newest samples in view: the whole run, or a zoomed window sliding with "
            "it. Panning back in time turns it off. Zoom: mouse wheel; pan: drag.")
        self.follow_box.toggled.connect(self.set_follow)
        self.whole_btn = QPushButton("Whole run")
        self.whole_btn.setToolTip("Show the whole run again after a zoom or pan")
        self.whole_btn.clicked.connect(self.show_whole_run)
        bar.addWidget(self.follow_box)
        bar.addWidget(self.whole_btn)
        bar.addStretch(1)
        lay.addLayout(bar)
        lay.addWidget(self.layout_widget, 1)
        self.plots: dict[str, pg.PlotItem] = {}
        self.curves: dict[str, pg.PlotCurveItem] = {}
        self._fresh: set[str] = set()  # series with samples not drawn yet
        self.buffers: dict[str, SeriesBuffer] = {}
        self.markers: list[Marker] = []
        self.targets: list[str] = []  # targets seen in this run's series, in order
        self._progress: dict[str, tuple[str, float, int]] = {}  # target -> (case, t, bytes)
        self.frames: dict[str, Frame] = {}  # plot key -> what its auto-range fits
        self._peaks: dict[str, tuple[float, float]] = {}  # plot key -> (min, max) of its values
        self._t_last = 0.0
        self.t0: float | None = None
        self._dirty = False
        self._labels_dirty = False
        # the x window the curves were last cut to (None: the whole run; () before any)
        self._drawn_window: tuple[float, float] | tuple[()] | None = ()
        self.redraws = 0
        self.follow = True
        self._sliding = False  # the view is being moved by follow, not by the user
        self.live_gap_ms = LIVE_GAP_MS  # the refresh rate the Run page chose
        self.driven = False  # True: new samples wait for the owner's redraw() (its own tick)
        self._last_redraw = 0.0  # time.monotonic() of the last redraw that drew something
        # started by the first change after a redraw, not ticking while nothing arrives (an
        # idle 10 Hz timer cost 0.06 s of CPU a minute)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.timeout.connect(self.redraw)
        self._bottom: pg.AxisItem | None = None  # the time axis, under the last plot
        self._unit = "s"
        self._font_metrics = QFontMetrics(QFont())
        # the timeline strip: case labels (upper row) and configurations (lower row) live here,
        # never on the data
        self.timeline = self.layout_widget.addPlot(row=0, col=0)
        self.timeline.hideAxis("left")
        self.timeline.hideAxis("bottom")
        self.timeline.setMouseEnabled(x=True, y=False)
        self.timeline.setYRange(0, 1, padding=0)
        self.timeline.getViewBox().setLimits(yMin=0, yMax=1)
        self.timeline.hideButtons()
        self.timeline.setMaximumHeight(TIMELINE_PX)
        self.timeline.setMinimumHeight(TIMELINE_PX)
        first = None
        rows = [p for p in PLOTS if p[0] in which]
        for row, (key, title, unit) in enumerate(rows, start=1):
            axis = {"left": ValueAxis("left")}
            if row == len(rows):
                axis["bottom"] = TimeAxis("bottom")
            plot = self.layout_widget.addPlot(row=row, col=0, title=title, axisItems=axis)
            plot.setLabel("left", unit)
            if row != len(rows):
                plot.getAxis("bottom").setStyle(showValues=False)
            # horizontal major grid lines only: alpha-blended grid lines across the whole plot
            # are what a redraw costs most (measured in bench figure 3: 70 ms with x and minor
            # lines at 4 x 86,400 points, 10 ms like this); the markers mark time
            plot.showGrid(x=False, y=True, alpha=0.2)
            plot.getAxis("left").setStyle(maxTickLevel=0)
            plot.getAxis("left").setWidth(AXIS_PX)
            legend = plot.addLegend(offset=(-4, 1), brush=_legend_brush(),
                                    pen=pg.mkPen(170, 170, 170), colCount=3,
                                    labelTextSize="8pt", verSpacing=-6, horSpacing=8)
            legend.layout.setContentsMargins(3, 0, 3, 0)
            plot.setMouseEnabled(x=True, y=False)
            # a zoom or pan by hand, or back to the whole run: the new window at the next tick
            plot.getViewBox().sigXRangeChanged.connect(self._view_changed)
            plot.getViewBox().sigStateChanged.connect(self._view_changed)
            self.frames[key] = Frame()
            plot.addItem(self.frames[key])
            if first is None:
                first = plot
            else:
                plot.setXLink(first)
            self.plots[key] = plot
        if first is not None:
            self.timeline.setXLink(first)
            # an empty left axis as wide as the plots' own: the strip's x lines up with theirs
            self.timeline.showAxis("left")
            left = self.timeline.getAxis("left")
            left.setWidth(AXIS_PX)
            left.setStyle(showValues=False, tickLength=0)
            left.setPen(pg.mkPen(None))
        self._bottom = self.plots[rows[-1][0]].getAxis("bottom") if rows else None
        self._unit = "s"
        if self._bottom is not None:
            self._bottom.setLabel(UNIT_TITLES["s"])
        for series, (plot_key, label, _div) in LIVE_SERIES.items():
            if plot_key not in self.plots:
                continue
            # PlotCurveItem, not PlotDataItem: no symbols or data transforms here, and its
            # setData costs a seventh (measured: 10 vs 69 us)
            colour = (2 if plot_key == "cpu" else 3 if series == "tool_bps"
                      else SERIES_COLOURS[label])
            curve = LiveCurve(name=label, pen=_pen(colour, dashed=series == "tool_bps"),
                              connect="finite")
            self.plots[plot_key].addItem(curve, ignoreBounds=True)  # the Frame is fitted
            self.curves[series] = curve
            self.buffers[series] = SeriesBuffer()
        for plot in self.plots.values():  # the legends are filled by now
            for item in (plot.getAxis("left"), plot.getAxis("bottom"), plot.legend,
                         plot.titleLabel):
                _cache(item)
        if first is not None:  # linking handed x to the others' frames: the first one leads
            first.getViewBox().enableAutoRange(axis=pg.ViewBox.XAxis)

    def clear(self) -> None:
        for series in [s for s in self.curves if TARGET_SEP in s]:
            curve = self.curves.pop(series)
            plot = self.plots[LIVE_SERIES[series.split(TARGET_SEP)[0]][0]]
            plot.legend.removeItem(curve)
            plot.removeItem(curve)
        for series in [s for s in self.buffers if TARGET_SEP in s]:
            del self.buffers[series]
        for series in DEVICE_SERIES:  # the case's own curves again, as a one-target run has them
            curve = self.curves.get(series)
            if curve is not None and not curve.isVisible():
                curve.setVisible(True)
                self.plots[LIVE_SERIES[series][0]].legend.addItem(curve, curve.name())
        self.targets.clear()
        self._progress.clear()
        for buf in self.buffers.values():
            buf.clear()
        for m in self.markers:
            for line in m.lines:
                if line.getViewBox():
                    line.getViewBox().removeItem(line)
            if m.text is not None:
                self.timeline.removeItem(m.text)
        self.markers.clear()
        for frame in self.frames.values():
            frame.reset()
        self._peaks.clear()
        self._t_last = 0.0
        self.t0 = None
        self.set_follow(True)
        self._fresh.update(self.curves)  # drawn empty
        self._touch()
        self.redraw()

    # --- following the run
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
        view = self._lead_view()
        if view is not None:
            view.enableAutoRange(axis=pg.ViewBox.XAxis)
        self.set_follow(True)

    def _lead_view(self) -> pg.ViewBox | None:
        return next(iter(self.plots.values())).getViewBox() if self.plots else None

    def _slide(self) -> None:
        """Follow: a zoomed window keeps its width and ends at the newest sample."""
        view = self._lead_view()
        if view is None or view.autoRangeEnabled()[0]:
            return
        lo, hi = view.viewRange()[0]
        if self._t_last > hi or self._t_last < lo:
            width = hi - lo
            self._sliding = True
            try:
                view.setXRange(self._t_last - width * 0.95, self._t_last + width * 0.05,
                               padding=0)
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
        the distinct devices (core.monitor.TargetDisks), since two targets on one filesystem
        are one disk's bytes, which a sum of the targets' curves would count twice. The tool's
        own rates have no total curve: targets report their bytes at different times, so
        their rates do not add up per instant."""
        self._target_point(f"{base}{TARGET_SEP}{target}", t, value)

    def _target_point(self, series: str, t: float, value: float) -> None:
        """Record a per-target (or total) point; its curve appears with its first non-zero
        value (a write-only run shows no read curves per target)."""
        base, _sep, target = series.partition(TARGET_SEP)
        plot_key, label, div = LIVE_SERIES[base]
        if plot_key not in self.plots:
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
        plot = self.plots[LIVE_SERIES[base][0]]
        curve = LiveCurve(name=name, pen=_pen(colour, dashed=dashed))
        plot.addItem(curve, ignoreBounds=True)
        self.curves[series] = curve
        own = self.curves.get(base) if base in DEVICE_SERIES else None
        if own is not None and own.isVisible():
            own.setVisible(False)
            plot.legend.removeItem(own)
        _cache(plot.legend)

    def add_marker(self, t: float, label: str, kind: str = "case", detail: str = "") -> None:
        """A case, configuration or phase boundary: a dashed vertical line on every plot with
        `detail` on hover; cases and configurations are named on the timeline strip where
        their labels do not overlap (the hidden ones are still on hover)."""
        if self.t0 is None:
            self.t0 = t
        x = t - self.t0
        style = Qt.PenStyle.DotLine if kind == "phase" else Qt.PenStyle.DashLine
        colour = (200, 120, 40) if kind == "config" else (128, 128, 128)
        tip = f"{clock(x, 'min')} {label}" + (f"\n{detail}" if detail else "")
        lines = []
        for plot in self.plots.values():
            line = pg.InfiniteLine(pos=x, angle=90, movable=False,
                                   pen=pg.mkPen(colour, width=1, style=style))
            line.setToolTip(tip)
            # a marker stands at a time the run has reached: it never widens the autorange,
            # and leaving it out of the bounds spares a pass over every marker per redraw
            plot.addItem(line, ignoreBounds=True)
            lines.append(line)
        marker = Marker(x, label, kind, detail, lines)
        if kind != "phase":
            text = pg.TextItem(label, color=colour, anchor=(0, 0.5))
            text.setPos(x, 0.72 if kind == "case" else 0.25)
            text.setToolTip(tip)
            text.setVisible(False)  # until the next layout finds it room
            self.timeline.addItem(text, ignoreBounds=True)
            marker.text = text
            marker.width = self._font_metrics.horizontalAdvance(label) + 8
        self.markers.append(marker)
        self._labels_dirty = True
        self._touch()

    def _place_labels(self, x: tuple[float, float]) -> None:
        """Show a label only where it does not overlap the one before it on its row (cases
        above, configurations below), left to right, over the x range `x` shown; the rest
        are on hover."""
        self._labels_dirty = False
        width = float(self._plot_width())
        lo, hi = x
        scale = width / (hi - lo) if hi > lo else 0.0
        right_edge = {"case": -1e9, "config": -1e9}
        for m in self.markers:
            if m.text is None:
                continue
            px = (m.x - lo) * scale
            fits = -2 <= px <= width and px >= right_edge[m.kind] and scale > 0
            if fits:
                right_edge[m.kind] = px + m.width
            if m.text.isVisible() != fits:
                m.text.setVisible(fits)

    @staticmethod
    def _window(view: pg.ViewBox) -> tuple[float, float] | None:
        """The x range to draw: None (the whole run) while x follows the data."""
        if view.autoRangeEnabled()[0]:
            return None
        lo, hi = view.viewRange()[0]
        return float(lo), float(hi)

    def x_range(self) -> tuple[float, float]:
        """The time span shown: the whole run (its frame, padded) while x follows the data,
        else the window the user zoomed or panned to."""
        view = self._lead_view()
        if view is None:
            return (0.0, MIN_SECONDS)
        lo, hi = view.viewRange()[0]
        return float(lo), float(hi)

    def _time_unit(self, x: tuple[float, float] | None = None) -> None:
        """The time axis's title says how its ticks read (s, min:s, h:min) for the span shown."""
        if self._bottom is None:
            return
        lo, hi = x if x is not None else self.x_range()
        unit = time_unit(hi - lo)
        if unit != self._unit:
            self._unit = unit
            self._bottom.setLabel(UNIT_TITLES[unit])

    def _view_changed(self, view: pg.ViewBox, *_args: object) -> None:
        if view is not self._lead_view():  # the others follow it through their x link
            return
        window = self._window(view)
        if window != self._drawn_window:
            if (not self._sliding and window is not None and self.follow
                    and window[1] < self._t_last - 0.02 * (window[1] - window[0])):
                self.set_follow(False)  # panned back in time: stay there
            self._labels_dirty = True
            self._touch(urgent=True)

    def redraw(self) -> None:
        """Timer slot: hand each curve whose samples or view changed the visible window of its
        buffer (clip to view), reduced to about two points per pixel column (peak_window),
        in one setData; let the plots' ranges follow their frames."""
        if not self._dirty:
            return
        self._dirty = False
        self._last_redraw = time.monotonic()
        if self.follow:
            self._slide()
        lead = self._lead_view()
        window = self._window(lead) if lead is not None else None
        moved = window != self._drawn_window
        self._drawn_window = window
        bins = max(self._plot_width(), 100)
        lo, hi = window or (None, None)
        fresh, self._fresh = self._fresh, set()
        for series, curve in self.curves.items():
            if not curve.isVisible() or not (moved or series in fresh):
                continue
            t, y = self.buffers[series].data()
            t, y = peak_window(t, y, lo, hi, bins)
            # finite values, and the gaps between one case's report and the next (NaN)
            curve.setData(t, y, connect="finite")
        for key, frame in self.frames.items():
            lo_y, hi_y = self._peaks.get(key, (0.0, 0.0))
            if frame.cover(self._t_last, lo_y, hi_y * HEADROOM):  # the legend's row clear
                self.plots[key].getViewBox().updateAutoRange()  # now, not at the next paint
        x = self.x_range()
        self._time_unit(x)
        if self.markers and (moved or self._labels_dirty):
            self._place_labels(x)
        self._labels_dirty = False
        self.redraws += 1

    def _plot_width(self) -> int:
        """The plots' width in pixels: the pixel columns a curve is reduced to."""
        view = self._lead_view()
        return int(view.width()) if view is not None else 0

    def changeEvent(self, event: QEvent) -> None:
        """A light/dark switch (app.apply_theme sets the style and the palette, then
        pyqtgraph's colours): the plots take the theme's colours once all are set. The style
        change too, since a palette change does not reach every widget (seen under
        pytest-qt's application)."""
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange,
                            QEvent.Type.StyleChange):
            QTimer.singleShot(0, self, self.apply_theme)
        super().changeEvent(event)

    def apply_theme(self) -> None:
        """pyqtgraph's background and foreground colours (plot_theme) on what is drawn."""
        fg = pg.getConfigOption("foreground")
        self.layout_widget.setBackground(pg.getConfigOption("background"))
        for plot in (*self.plots.values(), self.timeline):
            for name in ("left", "bottom"):
                axis = plot.getAxis(name)
                axis.setPen(fg)
                axis.setTextPen(fg)
            plot.titleLabel.setText(plot.titleLabel.text, color=fg)
            if plot.legend is not None:
                plot.legend.setBrush(_legend_brush())
                plot.legend.setLabelTextColor(fg)

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
