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

The page's parts have homes of their own: the checks and questions before a run
(gui.run_launch), the cancel question (gui.run_cancel), the bars (gui.run_bars), the large
figures (gui.rate_figures), the standard set's tiles (gui.standard_tiles), the cases' table
(gui.case_table) and the log pane (gui.run_log). The run's books (runs done, kept, failed,
cancelled, each case's phase, the session's state) are gui.run_model's, which takes the events
and says what to draw; this module draws it (the page is the model's RunView).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from disklab.core.results.limits import Limit
from disklab.core.run.live_rates import app_rate_blind_spot, app_rate_pseudo_end
from disklab.core.standard_set import standard_tiles
from disklab.core.vocab.events import CaseStarted, Event, Progress, Sample
from disklab.core.vocab.model import Case
from disklab.gui.case_table import RESULT, STATUS, CaseTable
from disklab.gui.elided_label import ElidedLabel
from disklab.gui.lazy import live_plots
from disklab.gui.rate_figures import RateFigures
from disklab.gui.run_bars import RunBars
from disklab.gui.run_cancel import CancelQuestion
from disklab.gui.run_launch import Launch, Launcher
from disklab.gui.run_log import LOG_LINES, append_lines, new_log
from disklab.gui.run_model import CANCELLED, DONE, FAILED, RUNNING, RunModel
from disklab.gui.standard_tiles import StandardTiles
from disklab.gui.state import Workbench

REFRESH = ((1, "Refresh every 1 s"), (5, "Every 5 s (low overhead)"))
REFRESH_KEY = "run/refresh_seconds"  # QSettings: the refresh rate a user chose, kept
TONES = {RUNNING: QColor(30, 110, 200), DONE: QColor(30, 140, 60), FAILED: QColor(200, 40, 40),
         CANCELLED: QColor(190, 120, 0)}  # a case row's status, by the model's tone


class RunPage(QWidget):
    title = "Run"
    started = Signal()
    finished = Signal(object, str)  # session id, status
    case_done = Signal(str)  # case id

    def __init__(self, wb: Workbench, parent: QWidget | None = None):
        super().__init__(parent)
        self.wb = wb
        self.model = RunModel()  # the run's bookkeeping, fed by its events (gui.run_model)
        self.left_out: str | None = None  # a series not drawn for the running case
        self.launcher = Launcher(wb, self)
        self.launcher.go.connect(self._launch)
        self.launcher.refused.connect(self._refused)
        self.cancelling = CancelQuestion(self, self.ask_cancel)
        self.cancelling.confirmed.connect(self.cancel)

        lay = QVBoxLayout(self)
        lay.addLayout(self._top_row())
        self.bars = RunBars()
        lay.addLayout(self.bars.layout())
        self.figures = RateFigures()
        lay.addLayout(self.figures.layout())
        self.tiles = StandardTiles()  # the standard set's eight figures; hidden otherwise
        self.tiles.hide()
        lay.addWidget(self.tiles)
        lay.addWidget(self._views(), 1)

        # drawn once per batch of events the controller hands over (once a refresh interval),
        # and only while a run goes: each append repaints the log pane and each bar, and at
        # 5 Hz that cost 0.14 s of CPU a minute (bench 2); one wake-up draws everything
        wb.runs.drained.connect(self.flush)
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
        wb.units_changed.connect(lambda _system: self.units_changed())

    # what the run has come to, as the model keeps it
    @property
    def status(self) -> str:
        return self.model.status

    @property
    def session_id(self) -> Any:
        return self.model.session_id

    def _top_row(self) -> QHBoxLayout:
        """Start, Cancel, the state line and the refresh rate."""
        top = QHBoxLayout()
        self.start_btn = QPushButton("Start")
        self.start_btn.setToolTip("Run the plan (F5)")
        self.cancel_btn = QPushButton("Cancel")
        self.cancel_btn.setToolTip("Stop the tool and tear down, after a confirmation (Esc, "
                                   "from any page while a run goes)")
        self.cancel_btn.setEnabled(False)
        self.start_btn.clicked.connect(lambda: self.start())
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
        return top

    def _views(self) -> QSplitter:
        """The live plots beside the cases' table, above the log."""
        split = QSplitter(Qt.Orientation.Vertical)
        upper = QSplitter(Qt.Orientation.Horizontal)
        self.plots: Any = live_plots()  # a LivePlots once the page is first shown
        upper.addWidget(self.plots)
        self.table = CaseTable()
        self.rows = self.table.rows
        upper.addWidget(self.table)
        upper.setSizes([580, 520])  # the table's config, case, status and verdict in sight
        split.addWidget(upper)
        self.log = new_log()
        split.addWidget(self.log)
        split.setSizes([520, 160])
        return split

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

    def units_changed(self) -> None:
        """The units choice changed: the tiles, the large figures, the cases' results and
        the plots written again in it (the log keeps the lines as they were written)."""
        self.tiles.units_changed()
        self.figures.units_changed()
        for case_id in self.rows:
            text = self.model.live.text(case_id)
            if text:
                self.table.set_cell(case_id, RESULT, text)
        if getattr(self.plots, "made", False):  # plots made later are made in these units
            from disklab.gui.plots import units_changed

            units_changed(self.plots.real())

    def start(self, text: str | None = None) -> None:
        """Start, F5 or a page's one-click run: the plan checked (gui.run_launch), then run.
        `text`: a plan of its own (the standard set); None: the draft being edited."""
        if self.wb.runs.running:
            return
        self.start_btn.setEnabled(False)
        self._idle_bars()  # nothing of the previous run beside this check's verdict
        self.state_label.setText("Checking the plan…")
        self.launcher.check_plan(text)
        self._make_plots()  # while the plan is checked off this thread

    def resume(self, session_id: int) -> None:
        """Take up an incomplete session of the library: checked off the GUI thread
        (core.run.resume: its status, the same machine and target, the same cases), then run like
        a plan, into the same views; only its runs without a complete result run."""
        if self.wb.runs.running:
            self.state_label.setText("A run is going: resume the session when it has ended.")
            return
        self.start_btn.setEnabled(False)
        self.state_label.setText(f"Checking session {session_id} before resuming it…")
        self.launcher.check_resume(session_id)
        self._make_plots()

    def _make_plots(self) -> None:
        """The live plots made now if they were not yet (numpy's import and the plots, once a
        window), before the tool starts: made when the Run page was first shown at the run's
        start, they took half a CPU (with pyqtgraph then) for the tool's first second of every
        window's first run (bench figure 1b, one CPU: 0.965 of the bare
        tool's throughput)."""
        if not getattr(self.plots, "made", True):
            self.plots.real()

    def _refused(self, text: str, log_text: str) -> None:
        """Nothing runs: why, on the state line (and the plan's problems in the log)."""
        self.state_label.setText(text)
        if log_text:
            self.log.appendPlainText(log_text)
        self.start_btn.setEnabled(True)

    def _launch(self, launch: Launch) -> None:
        self._reset()
        self.model.launched()
        self.cancel_btn.setEnabled(True)
        self.state_label.setText(launch.text)
        self.wb.runs.start(launch.plan, launch.warnings, self.wb.library_path,
                           launch.password, resume=launch.resumption)
        self.bars.setting_up()
        self.cancelling.arm()
        self.plots.driven = True  # redrawn by flush, in the same wake-up
        self.started.emit()

    def ask_cancel(self) -> None:
        """Esc or Cancel: ask first (gui.run_cancel), while a run goes and is not already
        being cancelled."""
        if self.wb.runs.running and self.model.status != "cancelling":
            self.cancelling.open()

    def cancel(self) -> None:
        if self.wb.runs.running:
            self.model.cancelling()
            self.state_label.setText("Cancelling: stopping the tool and tearing down…")
            self.cancel_btn.setEnabled(False)
            self.wb.runs.cancel()

    def _idle_bars(self) -> None:
        """The bars and figures with nothing of a previous run in them."""
        self.bars.idle()
        self.figures.clear()

    def _reset(self) -> None:
        self.plots.clear()
        self._idle_bars()
        self.bars.run_index = self.bars.run_count = 0
        self.table.clear_cases()
        self.model.reset()
        self.left_out = None
        self.log.clear()

    # --- events: the model keeps the books, and the page draws what it says (RunView)
    def on_event(self, ev: Event) -> None:
        self.model.take(ev, self)

    def sample(self, ev: Sample) -> None:
        if ev.series != self.left_out:  # a tool's copies of a pseudo-device: not drawn
            self.plots.add_sample(ev.series, ev.t, ev.value)
            self.figures.take(ev.series, ev.value)

    def target_progress(self, ev: Progress) -> None:
        self.plots.add_target_progress(ev.case_id, ev.target, ev.t, ev.done_bytes)

    def marker(self, t: float, label: str, kind: str, detail: str) -> None:
        self.plots.add_marker(t, label, kind=kind, detail=detail)

    def state_text(self, text: str) -> None:
        self.state_label.setText(text)

    def cases(self, cases: Sequence[Case], states: Mapping[str, str],
              standard: bool | None) -> None:
        """The table of the session's cases; a new session of the standard set shows its
        tiles (`standard` None: a resumed session, whose tiles stay as they are)."""
        if standard is not None:
            self.tiles.setVisible(standard)
            self.tiles.show_tiles(standard_tiles(()))
        self.table.fill(cases, dict(states))

    def case_starting(self, ev: CaseStarted, status: str, progress: Progress | None) -> None:
        # the figures and the tool's line are this case's from now: not the previous case's
        # last report while this one sets up, nor a line joining the two
        self.figures.new_case(app_rate_blind_spot(ev.case.tool, ev.case.params))
        # the Application series of a tool's copies of a pseudo-device (dd's reads of
        # /dev/zero beside its writes) is not I/O on the target: neither drawn nor added in
        pseudo = app_rate_pseudo_end(ev.case.tool, ev.case.params)
        for series in {self.left_out, pseudo and pseudo[0]} - {None}:
            self.plots.break_line(str(series), ev.t)  # no line across the case
        self.left_out = pseudo[0] if pseudo else None
        self.plots.break_line("tool_bps", ev.t)
        self.case_state(ev.case.id, status, RUNNING)
        self.bars.run_index, self.bars.run_count = ev.run_index, ev.run_count
        if progress is not None:
            self.bars.show(progress)
        self.bars.case_starting(ev.case.index + 1)

    def case_state(self, case_id: str, text: str, tone: str) -> None:
        self.table.set_cell(case_id, STATUS, text, TONES[tone])

    def case_result(self, case_id: str, text: str, limits: Sequence[Limit] | None) -> None:
        self.table.set_cell(case_id, RESULT, text)
        if limits is not None:
            self.table.set_limits(case_id, limits)

    def case_ended(self, case_id: str) -> None:
        if self.tiles.isVisible():
            self.tiles.show_tiles(standard_tiles(self.model.live.all_rows()))
        self.case_done.emit(case_id)

    def show_progress(self, ev: Progress) -> None:
        self.bars.show(ev)

    def session_finished(self, status: str) -> None:
        if status == "finished":
            self.bars.overall.setValue(1000)

    def flush(self) -> None:
        """The log lines, the progress and the rates that arrived since the last drawing.
        The controller's `drained` calls it once a refresh interval; a test calls it to see at
        once what the page shows of the events handed over so far."""
        progress = self.model.take_progress()
        if progress is not None:
            self.bars.show(progress)
        self.figures.show()
        self.plots.redraw()  # only if samples came or the view moved
        lines = self.model.take_log()
        if lines:
            append_lines(self.log, lines[-LOG_LINES:])

    def _on_error(self, text: str) -> None:
        self.model.error(text)
        self.state_label.setText("The run stopped on an error: see the log.")

    def _on_finished(self, session_id: Any) -> None:
        self.plots.driven = False
        self.flush()
        self.start_btn.setEnabled(True)
        self.cancel_btn.setEnabled(False)
        self.cancelling.disarm()  # and a question still open answered no
        text = self.model.ended(session_id)
        m = self.model
        self.bars.ended(m.status, m.repeats * len(self.rows), sum(m.done.values()),
                        m.cancelled_runs, m.failed_runs)
        self.figures.blank()
        self.state_label.setText(text)
        self.plots.redraw()
        self.wb.changed("added", [session_id] if session_id is not None else [])
        self.finished.emit(session_id, m.status)


def _seconds(value: object) -> int:
    """A refresh interval from QSettings (a string on some platforms): 1 or 5, else 1."""
    try:
        seconds = int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return 1
    return seconds if seconds in {s for s, _t in REFRESH} else 1
