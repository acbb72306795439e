"""The Run page's live plots: application and device throughput, page cache and CPU over time,
drawn by pyqtgraph.

Each series lives in a SeriesBuffer; a single-shot QTimer redraws (never per sample): new samples
at most once per refresh (1 s by default), a zoom or pan within 100 ms. A refresh hands each
curve whose samples or view changed one `setData` with only the visible window of its series
(clip to view), reduced to the minimum and maximum of each pixel column (plot_series.peak_window:
every peak visible at any zoom), broken where samples are missing, drawn with width-1 pens, no
antialiasing and no finite check (the buffers hold finite values only), so a run of many hours
stays smooth (reliability-and-performance.md B3).

The four plots' time axes are linked; each plot's ViewBox (plot_view.LiveView) gives the mouse
its meaning, y fits the visible samples unless the user zoomed y, and the right-click menu
exports what is shown (plot_export). A crosshair follows the mouse with every curve's value at
its time; cases, configurations and repeats are labelled lines.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from disklab.core.results.charts import PALETTE
from disklab.core.vocab.units import UNIT_SYSTEMS
from disklab.gui.buffers import SeriesBuffer
from disklab.gui.plot_axes import UNIT_TITLES, TimeAxis, ValueAxis, time_unit
from disklab.gui.plot_export import export_csv, export_image
from disklab.gui.plot_marks import Marker, mark, place_labels
from disklab.gui.plot_readout import HINT, cross_line, hover, values_at
from disklab.gui.plot_series import (
    LIVE_SERIES,
    PLOTS,
    Gaps,
    log_values,
    peak_window,
    plot_unit,
    series_scale,
    visible_span,
)
from disklab.gui.plot_targets import PER_TARGET, TARGET_SEP, TargetCurves
from disklab.gui.plot_theme import theme_colours
from disklab.gui.plot_view import LiveView, StillLegend, drawn_bounds

pg.setConfigOptions(antialias=False)

REDRAW_MS = 100  # a zoom or pan is drawn this soon, and nothing more often
LIVE_GAP_MS = 1000  # new samples are drawn at most once a second (the Run page's default)
LEGEND_ALPHA = 215  # legends are read over the curves: a background of the plot's colour
# one colour per direction on every plot: write blue, read orange; Dirty and Writeback likewise
SERIES_COLOURS = {"write": 0, "read": 1, "Dirty": 0, "Writeback": 1}


class LiveCurve(pg.PlotCurveItem):
    """A curve of a series: its plot, its legend name, and whether the y axis is in log mode
    (set by the PlotItem's menu; LivePlots redraws the curve with log10 values)."""

    def __init__(self, series: str, plot: str, name: str, pen: object) -> None:
        # ((time lo, hi), (value lo, hi)) of the points last handed; None: none
        self.bounds: tuple[tuple[float, float], tuple[float, float]] | None = None
        # what of them is seen in the window they were cut to (plot_series.visible_span)
        self.seen: tuple[float, float, float, float] | None = None
        super().__init__(name=name, pen=pen, skipFiniteCheck=True)
        self.series, self.plot, self.log = series, plot, False
        self.on_log: object = None

    def data(self) -> tuple[np.ndarray, np.ndarray]:
        """The points last handed to setData (time, value as plotted)."""
        x, y = self.getData()
        return (np.empty(0), np.empty(0)) if x is None else (x, y)

    def updateData(self, *args: object, **kwargs: object) -> None:
        """pyqtgraph's, and the points' bounds taken once (they are in time order and
        finite): pyqtgraph's nanmin/nanmax over them ran at every paint of a moved view."""
        super().updateData(*args, **kwargs)
        x, y = self.xData, self.yData
        self.bounds = (((float(x[0]), float(x[-1])), (float(y.min()), float(y.max())))
                       if x is not None and len(x) else None)

    def dataBounds(self, ax: int, frac: float = 1.0, orthoRange: object = None) -> tuple:
        if frac >= 1.0 and orthoRange is None:
            return self.bounds[ax] if self.bounds is not None else (None, None)
        return super().dataBounds(ax, frac, orthoRange)

    def setLogMode(self, _x: bool, y: bool) -> None:
        if y != self.log:
            self.log = y
            if callable(self.on_log):
                self.on_log(self.series)


def _pen(index: int, dashed: bool = False) -> object:
    style = Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine
    return pg.mkPen(PALETTE[index % len(PALETTE)], width=1, style=style)


class LivePlots(QWidget):
    """Application and device throughput, Dirty/Writeback and CPU over time, x axes linked.

    The x range is the whole run, followed (x auto-range on) or a window the user zoomed or
    panned to; "Follow the run" slides a zoomed window with the newest samples, "Whole run"
    (a double click, View All, the auto-range button) brings the whole run back."""

    follow_changed = Signal(bool)

    def __init__(self, parent: QWidget | None = None, which: Sequence[str] | None = None):
        super().__init__(parent)
        which = tuple(which or (key for key, _t, _u in PLOTS))
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addLayout(follow_bar(self))
        self.readout = QLabel(HINT)
        self.readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # a long line of values never widens the window: what does not fit is cut
        # and never moves the plots: a relayout under a pressed button loses pyqtgraph the drag
        self.readout.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.readout.setFixedHeight(self.readout.sizeHint().height())
        lay.addWidget(self.readout)
        self.layout_widget = pg.GraphicsLayoutWidget(self)
        self.layout_widget.scene().contextMenu = []  # our Export menu writes the samples
        lay.addWidget(self.layout_widget, 1)
        self.plots: dict[str, pg.PlotItem] = {}
        self.cross: dict[str, pg.InfiniteLine] = {}
        self.curves: dict[str, LiveCurve] = {}
        self.buffers: dict[str, SeriesBuffer] = {}
        self.gaps: dict[str, Gaps] = {}
        self.markers: list[Marker] = []
        self.per_target = TargetCurves(self)
        self._fresh: set[str] = set()  # series with samples (or a log switch) not drawn yet
        self._drawn_window: tuple[float, float] | tuple[()] | None = ()  # () before any
        self._t_last = 0.0
        self.t0: float | None = None
        self._dirty = self._labels_dirty = False
        self.redraws = 0
        self.follow = True
        self._sliding = False  # the window is being moved by follow, not by the user
        self.live_gap_ms = LIVE_GAP_MS  # the refresh rate the Run page chose
        self._driven = False
        self._last_redraw = 0.0  # time.monotonic() of the last redraw that drew something
        self.timer = QTimer(self)  # started by a change, idle while nothing arrives
        self.timer.setSingleShot(True)
        self.timer.timeout.connect(self.redraw)
        self._unit = ""
        self._font_metrics = QFontMetrics(QFont())
        bg, fg = theme_colours()
        pg.setConfigOptions(background=bg, foreground=fg)  # what new items are drawn with
        for key, title, _unit in (p for p in PLOTS if p[0] in which):
            self._add_plot(key, title, plot_unit(key))
        for series, (plot_key, label, _div) in LIVE_SERIES.items():
            if plot_key in self.plots:
                colour = (2 if plot_key == "cpu" else 3 if series == "tool_bps"
                          else SERIES_COLOURS[label])
                self.add_curve(series, plot_key, label, colour, dashed=series == "tool_bps")
        self.layout_widget.scene().sigMouseMoved.connect(lambda pos: hover(self, pos))
        self.apply_theme()
        time_title(self)

    def _add_plot(self, key: str, title: str, unit: str) -> None:
        """A plot of the column: its view (LiveView), axes, legend, grid and crosshair line;
        its time axis linked to the first plot's."""
        view = LiveView(self.show_whole_run)
        plot = self.layout_widget.addPlot(
            row=len(self.plots), col=0, viewBox=view, title=title,
            axisItems={"bottom": TimeAxis("bottom"), "left": ValueAxis("left")})
        plot.setLabel("left", unit)
        plot.showGrid(x=True, y=True, alpha=0.2)
        plot.getAxis("left").setWidth(62)
        for hidden in ("top", "right"):  # never shown: no range of the view to follow
            plot.getAxis(hidden).unlinkFromView()
        view.legend = plot.legend = StillLegend(offset=(8, 1), labelTextSize="8pt", colCount=4)
        view.legend.setParentItem(view)
        if self.plots:
            plot.setXLink(next(iter(self.plots.values())))
        else:
            view.sigXRangeChanged.connect(self._view_changed)
        view.sigStateChanged.connect(self._auto_x_changed)
        view.log_y.toggled.connect(lambda on, p=plot: p.setLogMode(False, on))
        view.add_export("&CSV of the samples shown…", lambda: export_csv(self))
        view.add_export("&PNG of the plots…", lambda: export_image(self, "png"))
        view.add_export("&SVG of the plots…", lambda: export_image(self, "svg"))
        line = cross_line()
        plot.addItem(line, ignoreBounds=True)
        self.cross[key] = line
        self.plots[key] = plot
        for other in self.plots.values():  # the time labels only under the last plot
            other.getAxis("bottom").setStyle(showValues=other is plot)
            other.setLabel("bottom", "")
        self._unit = ""

    def add_curve(self, series: str, plot_key: str, name: str, colour: int,
                  dashed: bool = False) -> LiveCurve:
        """A curve of a series in one plot, in PALETTE's `colour`, with its buffer."""
        curve = LiveCurve(series, plot_key, name, _pen(colour, dashed))
        curve.on_log = self._log_switched
        self.plots[plot_key].addItem(curve)
        self.curves[series] = curve
        self.add_buffer(series)
        return curve

    def add_buffer(self, series: str) -> None:
        """The samples and gaps of a series, kept whether or not it has a curve yet."""
        self.buffers.setdefault(series, SeriesBuffer())
        self.gaps.setdefault(series, Gaps())

    def legend(self, plot: str) -> list[str]:
        """The names in a plot's legend, in order: its visible curves."""
        return [c.name() for c in self.curves.values() if c.plot == plot and c.isVisible()]

    def clear(self) -> None:
        self.per_target.clear()
        for buf in self.buffers.values():
            buf.clear()
        for gaps in self.gaps.values():
            gaps.clear()
        for marker in self.markers:
            for line in marker.lines:
                line.getViewBox().removeItem(line)
        self.markers.clear()
        self._t_last = 0.0
        self.t0 = None
        self.show_whole_run()
        self._fresh.update(self.curves)  # drawn empty
        self._touch()
        self.redraw()

    @property
    def driven(self) -> bool:
        """True while a run goes: new samples wait for the owner's redraw() (its own tick),
        and the views fit them loosely (plot_view.LiveView.loose); the drawing after the run
        fits exactly."""
        return self._driven

    @driven.setter
    def driven(self, on: bool) -> None:
        if self._driven and not on:
            self._drawn_window = ()  # every curve handed again, every view fitted exactly
            self._dirty = True
        self._driven = on

    # --- the x range: the whole run, or a window the user chose
    def _lead_view(self) -> LiveView | None:
        return next(iter(self.plots.values())).getViewBox() if self.plots else None

    @property
    def window(self) -> tuple[float, float] | None:
        """The time window the user zoomed or panned to; None: the whole run, followed."""
        view = self._lead_view()
        if view is None or view.autoRangeEnabled()[0]:
            return None
        lo, hi = view.viewRange()[0]
        return float(lo), float(hi)

    def x_range(self) -> tuple[float, float]:
        """The time span shown."""
        view = self._lead_view()
        if view is None:
            return (0.0, 1.0)
        lo, hi = view.viewRange()[0]
        return float(lo), float(hi)

    def set_follow(self, on: bool) -> None:
        """Keep the newest data in view (a zoomed window slides with the run)."""
        if on == self.follow and self.follow_box.isChecked() == on:
            return
        self.follow = on
        if self.follow_box.isChecked() != on:
            self.follow_box.setChecked(on)
        if on:
            slide(self)
        self.follow_changed.emit(on)

    def show_whole_run(self) -> None:
        """The whole run, followed, y fitted in every plot (a double click, View All, the
        Whole run button)."""
        for i, plot in enumerate(self.plots.values()):
            plot.getViewBox().enableAutoRange(x=i == 0, y=True)
        self.set_follow(True)
        self._labels_dirty = True
        self._touch(urgent=True)

    def set_window(self, lo: float, hi: float) -> None:
        """Show the time window [lo, hi] (as a wheel zoom or a pan would)."""
        view = self._lead_view()
        if view is not None and hi > lo:
            view.setXRange(lo, hi, padding=0)

    def _auto_x_changed(self) -> None:
        """The auto-range button (or menu) of a plot under the first brought x auto-range
        back: the first plot's x follows the run again, the others through their link."""
        views = [p.getViewBox() for p in self.plots.values()]
        if any(v.autoRangeEnabled()[0] for v in views[1:]):
            for v in views[1:]:
                v.enableAutoRange(x=False)
            views[0].enableAutoRange(x=True)
            self.set_follow(True)

    def _view_changed(self, *_args: object) -> None:
        """The time range moved (the user, following, or the auto-range fitting new samples,
        which it does at the next paint): labels placed for it; a window of the user's own
        drawn soon, following stopped if it is back in time."""
        if self.markers:
            self._place_labels(self.x_range())
        window = self.window
        if window != self._drawn_window:
            if (not self._sliding and window is not None and self.follow
                    and window[1] < self._t_last - 0.02 * (window[1] - window[0])):
                self.set_follow(False)  # panned back in time: stay there
            self._labels_dirty = True
            self._touch(urgent=True)

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

    # --- samples and markers
    def add_sample(self, series: str, t: float, value: float) -> None:
        """Record one point; drawn at the next refresh. A target's share of a series
        (device_write_bps:a, several targets) gets a curve of its own, and the targets' device
        total a curve named "all"."""
        base, _sep, target = series.partition(TARGET_SEP)
        if target and base in PER_TARGET and math.isfinite(value):
            self.per_target.point(f"{base}{TARGET_SEP}{target}", t, value)
            return
        if series in LIVE_SERIES and series in self.buffers and math.isfinite(value):
            self.point(series, t, value / series_scale(series))

    def point(self, series: str, t: float, y: float) -> None:
        """One point of a series already in plotted units, at run time t - t0."""
        if self.t0 is None:
            self.t0 = t
        x = t - self.t0
        buf = self.buffers[series]
        if len(buf) and x < buf.data()[0][-1]:
            return  # out of order: the buffers and their gaps are in time order
        self.gaps[series].note(x)
        buf.append(x, y)
        self._fresh.add(series)
        self._t_last = max(self._t_last, x)
        self._touch()

    def break_line(self, series: str, t: float) -> None:
        """End a series' line at its last sample: the next sample starts a new one. The tool's
        own report belongs to one case; joined across cases, the dashed line drew the engine's
        ~1300 MiB/s straight across the fio runs of 72-154 MiB/s between them."""
        buf = self.buffers.get(series)
        if buf is None or not len(buf):
            return
        self.gaps[series].end(float(buf.data()[0][-1]))
        self._fresh.add(series)
        self._touch()

    def add_target_progress(self, case_id: str, target: str, t: float, done_bytes: int) -> None:
        """A target's bytes so far in a case (plot_targets.TargetCurves.progress)."""
        self.per_target.progress(case_id, target, t, done_bytes)

    def add_marker(self, t: float, label: str, kind: str = "case", detail: str = "") -> None:
        """A case, configuration, repeat or phase boundary (plot_marks.mark)."""
        if self.t0 is None:
            self.t0 = t
        self.markers.append(mark(self.plots.values(), t - self.t0, label, kind, detail,
                                 self._font_metrics))
        self._labels_dirty = True
        self._touch()

    def _place_labels(self, x: tuple[float, float]) -> None:
        place_labels(self.markers, x, float(self._plot_width()))

    # --- drawing
    def _log_switched(self, series: str) -> None:
        self._fresh.add(series)
        self._touch(urgent=True)

    def redraw(self) -> None:
        """Timer slot: hand each curve whose samples or view changed the visible window of its
        buffer (clip to view), reduced to about two points per pixel column (peak_window) and
        broken at gaps, in one setData."""
        if not self._dirty:
            return
        self._dirty = False
        self._last_redraw = time.monotonic()
        if self.follow:
            slide(self)
        window = self.window
        moved = window != self._drawn_window
        self._drawn_window = window
        bins = max(self._plot_width(), 100)
        lo, hi = window or (None, None)
        fresh, self._fresh = self._fresh, set()
        for series, curve in self.curves.items():
            if not curve.isVisible() or not (moved or series in fresh):
                continue
            t, y = peak_window(*self.buffers[series].data(), lo, hi, bins)
            connect = self.gaps[series].connect(t)
            if curve.log:
                y, connect = log_values(y, connect)
            curve.setData(t, y, connect=connect)
            curve.seen = visible_span(t, y, connect, lo, hi)
        for key, plot in self.plots.items():  # the auto-range now, not at the paint: the
            view = plot.getViewBox()  # labels and time title below are placed for it
            view.fit = drawn_bounds(self.curves.values(), key)
            view.loose = self.driven and not moved
            view.prepareForPaint()
        x = self.x_range()
        time_title(self, x)
        if self.markers and (moved or self._labels_dirty or window is None):
            self._place_labels(x)
        self._labels_dirty = False
        self.redraws += 1

    def _plot_width(self) -> int:
        """The plots' width in pixels: the pixel columns a curve is reduced to."""
        view = self._lead_view()
        return int(view.width()) if view is not None else 0

    def values_at(self, x: float) -> str:
        """Every visible curve's value at time `x` (plot_readout.values_at)."""
        return values_at(self, x)

    def changeEvent(self, event: QEvent) -> None:
        """A light/dark switch (app.apply_theme sets the palette and plot_theme's colours):
        the plots take the theme's colours once all are set."""
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange,
                            QEvent.Type.StyleChange):
            QTimer.singleShot(0, self, self.apply_theme)
        super().changeEvent(event)

    def apply_theme(self) -> None:
        apply_theme(self)

    def series_data(self, series: str) -> tuple[np.ndarray, np.ndarray]:
        return self.buffers[series].data()

    def latest(self, series: str) -> float | None:
        """The newest value of a series as plotted (MB/s, MiB or %), None before any."""
        buf = self.buffers.get(series)
        if buf is None or not len(buf):
            return None
        return float(buf.data()[1][-1])


