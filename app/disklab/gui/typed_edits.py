"""Typing in a plan's field marks the plan changed at once.

The pages write a typed value into the plan when its field is left or Enter is pressed
(`editingFinished`): a value half typed is not yet a value to check. The title bar's unsaved
mark must not wait for that, so a key that edits text inside one of the plan's pages is seen
here (on the focused widget) and reported as `typed`; the window shows the mark until the plan is
written, replaced or the edit turns out to change nothing."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QAbstractSpinBox, QLineEdit, QPlainTextEdit, QWidget

from disklab.gui.focus_filter import FocusedFilter

_EDITING_KEYS = {Qt.Key.Key_Backspace, Qt.Key.Key_Delete}


class TypedEdits(FocusedFilter):
    """Emits `typed` when a key edits a text field inside one of `pages`."""

    typed = Signal()

    def __init__(self, pages: list[QWidget], parent: QObject | None = None):
        super().__init__(parent)
        self.pages = pages

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.KeyPress and self._edits(watched, event):
            self.typed.emit()
        return False

    def _edits(self, watched: QObject, event: QEvent) -> bool:
        if not isinstance(watched, QLineEdit | QAbstractSpinBox | QPlainTextEdit):
            return False
        if isinstance(watched, QLineEdit) and watched.isReadOnly():
            return False
        assert isinstance(event, QKeyEvent)
        if not (event.text().isprintable() and event.text()) and event.key() not in _EDITING_KEYS:
            return False
        if event.modifiers() & (Qt.KeyboardModifier.ControlModifier
                                | Qt.KeyboardModifier.AltModifier):
            return False
        return any(page.isAncestorOf(watched) for page in self.pages)
