"""Live plots of a run and static charts of results, with PNG and SVG export.

Live plots keep each series in a SeriesBuffer and redraw from a single-shot QTimer (never per
sample): new samples at most once a second, a zoom or pan within 100 ms. Curves use width-1 pens
and are handed only the visible window of each series, reduced to the minimum and maximum of each
pixel column (peak_window), so a run of many hours stays smooth (reliability-and-performance.md
B3) and its peaks stay visible at any zoom.

While the plots follow the run, their ranges grow in steps (Frame) instead of fitting the data at
every sample, and axes, titles, legends and marker labels are cached as pixmaps: a new sample then
repaints the curves and blits the rest. Fitting the data moved both axes at every redraw, and
laying out their text again in Qt's software rasteriser was most of what a live run cost the GUI
(bench figure 2, measured on the Run page: 14 ms -> 3 ms a redraw). The live plots the user sees
are painted by gui/livepaint.LiveCanvas in one pass per refresh (no scene graph: ~0.5 ms); the
pyqtgraph items here stay hidden behind it as the model of the x range and of the curves' data.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pyqtgraph.exporters as pg_exporters
from PySide6.QtCore import QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics
from PySide6.QtWidgets import (
    QCheckBox,
    QGraphicsItem,
    QHBoxLayout,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from disklab.core.results.charts import PALETTE, ChartSpec
from disklab.core.units import MiB
from disklab.gui.buffers import SeriesBuffer
from disklab.gui.livepaint import (
    LEGEND_ALPHA,
    NICE_SECONDS,
    TICK_PX,
    LiveCanvas,
    Mark,
    clock,
    time_unit,
)
from disklab.gui.plot_theme import PLOT_OPTIONS

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


def export_plot(item: pg.PlotItem | pg.GraphicsScene, path: str | Path, width: int = 1200) -> Path:
    """Write a plot to PNG or SVG (by the file's extension) with pyqtgraph's exporters."""
    path = Path(path)
    if path.suffix.lower() == ".svg":
        exporter = pg_exporters.SVGExporter(item)
    else:
        exporter = pg_exporters.ImageExporter(item)
        exporter.parameters()["width"] = width
    exporter.export(str(path))
    return path


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

    before_read: Callable[[], None] | None = None  # hands this curve its pending data

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

    def getData(self) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The data the canvas drew (LivePlots hands it over when asked: `before_read`)."""
        if self.before_read is not None:
            self.before_read()
        return super().getData()


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


def _colour(option: str) -> tuple[int, int, int]:
    """A pyqtgraph colour option (the theme app.py chose) as RGB, for the canvas. Asked at
    every paint of the canvas (a theme switch repaints it): pg.mkColor's parsing was ~0.2 ms
    of each, so each value is parsed once."""
    value = pg.getConfigOption(option)
    try:
        return _rgb(value)
    except TypeError:  # an unhashable value (a QColor set by hand): parsed each time
        c = pg.mkColor(value)
        return (c.red(), c.green(), c.blue())


@functools.lru_cache(maxsize=8)
def _rgb(value: object) -> tuple[int, int, int]:
    c = pg.mkColor(value)
    return (c.red(), c.green(), c.blue())


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
    mark: Mark | None = None  # as the canvas draws it


class LivePlots(QWidget):
    """Application and device throughput, Dirty/Writeback and CPU over time, x axes linked,
    under a timeline strip that names the cases and configurations.

    What the user sees is a LiveCanvas (gui/livepaint.py): one paint per refresh, no scene
    graph. The pyqtgraph plots behind it are never shown: they keep the x range's state (zoom,
    pan, auto-range, the links between plots), the curves' data, legends and marker items, so
    that what tests and exports read is what the canvas draws (bench figure 2: pyqtgraph's
    paint of these plots was ~3 ms of the ~3.5 ms a refresh may take). Their curves get their
    data only when someone outside asks for them (`curves`, `plots`, `layout_widget`): a
    setData per curve and refresh was ~1 ms of the GUI thread for a model nobody looked at
    (bench figure 1b, the GUI on the tool's CPU)."""

    follow_changed = Signal(bool)

    def __init__(self, parent: QWidget | None = None, which: Sequence[str] | None = None):
        super().__init__(parent)
        which = tuple(which or (key for key, _t, _u in PLOTS))
        self._layout_widget = pg.GraphicsLayoutWidget(self)
        self._layout_widget.hide()  # the model behind the canvas, never painted on screen
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
        rows_shown = [p for p in PLOTS if p[0] in which]
        self.canvas = LiveCanvas(rows_shown, background=_colour("background"),
                                 foreground=_colour("foreground"))
        self.canvas.zoom = self._zoom_to
        self.canvas.theme = lambda: (_colour("background"), _colour("foreground"))
        self.canvas.whole = self.show_whole_run
        lay.addWidget(self.canvas, 1)
        self._legends: dict[str, tuple] = {}  # plot key -> legend entries handed to the canvas
        self._plots: dict[str, pg.PlotItem] = {}
        self._curves: dict[str, pg.PlotCurveItem] = {}
        # series -> (t, y) the canvas drew and the hidden curve has not been given yet
        self._pending: dict[str, tuple[np.ndarray, np.ndarray]] = {}
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
        self._windows: dict[pg.ViewBox, tuple[float, float] | None] = {}  # as last drawn
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
        self.timeline = self._layout_widget.addPlot(row=0, col=0)
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
            axis = {"bottom": TimeAxis("bottom")} if row == len(rows) else {}
            plot = self._layout_widget.addPlot(row=row, col=0, title=title, axisItems=axis)
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
            self._plots[key] = plot
        if first is not None:
            self.timeline.setXLink(first)
            # an empty left axis as wide as the plots' own: the strip's x lines up with theirs
            self.timeline.showAxis("left")
            left = self.timeline.getAxis("left")
            left.setWidth(AXIS_PX)
            left.setStyle(showValues=False, tickLength=0)
            left.setPen(pg.mkPen(None))
        self._bottom = self._plots[rows[-1][0]].getAxis("bottom") if rows else None
        self._unit = "s"
        if self._bottom is not None:
            self._bottom.setLabel(UNIT_TITLES["s"])
        for series, (plot_key, label, _div) in LIVE_SERIES.items():
            if plot_key not in self._plots:
                continue
            # PlotCurveItem, not PlotDataItem: no symbols or data transforms here, and its
            # setData costs a seventh (measured: 10 vs 69 us)
            colour = (2 if plot_key == "cpu" else 3 if series == "tool_bps"
                      else SERIES_COLOURS[label])
            curve = LiveCurve(name=label, pen=_pen(colour, dashed=series == "tool_bps"),
                              connect="finite")
            curve.before_read = self.sync_model
            self._plots[plot_key].addItem(curve, ignoreBounds=True)  # the Frame is fitted
            self._curves[series] = curve
            self.buffers[series] = SeriesBuffer()
        for plot in self._plots.values():  # the legends are filled by now
            for item in (plot.getAxis("left"), plot.getAxis("bottom"), plot.legend,
                         plot.titleLabel):
                _cache(item)
        if first is not None:  # linking handed x to the others' frames: the first one leads
            first.getViewBox().enableAutoRange(axis=pg.ViewBox.XAxis)

    # --- the pyqtgraph model, as tests and exports read it
    @property
    def curves(self) -> dict[str, pg.PlotCurveItem]:
        """The curves by series, holding what the canvas drew."""
        self.sync_model()
        return self._curves

    @property
    def plots(self) -> dict[str, pg.PlotItem]:
        """The hidden plots by key (their curves hold what the canvas drew)."""
        self.sync_model()
        return self._plots

    @property
    def layout_widget(self) -> pg.GraphicsLayoutWidget:
        """The hidden scene of the plots, to grab or export (its curves hold what the canvas
        drew)."""
        self.sync_model()
        return self._layout_widget

    def sync_model(self) -> None:
        """Hand the curves the data the canvas drew since they were last asked."""
        pending, self._pending = self._pending, {}
        for series, (t, y) in pending.items():
            curve = self._curves.get(series)
            if curve is not None:
                # finite values, and the gaps between one case's report and the next (NaN)
                curve.setData(t, y, connect="finite")

    def clear(self) -> None:
        for series in [s for s in self._curves if TARGET_SEP in s]:
            self._pending.pop(series, None)
            curve = self._curves.pop(series)
            plot = self._plots[LIVE_SERIES[series.split(TARGET_SEP)[0]][0]]
            plot.legend.removeItem(curve)
            plot.removeItem(curve)
            self.canvas.drop_curve(series)
        for series in [s for s in self.buffers if TARGET_SEP in s]:
            del self.buffers[series]
        for series in DEVICE_SERIES:  # the case's own curves again, as a one-target run has them
            curve = self._curves.get(series)
            if curve is not None and not curve.isVisible():
                curve.setVisible(True)
                self._plots[LIVE_SERIES[series][0]].legend.addItem(curve, curve.name())
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
        self.canvas.set_marks([])
        for frame in self.frames.values():
            frame.reset()
        self._peaks.clear()
        self._t_last = 0.0
        self.t0 = None
        self.set_follow(True)
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

    def _zoom_to(self, lo: float, hi: float) -> None:
        """The user zoomed or panned on the canvas: the plots' x range is the model."""
        view = self._lead_view()
        if view is not None and hi > lo:
            view.setXRange(lo, hi, padding=0)

    def _lead_view(self) -> pg.ViewBox | None:
        return next(iter(self._plots.values())).getViewBox() if self._plots else None

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
        if plot_key not in self._plots:
            return
        if self.t0 is None:
            self.t0 = t
        y = value / div
        self.buffers.setdefault(series, SeriesBuffer()).append(t - self.t0, y)
        self._t_last = max(self._t_last, t - self.t0)
        lo, hi = self._peaks.get(plot_key, (y, y))
        self._peaks[plot_key] = (min(lo, y), max(hi, y))
        if series not in self._curves and y > 0:
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
        plot = self._plots[LIVE_SERIES[base][0]]
        curve = LiveCurve(name=name, pen=_pen(colour, dashed=dashed))
        curve.before_read = self.sync_model
        plot.addItem(curve, ignoreBounds=True)
        self._curves[series] = curve
        own = self._curves.get(base) if base in DEVICE_SERIES else None
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
        for plot in self._plots.values():
            line = pg.InfiniteLine(pos=x, angle=90, movable=False,
                                   pen=pg.mkPen(colour, width=1, style=style))
            line.setToolTip(tip)
            # a marker stands at a time the run has reached: it never widens the autorange,
            # and leaving it out of the bounds spares a pass over every marker per redraw
            plot.addItem(line, ignoreBounds=True)
            lines.append(line)
        marker = Marker(x, label, kind, detail, lines, mark=Mark(x, label, kind, tip))
        if kind != "phase":
            text = pg.TextItem(label, color=colour, anchor=(0, 0.5))
            text.setPos(x, 0.72 if kind == "case" else 0.25)
            text.setToolTip(tip)
            text.setVisible(False)  # until the next layout finds it room
            self.timeline.addItem(text, ignoreBounds=True)
            marker.text = text
            marker.width = self._font_metrics.horizontalAdvance(label) + 8
        self.markers.append(marker)
        self.canvas.set_marks([m.mark for m in self.markers if m.mark is not None])
        self._labels_dirty = True
        self._touch()

    def _place_labels(self, x: tuple[float, float]) -> None:
        """Show a label only where it does not overlap the one before it on its row (cases
        above, configurations below), left to right, over the canvas's x range `x`; the rest
        are on hover."""
        self._labels_dirty = False
        width = float(self.canvas.plot_width())
        lo, hi = x
        scale = width / (hi - lo) if hi > lo else 0.0
        right_edge = {"case": -1e9, "config": -1e9}
        moved = False
        for m in self.markers:
            if m.text is None:
                continue
            px = (m.x - lo) * scale
            fits = -2 <= px <= width and px >= right_edge[m.kind] and scale > 0
            if fits:
                right_edge[m.kind] = px + m.width
            if m.text.isVisible() != fits:
                m.text.setVisible(fits)
            if m.mark is not None and m.mark.shown != fits:
                m.mark.shown = fits
                moved = True
        if moved:
            self.canvas.set_marks(self.canvas.marks)

    @staticmethod
    def _window(view: pg.ViewBox) -> tuple[float, float] | None:
        """The x range to draw: None (the whole run) while x follows the data."""
        if view.autoRangeEnabled()[0]:
            return None
        lo, hi = view.viewRange()[0]
        return float(lo), float(hi)

    def _x_range(self) -> tuple[float, float]:
        """The time span shown: the whole run's frame while x follows the data (the hidden
        plots fit it only when painted), else the window the user zoomed or panned to."""
        view = self._lead_view()
        window = self._window(view) if view is not None else None
        if window is not None:
            return window
        right = max((f.rect.right() for f in self.frames.values()), default=MIN_SECONDS)
        return (0.0, right)

    def _time_unit(self, x: tuple[float, float] | None = None) -> None:
        """The time axis's title says how its ticks read (s, min:s, h:min) for the span shown."""
        if self._bottom is None:
            return
        lo, hi = x if x is not None else self._x_range()
        unit = time_unit(hi - lo)
        if unit != self._unit:
            self._unit = unit
            self._bottom.setLabel(UNIT_TITLES[unit])

    def _view_changed(self, view: pg.ViewBox, *_args: object) -> None:
        if view is not self._lead_view():  # the others follow it through their x link
            return
        window = self._window(view)
        if window != self._windows.get(view):
            if (not self._sliding and window is not None and self.follow
                    and window[1] < self._t_last - 0.02 * (window[1] - window[0])):
                self.set_follow(False)  # panned back in time: stay there
            self._labels_dirty = True
            self._touch(urgent=True)

    def redraw(self) -> None:
        """Timer slot: push the visible window of each buffer, reduced to about two points per
        pixel column (peak_window), to the curves if anything arrived or the view moved."""
        if not self._dirty:
            return
        self._dirty = False
        self._last_redraw = time.monotonic()
        if self.follow:
            self._slide()
        bins = max(self.canvas.plot_width(), 100)
        canvas = self.canvas
        lead = self._lead_view()
        # the x range is the lead plot's (the others are linked to it and follow it only when
        # they are painted, which these hidden plots are not)
        window = self._window(lead) if lead is not None else None
        for plot in self._plots.values():
            self._windows[plot.getViewBox()] = window
        lo, hi = window or (None, None)
        for series, curve in list(self._curves.items()):
            t, y = self.buffers[series].data()
            t, y = peak_window(t, y, lo, hi, bins)
            self._pending[series] = (t, y)  # the hidden curve's, when asked (sync_model)
            if curve.isVisible():
                canvas.set_curve(series, LIVE_SERIES[series.partition(TARGET_SEP)[0]][0],
                                 curve.opts["pen"], t, y)
            else:
                canvas.drop_curve(series)
        for key, frame in self.frames.items():
            lo, hi = self._peaks.get(key, (0.0, 0.0))
            frame.cover(self._t_last, lo, hi * HEADROOM)  # the legend's row stays clear
        x = self._x_range()
        self._time_unit(x)
        if self.markers:
            self._place_labels(x)
        canvas.set_ranges(x, {k: (f.rect.top(), f.rect.bottom()) for k, f in self.frames.items()},
                          UNIT_TITLES[self._unit])
        for key, plot in self._plots.items():
            entries = tuple((label.text, sample.item.opts["pen"])
                            for sample, label in plot.legend.items)
            if entries != self._legends.get(key):
                self._legends[key] = entries
                canvas.set_legend(key, entries)
        # the hidden plots are not fitted here: their auto-range (a pass over every item's
        # bounds, then axes and SI-prefixed labels redone in Python) cost ~1.5 ms a refresh;
        # the canvas fits the frames itself, and the plots fit them if ever painted (exports)
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


class ChartView(pg.PlotWidget):
    """Draws a core.results.charts.ChartSpec: grouped bars with error whiskers, or lines."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.spec: ChartSpec | None = None
        self.plotItem.showGrid(x=False, y=True, alpha=0.2)

    def show_spec(self, spec: ChartSpec | None) -> None:
        item = self.plotItem
        item.clear()
        if item.legend is not None:
            item.legend.scene().removeItem(item.legend) if item.legend.scene() else None
            item.legend = None
        self.spec = spec
        item.setLogMode(x=False, y=False)
        if spec is None:
            item.setTitle("")
            return
        item.setTitle(spec.title)
        item.setLabel("left", spec.axis_title)
        item.setLabel("bottom", spec.x_label)
        item.addLegend(offset=(-10, 5))
        bottom = item.getAxis("bottom")
        if spec.kind == "bar":
            n = max(len(spec.series), 1)
            width = 0.8 / n
            for k, s in enumerate(spec.series):
                xs = np.array(s.x, dtype=float) - 0.4 + width * (k + 0.5)
                ys = np.array(s.y, dtype=float)
                colour = PALETTE[k % len(PALETTE)]
                bars = pg.BarGraphItem(x=xs, height=ys, width=width * 0.95, brush=colour,
                                       name=s.name)
                item.addItem(bars)  # the legend picks up the named item
                if s.err:
                    err = pg.ErrorBarItem(x=xs, y=ys, height=2 * np.array(s.err, dtype=float),
                                          beam=width * 0.3, pen=pg.mkPen("#444"))
                    item.addItem(err)
            bottom.setTicks([[(i, _short(c)) for i, c in enumerate(spec.categories)]])
            item.setXRange(-0.6, len(spec.categories) - 0.4, padding=0)
            top = max((y + (s.err[i] if s.err else 0.0) for s in spec.series
                       for i, y in enumerate(s.y)), default=1.0)
            item.setYRange(0, top * (1.12 + 0.06 * len(spec.series)), padding=0)  # legend room
            return
        else:
            bottom.setTicks(None)
            for k, s in enumerate(spec.series):
                item.plot(list(s.x), list(s.y), name=s.name, pen=_pen(k),
                          symbol="o" if len(s.x) <= 40 else None, symbolSize=5,
                          symbolBrush=PALETTE[k % len(PALETTE)])
            if spec.log_x:
                item.setLogMode(x=True, y=False)
            if spec.x_ticks:  # the swept values as the plan spells them (4k, 64k, 1m)
                bottom.setTicks([[(float(np.log10(x)) if spec.log_x and x > 0 else x, text)
                                  for x, text in spec.x_ticks]])
            for x, label in spec.markers:
                pen = pg.mkPen((128, 128, 128), style=Qt.PenStyle.DashLine)
                item.addItem(pg.InfiniteLine(pos=x, angle=90, label=label, pen=pen))
        item.enableAutoRange()

    def export(self, path: str | Path) -> Path:
        return export_plot(self.plotItem, path)


def _short(text: str, n: int = 24) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def series_names() -> Sequence[str]:
    return tuple(LIVE_SERIES)
