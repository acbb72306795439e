"""How a live plot answers the mouse: time is what a person moves through, values fit what is
shown.

On the plot area the wheel zooms and a left drag pans time only (the four plots' x axes are
linked, so all move together); on an axis the wheel or a drag moves that axis alone (pyqtgraph's
AxisItem hands the event to the view with its axis); a right drag draws a rubber band and zooms
to it (both axes: the user chose a value window too); a double click goes back to the whole run,
followed. While the user has not zoomed y, y fits the samples of the visible time window, from
zero (rates and levels are read against zero) and with headroom above the data for the legend.
The view never shows time before the run's start (limits xMin = 0).

The auto-range is set from the bounds of what the curves show (`fit`) and only when it moved.
While a run's new samples come into the same window (`loose`), the whole run's time axis ends
at a round time past the newest sample (a step of about a tenth of the run), and a fitted y
range stays as long as the data need between all of it and 1/Y_SLACK of it (a new peak of a
run is rare once it has gone a while); a window the user moved to, and the run's end, are
fitted exactly.
A range that stays costs no new ticks, no new transform of the curves and markers, no
linked-view update: most refreshes of a run then only hand the curves their new points (bench
figure 2).

The right-click menu is pyqtgraph's (View All, the axes' options, mouse mode, Plot Options) with
"View All" meaning the whole run followed, a "Log y" switch, and an Export submenu whose CSV
holds the stored samples of the window shown (gui/plot_export.py), not the thinned curves.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QAction

from disklab.gui.plot_axes import NICE_SECONDS

HEADROOM = 1.35  # at least the top quarter of a plot is above its data: the legend sits there
LEGEND_MARGIN_PX = 6  # between the legend's bottom and the highest point of the data
X_STEPS = 10  # the whole run's time axis ends at the next round time of about span / X_STEPS
Y_SLACK = 1.25  # a fitted y range stays while the data need at least 1 / Y_SLACK of it


class StillLegend(pg.LegendItem):
    """A plot's legend that stays where it is: pyqtgraph's legend moves on a left drag, and a
    drag meant to pan time often begins over it (or over its box, which reaches below its
    names). The drag goes to the view behind it, so it pans time."""

    def hoverEvent(self, ev: Any) -> None:
        """Claims no drag: the scene gives a drag to what the last hover claimed it for, and a
        legend's claim outlives the hover (a drag that begins on the plot below would move the
        top plot's legend)."""

    def mouseDragEvent(self, ev: Any) -> None:
        ev.ignore()


