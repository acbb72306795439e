"""The live plots as the user sees them: one QWidget painted in one QPainter pass per refresh.

Drawing the Run page's plots through pyqtgraph's scene graph cost the GUI thread ~3 ms a refresh
in Qt's software rasteriser (~1 ms of it pyqtgraph's Python item paints), more than the whole
budget of bench figure 2 (0.6 s of CPU a minute, ~3.5 ms a refresh for the GUI thread). Here
everything that changes only when a range, the size, the legend or a marker changes (titles,
axes, tick labels, grid, marker lines and labels) is drawn once into a cached pixmap; a refresh
blits it, draws each curve as one polyline from a QPolygonF whose memory numpy fills in place
(no QPointF per point), and blits the legends (cached pixmaps too) over them. It is the one plot
stack (issue 29): pyqtgraph drawing the plots for real measured 0.81 s of CPU a minute on bench
figure 2 against this canvas's 0.50 (target 0.6), and is no longer a dependency.

The canvas knows nothing of the run: gui/plots.LivePlots hands it ranges, curves (already
reduced to about two points per pixel column, plots.peak_window), legends and markers, and the
canvas hands back what the user does with the mouse (wheel zoom, drag pan, double click: the
whole run) as x ranges through callbacks.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import shiboken6
from PySide6.QtCore import QEvent, QPointF, QRectF, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QPainter,
    QPen,
    QPixmap,
    QPolygonF,
)
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

TIMELINE_PX = 38  # the strip above the plots that names cases and configurations
AXIS_PX = 62  # the left axes' width (room for "20000" and the unit)
RIGHT_PX = 12  # room right of the plots for the last time label
TICK = 5  # tick length in pixels
Y_TICK_PX = 40  # about one y tick per this many pixels
TICK_PX = 90  # about one time label per this many pixels
NICE_SECONDS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600,
                43200, 86400)
LEGEND_ALPHA = 215  # legends are read over the curves: a background of the plot's colour
WHEEL_ZOOM = 1.02 ** (120 / 8)  # pyqtgraph's zoom per wheel notch, kept
HOVER_PX = 4  # a marker's details show within this many pixels of its line


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


@dataclass
class Panel:
    """One plot: its title, unit, y range, legend entries and where it sits."""

    key: str
    title: str
    unit: str
    y: tuple[float, float] = (0.0, 1.0)
    legend: tuple[tuple[str, QPen], ...] = ()
    rect: QRectF = field(default_factory=QRectF)  # the plot area, in widget pixels
    legend_pixmap: QPixmap | None = None
    legend_key: tuple = ()


@dataclass
class Curve:
    """A curve's points (time, value) as last handed over, and its polyline buffer."""

    panel: str
    pen: QPen
    t: Any = None  # numpy arrays, of at most ~2 points per pixel column
    y: Any = None
    poly: QPolygonF = field(default_factory=QPolygonF)


@dataclass
class Mark:
    """A marker as drawn: a line on every plot, its label on the strip when `shown`."""

    x: float
    label: str
    kind: str
    tip: str
    shown: bool = False


MARK_COLOURS = {"config": QColor(200, 120, 40), "case": QColor(128, 128, 128),
                "phase": QColor(128, 128, 128)}


