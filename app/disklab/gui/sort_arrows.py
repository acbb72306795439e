"""A sorted column's arrow points the way people read it: ▲ ascending, ▼ descending.

Qt's header view hands the style "sort down" for ascending order and "sort up" for
descending (a convention of its own), so the Library listed newest first under `id ▲`. This
style, Fusion underneath, swaps the two before drawing, and every table's arrow reads as the
order its rows are in."""

from __future__ import annotations

from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QProxyStyle, QStyle, QStyleOption, QStyleOptionHeader, QWidget

_FLIP = {QStyleOptionHeader.SortIndicator.SortUp: QStyleOptionHeader.SortIndicator.SortDown,
         QStyleOptionHeader.SortIndicator.SortDown: QStyleOptionHeader.SortIndicator.SortUp}


class SortArrows(QProxyStyle):
    """Fusion, with header sort arrows pointing up for ascending order."""

    def __init__(self) -> None:
        super().__init__("Fusion")

    def drawPrimitive(self, element: QStyle.PrimitiveElement,
                      option: QStyleOption, painter: QPainter,
                      widget: QWidget | None = None) -> None:
        if (element == QStyle.PrimitiveElement.PE_IndicatorHeaderArrow
                and isinstance(option, QStyleOptionHeader)
                and option.sortIndicator in _FLIP):
            flipped = QStyleOptionHeader(option)
            flipped.sortIndicator = _FLIP[option.sortIndicator]
            option = flipped
        super().drawPrimitive(element, option, painter, widget)
