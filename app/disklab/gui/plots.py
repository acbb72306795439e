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
(bench figure 2, measured on the Run page: 14 ms -> 3 ms a redraw).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pyqtgraph.exporters as pg_exporters
from PySide6.QtCore import QRectF, Qt, QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QGraphicsItem, QVBoxLayout, QWidget

from disklab.core.results.charts import PALETTE, ChartSpec
from disklab.core.units import MiB
from disklab.gui.buffers import SeriesBuffer

REDRAW_MS = 100  # a zoom or pan is drawn this soon, and nothing more often
LIVE_GAP_MS = 1000  # new samples are drawn at most once a second: a redraw of the four plots
# costs the GUI thread ~6 ms, and at the sampler's 2 Hz that alone was 0.7 s of CPU a minute
STEPS = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)  # each at most 1/3 above the last
MIN_SECONDS = 10.0  # the time axis of a new run spans at least this

# series name -> (plot, label, scale divisor)
LIVE_SERIES: dict[str, tuple[str, str, float]] = {
    "app_write_bps": ("app", "write", MiB),
    "app_read_bps": ("app", "read", MiB),
    "device_write_bps": ("device", "write", MiB),
    "device_read_bps": ("device", "read", MiB),
    "dirty_bytes": ("memory", "Dirty", MiB),
    "writeback_bytes": ("memory", "Writeback", MiB),
    "cpu_pct": ("cpu", "CPU", 1.0),
}
PLOTS = (
    ("app", "Application throughput", "MiB/s"),
    ("device", "Device throughput", "MiB/s"),
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


class LivePlots(QWidget):
    """Application and device throughput, Dirty/Writeback and CPU over time, x axes linked."""

    def __init__(self, parent: QWidget | None = None, which: Sequence[str] | None = None):
        super().__init__(parent)
        which = tuple(which or (key for key, _t, _u in PLOTS))
        self.layout_widget = pg.GraphicsLayoutWidget()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.layout_widget)
        self.plots: dict[str, pg.PlotItem] = {}
        self.curves: dict[str, pg.PlotCurveItem] = {}
        self.buffers: dict[str, SeriesBuffer] = {}
        self.markers: list[pg.InfiniteLine] = []
        self.frames: dict[str, Frame] = {}  # plot key -> what its auto-range fits
        self._peaks: dict[str, tuple[float, float]] = {}  # plot key -> (min, max) of its values
        self._t_last = 0.0
        self.t0: float | None = None
        self._dirty = False
        self._windows: dict[pg.ViewBox, tuple[float, float] | None] = {}  # as last drawn
        self.redraws = 0
        self._last_redraw = 0.0  # time.monotonic() of the last redraw that drew something
        # started by the first change after a redraw, not ticking while nothing arrives (an
        # idle 10 Hz timer cost 0.06 s of CPU a minute)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.timeout.connect(self.redraw)
        first = None
        for row, (key, title, unit) in enumerate(p for p in PLOTS if p[0] in which):
            plot = self.layout_widget.addPlot(row=row, col=0, title=title)
            plot.setLabel("left", unit)
            # horizontal major grid lines only: alpha-blended grid lines across the whole plot
            # are what a redraw costs most (measured in bench figure 3: 70 ms with x and minor
            # lines at 4 x 86,400 points, 10 ms like this); the phase markers mark time
            plot.showGrid(x=False, y=True, alpha=0.2)
            plot.getAxis("left").setStyle(maxTickLevel=0)
            plot.addLegend(offset=(-10, 5))
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
        self.plots[which[-1]].setLabel("bottom", "time (s)")
        for i, (series, (plot_key, label, _div)) in enumerate(LIVE_SERIES.items()):
            if plot_key not in self.plots:
                continue
            # PlotCurveItem, not PlotDataItem: no symbols or data transforms here, and its
            # setData costs a seventh (measured: 10 vs 69 us)
            curve = pg.PlotCurveItem(name=label, pen=_pen(i % 2 if plot_key != "cpu" else 2))
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
        for buf in self.buffers.values():
            buf.clear()
        for line in self.markers:
            line.getViewBox().removeItem(line) if line.getViewBox() else None
        self.markers.clear()
        for frame in self.frames.values():
            frame.reset()
        self._peaks.clear()
        self._t_last = 0.0
        self.t0 = None
        self._touch()
        self.redraw()

    def _touch(self, urgent: bool = False) -> None:
        """Something to draw, in one redraw for all that arrives meanwhile: within REDRAW_MS for
        a view the user moved (`urgent`), else LIVE_GAP_MS after the last redraw at the soonest."""
        self._dirty = True
        delay = REDRAW_MS
        if not urgent:
            since = (time.monotonic() - self._last_redraw) * 1000
            delay = max(REDRAW_MS, int(LIVE_GAP_MS - since))
        if not self.timer.isActive() or self.timer.remainingTime() > delay:
            self.timer.start(delay)

    def add_sample(self, series: str, t: float, value: float) -> None:
        """Record one point; drawn at the next timer tick."""
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

    def add_marker(self, t: float, label: str, low: bool = False) -> None:
        """A phase or case boundary: a dashed vertical line on every plot, labelled on the
        first (at the top, or near the bottom for `low` markers such as configurations)."""
        if self.t0 is None:
            self.t0 = t
        x = t - self.t0
        for i, plot in enumerate(self.plots.values()):
            line = pg.InfiniteLine(pos=x, angle=90, movable=False,
                                   pen=pg.mkPen((128, 128, 128), width=1,
                                                style=Qt.PenStyle.DashLine),
                                   label=label if i == 0 else None,
                                   labelOpts={"position": 0.1 if low else 0.92,
                                              "color": (128, 128, 128)})
            # a marker stands at a time the run has reached: it never widens the autorange,
            # and leaving it out of the bounds spares a pass over every marker per redraw
            plot.addItem(line, ignoreBounds=True)
            if getattr(line, "label", None) is not None:  # only the first plot's has one
                _cache(line.label)
            self.markers.append(line)

    @staticmethod
    def _window(view: pg.ViewBox) -> tuple[float, float] | None:
        """The x range to draw: None (the whole run) while x follows the data."""
        if view.autoRangeEnabled()[0]:
            return None
        lo, hi = view.viewRange()[0]
        return float(lo), float(hi)

    def _view_changed(self, view: pg.ViewBox, *_args: object) -> None:
        if self._window(view) != self._windows.get(view):
            self._touch(urgent=True)

    def redraw(self) -> None:
        """Timer slot: push the visible window of each buffer, reduced to about two points per
        pixel column (peak_window), to the curves if anything arrived or the view moved."""
        if not self._dirty:
            return
        self._dirty = False
        self._last_redraw = time.monotonic()
        for series, curve in self.curves.items():
            t, y = self.buffers[series].data()
            view = curve.getViewBox()
            window, bins = None, 1000
            if view is not None:
                window = self._window(view)
                self._windows[view] = window
                bins = max(int(view.width()), 100)
            lo, hi = window or (None, None)
            t, y = peak_window(t, y, lo, hi, bins)
            curve.setData(t, y, skipFiniteCheck=True)  # buffers hold only finite values
        for key, frame in self.frames.items():
            lo, hi = self._peaks.get(key, (0.0, 0.0))
            frame.cover(self._t_last, lo, hi)
        self.redraws += 1

    def series_data(self, series: str) -> tuple[np.ndarray, np.ndarray]:
        return self.buffers[series].data()


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