class LiveCanvas(QWidget):
    """Timeline strip and plots, stacked, x shared; painted from a cached pixmap and one
    polyline per curve. `zoom(lo, hi)` and `whole()` are called when the user zooms or pans
    (wheel, drag) or double-clicks for the whole run."""

    def __init__(self, panels: Sequence[tuple[str, str, str]], background: Any = "w",
                 foreground: Any = (40, 40, 40), parent: QWidget | None = None):
        super().__init__(parent)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)  # every pixel drawn here
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumHeight(TIMELINE_PX + 80 * len(panels))
        self.setMouseTracking(False)
        self.panels = [Panel(k, t, u) for k, t, u in panels]
        self.by_key = {p.key: p for p in self.panels}
        self.curves: dict[str, Curve] = {}
        self.marks: list[Mark] = []
        self.x = (0.0, 10.0)
        self.unit_title = "elapsed (s)"
        self.background = QColor(*background) if isinstance(background, tuple) else (
            QColor("white") if background == "w" else QColor(background))
        self.foreground = QColor(*foreground) if isinstance(foreground, tuple) else QColor(
            foreground)
        self.zoom: Callable[[float, float], None] = lambda lo, hi: None
        self.whole: Callable[[], None] = lambda: None
        # the theme's (background, foreground) as RGB, asked at each paint: a light/dark switch
        # repaints every widget, and the plots follow it (app.apply_theme sets both)
        self.theme: Callable[[], tuple[tuple[int, int, int], tuple[int, int, int]]] | None = None
        self.paints = 0  # paint events, for tests (one per refresh)
        self._static: QPixmap | None = None
        self._static_key: tuple = ()
        self._marks_version = 0
        self._drag: tuple[float, tuple[float, float]] | None = None
        self.title_font = QFont(self.font())
        self.tick_font = QFont(self.font())
        self.tick_font.setPointSizeF(max(7.0, self.font().pointSizeF() * 0.9))
        self.legend_font = QFont(self.font())
        self.legend_font.setPointSizeF(8.0)
        self._layout()

    # --- what LivePlots hands over
    def set_colours(self, background: QColor, foreground: QColor) -> None:
        self.background, self.foreground = QColor(background), QColor(foreground)
        self._static_key = ()
        for p in self.panels:
            p.legend_key = ()

    def set_ranges(self, x: tuple[float, float], ys: dict[str, tuple[float, float]],
                   unit_title: str) -> None:
        self.x = (float(x[0]), float(x[1]) if x[1] > x[0] else float(x[0]) + 1.0)
        for key, y in ys.items():
            if key in self.by_key:
                self.by_key[key].y = (float(y[0]), float(y[1]) if y[1] > y[0] else y[0] + 1.0)
        self.unit_title = unit_title

    def set_curve(self, series: str, panel: str, pen: QPen, t: Any, y: Any) -> None:
        curve = self.curves.get(series)
        if curve is None:
            curve = self.curves[series] = Curve(panel, pen)
        curve.pen, curve.t, curve.y = pen, t, y

    def drop_curve(self, series: str) -> None:
        self.curves.pop(series, None)

    def set_legend(self, panel: str, entries: Sequence[tuple[str, QPen]]) -> None:
        self.by_key[panel].legend = tuple(entries)

    def set_marks(self, marks: list[Mark]) -> None:
        """Markers changed (added, cleared or their labels placed anew)."""
        self.marks = marks
        self._marks_version += 1

    # --- geometry
    def plot_width(self) -> int:
        """Pixel columns of the plot area (what a curve is reduced to)."""
        return max(int(self.width() - AXIS_PX - RIGHT_PX), 10)

    def _layout(self) -> None:
        fm_title = QFontMetrics(self.title_font)
        fm_tick = QFontMetrics(self.tick_font)
        self._title_h = fm_title.height() + 2
        self._tick_h = fm_tick.height()
        bottom_last = TICK + 2 + self._tick_h + fm_title.height() + 2
        n = len(self.panels)
        w, h = self.width(), self.height()
        each = max((h - TIMELINE_PX - bottom_last - n * (self._title_h + TICK)) / max(n, 1), 10)
        top = TIMELINE_PX
        for i, p in enumerate(self.panels):
            top += self._title_h
            p.rect = QRectF(AXIS_PX, top, max(w - AXIS_PX - RIGHT_PX, 10), each)
            top += each + (TICK if i < n - 1 else 0)
        self._timeline = QRectF(AXIS_PX, 0, max(w - AXIS_PX - RIGHT_PX, 10), TIMELINE_PX)

    def resizeEvent(self, event: Any) -> None:
        self._layout()
        super().resizeEvent(event)

    def to_px(self, x: float) -> float:
        lo, hi = self.x
        r = self._timeline
        return r.left() + (x - lo) * r.width() / (hi - lo)

    def from_px(self, px: float) -> float:
        lo, hi = self.x
        r = self._timeline
        return lo + (px - r.left()) * (hi - lo) / max(r.width(), 1.0)

    # --- painting
    def paintEvent(self, _event: Any) -> None:
        self.paints += 1
        if self.theme is not None:
            bg, fg = (QColor(*c) for c in self.theme())
            if bg != self.background or fg != self.foreground:
                self.set_colours(bg, fg)
        key = (self.width(), self.height(), self.x, self.unit_title, self._marks_version,
               tuple(p.y for p in self.panels), self.background.rgba(), self.foreground.rgba())
        if self._static is None or key != self._static_key:
            self._static = self._draw_static()
            self._static_key = key
        painter = QPainter(self)
        painter.drawPixmap(0, 0, self._static)
        lo, hi = self.x
        for curve in self.curves.values():
            if curve.t is None or len(curve.t) < 1:
                continue
            p = self.by_key.get(curve.panel)
            if p is None:
                continue
            r = p.rect
            y0, y1 = p.y
            n = len(curve.t)
            poly = curve.poly
            if poly.size() != n:
                poly.resize(n)
            pts = _points(poly)
            pts[:, 0] = curve.t
            pts[:, 0] -= lo
            pts[:, 0] *= r.width() / (hi - lo)
            pts[:, 0] += r.left()
            pts[:, 1] = curve.y
            pts[:, 1] -= y0
            pts[:, 1] *= -r.height() / (y1 - y0)
            pts[:, 1] += r.bottom()
            painter.setClipRect(r.adjusted(0, -1, 1, 1))
            painter.setPen(curve.pen)
            _draw_finite(painter, poly, pts)
        painter.setClipping(False)
        for p in self.panels:
            if not p.legend:
                continue
            if p.legend_pixmap is None or p.legend_key != p.legend:
                p.legend_pixmap = self._draw_legend(p.legend)
                p.legend_key = p.legend
            pm = p.legend_pixmap
            painter.drawPixmap(int(p.rect.right() - pm.width() - 4), int(p.rect.top() + 1), pm)
        painter.end()

    def _draw_static(self) -> QPixmap:
        """Everything but the curves and legends, for the present size, ranges and markers."""
        pm = QPixmap(self.size())
        pm.fill(self.background)
        painter = QPainter(pm)
        fg = self.foreground
        grid = QColor(fg)
        grid.setAlpha(51)  # pyqtgraph's showGrid(alpha=0.2)
        axis_pen = QPen(fg, 1)
        fm_tick = QFontMetrics(self.tick_font)
        lo, hi = self.x
        xs = [v for v in ticks(lo, hi, time_step(hi - lo, self._timeline.width())) if v >= 0]
        unit = time_unit(hi - lo)
        for i, p in enumerate(self.panels):
            r = p.rect
            painter.setFont(self.title_font)
            painter.setPen(fg)
            painter.drawText(QRectF(r.left(), r.top() - self._title_h, r.width(), self._title_h),
                             int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignBottom),
                             p.title)
            y0, y1 = p.y
            step = nice_step(y1 - y0, r.height())
            painter.setFont(self.tick_font)
            for v in ticks(y0, y1, step):
                py = round(r.bottom() - (v - y0) * r.height() / (y1 - y0))
                _hline(painter, r.left(), r.right(), py, grid)
                painter.setPen(axis_pen)
                painter.drawLine(QPointF(r.left() - TICK, py), QPointF(r.left(), py))
                text = tick_text(v, step)
                painter.drawText(QRectF(0, py - self._tick_h, r.left() - TICK - 2,
                                        2 * self._tick_h),
                                 int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter),
                                 text)
            painter.save()  # the unit, upright along the axis
            painter.translate(2, r.center().y())
            painter.rotate(-90)
            painter.setFont(self.title_font)
            painter.drawText(QRectF(-r.height() / 2, 0, r.height(), self._title_h),
                             int(Qt.AlignmentFlag.AlignCenter), p.unit)
            painter.restore()
            painter.setPen(axis_pen)
            _vline(painter, r.left(), r.top(), r.bottom(), fg)
            _hline(painter, r.left(), r.right(), r.bottom(), fg)
            last = i == len(self.panels) - 1
            painter.setFont(self.tick_font)
            for v in xs:
                px = round(r.left() + (v - lo) * r.width() / (hi - lo))
                painter.drawLine(QPointF(px, r.bottom()), QPointF(px, r.bottom() + TICK))
                if last:
                    text = clock(v, unit)
                    tw = fm_tick.horizontalAdvance(text)
                    left = min(max(px - tw / 2, r.left() - AXIS_PX / 2), self.width() - tw - 1)
                    painter.drawText(QRectF(left, r.bottom() + TICK + 1, tw + 2, self._tick_h),
                                     int(Qt.AlignmentFlag.AlignLeft), text)
            if last:
                painter.setFont(self.title_font)
                top = r.bottom() + TICK + 2 + self._tick_h
                painter.drawText(QRectF(r.left(), top, r.width(), self.height() - top),
                                 int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop),
                                 self.unit_title)
        self._draw_marks(painter)
        painter.end()
        return pm

    def _draw_marks(self, painter: QPainter) -> None:
        """Marker lines through every plot and the labels that have room on the strip."""
        lo, hi = self.x
        painter.setFont(self.tick_font)
        fm = QFontMetrics(self.tick_font)
        t = self._timeline
        for m in self.marks:
            if not lo <= m.x <= hi:
                continue
            px = round(self.to_px(m.x))
            colour = MARK_COLOURS.get(m.kind, MARK_COLOURS["case"])
            style = Qt.PenStyle.DotLine if m.kind == "phase" else Qt.PenStyle.DashLine
            painter.setPen(QPen(colour, 1, style))
            for p in self.panels:
                painter.drawLine(QPointF(px, p.rect.top()), QPointF(px, p.rect.bottom()))
            if m.shown and m.kind != "phase":
                painter.setPen(colour)
                cy = t.top() + t.height() * (0.28 if m.kind == "case" else 0.75)
                painter.drawText(QPointF(px + 2, cy + fm.ascent() / 2 - 1), m.label)

    def _draw_legend(self, entries: Sequence[tuple[str, QPen]]) -> QPixmap:
        """A legend of up to three entries a row: a pen sample and the name."""
        fm = QFontMetrics(self.legend_font)
        cols = min(3, len(entries))
        sample, gap, row_h = 20, 8, fm.height()
        widths = [sample + 4 + fm.horizontalAdvance(name) for name, _pen in entries]
        col_w = [max(widths[c::cols]) for c in range(cols)]
        rows = -(-len(entries) // cols)
        w = sum(col_w) + gap * (cols - 1) + 8
        h = rows * row_h + 2
        pm = QPixmap(int(w), int(h))
        bg = QColor(self.background)
        bg.setAlpha(LEGEND_ALPHA)
        pm.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pm)
        painter.fillRect(QRectF(0, 0, w, h), bg)
        painter.setPen(QColor(170, 170, 170))
        painter.drawRect(QRectF(0, 0, w - 1, h - 1))
        painter.setFont(self.legend_font)
        for i, (name, pen) in enumerate(entries):
            row, col = divmod(i, cols)
            x = 4 + sum(col_w[:col]) + gap * col
            y = 1 + row * row_h
            painter.setPen(pen)
            painter.drawLine(QPointF(x, y + row_h / 2), QPointF(x + sample, y + row_h / 2))
            painter.setPen(self.foreground)
            painter.drawText(QRectF(x + sample + 4, y, col_w[col], row_h),
                             int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                             name)
        painter.end()
        return pm

    # --- what the user does
    def wheelEvent(self, event: Any) -> None:
        steps = event.angleDelta().y() / 120
        if not steps:
            return
        lo, hi = self.x
        at = self.from_px(event.position().x())
        scale = WHEEL_ZOOM ** -steps
        self.zoom(at - (at - lo) * scale, at + (hi - at) * scale)
        event.accept()

    def mousePressEvent(self, event: Any) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._drag = (event.position().x(), self.x)
            event.accept()

    def mouseMoveEvent(self, event: Any) -> None:
        if self._drag is None:
            return
        start, (lo, hi) = self._drag
        shift = (event.position().x() - start) * (hi - lo) / max(self._timeline.width(), 1.0)
        if shift:
            self.zoom(lo - shift, hi - shift)

    def mouseReleaseEvent(self, _event: Any) -> None:
        self._drag = None

    def mouseDoubleClickEvent(self, _event: Any) -> None:
        self.whole()

    def event(self, event: Any) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            tips = [m.tip for m in self.marks
                    if abs(self.to_px(m.x) - event.pos().x()) <= HOVER_PX]
            if tips:
                QToolTip.showText(event.globalPos(), "\n".join(tips[-3:]), self)
            else:
                QToolTip.hideText()
                event.ignore()
            return True
        return super().event(event)


