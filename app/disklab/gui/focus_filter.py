"""An event filter on the focused widget only, following the focus: key handling that a
window-wide filter would do, without a Python call for every event of the GUI thread (an
application-wide filter sees each paint of a live run)."""

from __future__ import annotations

import contextlib

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QApplication, QWidget


class FocusedFilter(QObject):
    """Installs itself (its eventFilter) on whichever widget has the focus."""

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._watched: QWidget | None = None
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._follow_focus)

    def _follow_focus(self, _old: QWidget | None, new: QWidget | None) -> None:
        if self._watched is not None:
            with contextlib.suppress(RuntimeError):  # a widget deleted while it had focus
                self._watched.removeEventFilter(self)
        self._watched = new
        if new is not None:
            new.installEventFilter(self)
