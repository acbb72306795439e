"""A folded section: one line with an arrow that shows or hides what is below it (the Compare
page's notes), so prose is there when asked for and never pushes the figures down."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QScrollArea, QToolButton, QVBoxLayout, QWidget

FOLD_MAX_HEIGHT = 220  # px: an opened section scrolls beyond this, the table keeps the rest


class Fold(QWidget):
    """A toggle button (▸ closed, ▾ open) and its content in a scroll area, closed at first.
    The page places `button` where it has room (a row of buttons), the fold where the content
    opens."""

    def __init__(self, title: str, content: QWidget, parent: QWidget | None = None):
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        self.button = QToolButton()
        self.button.setText(title)
        self.button.setCheckable(True)
        self.button.setAutoRaise(True)
        self.button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.button.setArrowType(Qt.ArrowType.RightArrow)
        self.button.toggled.connect(self.set_open)
        self.area = QScrollArea()
        self.area.setWidget(content)
        self.area.setWidgetResizable(True)
        self.area.setFrameShape(QFrame.Shape.NoFrame)
        self.area.setMaximumHeight(FOLD_MAX_HEIGHT)
        self.area.hide()
        lay.addWidget(self.area)

    def set_open(self, on: bool) -> None:
        self.button.blockSignals(True)
        self.button.setChecked(on)
        self.button.blockSignals(False)
        self.button.setArrowType(Qt.ArrowType.DownArrow if on else Qt.ArrowType.RightArrow)
        self.area.setVisible(on)

    def is_open(self) -> bool:
        return self.area.isVisibleTo(self)
