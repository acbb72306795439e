"""What the window did, written to the log file (core.logfile): pages shown, menu commands,
runs started and ended, errors of the run thread. Connected to the window's signals from
outside, so the pages know nothing of logging; a bug report's log then tells what the user
did before a crash."""

from __future__ import annotations

from PySide6.QtGui import QAction

from disklab.core.logfile import log
from disklab.gui.main_window import PAGE_KEYS, MainWindow


def log_activity(window: MainWindow) -> None:
    wb = window.wb
    log.info("window opened; library %s", wb.library_path)
    window.sidebar.currentRowChanged.connect(
        lambda row: log.info("page %s", PAGE_KEYS[row] if 0 <= row < len(PAGE_KEYS) else row))
    for action in window.findChildren(QAction):
        name = action.text().replace("&", "")
        if name:
            action.triggered.connect(lambda _checked=False, n=name: log.info("command %s", n))
    window.run.started.connect(lambda: log.info("run started: %s", _plan_name(window)))
    window.run.finished.connect(
        lambda session_id, status: log.info("run ended: session %s %s", session_id, status))
    wb.runs.error.connect(lambda text: log.error("the run failed:\n%s", text))
    wb.compare_requested.connect(lambda ids: log.info("compare sessions %s", ids))
    window.destroyed.connect(lambda *_a: log.info("window closed"))


def _plan_name(window: MainWindow) -> str:
    return str(window.wb.draft.doc.get("name", ""))
