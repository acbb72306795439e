"""The chart the Library and Compare pages show: a core.results.charts.ChartSpec drawn by
core.results.svg, the very SVG every export writes (`disklab export --format svg`, the pages'
Export), so what is on screen, in a file and in a report is one drawing from one writer."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, Qt
from PySide6.QtSvgWidgets import QSvgWidget
from PySide6.QtWidgets import QWidget

from disklab.core.results.charts import ChartSpec
from disklab.core.results.svg import to_svg


class ChartWidget(QSvgWidget):
    """Shows one chart spec (None: nothing), scaled to the widget with its proportions kept."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.spec: ChartSpec | None = None
        self.svg = ""  # what is drawn: to_svg(spec)

    def show_spec(self, spec: ChartSpec | None) -> None:
        self.spec = spec
        self.svg = to_svg(spec) if spec is not None else ""
        self.load(QByteArray(self.svg.encode("utf-8")))
        self.renderer().setAspectRatioMode(Qt.AspectRatioMode.KeepAspectRatio)
