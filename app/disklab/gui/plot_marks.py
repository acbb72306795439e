"""Case, configuration, repeat and phase boundaries on the live plots: a dashed line on every
plot, named on the top plot where the name has room, its details on hover.

A run of hours has hundreds of cases: a label is shown only where it does not overprint the one
before it on its row (cases above, configurations below), for the time span shown; zoomed in,
every case has room. The hidden ones keep their details on hover.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics

from disklab.gui.plot_axes import clock

MARK_COLOURS = {"config": (200, 120, 40), "case": (128, 128, 128), "phase": (128, 128, 128)}
ROWS = {"case": 0.93, "config": 0.78}  # where a label sits up the top plot


@dataclass
class Marker:
    """A boundary: a line on every plot (`lines`, the first labelled), its details (`tip`)."""

    x: float
    label: str
    kind: str  # "case" | "config" | "phase"
    tip: str
    lines: list
    width: float = 0.0  # of the label, in pixels

    @property
    def shown(self) -> bool:
        """Whether its label is drawn (it had room)."""
        label = getattr(self.lines[0], "label", None) if self.lines else None
        return label is not None and label.isVisible()


def mark(plots: Iterable[pg.PlotItem], x: float, label: str, kind: str, detail: str,
         metrics: QFontMetrics) -> Marker:
    """The marker at time `x` (seconds from the run's start) on every plot: dotted for a
    phase, dashed otherwise, labelled on the first plot unless a phase."""
    style = Qt.PenStyle.DotLine if kind == "phase" else Qt.PenStyle.DashLine
    colour = MARK_COLOURS.get(kind, MARK_COLOURS["case"])
    pen = pg.mkPen(colour, width=1, style=style)
    tip = f"{clock(x, 'min')} {label}" + (f"\n{detail}" if detail else "")
    lines = []
    for i, plot in enumerate(plots):
        named = i == 0 and kind in ROWS
        opts = {"position": ROWS.get(kind, 0.9), "anchors": [(0, 0.5), (0, 0.5)],
                "color": colour}
        line = pg.InfiniteLine(pos=x, angle=90, movable=False, pen=pen,
                               label=label if named else None,
                               labelOpts=opts if named else None)
        line.setToolTip(tip)
        line.setAcceptedMouseButtons(Qt.MouseButton.NoButton)  # clicks reach the view
        # a marker stands at a time the run has reached: it never widens the auto-range
        plot.addItem(line, ignoreBounds=True)
        lines.append(line)
    return Marker(x, label, kind, tip, lines, metrics.horizontalAdvance(label) + 8)


def place_labels(markers: Iterable[Marker], x: tuple[float, float], width: float) -> None:
    """Show a label only where it does not overlap the one before it on its row, left to
    right, over the time span `x` drawn `width` pixels wide."""
    lo, hi = x
    scale = width / (hi - lo) if hi > lo else 0.0
    right_edge = {kind: -1e9 for kind in ROWS}
    for m in markers:
        label = getattr(m.lines[0], "label", None) if m.lines else None
        if label is None or m.kind not in right_edge:
            continue
        px = (m.x - lo) * scale
        fits = -2 <= px <= width and px >= right_edge[m.kind] and scale > 0
        if fits:
            right_edge[m.kind] = px + m.width
        if label.isVisible() != fits:
            label.setVisible(fits)
