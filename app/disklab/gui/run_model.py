"""What a run has come to, fed by its events, for the Run page to draw: the runs done, kept,
cancelled and failed, each case's phase, the session's state, the live figures, and the log
lines and progress waiting for the next drawing. No widgets and no Qt: the model decides what
changes and tells the page's view (`RunView`) what to draw, so the bookkeeping is tested on
events alone (tests/unit/test_run_model.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from disklab.core.results.limits import Limit
from disklab.core.results.live import LiveResults
from disklab.core.run.event_text import EventText, notice_text
from disklab.core.run.progress import readable_line
from disklab.core.standard_set import NAME as STANDARD_NAME
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
from disklab.core.vocab.model import Case

# a case row's tone, which the page colours
RUNNING, DONE, FAILED, CANCELLED = "running", "done", "failed", "cancelled"


class RunView(Protocol):
    """What the Run page draws when the model says so."""

    def sample(self, ev: Sample) -> None: ...
    def target_progress(self, ev: Progress) -> None: ...
    def marker(self, t: float, label: str, kind: str, detail: str) -> None: ...
    def state_text(self, text: str) -> None: ...
    def cases(self, cases: Sequence[Case], states: Mapping[str, str],
              standard: bool | None) -> None: ...
    def case_starting(self, ev: CaseStarted, status: str, progress: Progress | None) -> None: ...
    def case_state(self, case_id: str, text: str, tone: str) -> None: ...
    def case_result(self, case_id: str, text: str, limits: Sequence[Limit] | None) -> None: ...
    def case_ended(self, case_id: str) -> None: ...
    def show_progress(self, ev: Progress) -> None: ...
    def session_finished(self, status: str) -> None: ...


class RunModel:
    """One run's bookkeeping, from launch to end (`reset` for the next)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.repeats = 1
        self.live = LiveResults()  # the figures, made as the library makes them (core)
        self.done: dict[str, int] = {}  # complete runs per case
        self.kept: dict[str, int] = {}  # a resumed session's complete repeats per case
        self.cancelled_runs = self.failed_runs = 0
        self.failures: dict[str, str] = {}
        self.phase: dict[str, str | None] = {}
        self.status = "idle"
        self.session_id: Any = None
        self.events_seen = self.progress_seen = 0
        self.event_text = EventText()  # the events' words (core.run.event_text)
        self.pending_log: list[str] = []
        self.pending_progress: Progress | None = None  # shown at the next drawing

    # --- the page's own steps
    def launched(self) -> None:
        self.status = "running"

    def cancelling(self) -> None:
        self.status = "cancelling"

    def error(self, text: str) -> None:
        self.pending_log.append(f"[error] {text}")

    def take_progress(self) -> Progress | None:
        """The progress kept aside since the last drawing, now to be shown (once)."""
        ev, self.pending_progress = self.pending_progress, None
        return ev

    def take_log(self) -> list[str]:
        """The log lines since the last drawing (once)."""
        lines, self.pending_log = self.pending_log, []
        return lines

    def ended(self, session_id: Any) -> str:
        """The run's thread ended: its status (a cancel the user asked for is cancelled, even
        if no end event came; a run that stopped without one failed) and the state line."""
        self.session_id = session_id
        if self.status == "cancelling":
            self.status = "cancelled"
        elif self.status == "running":
            self.status = "failed"
        text = {"finished": "Finished.", "cancelled": "Cancelled; what finished is kept.",
                "failed": f"Finished with {len(self.failures)} failed case(s)."
                }.get(self.status, self.status)
        return f"{text} Session {session_id} is in the library."

    # --- the run's events
    def take(self, ev: Event, view: RunView) -> None:
        """One event: the bookkeeping, its line for the log, and what `view` draws of it."""
        self.events_seen += 1
        if not isinstance(ev, Sample | LogLine | Progress):
            # the event's line in the log, in the words the terminal and the Library use
            # (core.run.event_text): a failure's reason whatever the tool printed
            line = self.event_text.line(ev)
            if line is not None:
                self.pending_log.append(line)
        for kind in type(ev).__mro__:
            handler = _HANDLERS.get(kind)
            if handler is not None:
                handler(self, ev, view)
                return

    def _sample(self, ev: Sample, view: RunView) -> None:
        view.sample(ev)
        self.live.add_sample(ev.case_id, ev.repeat, ev.series, ev.value)

    def _log_line(self, ev: LogLine, view: RunView) -> None:
        if ev.stream != "result":  # the result file: in the library, not for reading
            text = readable_line(ev.text)
            self.pending_log.append(text if ev.stream != "stderr" else f"! {text}")

    def _progress(self, ev: Progress, view: RunView) -> None:
        if ev.target is not None:  # one target's share (several targets): not the case's bars
            if ev.done_bytes is not None:  # but its curve: the tool's rate on that target
                view.target_progress(ev)
            return
        self.progress_seen += 1
        self.pending_progress = ev
        if ev.phase and ev.phase != self.phase.get(ev.case_id) and ev.phase != "done":
            if self.phase.get(ev.case_id) is not None:
                view.marker(ev.t, ev.phase, "phase", f"phase {ev.phase} of case {ev.case_id}")
            self.phase[ev.case_id] = ev.phase

    def _session_started(self, ev: SessionStarted | SessionResumed, view: RunView) -> None:
        """The session's cases. A resumed session's cases say how many of their repeats the
        session already had complete (kept, not run again); a new session says whether it is
        the standard set (its tiles)."""
        self.repeats = ev.repeats
        self.live = LiveResults(ev.cases, ev.repeats, ev.host)
        states: dict[str, str] = {}
        standard = None
        if isinstance(ev, SessionResumed):
            todo: dict[str, int] = {}
            for case_id, _repeat in ev.runs:
                todo[case_id] = todo.get(case_id, 0) + 1
            for case in ev.cases:
                kept = self.kept[case.id] = ev.repeats - todo.get(case.id, 0)
                states[case.id] = ("done (kept)" if not todo.get(case.id)
                                   else f"waiting ({kept}/{ev.repeats} kept)" if kept
                                   else "waiting")
        else:
            standard = ev.name == STANDARD_NAME
            self.pending_log.extend(notice_text("warning", w) for w in ev.warnings)
        view.cases(ev.cases, states, standard)

    def _case_started(self, ev: CaseStarted, view: RunView) -> None:
        self.phase[ev.case.id] = None
        self.pending_log.append("$ " + " ".join(ev.argv))
        # the last progress of the case before: its bars, not this one's
        view.case_starting(ev, f"running {ev.repeat}/{self.repeats}", self.take_progress())
        label = f"#{ev.case.index + 1}" + (f" r{ev.repeat}" if self.repeats > 1 else "")
        view.marker(ev.t, label, "case", f"case {ev.case.index + 1}, repeat {ev.repeat}: "
                    f"{ev.case.title()} ({ev.case.config})")
        if ev.run_count:
            view.state_text(f"Run {ev.run_index + 1} of {ev.run_count}: {ev.case.title()} "
                            f"(repeat {ev.repeat})")

    def _case_finished(self, ev: CaseFinished, view: RunView) -> None:
        self.live.add(ev.case_id, ev.repeat, ev.metrics, ev.duration)
        self.done[ev.case_id] = self.done.get(ev.case_id, 0) + 1
        runs = self.done[ev.case_id] + self.kept.get(ev.case_id, 0)
        view.case_state(ev.case_id, "done" if runs >= self.repeats
                        else f"done {runs}/{self.repeats}", DONE)
        # judged as each run ends (core.results.limits)
        view.case_result(ev.case_id, self.live.text(ev.case_id), self.live.limits(ev.case_id))
        view.case_ended(ev.case_id)

    def _case_failed(self, ev: CaseFailed, view: RunView) -> None:
        self.failures[ev.case_id] = ev.error
        self.failed_runs += 1
        view.case_state(ev.case_id, f"failed: {ev.error}", FAILED)

    def _case_cancelled(self, ev: CaseCancelled, view: RunView) -> None:
        view.case_state(ev.case_id, "cancelled (partial figures kept)", CANCELLED)
        self.live.add_partial(ev.case_id, ev.metrics)
        self.cancelled_runs += 1
        view.case_result(ev.case_id, self.live.text(ev.case_id), None)

    def _notice(self, ev: Notice, view: RunView) -> None:
        if ev.level != "info":
            view.state_text(f"{ev.level}: {ev.message}")

    def _config_applied(self, ev: ConfigApplied, view: RunView) -> None:
        view.marker(ev.t, ev.config, "config", f"configuration {ev.config} applied")

    def _session_finished(self, ev: SessionFinished, view: RunView) -> None:
        self.status = ev.status
        progress = self.take_progress()
        if progress is not None:
            view.show_progress(progress)
        view.session_finished(ev.status)


_HANDLERS: dict[type, Callable[[RunModel, Any, RunView], None]] = {
    Sample: RunModel._sample, LogLine: RunModel._log_line, Progress: RunModel._progress,
    CaseStarted: RunModel._case_started, CaseFinished: RunModel._case_finished,
    CaseFailed: RunModel._case_failed, CaseCancelled: RunModel._case_cancelled,
    SessionStarted: RunModel._session_started, SessionResumed: RunModel._session_started,
    Notice: RunModel._notice, ConfigApplied: RunModel._config_applied,
    SessionFinished: RunModel._session_finished,
}
