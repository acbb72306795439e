"""How a live plot answers the mouse: time is what a person moves through, values fit what is
shown.

On the plot area the wheel zooms and a left drag pans time only (the four plots' x axes are
linked, so all move together); on an axis the wheel or a drag moves that axis alone (pyqtgraph's
AxisItem hands the event to the view with its axis); a right drag draws a rubber band and zooms
to it (both axes: the user chose a value window too); a double click goes back to the whole run,
followed. While the user has not zoomed y, y fits the samples of the visible time window
(pyqtgraph's auto-range with auto-visible), from zero (rates and levels are read against zero)
and with headroom above the data for the legend. The view never shows time before the run's
start (limits xMin = 0).

The right-click menu is pyqtgraph's (View All, the axes' options, mouse mode, Plot Options) with
"View All" meaning the whole run followed, a "Log y" switch, and an Export submenu whose CSV
holds the stored samples of the window shown (gui/plot_export.py), not the thinned curves.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QAction

HEADROOM = 1.35  # at least the top quarter of a plot is above its data: the legend sits there
LEGEND_MARGIN_PX = 6  # between the legend's bottom and the highest point of the data


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
    """The bounds of the points plot `plot`'s visible curves hold (LiveView.fit): time from
    their first to last point, values over their finite ones; None when none has any
    (pyqtgraph's own scan then, which finds nothing either)."""
    spans: list[tuple[float, float, float, float]] = []
    for curve in curves:
        if curve.plot != plot or not curve.isVisible():
            continue
        x, y = curve.data()
        if not len(x):
            continue
        finite = y[np.isfinite(y)]
        if len(finite):
            spans.append((float(x[0]), float(x[-1]), float(finite.min()), float(finite.max())))
    if not spans:
        return None
    return (min(s[0] for s in spans), max(s[1] for s in spans),
            min(s[2] for s in spans), max(s[3] for s in spans))
