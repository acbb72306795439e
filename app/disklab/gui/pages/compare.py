"""Compare page: two or more sessions (or the configurations in them) side by side.

The figures come first: one line of headline, one line of legend, then the tables, whose cells
carry their verdicts as marks (core/results/legend.py: ▲ ▼ ≈ in the text, a letter for what
limited the cell in its corner, the test and the evidence in its tooltip); the notes (the test
behind a verdict, what every cell shares, what limited each cell, the runs left out) are folded
under the tables, so no length of prose moves the tab bar or shrinks the table.

First a pivot table (core.results.pivot) with rows, columns and metric picked from combo boxes,
opening as the first session's plan [report] table asks, else configuration x test; then its
charts (the SVG every export writes, shown as is). "Against the baseline":
rows are configurations, columns tests (each saying which way is better), cells mean ± stddev
with n and CV, and against the chosen baseline the difference, its confidence interval, Welch's
p-value and the verdict: green where significantly better and red where significantly worse at
the alpha set on the page, uncoloured where there is no significant difference. Runs that did
not complete are left out unless "include partial runs" is ticked, and the heading says how many.
Grouped bar charts and line charts over a swept parameter; the configuration values that
differ. Everything exports.
"""

from __future__ import annotations

import dataclasses
import html
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
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

from disklab.core.plan.report import session_report
from disklab.core.results.charts import (
    ChartSpec,
    comparison_charts,
    pivot_charts,
    sweep_charts,
)
from disklab.core.results.compare import (
    Comparison,
    comparison_for,
    config_diff,
    config_facts,
    delta_class,
    labelled_rows,
)
from disklab.core.results.documents import compare_page_html, pivot_text, write_comparison
from disklab.core.results.format import format_excluded
from disklab.core.results.legend import limit_marks, table_legend
from disklab.core.results.pivot import (
    BaselineError,
    Pivot,
    PivotKeyError,
    build_pivot,
    cell_class,
    report_pivot,
)
from disklab.core.results.sessions_compared import compare_sessions
from disklab.core.results.stats import ALPHA
from disklab.core.results.tables import (
    cell_lines,
    comparison_note,
    comparison_table,
    pivot_table,
    row_heading,
)
from disklab.gui.cell_marks import mark_cells
from disklab.gui.chart import ChartWidget
from disklab.gui.elided_label import ElidedLabel
from disklab.gui.export import ask_export_path, write_chart
from disklab.gui.fold import Fold
from disklab.gui.pivot_keys import PivotKeys
from disklab.gui.state import LibraryChange, Workbench

DELTA_COLOURS = {"better": QColor(200, 240, 200), "worse": QColor(246, 210, 210)}
DIFF_MARK = QColor(252, 232, 178)  # a configuration value that differs from the first's
DIFF_MIN_WIDTH = 160  # px: a config diff column is never narrower
DIFF_ROOM = 1000  # px: the diff table's width before it is first shown (at 1280 px)
CELL_WIDTH = 300  # px: the widest a column opens; longer text is elided, whole in the tooltip
PICKER_WIDTH = 170  # px: the session picker's column (at 1024 px the pivot shows 3 columns)
# px: a pivot's cells (unless the columns have more room each) and row labels wrap beyond
# these, so three configurations fit beside their labels at 1024 px
PIVOT_CELL_WIDTH, PIVOT_LABEL_WIDTH = 170, 130
# a row label at the left, wrapped on spaces when wider than its column (Qt's header takes the
# text flag among its alignment flags)
LABEL_ALIGNMENT = Qt.AlignmentFlag(Qt.AlignmentFlag.AlignLeft.value
                                   | Qt.AlignmentFlag.AlignVCenter.value
                                   | Qt.TextFlag.TextWordWrap.value)
HEADER_LINE = 28  # characters per line of a column heading
# the export choices: (format given to export(), text)
EXPORTS = (("pivot-csv", "Pivot CSV"), ("pivot-md", "Pivot Markdown"),
           ("pivot-json", "Pivot JSON"), ("html", "HTML report (pivot, comparison, charts)"),
           ("csv", "Comparison CSV"), ("md", "Comparison Markdown"),
           ("json", "Comparison JSON"), ("png", "Chart PNG"), ("svg", "Chart SVG"))