def units_changed(plots: LivePlots) -> None:
    """The units choice changed (core.vocab.units): the samples held and the value axes in
    the new units, drawn at once. A plot's axis says the units its samples are held in."""
    shown = {key: plot.getAxis("left").labelText for key, plot in plots.plots.items()}
    for series, buf in plots.buffers.items():
        key = LIVE_SERIES[series.partition(TARGET_SEP)[0]][0]
        if key in shown and shown[key] != plot_unit(key):
            before = next(s for s in UNIT_SYSTEMS if plot_unit(key, s) == shown[key])
            buf.scale(series_scale(series, before) / series_scale(series))
    for key, plot in plots.plots.items():
        plot.setLabel("left", plot_unit(key))
    plots._fresh.update(plots.curves)
    plots._touch(urgent=True)


def slide(plots: LivePlots) -> None:
    """Follow: a zoomed window keeps its width and ends at the newest sample."""
    window = plots.window
    if window is None:
        return
    lo, hi = window
    last = plots._t_last
    if last > hi or last < lo:
        width = hi - lo
        plots._sliding = True
        try:
            plots.set_window(last - width * 0.95, last + width * 0.05)
        finally:
            plots._sliding = False


def time_title(plots: LivePlots, x: tuple[float, float] | None = None) -> None:
    """The time axis's title says how its ticks read (s, min:s, h:min) for the span shown."""
    lo, hi = x if x is not None else plots.x_range()
    unit = time_unit(hi - lo)
    if unit != plots._unit and plots.plots:
        plots._unit = unit
        list(plots.plots.values())[-1].setLabel("bottom", UNIT_TITLES[unit])


