"""What the window says about a run going: a status-bar line per step (setting up, which run
of how many, done, tearing down) and, at its end, a desktop notice (the tray's message and the
window's alert). Apart from the window, which lays out the pages and closes, because it
follows the run's events alone."""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QStatusBar, QSystemTrayIcon, QWidget

from disklab.core.vocab.events import (
    CaseFinished,
    CaseStarted,
    Event,
    SessionFinished,
    SessionResumed,
    SessionStarted,
)

TITLE_CHARS = 90  # a case's title in the status bar is cut here: the bar never widens the window


class RunNotices(QObject):
    """The status bar's words on the run, and the tray icon that says a run has ended."""

    def __init__(self, window: QWidget, status_bar: QStatusBar, icon: QIcon) -> None:
        super().__init__(window)
        self.window = window
        self.bar = status_bar
        self.tray: QSystemTrayIcon | None = None
        if QSystemTrayIcon.isSystemTrayAvailable():
            self.tray = QSystemTrayIcon(icon, window)
            self.tray.setToolTip("DiskLab")
            self.tray.show()

    def started(self) -> None:
        self.bar.showMessage("Starting the run…")  # the last run's word is gone

    def on_event(self, ev: Event) -> None:
        """The step the run has reached, in one line."""
        if isinstance(ev, SessionStarted):
            self.bar.showMessage(f"Running {ev.name!r}: setting up…")
        elif isinstance(ev, SessionResumed):
            self.bar.showMessage(f"Resuming session {ev.session_id}: setting up…")
        elif isinstance(ev, CaseStarted):
            where = f"run {ev.run_index + 1} of {ev.run_count}" if ev.run_count else "a run"
            title = ev.case.title()
            title = title if len(title) <= TITLE_CHARS else title[:TITLE_CHARS - 1] + "…"
            self.bar.showMessage(
                f"Running {where}: {title}"
                + (f" on {ev.case.config}" if ev.case.config else "")
                + (f", repeat {ev.repeat}" if ev.repeat > 1 else "") + "…")
        elif isinstance(ev, CaseFinished):
            self.bar.showMessage(self.bar.currentMessage().removesuffix("…") + ": done")
        elif isinstance(ev, SessionFinished):
            self.bar.showMessage(f"Run {ev.status}: tearing down…")

    def finished(self, session_id: object, status: str) -> None:
        """The run has ended: the tray says so (a warning unless it finished), the window
        asks for attention, and the status bar says where the results are."""
        message = f"Session {session_id}: {status}"
        if self.tray is not None and self.tray.isVisible():
            icon = (QSystemTrayIcon.MessageIcon.Information if status == "finished"
                    else QSystemTrayIcon.MessageIcon.Warning)
            self.tray.showMessage("DiskLab run " + status, message, icon, 10000)
        QApplication.alert(self.window)
        self.bar.showMessage(message + " (see the Library and Compare pages)")

    def close(self) -> None:
        """The window has closed: the tray icon goes with it."""
        if self.tray is not None:
            self.tray.hide()