def wrapped(text: str, width: int = HEADER_LINE) -> str:
    """A heading broken on spaces into lines of about `width` characters (at most three, the
    rest in the tooltip), so a column is as wide as its figures, not its heading."""
    lines: list[str] = []
    for word in text.split(" "):
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "\n".join(lines[:3]) + ("…" if len(lines) > 3 else "")


def common_prefix(labels: list[str]) -> str:
    """The 'session / ' part every label shares (one session's configurations), to say once
    rather than in every heading; '' when they share none or there is only one."""
    if len(labels) < 2 or not all(" / " in lab for lab in labels):
        return ""
    first = labels[0].split(" / ")[0]
    return f"{first} / " if all(lab.startswith(f"{first} / ") for lab in labels) else ""


def fill_table(t: QTableWidget, header: list[str], labels: list[str],
               cells: list[list[str]], colours: list[list[str]] | None = None,
               width: int = CELL_WIDTH, tips: list[list[str]] | None = None,
               label_width: int = CELL_WIDTH) -> None:
    """A read-only table that reads at 1280 px: wrapped headings without the part they all
    share, cells on lines of their own ('; ' parts), columns sized to their contents up to
    `width` px (a longer cell wraps), row labels up to `label_width` px (wrapped likewise),
    the full text in tooltips."""
    shared_h, shared_v = common_prefix(header), common_prefix(labels)
    header = [h.removeprefix(shared_h) for h in header]
    labels = [lab.removeprefix(shared_v) for lab in labels]
    t.clear()
    t.setRowCount(len(labels))
    t.setColumnCount(len(header))
    t.setWordWrap(True)
    t.setTextElideMode(Qt.TextElideMode.ElideMiddle)
    for j, h in enumerate(header):
        item = QTableWidgetItem(wrapped(h))
        item.setToolTip(h)
        t.setHorizontalHeaderItem(j, item)
    for i, name in enumerate(labels):
        item = QTableWidgetItem(name)
        item.setToolTip(name)
        t.setVerticalHeaderItem(i, item)
    for i, row in enumerate(cells):
        for j, text in enumerate(row):
            item = QTableWidgetItem(text.replace("; ", "\n"))
            tip = tips[i][j] if tips else ""
            item.setToolTip(text.replace("; ", "\n") + (f"\n{tip}" if tip else ""))
            item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            colour = DELTA_COLOURS.get(colours[i][j]) if colours else None
            if colour is not None:
                item.setBackground(colour)
                item.setForeground(QColor(20, 20, 20))
            t.setItem(i, j, item)
    t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    t.resizeColumnsToContents()
    for j in range(t.columnCount()):
        t.setColumnWidth(j, min(t.columnWidth(j), width))
    t.verticalHeader().setDefaultAlignment(LABEL_ALIGNMENT)
    t.verticalHeader().setMaximumWidth(label_width)
    t.resizeRowsToContents()


def mark_differences(t: QTableWidget, cells: list[list[str]], first: str) -> None:
    """Left-aligned cells; a value that differs from the first configuration's (column 0)
    marked: a coloured background, bold, and a tip naming the first."""
    for i, row in enumerate(cells):
        for j, text in enumerate(row):
            item = t.item(i, j)
            item.setTextAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
            if j and text != row[0]:
                item.setBackground(DIFF_MARK)
                item.setForeground(QColor(20, 20, 20))
                font = item.font()
                font.setBold(True)
                item.setFont(font)
                item.setToolTip(f"{text}\n(differs from {first})")


def one_line(text: str, bold: bool = False) -> ElidedLabel:
    """A line above the tabs that stays one line whatever it says (the whole text in its
    tooltip), so the tab bar below never moves."""
    line = ElidedLabel(text)
    if bold:
        font = line.font()
        font.setBold(True)
        line.setFont(font)
    line.setFixedHeight(line.fontMetrics().height() + 4)
    return line


