"""History page: this plan on this target over time, from a session picked in the Library.

What `disklab history` prints, laid out (core.history.build and document, one reading for
both): the series' heading (plan, target, host: this machine or another), the changes found,
each with what the records say changed; one figure at a time as a line chart (dates on x,
which way is better on its axis, each session's mean with its 95 % interval, each change a
dashed marker: the very SVG `disklab history --format svg` writes) and the same figures in a
table. "Run again" puts the session's plan, on the target it ran on, into the window and
starts it on the Run page: a new point of the series.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from disklab.core.history.build import Figure, History, SeriesHistory, build_history
from disklab.core.history.document import (
    TABLE_HEADER,
    change_text,
    changes_lines,
    chart_spec,
    figure_table,
    heading,
    history_csv,
    history_html,
)
from disklab.core.plan.draft import PlanDraft
from disklab.core.results.svg import to_svg
from disklab.core.run.resume import host_identity
from disklab.core.vocab.errors import DisklabError
from disklab.gui.chart import ChartWidget
from disklab.gui.export import ask_export_path, export_button
from disklab.gui.state import Workbench

WORSE, BETTER = QColor("#f4c7c3"), QColor("#c8e6c9")
# The chart is drawn at a size that a laptop's 1024x768 shows whole at a readable scale (its
# smallest text 9 px), above a table of a few sessions; its Export writes the same size.
CHART_SIZE = (880, 440)


class HistoryPage(QWidget):
    title = "History"

    def __init__(self, wb: Workbench, parent: QWidget | None = None):
        super().__init__(parent)
        self.wb = wb
        self.history: History | None = None
        self.ref: str | None = None
        lay = QVBoxLayout(self)
        self.heading = QLabel("Pick a session in the Library and press History: its plan on "
                              "its target over time.")
        self.heading.setWordWrap(True)
        self.heading.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.heading)
        lay.addLayout(self._pickers())
        split = QSplitter(Qt.Orientation.Vertical)
        self.chart = ChartWidget(size=CHART_SIZE)
        split.addWidget(self.chart)
        lower = QSplitter(Qt.Orientation.Horizontal)
        self.table = self._table()
        lower.addWidget(self.table)
        self.changes = QPlainTextEdit()
        self.changes.setReadOnly(True)
        lower.addWidget(self.changes)
        lower.setSizes([560, 520])
        split.addWidget(lower)
        split.setSizes([440, 200])
        lay.addWidget(split, 1)
        wb.history_requested.connect(self.show_history)
        wb.library_changed.connect(lambda _change: self.ref is not None
                                   and self.show_history(self.ref))
        wb.units_changed.connect(lambda _system: self.units_changed())

    def _pickers(self) -> QHBoxLayout:
        row = QHBoxLayout()
        row.addWidget(QLabel("Series"))
        self.series_pick = QComboBox()
        self.series_pick.currentIndexChanged.connect(lambda _i: self._show_series())
        self.series_pick.setMinimumContentsLength(16)
        row.addWidget(self.series_pick, 2)
        row.addWidget(QLabel("Figure"))
        self.figure_pick = QComboBox()
        self.figure_pick.currentIndexChanged.connect(lambda _i: self._show_figure())
        self.figure_pick.setMinimumContentsLength(14)
        row.addWidget(self.figure_pick, 2)
        rerun = QPushButton("Run again")
        rerun.clicked.connect(self.run_again)
        export, self.export_actions = export_button(
            (("csv", "CSV table…"), ("html", "HTML report…"), ("svg", "Chart SVG…")),
            self.ask_export)
        self.buttons: dict[str, QPushButton] = {"rerun": rerun, "export": export}
        for b in self.buttons.values():
            b.setEnabled(False)
            row.addWidget(b)
        self.buttons["rerun"].setToolTip("Run this plan again on the same target: a new "
                                         "session of this history")
        return row

    def _table(self) -> QTableWidget:
        t = QTableWidget(0, len(TABLE_HEADER))
        t.setHorizontalHeaderLabels(list(TABLE_HEADER))
        t.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        t.horizontalHeader().setStretchLastSection(True)
        t.verticalHeader().setVisible(False)
        return t

    # --- what is shown ---------------------------------------------------------------------

    def show_history(self, ref: Any) -> None:
        """The history of the series `ref` names (a session id: its series)."""
        self.ref = str(ref)
        try:
            self.history = build_history(self.wb.library(), self.ref,
                                         this_machine=host_identity())
        except DisklabError as e:
            self.history = None
            self.heading.setText(str(e))
            self.series_pick.clear()
            return
        self.series_pick.blockSignals(True)
        self.series_pick.clear()
        for s in self.history.series:
            text = f"{s.plan_name} · {s.target} · {s.host_words}"
            self.series_pick.addItem(text)
            self.series_pick.setItemData(self.series_pick.count() - 1, text,
                                         Qt.ItemDataRole.ToolTipRole)
        self.series_pick.blockSignals(False)
        self.series_pick.setCurrentIndex(0)
        self._show_series()
        self.wb.page_requested.emit("history")

    def units_changed(self) -> None:
        """The series and figure shown written again in the units now chosen."""
        figure = self.figure_pick.currentIndex()
        self._show_series()
        if 0 < figure < self.figure_pick.count():
            self.figure_pick.setCurrentIndex(figure)

    @property
    def series(self) -> SeriesHistory | None:
        i = self.series_pick.currentIndex()
        if self.history is None or not 0 <= i < len(self.history.series):
            return None
        return self.history.series[i]

    @property
    def figures(self) -> list[Figure]:
        """The figures offered: the headline ones and those that changed, changed first."""
        s = self.series
        if s is None:
            return []
        changed = [c.figure for c in s.changes]
        shown = [f for f in s.figures if f.headline or f.key in changed]
        return sorted(shown, key=lambda f: (f.key not in changed, s.figures.index(f)))

    def _show_series(self) -> None:
        s = self.series
        for b in self.buttons.values():
            b.setEnabled(s is not None and bool(s.sessions))
        if s is None:
            return
        self.heading.setText(heading(s))
        self.changes.setPlainText("\n\n".join(changes_lines(s)))
        self.figure_pick.blockSignals(True)
        self.figure_pick.clear()
        for f in self.figures:
            mark = " (changed)" if any(c.figure == f.key for c in s.changes) else ""
            self.figure_pick.addItem(f.label + mark)
        self.figure_pick.blockSignals(False)
        self.figure_pick.setCurrentIndex(0)
        self._show_figure()

    def _show_figure(self) -> None:
        s, i = self.series, self.figure_pick.currentIndex()
        figures = self.figures
        if s is None or not 0 <= i < len(figures):
            self.chart.show_spec(None)
            self.table.setRowCount(0)
            return
        f = figures[i]
        self.chart.show_spec(chart_spec(s, f))
        table = figure_table(s, f)
        self.table.setRowCount(len(table.rows))
        for r, row in enumerate(table.rows):
            for c, text in enumerate(row):
                item = QTableWidgetItem(text)
                cls = table.classes[r][c] if table.classes else ""
                if cls:
                    item.setBackground(WORSE if "worse" in cls else BETTER)
                    item.setToolTip(next(change_text(s, ch) for ch in s.changes
                                         if ch.figure == f.key and ch.after ==
                                         f.points[r].session))
                self.table.setItem(r, c, item)

    def shown_rows(self) -> list[tuple[str, ...]]:
        """The table's cells as shown (tests compare them with the CLI's)."""
        return [tuple(self.table.item(r, c).text() for c in range(self.table.columnCount()))
                for r in range(self.table.rowCount())]

    # --- actions ---------------------------------------------------------------------------

    def run_again(self) -> None:
        """The newest session's plan, on the target it ran on, started on the Run page."""
        s = self.series
        if s is None or not s.sessions:
            return
        session = self.wb.library().session(int(s.sessions[-1]["id"]))
        try:
            draft = PlanDraft.from_text(session["plan_text"], session.get("plan_path"))
        except ValueError as e:
            QMessageBox.warning(self, "Cannot run again", str(e))
            return
        target = (session.get("host") or {}).get("target") or {}
        if target.get("kind") == "directory" and target.get("path"):
            draft.target["directory"] = target["path"]  # where it ran (a --target then)
        self.wb.set_draft(draft)
        self.wb.page_requested.emit("run")
        self.wb.run_requested.emit(None)  # the draft, now this plan

    def ask_export(self, fmt: str) -> None:
        if self.history is None:
            return
        path = ask_export_path(self, "Export the history", f"disklab-history.{fmt}", fmt)
        if path:
            self.wb.status.emit(f"Exported the history to {self.export(fmt, path)}")

    def export(self, fmt: str, path: str) -> str:
        """The history as CSV or HTML (every series), or the chart shown as SVG."""
        if self.history is None:
            raise ValueError("no history shown")
        if fmt == "csv":
            Path(path).write_text(history_csv(self.history), encoding="utf-8")
        elif fmt == "html":
            Path(path).write_text(history_html(self.history), encoding="utf-8")
        elif self.chart.spec is not None:
            Path(path).write_text(to_svg(self.chart.spec, *self.chart.size_px),
                                  encoding="utf-8")
        else:
            raise ValueError("no chart shown")
        return path
