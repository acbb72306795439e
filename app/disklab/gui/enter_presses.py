"""Enter presses the focused button, as Space does.

Qt's push buttons answer Enter only inside dialogs (their default button); in the main
window a person who reaches Start or Delete with Tab and presses Enter got nothing. This
filter, following the focus, clicks a focused push or tool button on Enter or
Return, so the keyboard alone drives every page."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QDialog, QPushButton, QToolButton

from disklab.gui.focus_filter import FocusedFilter

_ENTER = {Qt.Key.Key_Return, Qt.Key.Key_Enter}


class EnterPresses(FocusedFilter):
    """Clicks the focused button on Enter (outside dialogs, which have their own default)."""

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.KeyPress:
            return False
        if not isinstance(watched, QPushButton | QToolButton):
            return False
        assert isinstance(event, QKeyEvent)
        if event.key() not in _ENTER or event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier:
            return False
        if not (watched.isEnabled() and watched.hasFocus()) or isinstance(watched.window(),
                                                                           QDialog):
            return False
        watched.animateClick()
        return True