def apply_theme(plots: LivePlots) -> None:
    """plot_theme's background and foreground on the plots, axes, titles and legends."""
    bg, fg = theme_colours()
    pg.setConfigOptions(background=bg, foreground=fg)
    plots.layout_widget.setBackground(bg)
    legend_bg = QColor(*bg)
    legend_bg.setAlpha(LEGEND_ALPHA)
    for plot in plots.plots.values():
        for name in ("left", "bottom"):
            axis = plot.getAxis(name)
            axis.setPen(fg)
            axis.setTextPen(fg)
        plot.titleLabel.setText(plot.titleLabel.text, color=fg, size="9pt")
        plot.legend.setBrush(pg.mkBrush(legend_bg))
        plot.legend.setLabelTextColor(fg)
        for _sample, label in plot.legend.items:
            label.setText(label.text, color=fg)


def follow_bar(plots: LivePlots) -> QHBoxLayout:
    """"Follow the run" and "Whole run" above the plots."""
    bar = QHBoxLayout()
    plots.follow_box = QCheckBox("Follow the run")
    plots.follow_box.setChecked(True)
    plots.follow_box.setToolTip(
        "Keep the newest samples in view: the whole run, or a zoomed window sliding with it. "
        "Panning back in time turns it off.")
    plots.follow_box.toggled.connect(plots.set_follow)
    plots.whole_btn = QPushButton("Whole run")
    plots.whole_btn.setToolTip("Show the whole run again after a zoom or pan (or double "
                               "click a plot)")
    plots.whole_btn.clicked.connect(plots.show_whole_run)
    bar.addWidget(plots.follow_box)
    bar.addWidget(plots.whole_btn)
    bar.addStretch(1)
    return bar


def series_names() -> Sequence[str]:
    return tuple(LIVE_SERIES)
