"""A one-line label that never widens its row (the Run page's state line)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class ElidedLabel(QLabel):
    """One line of text that never widens its row: cut with '…' to the room it has, the whole
    text in the tooltip."""

    def __init__(self, text: str = "", parent: QWidget | None = None):
        super().__init__(text, parent)
        self.setMinimumWidth(40)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)

    def setText(self, text: str) -> None:
        super().setText(text)
        self.setToolTip(text if len(text) > 60 else "")

    def paintEvent(self, _event: object) -> None:
        painter = QPainter(self)
        metrics = self.fontMetrics()
        shown = metrics.elidedText(" ".join(self.text().split()), Qt.TextElideMode.ElideRight,
                                   self.width())
        painter.drawText(self.rect(), int(Qt.AlignmentFlag.AlignVCenter
                                          | Qt.AlignmentFlag.AlignLeft), shown)