def notes_fold() -> tuple[Fold, QLabel, QLabel]:
    """The notes, folded under the tables: the pivot's (what every cell shares, its marks,
    what limited its cells) and the comparison's (the test, the runs left out, what limited
    each); the fold and the two labels."""
    host = QWidget()
    nl = QVBoxLayout(host)
    nl.setContentsMargins(4, 0, 4, 0)
    labels = (QLabel(""), QLabel(""))
    for label in labels:
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        nl.addWidget(label)
    nl.addStretch(1)
    return Fold("Notes", host), *labels


def headline(c: Comparison) -> str:
    """The comparison in one line: '3 configuration(s) × 2 test(s) (60 figures); baseline
    3 xfs', and the runs left out of the means."""
    # a column is one figure of a test (write's throughput, its latency...): count tests
    tests = len({metric.split(":")[0] for metric in c.metrics.values()})
    figures = f" ({len(c.columns)} figures)" if len(c.columns) != tests else ""
    left_out = format_excluded(c.incomplete.reasons(), c.incomplete.included)
    return (f"{len(c.rows)} configuration(s) × {tests} test(s){figures}; baseline "
            f"{c.baseline}" + (f"; {left_out.split(';')[0]}" if left_out else ""))


def comparison_notes(c: Comparison) -> str:
    """The comparison's notes as the fold shows them: what the colours say, then the test,
    the shared parameters, the runs left out, the noise and what limited each cell."""
    note = comparison_note(c)
    return ("<b>Against the baseline</b><br>Green: significantly better; red: significantly "
            "worse; uncoloured: no significant difference."
            + "".join(f"<br>{html.escape(line)}" for line in note.splitlines()))


