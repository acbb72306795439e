"""The Run page's log pane: a refresh's lines in one edit and one paint, the view at the end
while the user is there, left alone when they read back."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QPlainTextEdit

from disklab.gui.run_log import LOG_LINES, append_lines


class _Paints(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.n = 0

    def eventFilter(self, _obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.n += 1
        return False


def _log(qtbot) -> QPlainTextEdit:
    log = QPlainTextEdit()
    log.setReadOnly(True)
    log.setMaximumBlockCount(LOG_LINES)
    log.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    qtbot.addWidget(log)
    log.resize(700, 160)
    log.show()
    qtbot.waitExposed(log)
    return log


def test_a_refresh_of_log_lines_is_one_paint_and_follows_the_end(qtbot):
    log = _log(qtbot)
    append_lines(log, [f"$ fio line {i}" for i in range(100)])
    QApplication.processEvents()
    paints = _Paints()
    log.viewport().installEventFilter(paints)
    for k in range(10):
        append_lines(log, [f"refresh {k} a", f"refresh {k} b", f"refresh {k} c"])
        QApplication.processEvents()
    assert paints.n == 10  # one paint of the pane per refresh
    lines = log.toPlainText().splitlines()
    assert lines[0] == "$ fio line 0" and lines[-1] == "refresh 9 c" and len(lines) == 130
    bar = log.verticalScrollBar()
    assert bar.value() == bar.maximum()  # the newest lines in view
    bar.setValue(10)  # the user reads back
    append_lines(log, ["later"])
    QApplication.processEvents()
    assert bar.value() == 10 and log.toPlainText().endswith("\nlater")


def test_the_log_keeps_its_last_lines(qtbot):
    log = _log(qtbot)
    for k in range(LOG_LINES // 1000 + 2):
        append_lines(log, [f"{k}:{i}" for i in range(1000)])
    lines = log.toPlainText().splitlines()
    assert len(lines) == LOG_LINES and lines[-1] == f"{LOG_LINES // 1000 + 1}:999"


def test_the_log_still_follows_after_a_long_line_brings_the_scroll_bar(qtbot):
    # a tool's argv wider than the pane: the horizontal scroll bar appears after the scroll,
    # the range grows by a line, and the pane (appendPlainText too) used to stop following
    log = _log(qtbot)
    append_lines(log, ["$ fio " + "--option=value " * 60, "0.5 s: 1 GiB done"])
    QApplication.processEvents()
    for k in range(5):
        append_lines(log, [f"{k}.{i} s: GiB done" for i in range(10)])
        QApplication.processEvents()
    bar = log.verticalScrollBar()
    assert bar.value() == bar.maximum() > 0