def _hline(painter: QPainter, x0: float, x1: float, y: float, colour: QColor) -> None:
    """What drawLine((x0, y), (x1, y)) with a 1 px pen of `colour` paints, as a filled
    rectangle: Qt's raster engine strokes a line in 15-50 us across a plot (the grid's
    blended colour the dearest), fills the rectangle in 3 us; the static layer's grid and axes
    were most of its redraw (bench figure 2). Pixel for pixel the same (tested)."""
    left, row = math.floor(x0), math.floor(y)  # an aliased 1 px line covers these pixels
    painter.fillRect(QRectF(left, row, math.floor(x1) - left + 1, 1), colour)


def _vline(painter: QPainter, x: float, y0: float, y1: float, colour: QColor) -> None:
    """_hline's vertical twin: drawLine((x, y0), (x, y1)) as a filled rectangle."""
    column, top = math.floor(x), math.floor(y0)
    painter.fillRect(QRectF(column, top, 1, math.floor(y1) - top + 1), colour)


def _points(poly: QPolygonF) -> np.ndarray:
    """The polygon's own memory as an (n, 2) float64 numpy array (filled in place)."""
    n = poly.size()
    buffer = shiboken6.VoidPtr(poly.data(), n * 16, True)
    return np.frombuffer(buffer, dtype=np.float64).reshape((n, 2))


def _draw_finite(painter: QPainter, poly: QPolygonF, pts: np.ndarray) -> None:
    """The polyline, broken where a value is missing (NaN: the end of one case's report): one
    call for a curve without gaps, one a piece for the rare curve with some."""
    gaps = np.flatnonzero(~np.isfinite(pts[:, 1]))
    if not len(gaps):
        painter.drawPolyline(poly)
        return
    start = 0
    for end in (*gaps.tolist(), len(pts)):
        if end - start >= 2:
            painter.drawPolyline([QPointF(x, y) for x, y in pts[start:end]])
        start = end + 1