class ComparePage(QWidget):
    title = "Compare"

    def __init__(self, wb: Workbench, parent: QWidget | None = None):
        super().__init__(parent)
        self.wb = wb
        self.comparison: Comparison | None = None
        self.sessions: list[dict[str, Any]] = []
        self.charts: list[ChartSpec] = []
        self.diff: list[tuple[str, dict[str, str]]] = []
        self.pivot: Pivot | None = None
        self.pivot_rows: list[dict[str, Any]] = []
        self.comparison_charts: list[ChartSpec] = []
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        # the picker beside the tables, narrow; the tables take every pixel the window gains
        # or loses, and the picker folds away when dragged shut
        self.split = split = QSplitter()
        split.addWidget(session_picker(self))
        split.addWidget(self._results_area())
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        split.setCollapsible(0, True)
        split.setCollapsible(1, False)
        split.setSizes([PICKER_WIDTH, 1100 - PICKER_WIDTH])
        lay.addWidget(split)
        wb.library_changed.connect(self.on_library_changed)
        wb.compare_requested.connect(self.compare_ids)
        # the comparison shown made again in the units now chosen (its text and charts)
        wb.units_changed.connect(lambda _system: self.comparison is not None and self.compare())
        self.refresh()

    def _results_area(self) -> QWidget:
        """The right side: the heading, the tabs (pivot, charts, against the baseline, config
        diff) and the export."""
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(4, 0, 0, 0)
        self.heading = one_line("Tick sessions and press Compare.", bold=True)
        self.legend = one_line("")
        rl.addWidget(self.heading)
        rl.addWidget(self.legend)
        self.tabs = QTabWidget()
        self.tabs.addTab(self._pivot_tab(), "Pivot")
        chart_host = QWidget()
        cl = QVBoxLayout(chart_host)
        self.chart_pick = QComboBox()
        self.chart_pick.currentIndexChanged.connect(self._show_chart)
        cl.addWidget(self.chart_pick)
        self.chart = ChartWidget()  # the very SVG every export writes, as the Library's
        cl.addWidget(self.chart, 1)
        self.tabs.addTab(chart_host, "Charts")
        self.table = QTableWidget()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.tabs.addTab(self.table, "Against the baseline")
        self._table_stale = False  # filled when its tab is shown (its text is the slow part)
        self.diff_table = QTableWidget()
        self.diff_table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.tabs.addTab(self.diff_table, "Config diff")
        rl.addWidget(self.tabs, 1)
        self.notes_fold, self.pivot_note, self.notes = notes_fold()
        rl.addWidget(self.notes_fold)
        self.tabs.currentChanged.connect(lambda _i: self._fill_table_if_shown())
        # the diff's columns share the width it has once it is shown
        self.tabs.currentChanged.connect(lambda _i: self._fill_diff_if_shown())
        ex = QHBoxLayout()
        ex.addWidget(self.notes_fold.button)
        self.export_pick = QComboBox()
        for fmt, text in EXPORTS:
            self.export_pick.addItem(text, fmt)
        ex.addWidget(self.export_pick)
        b = QPushButton("Export…")
        b.clicked.connect(lambda: self.ask_export(str(self.export_pick.currentData())))
        ex.addWidget(b)
        ex.addStretch(1)
        rl.addLayout(ex)
        return right

    def _pivot_tab(self) -> QWidget:
        """The pivot: its rows, columns and metric to choose, a note, the table."""
        pivot_host = QWidget()
        pl = QVBoxLayout(pivot_host)
        pl.setContentsMargins(2, 4, 2, 2)
        keys = QHBoxLayout()
        self.rows_key = QComboBox()
        self.cols_key = QComboBox()
        self.metric_pick = QComboBox()
        for text, combo in (("Rows", self.rows_key), ("Columns", self.cols_key),
                            ("Metric", self.metric_pick)):
            keys.addWidget(QLabel(text))
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
            combo.activated.connect(lambda _i: self.pivot is not None and self.show_pivot())
            keys.addWidget(combo)
        keys.addStretch(1)
        pl.addLayout(keys)
        self.keys = PivotKeys(self.rows_key, self.cols_key, self.metric_pick)
        self.pivot_view = QTableWidget()
        self.pivot_view.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        pl.addWidget(self.pivot_view, 1)
        return pivot_host

    def _library(self) -> Any:
        return self.wb.library()  # the window's one Library

    def on_library_changed(self, change: LibraryChange) -> None:
        """The session list always follows the library; the comparison shown is made again
        only when one of its sessions was edited (a new name) or deleted, not when a session
        was added or another one was edited."""
        self.refresh()
        shown = [int(s["id"]) for s in self.sessions]
        if shown and change.kind != "added" and change.touches(shown):
            if self.ticked_ids():
                self.compare()
            else:
                self.sessions = []
                self.heading.setText("The sessions compared here were deleted.")

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
            item.setToolTip(item.text())
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
            self.baseline.setItemData(self.baseline.count() - 1, names.get(sid, str(sid)),
                                      Qt.ItemDataRole.ToolTipRole)
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
            self.baseline.setItemData(self.baseline.count() - 1, row,
                                      Qt.ItemDataRole.ToolTipRole)
        self.baseline.setCurrentIndex(max(self.baseline.findData(c.baseline), 0))
        self.baseline.blockSignals(False)
        asked = compare_sessions(lib, self.sessions, include)  # as `disklab compare` reads
        self.pivot_rows = asked.rows
        self.keys.offer(session_report(self.sessions[0].get("plan_text"))
                        if self.sessions else None, self.pivot_rows)
        self.pivot = self._build_pivot()
        self.comparison_charts = comparison_charts(c) + sweep_charts(
            labelled_rows(asked.results))
        self.heading.setText(headline(c))
        self.notes.setText(comparison_notes(c))
        self._table_stale = True
        self._fill_table_if_shown()
        self._fill_diff()
        self.show_pivot()

    # ---- the pivot ---------------------------------------------------------------------

    def _build_pivot(self) -> Pivot:
        rows, cols, metrics = self.keys.chosen()
        # the baseline chosen on the page, along the configurations (core: like cells only)
        baseline = (self.baseline.currentText() or None
                    if {"config", "session"} & {*rows, *cols} else None)
        try:
            try:
                return build_pivot(self.pivot_rows, rows, cols, metrics, self.alpha.value(),
                                   baseline)
            except BaselineError:
                return build_pivot(self.pivot_rows, rows, cols, metrics, self.alpha.value())
        except PivotKeyError:
            return report_pivot(self.pivot_rows, None, self.alpha.value())

    def show_pivot(self) -> None:
        """Rebuild the pivot from the combos and show it, and the charts (the pivot's first,
        then the comparison's)."""
        if not self.pivot_rows:
            return
        missing = self.comparison.missing if self.comparison else ()  # no figure: named
        self.pivot = p = dataclasses.replace(self._build_pivot(), missing=missing)
        table = pivot_table(p)  # the text every export writes
        self.pivot_view.horizontalScrollBar().setValue(0)  # a new pivot starts at its left
        fill_table(self.pivot_view, [table.header[j + 1] for j in range(len(p.columns))],
                   list(p.rows), [[cell_lines(c) for c in r[1:]] for r in table.rows],
                   [[cell_class(p.cell(i, j)) for j in range(len(p.columns))]
                    for i in range(len(p.rows))],
                   tips=[list(r[1:]) for r in table.tips], width=min(CELL_WIDTH, max(
                       PIVOT_CELL_WIDTH, (self.pivot_view.width() - PIVOT_LABEL_WIDTH - 24)
                       // max(len(p.columns), 1))), label_width=PIVOT_LABEL_WIDTH)
        mark_cells(self.pivot_view, [[limit_marks(p.cell_limits.get((i, j)))
                                      for j in range(len(p.columns))]
                                     for i in range(len(p.rows))])
        self.pivot_note.setText("<b>Pivot</b><br>" + "<br>".join(
            html.escape(line) for line in table.note.splitlines()))
        self.legend.setText(table_legend(p, self.comparison))
        self.charts = pivot_charts(p) + list(self.comparison_charts)
        self.chart_pick.blockSignals(True)
        self.chart_pick.clear()
        for spec in self.charts:
            self.chart_pick.addItem(spec.title)
        self.chart_pick.blockSignals(False)
        self._show_chart(0)

    def _fill_table_if_shown(self) -> None:
        """The comparison against the baseline as text, made when its tab is on screen: the
        text of every cell (mean ± stddev, Welch's p and interval) of a 10,000-run session
        takes a few hundred milliseconds the Pivot tab's user need not wait for."""
        if self._table_stale and self.tabs.currentWidget() is self.table:
            self._table_stale = False
            self._fill_table()

    def _fill_table(self) -> None:
        c = self.comparison
        assert c is not None
        table = comparison_table(c)  # the text every export writes
        fill_table(self.table, list(table.header[1:]), [row_heading(c, r) for r in c.rows],
                   [list(r[1:]) for r in table.rows],
                   [[delta_class(c, row, col) for col in c.columns] for row in c.rows],
                   tips=[list(r[1:]) for r in table.tips])
        mark_cells(self.table, [[limit_marks(c.limits.get((row, col))) for col in c.columns]
                                for row in c.rows])

    def _fill_diff_if_shown(self) -> None:
        if self.comparison is not None and self.tabs.currentWidget() is self.diff_table:
            self._fill_diff()

    def _fill_diff(self) -> None:
        """The configurations side by side, one column each, only the values that differ
        (compare.config_facts leaves out noise: mountpoints, device names, raw dumps). Read at
        1280 px: every configuration's column shares the table's width (a list wraps at its
        commas, never one very wide cell), and a value that differs from the first
        configuration's is marked."""
        c = self.comparison
        assert c is not None
        t = self.diff_table
        cells = [[values.get(row, "–").replace(",", ", ") for row in c.rows]
                 for _k, values in self.diff]
        fill_table(t, list(c.rows), [k for k, _v in self.diff], cells)
        # the room right of the key column (the viewport), or a guess before it is shown
        room = t.viewport().width() if t.isVisible() else DIFF_ROOM - CELL_WIDTH
        share = max(DIFF_MIN_WIDTH, (room - 2) // max(1, len(c.rows)))
        mark_differences(t, cells, wrapped(c.rows[0]) if c.rows else "")
        for j in range(t.columnCount()):
            t.setColumnWidth(j, share)
        t.resizeRowsToContents()

    def _show_chart(self, index: int) -> None:
        spec = self.charts[index] if 0 <= index < len(self.charts) else None
        self.chart.show_spec(spec)

    def ask_export(self, fmt: str) -> None:
        if self.comparison is None:
            return
        ext = fmt.removeprefix("pivot-")
        path = ask_export_path(self, "Export", f"disklab-comparison.{ext}", ext)
        if path:
            self.wb.status.emit(f"Exported to {self.export(fmt, path)}")

    def export(self, fmt: str, path: str) -> str:
        """Write what the page shows: png/svg (the chart shown, as core.results.svg draws
        it), pivot-csv/pivot-md/pivot-json (the pivot), csv/md/json (the comparison against
        the baseline), html (the pivot, the comparison, their charts, the config diff)."""
        if self.comparison is None or self.pivot is None:
            raise ValueError("nothing compared yet")
        if fmt in ("png", "svg"):
            index = self.chart_pick.currentIndex()
            if not 0 <= index < len(self.charts):
                raise ValueError("no chart to export")
            write_chart(self.charts[index], path)
            return path
        if fmt.startswith("pivot-"):
            with open(path, "w", encoding="utf-8") as fp:
                fp.write(pivot_text(self.pivot, fmt.removeprefix("pivot-")))
            return path
        if fmt == "html":
            with open(path, "w", encoding="utf-8") as fp:
                fp.write(compare_page_html(self.pivot, self.comparison, self.sessions,
                                           self.diff))
            return path
        write_comparison(self._library(), [int(s["id"]) for s in self.sessions],
                         self.baseline.currentData(), path, fmt,
                         all_metrics=True if fmt in ("csv", "json") else
                         self.all_metrics.isChecked(), alpha=self.alpha.value(),
                         include_partial=self.include_partial.isChecked())
        return path


def session_picker(page: ComparePage) -> QWidget:
    """The left column: the sessions to tick, the baseline and the options, in
    PICKER_WIDTH px: each long text elided or short, the whole of it in its tooltip."""
    left = QVBoxLayout()
    left.setContentsMargins(0, 0, 0, 0)
    pick = QLabel("<b>Sessions</b>")
    pick.setToolTip("Tick two or more sessions, or one with several configurations")
    left.addWidget(pick)
    page.list = QListWidget()
    # a long session name is cut with '…' to the column's width (whole in its tooltip),
    # never a scroll bar or a wider column
    page.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    page.list.setTextElideMode(Qt.TextElideMode.ElideRight)
    page.list.setToolTip("Tick two or more sessions, or one with several configurations")
    left.addWidget(page.list, 1)
    left.addWidget(QLabel("Baseline"))
    page.baseline = QComboBox()
    page.baseline.setSizeAdjustPolicy(
        QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    page.baseline.setMinimumContentsLength(8)
    page.baseline.activated.connect(lambda _i: page.comparison and page.compare())
    page.baseline.currentIndexChanged.connect(
        lambda _i: page.baseline.setToolTip(page.baseline.currentText()))
    left.addWidget(page.baseline)
    page.all_metrics = QCheckBox("all metrics")
    page.all_metrics.setToolTip("Every figure as a column: percentiles, per process, CPU")
    page.all_metrics.toggled.connect(lambda _on: page.comparison and page.compare())
    left.addWidget(page.all_metrics)
    page.include_partial = QCheckBox("include partial runs")
    page.include_partial.setToolTip(
        "Runs that did not complete (cancelled, failed) are kept and shown, but left out "
        "of the means, the tests and the charts unless this is ticked.")
    page.include_partial.toggled.connect(lambda _on: page.comparison and page.compare())
    left.addWidget(page.include_partial)
    alpha_row = QHBoxLayout()
    alpha_row.addWidget(QLabel("Level α"))
    page.alpha = QDoubleSpinBox()
    page.alpha.setDecimals(3)
    page.alpha.setRange(0.001, 0.5)
    page.alpha.setSingleStep(0.01)
    page.alpha.setValue(ALPHA)
    page.alpha.setToolTip("A difference is better or worse only when Welch's t-test gives "
                          "p < α and the (1 - α) confidence interval excludes zero.")
    page.alpha.valueChanged.connect(lambda _v: page.comparison and page.compare())
    alpha_row.addWidget(page.alpha)
    left.addLayout(alpha_row)
    go = QPushButton("Compare")
    go.clicked.connect(page.compare)
    left.addWidget(go)
    refresh = QPushButton("Refresh list")
    refresh.clicked.connect(page.refresh)
    left.addWidget(refresh)
    host = QWidget()
    host.setLayout(left)
    host.setMaximumWidth(340)  # the tables need the width more than the session list
    return host
