"""Run page: start, watch live and cancel. The heart of the window.

Events arrive from the RunWorker in batches (RunController drains its queue once per refresh
interval: 1 s, or 5 s in the low-overhead mode kept in QSettings). Samples go into the plots'
numpy buffers, log lines into a pending list and the latest progress aside; after each batch
(`drained`) everything is drawn in the same wake-up of the GUI thread: bars, the large rate
figures, the log and the plots (a zoom at once), so a chatty tool cannot flood the GUI thread
and watching a run costs little CPU (bench figure 2). The overall bar and ETA are the core's
(core.run.progress, over every case x repeat, by time for time-based cases). The case table fills
as cases finish, with mean ± stddev over the repeats done so far. Esc asks to cancel from any
page while a run goes.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import Any

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QKeySequence,
    QPainter,
    QShortcut,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QScrollBar,
    QSizePolicy,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from disklab.core.library import Library
from disklab.core.privilege import password_needed
from disklab.core.results.labels import case_titles
from disklab.core.results.limits import limits_text, limits_tip
from disklab.core.results.live import LiveResults
from disklab.core.run.event_text import EventText, notice_text
from disklab.core.run.live_rates import app_rate_blind_spot
from disklab.core.run.progress import readable_line
from disklab.core.run.resume import Resumption, prepare_resume
from disklab.core.run.summary import PlanSummary, check_plan, format_duration
from disklab.core.standard_set import NAME as STANDARD_NAME
from disklab.core.standard_set import UNIT_NOTE, Tile, standard_tiles
from disklab.core.vocab.events import (
    CaseCancelled,
    CaseFailed,
    CaseFinished,
    CaseStarted,
    ConfigApplied,
    Event,
    LogLine,
    Notice,
    Progress,
    Sample,
    SessionFinished,
    SessionResumed,
    SessionStarted,
)
from disklab.core.vocab.units import human_rate
from disklab.gui.lazy import live_plots
from disklab.gui.state import Workbench
from disklab.gui.threads import run_in_background

LOG_LINES = 5000  # the log pane keeps this many lines; the library keeps everything
REFRESH = ((1, "Refresh every 1 s"), (5, "Every 5 s (low overhead)"))
REFRESH_KEY = "run/refresh_seconds"  # QSettings: the refresh rate a user chose, kept
BAR_STYLE = """
QProgressBar { border: 1px solid #8a8a8a; border-radius: 4px; background: #dfe3e8;
               color: #1a1a1a; text-align: center; min-height: 20px; max-height: 20px; }
QProgressBar::chunk { background: #6fa8dc; border-radius: 3px; }
"""  # a bar, even empty, never looks like a text field
# the large live figures beside the plots: label, tooltip, the series added up
RATES = (
    ("Application", "What the tool's processes read and wrote through read()/write() "
     "(rchar + wchar of its process tree, page cache included)", ("app_rchar_bps",
                                                                   "app_wchar_bps")),
    ("Device", "What reached the disk under the target (/proc/diskstats)",
     ("device_read_bps", "device_write_bps")),
    ("Tool's report", "The rate the tool itself prints (fio status, engine intervals, "
     "dd progress); none for tools that print no rate", ("tool_bps",)),
)
APPLICATION = RATES[0][0]
NOT_SEEN = "not seen"  # the Application figure of a tool whose I/O rchar/wchar do not count
COLS = ("#", "status", "result", "config", "case", "limited by")
STATUS, RESULT, LIMITED = 1, 2, 5
LIMITED_WIDTH = 180  # px: "device busy 99 %, 7.8 of 8…" (the whole verdict on hover)


class RunPage(QWidget):
    title = "Run"
    started = Signal()
    finished = Signal(object, str)  # session id, status
    case_done = Signal(str)  # case id

    def __init__(self, wb: Workbench, parent: QWidget | None = None):
        super().__init__(parent)
        self.wb = wb
        self.rows: dict[str, int] = {}
        self.repeats = 1
        self.live = LiveResults()  # the figures, made as the library makes them (core)
        self.done: dict[str, int] = {}  # complete runs per case
        self.cancelled_runs = self.failed_runs = 0
        self.failures: dict[str, str] = {}
        self.kept: dict[str, int] = {}  # a resumed session's complete repeats per case
        self.phase: dict[str, str | None] = {}
        self.status = "idle"
        self.password_dialog: QInputDialog | None = None  # open while sudo wants a password
        self.session_id: Any = None
        self.events_seen = 0
        self.progress_seen = 0
        self.event_text = EventText()  # the events' words (core.run.event_text)
        self._pending_log: list[str] = []
        self._pending_progress: Progress | None = None  # shown at the next _flush
        self._case_started = 0.0
        self._run_count = 0
        self._run_index = 0
        self._rates: dict[str, float] = {}  # series -> latest value
        self._rates_changed = False
        self._blind: str | None = None  # why the Application rate cannot see this case's I/O
        self.cancel_dialog: QMessageBox | None = None

        lay = QVBoxLayout(self)
        top = QHBoxLayout()
        self.start_btn = QPushButton("Start")
        self.start_btn.setToolTip("Run the plan (F5)")
        self.cancel_btn = QPushButton("Cancel")
        self.cancel_btn.setToolTip("Stop the tool and tear down, after a confirmation (Esc, "
                                   "from any page while a run goes)")
        self.cancel_btn.setEnabled(False)
        self.start_btn.clicked.connect(self.start)
        self.cancel_btn.clicked.connect(self.ask_cancel)
        # one line, elided: a long message never grows the row or moves the buttons; the
        # whole text is the tooltip, and a plan's problems go to the log below as well
        self.state_label = ElidedLabel("Ready.")
        self.refresh_box = QComboBox()
        for seconds, text in REFRESH:
            self.refresh_box.addItem(text, seconds)
        self.refresh_box.setToolTip(
            "How often the plots, bars, figures and log are drawn. Every 5 s costs the least "
            "CPU while a run goes: the choice for a benchmark purist. Samples are recorded "
            "as often either way.")
        top.addWidget(self.start_btn)
        top.addWidget(self.cancel_btn)
        top.addWidget(self.state_label, 1)
        top.addWidget(self.refresh_box)
        lay.addLayout(top)
        self.esc = self._escape_shortcut()

        bars = QHBoxLayout()
        self.overall = QProgressBar()
        self.overall.setRange(0, 1000)
        self.case_bar = QProgressBar()
        self.case_bar.setRange(0, 1000)
        for bar in (self.overall, self.case_bar):
            bar.setStyleSheet(BAR_STYLE)
        bars.addWidget(self.overall, 3)
        bars.addWidget(self.case_bar, 2)
        lay.addLayout(bars)
        self._idle_bars()

        rates = QHBoxLayout()
        self.rate_labels: dict[str, QLabel] = {}
        big = QFont()
        big.setPointSizeF(big.pointSizeF() * 1.8)
        big.setBold(True)
        for title, tip, _series in RATES:
            box = QVBoxLayout()
            caption = QLabel(title)
            caption.setToolTip(tip)
            value = QLabel("–")
            value.setFont(big)
            value.setToolTip(tip)
            # a fixed size: a new figure is a repaint of the label, never a new layout of
            # the page (a label whose size hint moves makes its layout run again)
            value.setFixedSize(value.fontMetrics().horizontalAdvance("9999.9 MiB/s") + 4,
                               value.sizeHint().height())
            box.addWidget(caption)
            box.addWidget(value)
            rates.addLayout(box)
            self.rate_labels[title] = value
        rates.addStretch(1)
        lay.addLayout(rates)
        self.tiles = StandardTiles()  # the standard set's eight figures; hidden otherwise
        self.tiles.hide()
        lay.addWidget(self.tiles)

        split = QSplitter(Qt.Orientation.Vertical)
        upper = QSplitter(Qt.Orientation.Horizontal)
        self.plots: Any = live_plots()  # a LivePlots once the page is first shown
        upper.addWidget(self.plots)
        self.table = QTableWidget(0, len(COLS))
        self.table.setHorizontalHeaderLabels(COLS)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.
                                                           ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        # what limited each case, just before its result (shown there, kept last in the
        # model): after the result it sat past a long result's right edge, out of sight at
        # 1280 px; its short words elided at a fixed width, the evidence in its tooltip
        header = self.table.horizontalHeader()
        header.moveSection(LIMITED, RESULT)
        header.setSectionResizeMode(LIMITED, QHeaderView.ResizeMode.Interactive)
        self.table.setColumnWidth(LIMITED, LIMITED_WIDTH)
        # one line a case, its end elided (the whole title on hover): a wrapped title was cut
        # in half by the row's height
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        upper.addWidget(self.table)
        upper.setSizes([640, 460])
        split.addWidget(upper)
        self.log = QPlainTextEdit()
        self.log.setReadOnly(True)
        self.log.setMaximumBlockCount(LOG_LINES)
        self.log.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        split.addWidget(self.log)
        split.setSizes([520, 160])
        lay.addWidget(split, 1)

        # log lines and progress are shown once a second, and only while a run goes: each
        # append repaints the log pane, and at 5 Hz that cost 0.14 s of CPU a minute (bench 2)
        # drawn once per batch of events the controller hands over (once a refresh interval),
        # and only while a run goes: each append repaints the log pane and each bar, and at
        # 5 Hz that cost 0.14 s of CPU a minute (bench 2); one wake-up draws everything
        wb.runs.drained.connect(self._flush)
        self.settings = QSettings()
        chosen = _seconds(self.settings.value(REFRESH_KEY, 1))
        self.refresh_box.setCurrentIndex(max(0, self.refresh_box.findData(chosen)))
        self.set_refresh(self.refresh_box.currentData())
        self.refresh_box.currentIndexChanged.connect(
            lambda _i: self.set_refresh(self.refresh_box.currentData(), keep=True))
        wb.runs.event.connect(self.on_event)
        wb.runs.error.connect(self._on_error)
        wb.runs.finished.connect(self._on_finished)
        wb.resume_requested.connect(self.resume)
        wb.run_requested.connect(self.start)

    # --- control
    def set_refresh(self, seconds: int, keep: bool = False) -> None:
        """Draw the page every `seconds` (plots, bars, figures, log): 1 s, or 5 s to take the
        least CPU from the machine under test. `keep`: remember it (QSettings)."""
        seconds = _seconds(seconds)
        self.refresh_seconds = seconds
        self.wb.runs.set_interval(seconds * 1000)
        self.plots.live_gap_ms = seconds * 1000
        if keep:
            self.settings.setValue(REFRESH_KEY, seconds)
        index = self.refresh_box.findData(seconds)
        if index >= 0 and index != self.refresh_box.currentIndex():
            self.refresh_box.setCurrentIndex(index)

    def start(self) -> None:
        if self.wb.runs.running:
            return
        self.start_btn.setEnabled(False)
        self._idle_bars()  # nothing of the previous run beside this check's verdict
        self.state_label.setText("Checking the plan…")
        text = self.wb.draft.to_text()
        library = str(self.wb.library_path)
        run_in_background(lambda: check_plan(text, library), self._start_checked, self)
        self._make_plots()  # while the plan is checked off this thread

    def _make_plots(self) -> None:
        """The live plots made now if they were not yet (numpy's import and the plots, once a
        window), before the tool starts: made when the Run page was first shown at the run's
        start, they took half a CPU (with pyqtgraph then) for the tool's first second of every
        window's first run (bench figure 1b, one CPU: 0.965 of the bare
        tool's throughput)."""
        if not getattr(self.plots, "made", True):
            self.plots.real()

    def _start_checked(self, summary: PlanSummary | None, error: Exception | None) -> None:
        if error is not None or summary is None or summary.errors or summary.plan is None:
            problems = [str(error)] if error else (summary.errors if summary else [])
            self.state_label.setText(f"The plan cannot run: {len(problems)} problem(s): "
                                     + "; ".join(problems[:6]))
            self.log.appendPlainText("\n".join(["[plan] the plan cannot run:",
                                                *(f"  {p}" for p in problems)]))
            self.start_btn.setEnabled(True)
            return
        if summary.needs_password:
            self._ask_password(lambda password: self._launch(summary, password))
            return
        self._launch(summary, None)

    def resume(self, session_id: int) -> None:
        """Take up an incomplete session of the library: checked off the GUI thread
        (core.run.resume: its status, the same machine and target, the same cases), then run like
        a plan, into the same views; only its runs without a complete result run."""
        if self.wb.runs.running:
            self.state_label.setText("A run is going: resume the session when it has ended.")
            return
        self.start_btn.setEnabled(False)
        self.state_label.setText(f"Checking session {session_id} before resuming it…")
        library = str(self.wb.library_path)
        run_in_background(lambda: _check_resume(library, session_id), self._resume_checked,
                          self)
        self._make_plots()

    def _resume_checked(self, checked: tuple[Resumption, bool] | None,
                        error: Exception | None) -> None:
        if error is not None or checked is None:
            self.state_label.setText(f"<b>Cannot resume:</b> {error}")
            self.start_btn.setEnabled(True)
            return
        resumption, needs_password = checked
        target = resumption.plan.target
        if target.destructive and not self._confirm_destroy(target.path):
            self.state_label.setText(f"Not resumed: {target.path} was not confirmed.")
            self.start_btn.setEnabled(True)
            return
        if needs_password:
            self._ask_password(lambda password: self._launch_resume(resumption, password))
            return
        self._launch_resume(resumption, None)

    def _confirm_destroy(self, path: str) -> bool:
        """A resumed format or device target destroys that device's data again: the user
        types its path, as for the first run (`disklab resume` wants --yes-destroy)."""
        text, ok = QInputDialog.getText(
            self, "Destroy the data on this device again?",
            f"Resuming formats or writes to {path} again; everything on it is lost.\n"
            "Type the device path to confirm:")
        return bool(ok and text.strip() == path)

    def _launch_resume(self, resumption: Resumption, password: str | None) -> None:
        self._reset()
        self.status = "running"
        self.cancel_btn.setEnabled(True)
        self.state_label.setText(f"Resuming session {resumption.session_id} "
                                 f"({resumption.name!r}): {len(resumption.runs)} run(s) to do…")
        self.wb.runs.start(resumption.plan, resumption.warnings, self.wb.library_path,
                           password, resume=resumption)
        self.overall.setFormat("overall: setting up")
        self._arm_escape()
        self.plots.driven = True  # redrawn by _flush, in the same wake-up
        self.started.emit()

    def _ask_password(self, then: Callable[[str], None]) -> None:
        """sudo wants a password for the session's privileged helper: asked once, here, in a
        window-modal dialog that does not block the event loop (rule 5)."""
        dialog = QInputDialog(self)
        dialog.setWindowTitle("Root is needed")
        dialog.setLabelText(
            "DiskLab makes, mounts and tests this target as root, through one privileged helper "
            "for the whole session.\nPassword for sudo:")
        dialog.setTextEchoMode(QLineEdit.EchoMode.Password)
        dialog.textValueSelected.connect(then)
        dialog.rejected.connect(self._not_started)
        dialog.finished.connect(dialog.deleteLater)
        self.password_dialog = dialog
        dialog.open()

    def _not_started(self) -> None:
        self.state_label.setText("Not started: root is needed and no password was given.")
        self.start_btn.setEnabled(True)

    def _launch(self, summary: PlanSummary, password: str | None) -> None:
        self._reset()
        self.status = "running"
        self.cancel_btn.setEnabled(True)
        self.state_label.setText(f"Running {summary.plan.name!r}…")
        self.wb.runs.start(summary.plan, tuple(summary.warnings), self.wb.library_path,
                           password)
        self.overall.setFormat("overall: setting up")  # not "no run going" beside Running
        self._arm_escape()
        self.plots.driven = True  # redrawn by _flush, in the same wake-up
        self.started.emit()

    def _escape_shortcut(self) -> QShortcut:
        """Esc asks to cancel from any page of the window while a run goes: the shortcut
        belongs to the window (Qt ignores a hidden widget's shortcuts, and this page is hidden
        while another one is shown); made again once the page is in its window."""
        shortcut = QShortcut(QKeySequence(Qt.Key.Key_Escape), self.window())
        shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
        shortcut.setEnabled(False)  # only while a run goes
        shortcut.activated.connect(self.ask_cancel)
        return shortcut

    def _arm_escape(self) -> None:
        if self.esc.parent() is not self.window():
            self.esc.setEnabled(False)
            self.esc.deleteLater()
            self.esc = self._escape_shortcut()
        self.esc.setEnabled(True)

    def ask_cancel(self) -> None:
        """Esc or Cancel: ask first (a long run is not thrown away by a stray key), in a
        window-modal box that leaves the event loop and the live view running."""
        if not self.wb.runs.running or self.status == "cancelling":
            return
        if self.cancel_dialog is not None:
            self.cancel_dialog.raise_()
            return
        box = QMessageBox(QMessageBox.Icon.Question, "Cancel the run?",
                          "Stop the tool and tear down?\nWhat finished is kept in the library; "
                          "the case that is running is kept as cancelled (partial) and a "
                          "resume runs it again.", parent=self)
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        box.button(QMessageBox.StandardButton.Yes).setText("Cancel the run")
        box.button(QMessageBox.StandardButton.No).setText("Keep running")
        box.setDefaultButton(QMessageBox.StandardButton.No)
        box.setEscapeButton(QMessageBox.StandardButton.No)
        box.finished.connect(self._cancel_answered)
        self.cancel_dialog = box
        box.open()

    def _cancel_answered(self, result: int) -> None:
        box, self.cancel_dialog = self.cancel_dialog, None
        if box is not None:
            box.deleteLater()
        if result == QMessageBox.StandardButton.Yes:
            self.cancel()

    def cancel(self) -> None:
        if self.wb.runs.running:
            self.status = "cancelling"
            self.state_label.setText("Cancelling: stopping the tool and tearing down…")
            self.cancel_btn.setEnabled(False)
            self.wb.runs.cancel()

    def _idle_bars(self) -> None:
        """The bars and figures with nothing of a previous run in them."""
        self.overall.setValue(0)
        self.overall.setFormat("overall: no run going")
        self.case_bar.setValue(0)
        self.case_bar.setFormat("case: –")
        self._rates.clear()
        self._rates_changed = False
        for label in getattr(self, "rate_labels", {}).values():
            label.setText("–")

    def _reset(self) -> None:
        self.plots.clear()
        self._idle_bars()
        self._run_index = self._run_count = 0
        self.table.setRowCount(0)
        self.rows.clear()
        self.live = LiveResults()
        self.done.clear()
        self.cancelled_runs = self.failed_runs = 0
        self.failures.clear()
        self.kept.clear()
        self.phase.clear()
        self.log.clear()
        self._pending_log.clear()
        self._pending_progress = None
        self.session_id = None
        self.events_seen = 0
        self.progress_seen = 0
        self.event_text = EventText()

    # --- events
    def on_event(self, ev: Event) -> None:
        self.events_seen += 1
        if not isinstance(ev, Sample | LogLine | Progress):
            # the event's line in the log, in the words the terminal and the Library use
            # (core.run.event_text): a failure's reason whatever the tool printed
            line = self.event_text.line(ev)
            if line is not None:
                self._pending_log.append(line)
        if isinstance(ev, Sample):
            self.plots.add_sample(ev.series, ev.t, ev.value)
            self.live.add_sample(ev.case_id, ev.repeat, ev.series, ev.value)
            if ev.series in RATE_SERIES:
                self._rates[ev.series] = ev.value
                self._rates_changed = True
        elif isinstance(ev, LogLine):
            if ev.stream != "result":  # the result file: in the library, not for reading
                text = readable_line(ev.text)
                self._pending_log.append(text if ev.stream != "stderr" else f"! {text}")
        elif isinstance(ev, Progress):
            self._on_progress(ev)
        elif isinstance(ev, CaseStarted):
            self._on_case_started(ev)
        elif isinstance(ev, CaseFinished):
            self._on_case_finished(ev)
        elif isinstance(ev, CaseFailed):
            self._on_case_failed(ev)
        elif isinstance(ev, CaseCancelled):
            self._set_cell(ev.case_id, STATUS, "cancelled (partial figures kept)",
                           QColor(190, 120, 0))
            self.live.add_partial(ev.case_id, ev.metrics)
            self.cancelled_runs += 1
            self._set_cell(ev.case_id, RESULT, self.result_text(ev.case_id))
        elif isinstance(ev, SessionStarted):
            self._on_session_started(ev)
        elif isinstance(ev, SessionResumed):
            self._on_session_resumed(ev)
        elif isinstance(ev, Notice):
            if ev.level != "info":
                self.state_label.setText(f"{ev.level}: {ev.message}")
        elif isinstance(ev, ConfigApplied):
            self.plots.add_marker(ev.t, ev.config, kind="config",
                                  detail=f"configuration {ev.config} applied")
        elif isinstance(ev, SessionFinished):
            self.status = ev.status
            self._take_progress()
            if ev.status == "finished":
                self.overall.setValue(1000)

    def _on_session_started(self, ev: SessionStarted) -> None:
        self.repeats = ev.repeats
        self.live = LiveResults(ev.cases, ev.repeats, ev.host)
        self.tiles.setVisible(ev.name == STANDARD_NAME)
        self.tiles.show_tiles(standard_tiles(()))
        self.table.setRowCount(len(ev.cases))
        titles, common = case_titles(ev.cases)  # what differs among the cases (core labels)
        self.table.setToolTip(common)
        for row, case in enumerate(ev.cases):
            self.rows[case.id] = row
            for col, text in enumerate((str(case.index + 1), "waiting", "", case.config,
                                        titles[row])):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                self.table.setItem(row, col, item)
        self._pending_log.extend(notice_text("warning", w) for w in ev.warnings)

    def _on_session_resumed(self, ev: SessionResumed) -> None:
        """The table as for a new session; each case says how many of its repeats the session
        already had complete (kept, not run again)."""
        self.repeats = ev.repeats
        self.live = LiveResults(ev.cases, ev.repeats, ev.host)
        self.table.setRowCount(len(ev.cases))
        todo: dict[str, int] = {}
        for case_id, _repeat in ev.runs:
            todo[case_id] = todo.get(case_id, 0) + 1
        titles, common = case_titles(ev.cases)
        self.table.setToolTip(common)
        for row, case in enumerate(ev.cases):
            self.rows[case.id] = row
            kept = self.kept[case.id] = ev.repeats - todo.get(case.id, 0)
            state = ("done (kept)" if not todo.get(case.id)
                     else f"waiting ({kept}/{ev.repeats} kept)" if kept else "waiting")
            for col, text in enumerate((str(case.index + 1), state, "", case.config,
                                        titles[row])):
                self.table.setItem(row, col, QTableWidgetItem(text))

    def _on_case_started(self, ev: CaseStarted) -> None:
        self._case_started = time.monotonic()
        # the figures and the tool's line are this case's from now: not the previous case's
        # last report while this one sets up, nor a line joining the two
        self._rates.clear()
        self._rates_changed = True
        self.plots.break_line("tool_bps", ev.t)
        self._blind = app_rate_blind_spot(ev.case.tool, ev.case.params)
        self._run_count = ev.run_count
        self._run_index = ev.run_index
        self.phase[ev.case.id] = None
        self._set_cell(ev.case.id, STATUS, f"running {ev.repeat}/{self.repeats}",
                       QColor(30, 110, 200))
        label = f"#{ev.case.index + 1}" + (f" r{ev.repeat}" if self.repeats > 1 else "")
        self.plots.add_marker(ev.t, label, detail=f"case {ev.case.index + 1}, repeat "
                              f"{ev.repeat}: {ev.case.title()} ({ev.case.config})")
        self._pending_log.append("$ " + " ".join(ev.argv))
        self._take_progress()  # the last of the case before: its bars, not this one's
        self.case_bar.setValue(0)
        self.case_bar.setFormat(f"case {ev.case.index + 1}: starting")
        if ev.run_count:
            self.state_label.setText(f"Run {ev.run_index + 1} of {ev.run_count}: "
                                     f"{ev.case.title()} (repeat {ev.repeat})")

    def _on_progress(self, ev: Progress) -> None:
        if ev.target is not None:  # one target's share (several targets): not the case's bars
            if ev.done_bytes is not None:  # but its curve: the tool's rate on that target
                self.plots.add_target_progress(ev.case_id, ev.target, ev.t, ev.done_bytes)
            return
        self.progress_seen += 1
        self._pending_progress = ev
        if ev.phase and ev.phase != self.phase.get(ev.case_id) and ev.phase != "done":
            if self.phase.get(ev.case_id) is not None:
                self.plots.add_marker(ev.t, ev.phase, kind="phase",
                                      detail=f"phase {ev.phase} of case {ev.case_id}")
            self.phase[ev.case_id] = ev.phase

    def _take_progress(self) -> None:
        """Show the progress kept aside now (before a case or the session moves the bars)."""
        ev, self._pending_progress = self._pending_progress, None
        if ev is not None:
            self._show_progress(ev)

    def _show_progress(self, ev: Progress) -> None:
        """The bars, their text inside them (no label beside them that grows), drawn in the
        refresh's one paint (see _quiet)."""
        with _quiet(self.case_bar), _quiet(self.overall):
            self._set_bars(ev)

    def _set_bars(self, ev: Progress) -> None:
        fraction = ev.fraction
        if fraction is None and ev.total_bytes and ev.done_bytes is not None:
            fraction = min(1.0, ev.done_bytes / ev.total_bytes)
        if fraction is not None:
            self.case_bar.setValue(int(1000 * fraction))
        eta = f" · ETA {format_duration(ev.eta)}" if ev.eta is not None else ""
        phase = f" · {ev.phase}" if ev.phase and ev.phase != "done" else ""
        share = f" {fraction * 100:.0f} %" if fraction is not None else ""
        self.case_bar.setFormat(f"case{share}{phase} · {format_duration(ev.elapsed)}"
                                f"{eta}")
        if ev.overall is not None:
            self.overall.setValue(int(1000 * ev.overall))
            runs = ev.runs_done if ev.runs_done is not None else self._run_index
            text = f"overall {ev.overall * 100:.0f} % · {runs} of {self._run_count} runs done"
            if ev.overall_eta is not None:
                text += f" · ETA {format_duration(ev.overall_eta)}"
            self.overall.setFormat(text)

    def _ended_text(self, status: str) -> str:
        """The overall bar once the session ended: its complete runs, and those cancelled or
        failed, counted as such (not "6 of 8 runs done" with one of them cancelled)."""
        total = self._run_count or self.repeats * len(self.rows)
        complete = sum(self.done.values())
        text = f"{status} · {complete} of {total} runs complete"
        if self.cancelled_runs:
            text += f" · {self.cancelled_runs} cancelled"
        if self.failed_runs:
            text += f" · {self.failed_runs} failed"
        return text

    def _show_rates(self) -> None:
        """The current rates as large figures, once per refresh and only when they moved."""
        if not self._rates_changed:
            return
        self._rates_changed = False
        for title, tip, series in RATES:
            values = [self._rates[s] for s in series if s in self._rates]
            text = human_rate(sum(values)) if values else "–"
            label = self.rate_labels[title]
            if title == APPLICATION:  # said, not a near-zero figure, when it cannot see
                text = NOT_SEEN if self._blind else text
                if label.toolTip() != (self._blind or tip):
                    label.setToolTip(self._blind or tip)
            if label.text() != text:
                label.setText(text)

    def _on_case_finished(self, ev: CaseFinished) -> None:
        self.live.add(ev.case_id, ev.repeat, ev.metrics, ev.duration)
        self.done[ev.case_id] = self.done.get(ev.case_id, 0) + 1
        runs = self.done[ev.case_id] + self.kept.get(ev.case_id, 0)
        state = "done" if runs >= self.repeats else f"done {runs}/{self.repeats}"
        self._set_cell(ev.case_id, STATUS, state, QColor(30, 140, 60))
        self._set_cell(ev.case_id, RESULT, self.result_text(ev.case_id))
        self._show_limits(ev.case_id)
        if self.tiles.isVisible():
            self.tiles.show_tiles(standard_tiles(self.live.all_rows()))
        self.case_done.emit(ev.case_id)

    def _on_case_failed(self, ev: CaseFailed) -> None:
        self.failures[ev.case_id] = ev.error
        self.failed_runs += 1
        self._set_cell(ev.case_id, STATUS, f"failed: {ev.error}", QColor(200, 40, 40))

    def _show_limits(self, case_id: str) -> None:
        """What limited the case's runs so far (core.results.limits, judged as each run
        ends), its evidence in the cell's tooltip."""
        limits = self.live.limits(case_id)
        if limits is None:
            return
        self._set_cell(case_id, LIMITED, limits_text(limits))
        row = self.rows.get(case_id)
        if row is not None:
            self.table.item(row, LIMITED).setToolTip(limits_tip(limits))

    def result_text(self, case_id: str) -> str:
        """A case's figures as the library will give them (core.results.live): per target
        where it has several, mean ± stddev over the repeats done."""
        return self.live.text(case_id)

    def _set_cell(self, case_id: str, col: int, text: str, colour: QColor | None = None) -> None:
        row = self.rows.get(case_id)
        if row is None:
            return
        item = self.table.item(row, col)
        if item is None:
            item = QTableWidgetItem()
            self.table.setItem(row, col, item)
        item.setText(text)
        if colour is not None:
            item.setForeground(colour)

    def _flush(self) -> None:
        """Timer slot: the log lines, the progress and the rates that arrived since the last
        tick."""
        self._take_progress()
        self._show_rates()
        self.plots.redraw()  # only if samples came or the view moved
        if self._pending_log:
            lines = self._pending_log[-LOG_LINES:]
            self._pending_log.clear()
            append_lines(self.log, lines)

    def _on_error(self, text: str) -> None:
        self._pending_log.append(f"[error] {text}")
        self.state_label.setText("The run stopped on an error: see the log.")

    def _on_finished(self, session_id: Any) -> None:
        self.plots.driven = False
        self._flush()
        self.session_id = session_id
        self.start_btn.setEnabled(True)
        self.cancel_btn.setEnabled(False)
        self.esc.setEnabled(False)
        if self.cancel_dialog is not None:  # the run ended while the question was open
            self.cancel_dialog.done(QMessageBox.StandardButton.No)
        if self.status == "cancelling":  # the user's cancel, even if no end event came
            self.status = "cancelled"
        elif self.status == "running":
            self.status = "failed"
        self.overall.setFormat(self._ended_text(self.status))
        for label in self.rate_labels.values():
            label.setText("–")
        failed = len(self.failures)
        text = {"finished": "Finished.", "cancelled": "Cancelled; what finished is kept.",
                "failed": f"Finished with {failed} failed case(s)."}.get(self.status,
                                                                         self.status)
        self.state_label.setText(f"{text} Session {session_id} is in the library.")
        self.plots.redraw()
        self.wb.changed("added", [session_id] if session_id is not None else [])
        self.finished.emit(session_id, self.status)


def _check_resume(library: str, session_id: int) -> tuple[Resumption, bool]:
    """On a pool thread: may the session resume (its own library connection: SQLite
    connections stay on their thread), and will sudo want a password."""
    with Library.open(library) as lib:
        resumption = prepare_resume(lib, session_id, library_path=library)
    return resumption, password_needed(resumption.plan)


RATE_SERIES = frozenset(s for _t, _tip, series in RATES for s in series)


@contextlib.contextmanager
def _quiet(widget: QWidget) -> Iterator[None]:
    """Changes to `widget` drawn with the window's next paint, not at once: QProgressBar's
    setValue repaints synchronously, and each such repaint was a paint and flush of its own,
    with the page's and the window's backgrounds under it, twice per bar per refresh (bench
    figure 2: 125 bar paints in 30 s for 30 refreshes)."""
    widget.setUpdatesEnabled(False)
    try:
        yield
    finally:
        widget.setUpdatesEnabled(True)  # posts one update(): painted with everything else


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


def _seconds(value: object) -> int:
    """A refresh interval from QSettings (a string on some platforms): 1 or 5, else 1."""
    try:
        seconds = int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return 1
    return seconds if seconds in {s for s, _t in REFRESH} else 1


class ElidedLabel(QLabel):
    """One line of text that never widens its row: cut with '…' to the room it has, the whole
    text in the tooltip."""

    def __init__(self, text: str = "", parent: QWidget | None = None):
        super().__init__(text, parent)
        self.setMinimumWidth(40)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)

    def setText(self, text: str) -> None:
        super().setText(text)
        self.setToolTip(text if len(text) > 60 else "")

    def paintEvent(self, _event: object) -> None:
        painter = QPainter(self)
        metrics = self.fontMetrics()
        shown = metrics.elidedText(" ".join(self.text().split()), Qt.TextElideMode.ElideRight,
                                   self.width())
        painter.drawText(self.rect(), int(Qt.AlignmentFlag.AlignVCenter
                                          | Qt.AlignmentFlag.AlignLeft), shown)


class StandardTiles(QWidget):
    """The standard set's eight figures as large tiles, as KDiskMark shows them: a column per
    test, read above write, each filling in as its case finishes (mean of the repeats so far,
    MB/s as KDiskMark computes it, and IOPS)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setSpacing(4)
        big = QFont()
        big.setPointSizeF(big.pointSizeF() * 2.0)
        big.setBold(True)
        self.labels: dict[tuple[str, str], tuple[QLabel, QLabel]] = {}
        for col, tile in enumerate(standard_tiles(())[::2]):
            for row, direction in enumerate(("read", "write")):
                box = QWidget()
                box.setStyleSheet("background:#eef3f8; border-radius:4px;")
                v = QVBoxLayout(box)
                v.setContentsMargins(6, 2, 6, 2)
                v.setSpacing(0)
                v.addWidget(QLabel(f"{tile.test} {direction}"))
                value = QLabel("–")
                value.setFont(big)
                detail = QLabel("MB/s")
                detail.setToolTip(UNIT_NOTE)
                v.addWidget(value)
                v.addWidget(detail)
                grid.addWidget(box, row, col)
                self.labels[(tile.test, direction)] = (value, detail)
        self.setToolTip(UNIT_NOTE)

    def show_tiles(self, tiles: list[Tile]) -> None:
        for tile in tiles:
            value, detail = self.labels[(tile.test, tile.direction)]
            value.setText(tile.text)
            detail.setText(tile.detail)

    def shown(self) -> dict[tuple[str, str], str]:
        """What each tile says (its figure), for whoever reads the page."""
        return {key: value.text() for key, (value, _detail) in self.labels.items()}
