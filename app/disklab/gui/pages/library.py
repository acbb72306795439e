"""Library page: every session, sortable and filterable; a session's results, plan, host facts,
warnings and transcripts; notes and tags; delete; run again; resume an incomplete session in
place; compare; export. Runs that did not complete are shown but left out of the means and
charts unless "include partial runs" is ticked; the heading says how many were left out and why.

Library reads are short SQLite queries on the GUI thread's own connection (the run's writes
happen on the worker's connection, in WAL mode, so they never block these reads).
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import QMimeData, QSortFilterProxyModel, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from disklab.core.importing import ImportReport, import_paths
from disklab.core.library.schema import RESUMABLE
from disklab.core.plan.draft import PlanDraft
from disklab.core.results.charts import (
    ChartSpec,
    fio_log_charts,
    session_charts,
    thinned_samples,
)
from disklab.core.results.documents import write_session
from disklab.core.results.limits import session_limits
from disklab.core.results.partial import SessionResults, session_results
from disklab.core.results.svg import write_svgs
from disklab.core.results.tables import RESULTS_HEADER, results_table
from disklab.core.run.event_text import notice_text, stored_line
from disklab.core.vocab.errors import DisklabError
from disklab.gui.chart import ChartWidget
from disklab.gui.export import ask_export_path, export_button, write_chart, write_charts
from disklab.gui.models import SESSION_COLUMNS, SessionPlaces, sessions_model, when
from disklab.gui.state import Workbench

PARAMS_WIDTH = 220  # px: the widest the parameters column opens (elided, full in the tooltip)


def dropped_paths(mime: QMimeData) -> list[str]:
    """The local files and folders of a drop (a bundle, a library, tool outputs)."""
    if not mime.hasUrls():
        return []
    return [url.toLocalFile() for url in mime.urls() if url.isLocalFile()]


HEADING_LINES = 5  # the session heading's height: name, resumes and the notes under it


EXPORTS = (("html", "HTML report…"), ("csv", "CSV table…"), ("md", "Markdown…"),
           ("png", "Chart PNG…"), ("svg", "Chart SVG…"))
DEVICE_WIDTH = 180  # px: the Library list's device column

class LibraryPage(QWidget):
    title = "Library"
    session_opened = Signal(object)

    def __init__(self, wb: Workbench, parent: QWidget | None = None):
        super().__init__(parent)
        self.wb = wb
        self.current: dict[str, Any] | None = None
        self.results: SessionResults = SessionResults([])
        self.places = SessionPlaces(self._library)
        lay = QVBoxLayout(self)
        top = QHBoxLayout()
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter: name, device, tool, status, tag…")
        self.filter.setClearButtonEnabled(True)
        top.addWidget(self.filter, 1)
        refresh = QPushButton("Refresh")
        refresh.clicked.connect(self.refresh)
        top.addWidget(refresh)
        lay.addLayout(top)

        split = QSplitter(Qt.Orientation.Vertical)
        self.view = self._sessions_view()
        split.addWidget(self.view)

        detail = QWidget()
        dl = QVBoxLayout(detail)
        dl.setContentsMargins(0, 0, 0, 0)
        self.heading = self._heading()
        dl.addWidget(self.heading)
        dl.addLayout(self._notes_row())
        dl.addLayout(self._actions_row())
        self.tabs = self._tabs()
        dl.addWidget(self.tabs, 1)
        split.addWidget(detail)
        split.setSizes([260, 420])
        lay.addWidget(split, 1)
        wb.library_changed.connect(lambda _change: self.refresh())  # its list shows them all
        wb.units_changed.connect(  # the open session in the units now chosen
            lambda _s: self.current is not None and self.open_session(self.current["id"]))
        self.refresh()

    def _sessions_view(self) -> QTableView:
        """The library's sessions, newest first, sorted by a column's value and filtered by the
        filter's text in any column."""
        self.model = sessions_model(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(Qt.ItemDataRole.UserRole)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.proxy.setFilterKeyColumn(-1)
        self.filter.textChanged.connect(self.proxy.setFilterFixedString)
        view = QTableView()
        view.setModel(self.proxy)
        view.setSortingEnabled(True)
        view.sortByColumn(0, Qt.SortOrder.DescendingOrder)
        view.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        view.verticalHeader().hide()
        header = view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        # a several-target session's devices ("a: /dev/loop3 (ext4), b: ...") at a width of
        # their own, elided in the middle (whole on hover): status and tags stay in sight
        device = next(i for i, (name, _f) in enumerate(SESSION_COLUMNS) if name == "device")
        header.setSectionResizeMode(device, QHeaderView.ResizeMode.Interactive)
        view.setColumnWidth(device, DEVICE_WIDTH)
        view.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        view.setWordWrap(False)
        view.selectionModel().selectionChanged.connect(self._selected)
        return view

    def _heading(self) -> QLabel:
        """The open session's heading, at a fixed height."""
        heading = QLabel("Select a session.")
        # wrapped to the room it has, never asking for more: a session's long "every case"
        # line made the window 1346 px wide, and that width was kept for the next start
        heading.setWordWrap(True)
        heading.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        heading.setMinimumWidth(1)
        # a fixed height (HEADING_LINES lines), the tabs below never move with its line count
        heading.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        heading.setFixedHeight(heading.fontMetrics().lineSpacing() * HEADING_LINES + 4)
        heading.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        return heading

    def _notes_row(self) -> QHBoxLayout:
        """The session's notes and tags, and whether partial runs count."""
        edit = QHBoxLayout()
        self.notes = QLineEdit()
        self.notes.setPlaceholderText("notes")
        self.tags = QLineEdit()
        self.tags.setPlaceholderText("tags, comma separated")
        save = QPushButton("Save notes and tags")
        save.clicked.connect(self.save_notes)
        edit.addWidget(self.notes, 3)
        edit.addWidget(self.tags, 2)
        edit.addWidget(save)
        self.include_partial = QCheckBox("include partial runs")
        self.include_partial.setToolTip(
            "Runs that did not complete (cancelled, failed, stopped early) are kept and shown, "
            "but left out of the means and charts unless this is ticked.")
        self.include_partial.toggled.connect(
            lambda _on: self.current and self.open_session(self.current["id"]))
        edit.addWidget(self.include_partial)
        return edit

    def _actions_row(self) -> QHBoxLayout:
        """What can be done with the open (or selected) sessions; the exports in one menu."""
        actions = QHBoxLayout()
        export, self.export_actions = export_button(EXPORTS, self.ask_export)
        self.buttons: dict[str, QPushButton] = {"export": export}
        for key, text, fn in (("rerun", "Run again", self.rerun),
                              ("resume", "Resume", self.resume),
                              ("compare", "Compare selected", self.compare_selected),
                              ("history", "History", self.show_history),
                              ("delete", "Delete…", self.delete)):
            self.buttons[key] = QPushButton(text)
            self.buttons[key].clicked.connect(fn)
        for key in ("rerun", "resume", "compare", "history", "export", "delete"):
            self.buttons[key].setEnabled(False)
            actions.addWidget(self.buttons[key])
        actions.addStretch(1)
        return actions

    def _tabs(self) -> QTabWidget:
        """The open session's results, charts, plan, host, warnings and transcripts."""
        tabs = QTabWidget()
        self.results_table = QTableWidget(0, len(RESULTS_HEADER))
        self.results_table.setHorizontalHeaderLabels(list(RESULTS_HEADER))
        self.results_table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        header = self.results_table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        # the parameters can be long: a capped column, elided in the middle, full text in the
        # tooltip, so the mean and the stddev are on screen at the default size
        header.setSectionResizeMode(RESULTS_HEADER.index("parameters"),
                                    QHeaderView.ResizeMode.Interactive)
        self.results_table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.results_table.setWordWrap(False)
        self.results_table.setSortingEnabled(True)
        header.setStretchLastSection(True)
        tabs.addTab(self.results_table, "Results")
        self.chart_host = chart_host = QWidget()
        self._charts_for: Any = None
        cl = QVBoxLayout(chart_host)
        self.chart_pick = QComboBox()
        self.chart_pick.currentIndexChanged.connect(self._show_chart)
        cl.addWidget(self.chart_pick)
        self.chart = ChartWidget()  # the SVG every export writes, as Compare's
        cl.addWidget(self.chart, 1)
        self.charts: list[ChartSpec] = []
        tabs.addTab(chart_host, "Charts")
        self.texts: dict[str, QPlainTextEdit] = {}
        for key, title in (("plan", "Plan"), ("host", "Host and filesystem"),
                           ("warnings", "Warnings and events"), ("transcript", "Transcripts")):
            t = QPlainTextEdit()
            t.setReadOnly(True)
            t.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
            tabs.addTab(t, title)
            self.texts[key] = t
        tabs.currentChanged.connect(
            lambda _i: tabs.currentWidget() is self.chart_host and self._load_charts())
        return tabs

    def _library(self) -> Any:
        return self.wb.library()  # the window's one Library

    def import_files(self, paths: list[str]) -> ImportReport | None:
        """Files dropped on the window (MainWindow.dropEvent, wherever they land): a bundle or
        another library merged, tool outputs (or a folder of them) imported, as `disklab
        import` does (core.importing); what happened is said above the session's details."""
        try:
            report = import_paths(self._library(), paths)
        except DisklabError as e:
            self.heading.setText(html.escape(f"Nothing imported: {e}"))
            return None
        self.wb.changed("added")  # the Library's list, Compare's list (sessions it shows stay)
        said = report.lines + [f"not imported: {p}" for p in report.problems]
        self.heading.setText("<br>".join(html.escape(line) for line in said[:12])
                             + (f"<br>… and {len(said) - 12} more" if len(said) > 12 else ""))
        return report

    def refresh(self) -> None:
        selected = self.current["id"] if self.current else None
        try:
            rows = self._library().list_sessions()
        except Exception as e:
            self.heading.setText(f"Cannot read the library {self.wb.library_path}: {e}")
            return
        self.model.set_rows(self.places.fill(rows))
        if selected is not None:
            self.select_session(selected)

    def select_session(self, session_id: Any) -> bool:
        for r, row in enumerate(self.model.rows):
            if row["id"] == session_id:
                index = self.proxy.mapFromSource(self.model.index(r, 0))
                self.view.selectRow(index.row())
                return True
        return False

    def selected_ids(self) -> list[int]:
        rows = {self.proxy.mapToSource(i).row() for i in self.view.selectionModel().selectedRows()}
        return [self.model.rows[r]["id"] for r in sorted(rows)]

    def _selected(self) -> None:
        ids = self.selected_ids()
        for b in self.buttons.values():
            b.setEnabled(bool(ids))
        self.buttons["compare"].setEnabled(bool(ids))
        self.buttons["resume"].setEnabled(False)
        if ids:
            self.open_session(ids[0])

    def open_session(self, session_id: int) -> None:
        lib = self._library()
        s = lib.session(session_id)
        self.current = s
        self.results = session_results(lib, session_id, self.include_partial.isChecked())
        status = s["status"]
        flag = " — interrupted: the app stopped during this run" if status == "interrupted" \
            else ""
        resumes = "".join(
            f"<br>resumed {when(r['t'])}: {r['runs']} run(s) ran again (it was "
            f"{r['previous_status']})" for r in lib.resumes(session_id))
        self.heading.setText(f"<b>{s['id']}: {s['name']}</b> ({status}){flag}{resumes}")
        resumable = status in RESUMABLE and len(self.selected_ids()) <= 1
        self.buttons["resume"].setEnabled(resumable)
        self.buttons["resume"].setToolTip(
            "Run the case x repeat pairs without a complete result, in this session"
            if resumable else "Only one interrupted, cancelled or failed session resumes")
        self.notes.setText(s.get("notes") or "")
        self.tags.setText(", ".join(s.get("tags") or []))
        self._fill_results()
        self.charts = []
        self._charts_for = None
        if self.tabs.currentWidget() is self.chart_host:
            self._load_charts()
        self.texts["plan"].setPlainText(s.get("plan_text") or "")
        self.texts["host"].setPlainText(json.dumps(s.get("host") or {}, indent=2, default=str))
        events = lib.events(session_id)
        # in the words the run showed them (core.run.event_text)
        lines = [notice_text("warning", w) for w in s.get("warnings") or []]
        lines += [stored_line(e) for e in events]
        self.texts["warnings"].setPlainText("\n".join(lines))
        self.texts["transcript"].setPlainText(_transcripts(lib, session_id))
        self.session_opened.emit(session_id)

    def _load_charts(self) -> None:
        """The session's charts, built when the Charts tab is first shown for it."""
        if not self.current or self._charts_for == self.current["id"]:
            return
        self._charts_for = self.current["id"]
        self.charts = self._session_charts(self.current["id"])
        self.chart_pick.blockSignals(True)
        self.chart_pick.clear()
        self.chart_pick.addItems([c.title for c in self.charts])
        self.chart_pick.blockSignals(False)
        self._show_chart(0)

    def _session_charts(self, session_id: int) -> list[ChartSpec]:
        lib = self._library()
        rows = session_results(lib, session_id, self.include_partial.isChecked()).rows
        return session_charts(rows, thinned_samples(lib, session_id)) + fio_log_charts(
            lib, session_id)

    def _show_chart(self, index: int) -> None:
        self.chart.show_spec(self.charts[index] if 0 <= index < len(self.charts) else None)

    def _fill_results(self) -> None:
        # the text `disklab show` and the exports write, with what limited each row
        limits = session_limits(self._library(), self.current["id"]) if self.current else {}
        table = results_table(self.results, limits=limits)
        for line in table.note.splitlines():  # shared parameters, runs left out, noise
            self.heading.setText(self.heading.text() + "<br>" + html.escape(line))
        t = self.results_table
        t.setSortingEnabled(False)
        t.setColumnCount(len(table.header))
        t.setHorizontalHeaderLabels(list(table.header))
        t.setRowCount(len(table.rows))
        for i, cells in enumerate(table.rows):
            for j, text in enumerate(cells):
                item = QTableWidgetItem(text)
                tip = table.tips[i][j] if i < len(table.tips) else ""
                item.setToolTip(f"{text}\n{tip}" if tip else text)
                t.setItem(i, j, item)
        t.setSortingEnabled(True)
        self.heading.setToolTip(self.heading.text())  # all of it, beyond its fixed lines
        params = RESULTS_HEADER.index("parameters")
        t.resizeColumnToContents(params)
        t.setColumnWidth(params, min(t.columnWidth(params), PARAMS_WIDTH))

    def save_notes(self) -> None:
        if not self.current:
            return
        lib = self._library()
        sid = self.current["id"]
        lib.set_notes(sid, self.notes.text())
        wanted = {t.strip() for t in self.tags.text().split(",") if t.strip()}
        have = set(self.current.get("tags") or [])
        for tag in wanted - have:
            lib.add_tag(sid, tag)
        for tag in have - wanted:
            lib.remove_tag(sid, tag)
        self.current = lib.session(sid)
        self.wb.changed("edited", [sid])

    def delete(self, confirm: bool = True) -> None:
        ids = self.selected_ids()
        if not ids:
            return
        if confirm:
            answer = QMessageBox.question(
                self, "Delete sessions",
                f"Delete {len(ids)} session(s) ({', '.join(map(str, ids))}) with their results, "
                "samples and transcripts? This cannot be undone.")
            if answer != QMessageBox.StandardButton.Yes:
                return
        lib = self._library()
        for sid in ids:
            lib.delete_session(sid)
        self.current = None
        self.wb.changed("deleted", ids)

    def rerun(self) -> None:
        if not self.current or not self.current.get("plan_text"):
            return
        try:
            draft = PlanDraft.from_text(self.current["plan_text"], self.current.get("plan_path"))
        except ValueError as e:
            QMessageBox.warning(self, "Cannot re-run", str(e))
            return
        self.wb.set_draft(draft)
        self.wb.page_requested.emit("matrix")

    def resume(self) -> None:
        """Resume the session on the Run page (it checks first, and says why not)."""
        if not self.current or self.current["status"] not in RESUMABLE:
            return
        self.wb.page_requested.emit("run")
        self.wb.resume_requested.emit(int(self.current["id"]))

    def show_history(self) -> None:
        """This plan on this target over time: the History page (core.history)."""
        if self.current:
            self.wb.history_requested.emit(int(self.current["id"]))

    def compare_selected(self) -> None:
        ids = self.selected_ids()
        if ids:  # one session: its configurations side by side
            self.wb.compare_requested.emit(ids)

    def ask_export(self, fmt: str) -> None:
        if not self.current:
            return
        sid = self.current["id"]
        path = ask_export_path(self, f"Export session {sid}", f"disklab-session-{sid}.{fmt}",
                               fmt)
        if path:
            self.wb.status.emit(f"Exported session {sid} to {self.export(fmt, path)}")

    def export(self, fmt: str, path: str) -> str:
        sid = self.current["id"] if self.current else None
        if sid is None:
            raise ValueError("no session selected")
        if fmt in ("html", "csv", "md", "json"):
            write_session(self._library(), sid, path, fmt,
                          include_partial=self.include_partial.isChecked())
        elif fmt in ("png", "svg") and Path(path).suffix:
            self._load_charts()
            index = self.chart_pick.currentIndex()
            if not 0 <= index < len(self.charts):
                raise ValueError("this session has no chart")
            write_chart(self.charts[index], path)  # the chart shown, as every export draws it
        elif fmt == "svg":
            write_svgs(self._session_charts(sid), path)
        else:
            write_charts(self._session_charts(sid), path, fmt)
        return path


def _transcripts(lib: Any, session_id: int, limit: int = 4000) -> str:
    """The session's transcripts for the Transcripts tab: the setup's and teardown's lines,
    then each run's command and output, cut after `limit` lines (the library keeps them
    all)."""
    out: list[str] = []
    session = lib.transcript(session_id, "", 0)  # lines of no case: setup and teardown
    if session:
        out.append("=== the session: setup, teardown, commands run as root")
        out += [("# " if stream == "helper" else "") + text for _t, stream, text in session]
    for run in lib.runs(session_id):
        out.append(f"=== {run['case_id']} repeat {run['repeat']}: {run['status']}"
                   + (f" ({run['error']})" if run.get("error") else ""))
        out.append("$ " + " ".join(run.get("argv") or []))
        for _t, stream, text in lib.transcript(session_id, run["case_id"], run["repeat"]):
            out.append(("! " if stream == "stderr" else "") + text)
            if len(out) > limit:
                out.append("… (the rest is in the library; export JSON for everything)")
                return "\n".join(out)
    return "\n".join(out)