class LiveView(pg.ViewBox):
    """A live plot's ViewBox: time-only wheel and drag on the plot, rubber band on a right
    drag, y fitted to the visible samples from zero with headroom."""

    def __init__(self, whole_run: Callable[[], None]) -> None:
        super().__init__(enableMenu=True)
        self._whole_run = whole_run
        self.legend: Any = None  # the plot's legend, whose row the auto-range keeps clear
        # (x lo, x hi, y lo, y hi) of the curves' points as drawn; None: pyqtgraph scans them
        self.fit: tuple[float, float, float, float] | None = None
        self.loose = False  # the fit is of a run's new samples in the same window
        self.setAutoVisible(y=True)  # y fits the samples of the visible time window
        self.setLimits(xMin=0.0)  # nothing before the run's start
        self.setDefaultPadding(0.0)
        self.menu.viewAll.triggered.disconnect()
        self.menu.viewAll.triggered.connect(whole_run)
        self.log_y = QAction("&Log y", self.menu)
        self.log_y.setCheckable(True)
        self.menu.insertAction(self.menu.actions()[1], self.log_y)
        self.export_menu = self.menu.addMenu("&Export")

    def add_export(self, text: str, slot: Callable[[], None]) -> QAction:
        """An entry of the Export submenu."""
        action = QAction(text, self.export_menu)
        action.triggered.connect(slot)
        self.export_menu.addAction(action)
        return action

    def wheelEvent(self, ev: Any, axis: int | None = None) -> None:
        """On the plot the wheel zooms time (axis 0); on an axis, that axis."""
        super().wheelEvent(ev, axis=0 if axis is None else axis)

    def mouseDragEvent(self, ev: Any, axis: int | None = None) -> None:
        """Left drag on the plot: pan time; right drag on the plot: a rubber band zoomed to on
        release; on an axis (axis given): pyqtgraph's pan or scale of that axis alone."""
        if axis is None and ev.button() == Qt.MouseButton.RightButton:
            ev.accept()
            if ev.isFinish():
                self.rbScaleBox.hide()
                rect = QRectF(pg.Point(ev.buttonDownPos(ev.button())), pg.Point(ev.pos()))
                self.showAxRect(self.childGroup.mapRectFromParent(rect.normalized()))
            else:
                self.updateScaleBox(ev.buttonDownPos(), ev.pos())
            return
        if axis is None and self.state["mouseMode"] == pg.ViewBox.PanMode:
            axis = 0
        super().mouseDragEvent(ev, axis=axis)

    def mouseClickEvent(self, ev: Any) -> None:
        """A double click: the whole run again, followed, y fitted."""
        if ev.double() and ev.button() == Qt.MouseButton.LeftButton:
            ev.accept()
            self._whole_run()
            return
        super().mouseClickEvent(ev)

    def updateAutoRange(self) -> None:
        """pyqtgraph's auto-range of the axes that have it on, from `fit` (the points the
        curves were handed: the visible window's already), set only when it moved (see the
        module's docstring); pyqtgraph's own scan while no curve has points."""
        fit = self.fit
        if fit is None:
            super().updateAutoRange()
            return
        self._autoRangeNeedsUpdate = False  # what pyqtgraph's own clears once it has run
        auto_x, auto_y = (a is not False for a in self.state["autoRange"])
        (x0, x1), (y0, y1) = self.viewRange()
        ranges: dict[str, tuple[float, float]] = {}
        if auto_x:
            x = (max(0.0, fit[0]), fit[1])
            if self.loose and _same((x[0], 0.0), (x0, 0.0)) and x[1] <= x1 <= run_end(x[1]):
                x = (x0, x1)  # still the whole run, newest sample and all
            elif self.loose:
                x = (x[0], run_end(x[1]))
            if not _same(x, (x0, x1)):
                ranges["xRange"] = x
        if auto_y:
            y = self._y_fit(fit[2], fit[3], (y0, y1))
            if y is not None:
                ranges["yRange"] = y
        if ranges:
            self.setRange(**ranges, padding=0.0, disableAutoRange=False)

    def _y_fit(self, lo: float, hi: float, shown: tuple[float, float]
               ) -> tuple[float, float] | None:
        """The y range for data from `lo` to `hi`; None: the range `shown` still fits them."""
        if self.log_y.isChecked():
            want = (lo, hi) if hi > lo else (lo - 0.5, lo + 0.5)
            return None if _same(want, shown) else want
        lo = min(lo, 0.0)
        need = (hi - lo) * self.headroom() if hi > lo else 1.0
        span = shown[1] - shown[0]
        tol = abs(span) * 1e-9
        if abs(shown[0] - lo) <= tol and need - tol <= span <= need * (
                Y_SLACK if self.loose else 1 + 1e-9):
            return None
        return lo, lo + need

    def childrenBounds(self, frac: Any = None, orthoRange: Any = (None, None),
                       items: Any = None) -> list:
        """The curves' bounds, y from zero (unless in log mode or below zero) and with
        HEADROOM above the data, so the auto-range leaves the legend's row clear. `fit`: the
        bounds of the points the curves were last handed (LivePlots.redraw), which are the
        visible window's already: pyqtgraph's own scan of every curve, twice per plot a
        refresh, was a fifth of the GUI thread's Python time in a run (bench figure 2)."""
        fit = self.fit
        bounds = (super().childrenBounds(frac=frac, orthoRange=orthoRange, items=items)
                  if fit is None or items is not None else [[fit[0], fit[1]], [fit[2], fit[3]]])
        if bounds[1] is not None and not self.log_y.isChecked():
            lo, hi = bounds[1]
            lo = min(lo, 0.0)
            bounds[1] = [lo, lo + (hi - lo) * self.headroom() if hi > lo else lo + 1.0]
        return bounds

    def headroom(self) -> float:
        """How far above the data the range goes: HEADROOM, or more in a short plot whose
        legend would cover the data's top (at most 1.8x: the scale stays readable)."""
        height = float(self.height())
        if self.legend is None or height <= 0:
            return HEADROOM
        covered = (self.legend.boundingRect().height() + LEGEND_MARGIN_PX) / height
        return min(1.8, max(HEADROOM, 1.0 / max(1.0 - covered, 0.5)))


def drawn_bounds(curves: Iterable[Any], plot: str) -> tuple[float, float, float, float] | None:
    """The bounds of what plot `plot`'s visible curves show (LiveView.fit), from each curve's
    own (LiveCurve.seen, taken as it was handed its points); None when none has any
    (pyqtgraph's own scan then, which finds nothing either)."""
    spans = [c.seen for c in curves
             if c.plot == plot and c.seen is not None and c.isVisible()]
    if not spans:
        return None
    return (min(s[0] for s in spans), max(s[1] for s in spans),
            min(s[2] for s in spans), max(s[3] for s in spans))


def run_end(t: float) -> float:
    """Where the whole run's time axis ends for a newest sample at `t` seconds: the next
    multiple past it of a round step of about t / X_STEPS (a 60 s run: 65 s, then 70 s)."""
    want = max(t, 1.0) / X_STEPS
    step = next((float(s) for s in NICE_SECONDS if s >= want), float(NICE_SECONDS[-1]))
    return (math.floor(t / step) + 1) * step


def _same(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Whether two ranges are one, but for float noise (pyqtgraph's own threshold)."""
    tol = max(abs(a[1] - a[0]), abs(b[1] - b[0])) * 1e-9
    return abs(a[0] - b[0]) <= tol and abs(a[1] - b[1]) <= tol
