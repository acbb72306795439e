"""The Run page's log pane: what the tools print and the events' lines, appended once a refresh
in one edit and one paint (bench figure 2 measured what each append costs the GUI thread while
a run goes). The pane keeps the last LOG_LINES lines; the library keeps everything."""

from __future__ import annotations

from PySide6.QtGui import QTextCursor, QTextDocument
from PySide6.QtWidgets import QPlainTextEdit, QScrollBar, QWidget

LOG_LINES = 5000  # the log pane keeps this many lines; the library keeps everything


def new_log() -> QPlainTextEdit:
    """The pane: read-only, unwrapped (a tool's table stays a table), LOG_LINES at most."""
    log = QPlainTextEdit()
    log.setReadOnly(True)
    log.setMaximumBlockCount(LOG_LINES)
    log.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    return log


END_KEY = "disklab_log_end"  # the log's scroll position append_lines last set


def append_lines(log: QPlainTextEdit, lines: list[str]) -> None:
    """A refresh's log lines in one edit at the end of the document and one paint of the
    pane: inserted by a cursor of their own (the user's selection stays), the view kept at
    the end only if it was there (a user reading back is not moved), the viewport drawn once
    after the scroll. appendPlainText did the same in ~twice the CPU (its layout of the
    appended block and the cursor made visible; bench figure 2)."""
    document, bar, viewport = _log_parts(log)
    # at the end, or where this function last put it: the range grows after the scroll when a
    # long line brings the horizontal scroll bar (appendPlainText then stopped following)
    at_end = bar.value() >= bar.maximum() or bar.value() == log.property(END_KEY)
    cursor = QTextCursor(document)
    cursor.movePosition(QTextCursor.MoveOperation.End)
    viewport.setUpdatesEnabled(False)
    try:
        cursor.insertText(("\n" if not document.isEmpty() else "") + "\n".join(lines))
        if at_end:
            bar.setValue(bar.maximum())
            log.setProperty(END_KEY, bar.value())
    finally:
        viewport.setUpdatesEnabled(True)  # one update() of the viewport, painted with the rest


def _log_parts(log: QPlainTextEdit) -> tuple[QTextDocument, QScrollBar, QWidget]:
    """The log's document, vertical scroll bar and viewport, their Python wrappers kept on the
    log: PySide6 (6.10) makes a new wrapper at each call of viewport() (and at some of
    document() and verticalScrollBar()) while no Python object holds the last one, and with
    it Python enum types: ~0.3 ms of the GUI thread a refresh (cProfile of bench figure 2's
    Run page: the largest part of append_lines; 0.04 ms with the wrappers kept)."""
    kept = getattr(log, "_disklab_parts", None)
    if kept is None or kept[0] is not log.document():
        kept = (log.document(), log.verticalScrollBar(), log.viewport())
        log._disklab_parts = kept  # type: ignore[attr-defined]
    return kept
