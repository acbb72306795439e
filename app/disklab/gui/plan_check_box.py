"""The Test matrix page's "Before you start" box: the line `disklab plan validate` prints (the
cases, the bytes to write, an estimated duration: core.run.summary) and every error and
warning of the last check, each with its key; a click on one asks to go to its field."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QGroupBox, QLabel, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from disklab.core.run.summary import PlanSummary, summary_text
from disklab.core.vocab.errors import Problem

NEXT_STEP = "next: choose a tool on the left and press 'Add a test with this tool'"


class PlanCheckBox(QGroupBox):
    """The summary line (`summary_label`) and the problems' list (`problems`)."""

    problem_clicked = Signal(str)  # the problem's key (test[2].block_size, target.path, ...)

    def __init__(self, parent: QWidget | None = None):
        super().__init__("Before you start", parent)
        lay = QVBoxLayout(self)
        self.summary_label = QLabel("…")
        self.summary_label.setWordWrap(True)
        lay.addWidget(self.summary_label)
        self.problems = QListWidget()
        self.problems.setMaximumHeight(130)
        self.problems.setWordWrap(True)
        self.problems.setToolTip("click a problem to go to its field")
        self.problems.itemClicked.connect(self._clicked)
        self.problems.itemActivated.connect(self._clicked)
        lay.addWidget(self.problems)

    def show_summary(self, summary: PlanSummary, no_tests: bool, assumed_rate: float) -> None:
        """A check's verdict: errors first, then warnings. A new plan (`no_tests`) is told
        what to do next rather than that its tests are missing."""
        self.problems.clear()
        problems = summary.problems or [Problem("", e) for e in summary.errors]
        errors = [p for p in problems if p.severity == "error"]
        warnings = [p for p in problems if p.severity != "error"]
        for p in errors + warnings:
            item = _problem_item(p, no_tests)
            item.setData(Qt.ItemDataRole.UserRole, p.key)
            self.problems.addItem(item)
        if not summary.problems:  # an exception, not a verdict
            for w in summary.warnings:
                item = QListWidgetItem(f"warning: {w}")
                item.setForeground(QColor(190, 120, 0))
                self.problems.addItem(item)
        # the same line `disklab plan validate` prints (core.run.summary.summary_text)
        if summary.errors and errors and all(p.key == "test" for p in errors) and no_tests:
            self.summary_label.setText("No tests yet.")
        else:
            self.summary_label.setText(summary_text(summary, assumed_rate))

    def _clicked(self, item: QListWidgetItem) -> None:
        key = item.data(Qt.ItemDataRole.UserRole)
        if key:
            self.problem_clicked.emit(str(key))


def _problem_item(p: Problem, no_tests: bool) -> QListWidgetItem:
    """A problem's line, red for an error and amber for a warning, its TOML line named."""
    if p.key == "test" and no_tests:  # a new plan: what to do next
        item = QListWidgetItem(NEXT_STEP)
        item.setForeground(QColor(40, 90, 160))
        return item
    where = f"line {p.line}: " if p.line else ""
    item = QListWidgetItem(f"{p.severity}: {p.key}: {p.message}" if p.key else
                           f"{p.severity}: {where}{p.message}")
    item.setForeground(QColor(200, 50, 50) if p.severity == "error" else QColor(190, 120, 0))
    if where:
        item.setToolTip(f"{where.rstrip(': ')} of the plan's TOML; click to go to the field")
    return item
