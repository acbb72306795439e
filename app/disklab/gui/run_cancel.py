"""Cancelling a run asks first, so a long run is not thrown away by a stray key: Esc from any
page of the window, or the Cancel button, opens a window-modal question that leaves the event
loop and the live view running; `confirmed` is emitted on its yes. The page says whether
there is anything to cancel (`wanted`: Esc and the button both go through it)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QMessageBox, QWidget


class CancelQuestion(QObject):
    """The Esc shortcut (armed only while a run goes) and the question, for `page`; Esc
    calls `wanted`, which opens the question when a run can be cancelled."""

    confirmed = Signal()

    def __init__(self, page: QWidget, wanted: Callable[[], None]):
        super().__init__(page)
        self.page = page
        self.wanted = wanted
        self.dialog: QMessageBox | None = None  # open while the question waits
        self.esc = self._escape_shortcut()

    def _escape_shortcut(self) -> QShortcut:
        """The shortcut belongs to the window (Qt ignores a hidden widget's shortcuts, and the
        page is hidden while another one is shown); made again once the page is in its
        window."""
        shortcut = QShortcut(QKeySequence(Qt.Key.Key_Escape), self.page.window())
        shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
        shortcut.setEnabled(False)  # only while a run goes
        shortcut.activated.connect(self.wanted)
        return shortcut

    def arm(self) -> None:
        """A run started: Esc asks from now."""
        if self.esc.parent() is not self.page.window():
            self.esc.setEnabled(False)
            self.esc.deleteLater()
            self.esc = self._escape_shortcut()
        self.esc.setEnabled(True)

    def disarm(self) -> None:
        """The run ended: Esc does nothing, and a question still open is answered no."""
        self.esc.setEnabled(False)
        if self.dialog is not None:
            self.dialog.done(QMessageBox.StandardButton.No)

    def open(self) -> None:
        """The question, or the one already open raised."""
        if self.dialog is not None:
            self.dialog.raise_()
            return
        box = QMessageBox(QMessageBox.Icon.Question, "Cancel the run?",
                          "Stop the tool and tear down?\nWhat finished is kept in the library; "
                          "the case that is running is kept as cancelled (partial) and a "
                          "resume runs it again.", parent=self.page)
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        box.button(QMessageBox.StandardButton.Yes).setText("Cancel the run")
        box.button(QMessageBox.StandardButton.No).setText("Keep running")
        box.setDefaultButton(QMessageBox.StandardButton.No)
        box.setEscapeButton(QMessageBox.StandardButton.No)
        box.finished.connect(self._answered)
        self.dialog = box
        box.open()

    def _answered(self, result: int) -> None:
        box, self.dialog = self.dialog, None
        if box is not None:
            box.deleteLater()
        if result == QMessageBox.StandardButton.Yes:
            self.confirmed.emit()
