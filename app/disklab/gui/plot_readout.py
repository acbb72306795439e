"""The live plots' crosshair (of a gui.plots.LivePlots, `plots` below): a line at the mouse's
time on every plot and, above them, every curve's value there with its unit: the sample nearest
to that time, or '—' where nothing was measured (a gap, before the first sample, after the
last)."""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt

from disklab.gui.plot_series import PLOT_NAMES, plot_unit, value_at

HINT = "Values at a time: hover a plot. Zoom time: wheel; pan: drag; an axis alone: on it; " \
       "a box: right drag; the whole run: double click; more: right click."


def cross_line() -> pg.InfiniteLine:
    """The crosshair's line on one plot, hidden until the mouse is over the plots."""
    line = pg.InfiniteLine(angle=90, movable=False,
                           pen=pg.mkPen((150, 150, 150), style=Qt.PenStyle.DotLine))
    line.setVisible(False)
    # always under the mouse: disabled, so pyqtgraph's scene hands clicks and drags to the
    # view behind it (it skips disabled items; an enabled line would take the drag and pan
    # nothing)
    line.setEnabled(False)
    return line


def hover(plots: Any, pos: QPointF) -> None:
    """The mouse moved over the plots' scene (scene position `pos`)."""
    over = next((p for p in plots.plots.values()
                 if p.getViewBox().sceneBoundingRect().contains(pos)), None)
    if over is None:
        for line in plots.cross.values():
            line.setVisible(False)
        plots.readout.setText(HINT)
        return
    x = float(over.getViewBox().mapSceneToView(pos).x())
    for line in plots.cross.values():
        line.setPos(x)
        line.setVisible(True)
    plots.readout.setText(values_at(plots, x))


def values_at(plots: Any, x: float) -> str:
    """'t = 65.5 s · Application: write 102.3 MB/s, read 0 MB/s · ... · CPU: 35 %' at time
    `x` (seconds from the run's start), for each visible curve with samples."""
    parts = [f"t = {x:.1f} s"]
    for key in plots.plots:
        values = []
        unit = plot_unit(key)
        for series, curve in plots.curves.items():
            t, y = plots.buffers[series].data()
            if curve.plot != key or not curve.isVisible() or not len(t):
                continue
            got = value_at(t, y, plots.gaps[series], x)
            text = "—" if got is None else f"{got[1]:.4g} {unit}"
            values.append(f"{curve.name()} {text}" if curve.name() != PLOT_NAMES[key] else text)
        if values:
            parts.append(f"{PLOT_NAMES[key]}: " + ", ".join(values))
    return "  ·  ".join(parts)
