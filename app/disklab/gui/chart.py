"""The chart the Library and Compare pages show: a core.results.charts.ChartSpec drawn by
core.results.svg, the very SVG every export writes (`disklab export --format svg`, the pages'
Export), so what is on screen, in a file and in a report is one drawing from one writer.

The drawing fits its pane with its proportions kept, but never smaller than its text can be
read: below that scale the pane scrolls instead (a 1000 x 560 chart fitted to a 270 px pane
would have 4 px text)."""

from __future__ import annotations

import re

from PySide6.QtCore import QByteArray, QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtSvgWidgets import QSvgWidget
from PySide6.QtWidgets import QScrollArea, QWidget

from disklab.core.results.charts import ChartSpec
from disklab.core.results.svg import HEIGHT, WIDTH, to_svg

MIN_TEXT_PX = 9.0  # the smallest text on screen, px
MAX_SCALE = 1.5  # a chart grows with a large pane up to this


def smallest_font(svg: str) -> float:
    """The smallest font-size the SVG writes (its labels), 10 when it names none."""
    sizes = [float(s) for s in re.findall(r'font-size="([0-9.]+)"', svg)]
    return min(sizes, default=10.0)


class ChartWidget(QScrollArea):
    """Shows one chart spec (None: nothing) at the largest scale that fits, never below the
    scale that keeps its smallest text MIN_TEXT_PX high."""

    def __init__(self, parent: QWidget | None = None, size: tuple[int, int] = (WIDTH, HEIGHT)):
        super().__init__(parent)
        self.size_px = size  # the drawing's own size, before it is fitted to the pane
        self.spec: ChartSpec | None = None
        self.svg = ""  # what is drawn: to_svg(spec)
        self.view = QSvgWidget()
        self.setWidget(self.view)
        self.setWidgetResizable(False)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.scale = 1.0
        self._natural = QSize(0, 0)

    def renderer(self) -> QSvgRenderer:
        return self.view.renderer()

    def show_spec(self, spec: ChartSpec | None) -> None:
        self.spec = spec
        self.svg = to_svg(spec, *self.size_px) if spec is not None else ""
        self.view.load(QByteArray(self.svg.encode("utf-8")))
        self.renderer().setAspectRatioMode(Qt.AspectRatioMode.KeepAspectRatio)
        self._natural = self.renderer().defaultSize() if self.svg else QSize(0, 0)
        self._fit()

    @property
    def text_px(self) -> float:
        """The height of the chart's smallest text on screen, px."""
        return smallest_font(self.svg) * self.scale if self.svg else 0.0

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        natural = self._natural
        if natural.isEmpty():
            self.view.resize(0, 0)
            return
        room = self.viewport().size()
        fits = min(room.width() / natural.width(), room.height() / natural.height())
        floor = MIN_TEXT_PX / smallest_font(self.svg)
        self.scale = min(MAX_SCALE, max(floor, fits))
        self.view.setFixedSize(round(natural.width() * self.scale),
                               round(natural.height() * self.scale))
