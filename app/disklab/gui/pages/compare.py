"""Compare page: two or more sessions (or the configurations in them) side by side.

Rows are configurations, columns tests (each saying which way is better), cells mean ± stddev
with n and CV, and against the chosen baseline the difference, its confidence interval, Welch's
p-value and the verdict: green where significantly better and red where significantly worse at
the alpha set on the page, uncoloured where there is no significant difference. Runs that did
not complete are left out unless "include partial runs" is ticked, and the heading says how many.
Grouped bar charts and line charts over a swept parameter; the configuration values that
differ. Everything exports.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from disklab.core.results.charts import ChartSpec, comparison_charts, sweep_charts
from disklab.core.results.compare import (
    Comparison,
    comparison_for,
    config_diff,
    config_facts,
    delta_class,
    labelled_rows,
    session_label,
)
from disklab.core.results.documents import write_comparison
from disklab.core.results.partial import session_results
from disklab.core.results.stats import ALPHA
from disklab.core.results.tables import comparison_table, row_heading
from disklab.gui.plots import ChartView
from disklab.gui.state import Workbench

DELTA_COLOURS = {"better": QColor(200, 240, 200), "worse": QColor(246, 210, 210)}


class ComparePage(QWidget):
    title = "Compare"

    def __init__(self, wb: Workbench, parent: QWidget | None = None):
        super().__init__(parent)
        self.wb = wb
        self.lib: Any = None
        self.comparison: Comparison | None = None
        self.sessions: list[dict[str, Any]] = []
        self.charts: list[ChartSpec] = []
        self.diff: list[tuple[str, dict[str, str]]] = []
        lay = QHBoxLayout(self)
        left = QVBoxLayout()
        pick = QLabel("<b>Sessions</b> (tick two or more, or one with several "
                      "configurations)")
        pick.setWordWrap(True)
        left.addWidget(pick)
        self.list = QListWidget()
        left.addWidget(self.list, 1)
        left.addWidget(QLabel("Baseline"))
        self.baseline = QComboBox()
        self.baseline.activated.connect(lambda _i: self.comparison and self.compare())
        left.addWidget(self.baseline)
        self.all_metrics = QCheckBox("all metrics (percentiles, per process, CPU)")
        self.all_metrics.toggled.connect(lambda _on: self.comparison and self.compare())
        left.addWidget(self.all_metrics)
        self.include_partial = QCheckBox("include partial runs (cancelled, failed)")
        self.include_partial.setToolTip(
            "Runs that did not complete are kept and shown, but left out of the means, the "
            "tests and the charts unless this is ticked.")
        self.include_partial.toggled.connect(lambda _on: self.comparison and self.compare())
        left.addWidget(self.include_partial)
        alpha_row = QHBoxLayout()
        alpha_row.addWidget(QLabel("Significance level α"))
        self.alpha = QDoubleSpinBox()
        self.alpha.setDecimals(3)
        self.alpha.setRange(0.001, 0.5)
        self.alpha.setSingleStep(0.01)
        self.alpha.setValue(ALPHA)
        self.alpha.setToolTip("A difference is better or worse only when Welch's t-test gives "
                              "p < α and the (1 - α) confidence interval excludes zero.")
        self.alpha.valueChanged.connect(lambda _v: self.comparison and self.compare())
        alpha_row.addWidget(self.alpha)
        left.addLayout(alpha_row)
        go = QPushButton("Compare")
        go.clicked.connect(self.compare)
        left.addWidget(go)
        refresh = QPushButton("Refresh list")
        refresh.clicked.connect(self.refresh)
        left.addWidget(refresh)
        host = QWidget()
        host.setLayout(left)

        right = QWidget()
        rl = QVBoxLayout(right)
        self.heading = QLabel("Tick sessions and press Compare.")
        self.heading.setWordWrap(True)
        rl.addWidget(self.heading)
        self.tabs = QTabWidget()
        self.table = QTableWidget()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.tabs.addTab(self.table, "Table")
        chart_host = QWidget()
        cl = QVBoxLayout(chart_host)
        self.chart_pick = QComboBox()
        self.chart_pick.currentIndexChanged.connect(self._show_chart)
        cl.addWidget(self.chart_pick)
        self.chart = ChartView()
        cl.addWidget(self.chart, 1)
        self.tabs.addTab(chart_host, "Charts")
        self.diff_table = QTableWidget()
        self.diff_table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.tabs.addTab(self.diff_table, "Config diff")
        rl.addWidget(self.tabs, 1)
        ex = QHBoxLayout()
        for fmt, text in (("png", "Chart PNG…"), ("svg", "Chart SVG…"), ("csv", "Table CSV…"),
                          ("md", "Table Markdown…"), ("html", "HTML report…")):
            b = QPushButton(text)
            b.clicked.connect(lambda _c=False, f=fmt: self._export(f))
            ex.addWidget(b)
        ex.addStretch(1)
        rl.addLayout(ex)

        split = QSplitter()
        split.addWidget(host)
        split.addWidget(right)
        split.setSizes([260, 840])
        lay.addWidget(split)
        wb.library_changed.connect(self.refresh)
        wb.compare_requested.connect(self.compare_ids)
        self.refresh()

    def _library(self) -> Any:
        if self.lib is None:
            self.lib = self.wb.open_library()
        return self.lib

    def close_library(self) -> None:
        if self.lib is not None:
            self.lib.close()
            self.lib = None

    def refresh(self) -> None:
        ticked = set(self.ticked_ids())
        try:
            sessions = self._library().list_sessions()
        except Exception as e:
            self.heading.setText(f"Cannot read the library: {e}")
            return
        self.list.clear()
        for s in sessions:
            item = QListWidgetItem(f"{s['id']}: {s['name']} ({s['status']})")
            item.setData(Qt.ItemDataRole.UserRole, s["id"])
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if s["id"] in ticked
                               else Qt.CheckState.Unchecked)
            self.list.addItem(item)
        self._fill_baseline()
        self.list.itemChanged.connect(self._fill_baseline, Qt.ConnectionType.UniqueConnection)

    def ticked_ids(self) -> list[int]:
        out = []
        for i in range(self.list.count()):
            item = self.list.item(i)
            if item.checkState() == Qt.CheckState.Checked:
                out.append(item.data(Qt.ItemDataRole.UserRole))
        return sorted(out)

    def _fill_baseline(self, *_a: object) -> None:
        current = self.baseline.currentData()
        self.baseline.blockSignals(True)
        self.baseline.clear()
        names = {self.list.item(i).data(Qt.ItemDataRole.UserRole): self.list.item(i).text()
                 for i in range(self.list.count())}
        for sid in self.ticked_ids():
            self.baseline.addItem(names.get(sid, str(sid)), sid)
        i = self.baseline.findData(current)
        self.baseline.setCurrentIndex(max(i, 0))
        self.baseline.blockSignals(False)

    def compare_ids(self, ids: list[int], baseline: int | None = None) -> None:
        """Tick these sessions and compare them (from the Library page, or tests)."""
        for i in range(self.list.count()):
            item = self.list.item(i)
            on = item.data(Qt.ItemDataRole.UserRole) in ids
            item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
        self._fill_baseline()
        if baseline is not None:
            self.baseline.setCurrentIndex(max(self.baseline.findData(baseline), 0))
        self.compare()
        self.wb.page_requested.emit("compare")

    def compare(self) -> None:
        ids = self.ticked_ids()
        if not ids:
            self.heading.setText("Tick two or more sessions, or one with several "
                                 "configurations.")
            return
        lib = self._library()
        baseline = self.baseline.currentData()
        include = self.include_partial.isChecked()
        self.comparison, self.sessions = comparison_for(lib, ids, baseline,
                                                        self.all_metrics.isChecked(),
                                                        self.alpha.value(), include)
        self.diff = config_diff(config_facts(lib, self.sessions, self.comparison))
        c = self.comparison
        # from now on the baseline is chosen among the rows (configurations)
        self.baseline.blockSignals(True)
        self.baseline.clear()
        for row in c.rows:
            self.baseline.addItem(row, row)
        self.baseline.setCurrentIndex(max(self.baseline.findData(c.baseline), 0))
        self.baseline.blockSignals(False)
        self.charts = comparison_charts(c)
        self.charts += sweep_charts(labelled_rows(
            [(session_label(s), session_results(lib, s["id"], include).rows)
             for s in self.sessions]))
        note = comparison_table(c).note  # the test, shared parameters, runs left out, noise
        self.heading.setText(f"<b>{len(c.rows)} configuration(s) × {len(c.columns)} test(s)</b>"
                             f"; baseline {c.baseline}. Green: significantly better; red: "
                             "significantly worse; uncoloured: no significant difference."
                             + "".join(f"<br>{html.escape(line)}"
                                       for line in note.splitlines()))
        self._fill_table()
        self._fill_diff()
        self.chart_pick.blockSignals(True)
        self.chart_pick.clear()
        for spec in self.charts:
            self.chart_pick.addItem(spec.title)
        self.chart_pick.blockSignals(False)
        self._show_chart(0)

    def _fill_table(self) -> None:
        c = self.comparison
        assert c is not None
        t = self.table
        t.clear()
        t.setRowCount(len(c.rows))
        t.setColumnCount(len(c.columns))
        table = comparison_table(c)  # the text every export writes
        t.setHorizontalHeaderLabels([h.replace(" ", "\n", 2) for h in table.header[1:]])
        t.setVerticalHeaderLabels([row_heading(c, r) for r in c.rows])
        for i, row in enumerate(c.rows):
            for j, col in enumerate(c.columns):
                # the same text, its parts ('; ') on lines of their own
                item = QTableWidgetItem(table.rows[i][j + 1].replace("; ", "\n"))
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight |
                                      Qt.AlignmentFlag.AlignVCenter)
                colour = DELTA_COLOURS.get(delta_class(c, row, col))
                if colour is not None:
                    item.setBackground(colour)
                    item.setForeground(QColor(20, 20, 20))
                t.setItem(i, j, item)
        t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        t.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)

    def _fill_diff(self) -> None:
        c = self.comparison
        assert c is not None
        t = self.diff_table
        t.clear()
        t.setRowCount(len(self.diff))
        t.setColumnCount(len(c.rows))
        t.setHorizontalHeaderLabels(list(c.rows))
        t.setVerticalHeaderLabels([k for k, _v in self.diff])
        for i, (_k, values) in enumerate(self.diff):
            for j, row in enumerate(c.rows):
                t.setItem(i, j, QTableWidgetItem(values.get(row, "–")))
        t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)

    def _show_chart(self, index: int) -> None:
        self.chart.show_spec(self.charts[index] if 0 <= index < len(self.charts) else None)

    def _export(self, fmt: str) -> None:
        if self.comparison is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, "Export", f"disklab-comparison.{fmt}",
                                              f"*.{fmt}")
        if path:
            self.export(fmt, path)

    def export(self, fmt: str, path: str) -> str:
        """Write the current comparison: png/svg (the chart shown), csv, md, json, html."""
        if self.comparison is None:
            raise ValueError("nothing compared yet")
        if fmt in ("png", "svg"):
            self.chart.export(path)
            return path
        write_comparison(self._library(), [int(s["id"]) for s in self.sessions],
                         self.baseline.currentData(), path, fmt,
                         all_metrics=True if fmt in ("csv", "json") else
                         self.all_metrics.isChecked(), alpha=self.alpha.value(),
                         include_partial=self.include_partial.isChecked())
        return path
