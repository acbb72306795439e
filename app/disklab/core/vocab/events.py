"""The run's events (DESIGN.md 'Events'). The runner yields them; CLI, GUI and library consume them.

They are frozen and hold only immutable data, so they can cross from the worker thread to the GUI.
Every event is also what the library stores.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from disklab.core.vocab.model import Case, Metric


@dataclass(frozen=True)
class Event:
    t: float = field(default=0.0, kw_only=True)  # time.time() when it happened


@dataclass(frozen=True)
class SessionStarted(Event):
    name: str
    cases: tuple[Case, ...]
    repeats: int
    host: Mapping[str, Any]
    plan_text: str
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class SessionResumed(Event):
    """An incomplete session (interrupted, cancelled or failed) taken up again in place: it
    comes instead of SessionStarted, and the runs that follow are the case x repeat pairs that
    had no complete result. The library keeps it with the session (when, how many runs)."""

    session_id: int
    name: str
    cases: tuple[Case, ...]
    repeats: int
    runs: tuple[tuple[str, int], ...]  # (case id, repeat) to run now, in run order
    complete: int  # runs the session already had, kept as they are
    previous_status: str
    host: Mapping[str, Any]  # the facts now (the session keeps those of its start)
    plan_text: str = ""


@dataclass(frozen=True)
class Notice(Event):
    """A warning or information the user should see and the session should keep."""

    level: str  # "info" | "warning" | "error"
    message: str
    case_id: str | None = None


@dataclass(frozen=True)
class ConfigApplied(Event):
    config: str
    readback: Mapping[str, Any]
    mismatches: tuple[str, ...] = ()


@dataclass(frozen=True)
class CaseStarted(Event):
    case: Case
    repeat: int
    argv: tuple[str, ...]
    tool_version: str | None = None
    planned_bytes: int | None = None
    run_index: int = 0  # position among all cases x repeats
    run_count: int = 0


@dataclass(frozen=True)
class Progress(Event):
    case_id: str
    done_bytes: int | None
    total_bytes: int | None
    phase: str | None = None
    message: str | None = None
    repeat: int = 0
    elapsed: float = 0.0
    eta: float | None = None  # seconds left in this case
    # the named target this progress is about, when a case runs on several (`on`); None: the
    # whole case. Live plots draw one curve per target and the case's total.
    target: str | None = None
    overall: float | None = None  # fraction 0..1 of the whole session (core.run.progress)
    overall_eta: float | None = None  # seconds left in the whole session (core.run.progress)
    fraction: float | None = None  # 0..1 of this case: by time for a time-based case, else bytes
    runs_done: int | None = None  # case x repeat runs ended so far


@dataclass(frozen=True)
class Sample(Event):
    """One point of a live series: app_bps, device_bps, dirty_bytes, writeback_bytes, cpu_pct..."""

    case_id: str
    series: str
    value: float
    repeat: int = 0


@dataclass(frozen=True)
class LogLine(Event):
    case_id: str
    stream: str  # "stdout" | "stderr" | "disklab"
    text: str
    repeat: int = 0


@dataclass(frozen=True)
class CaseFinished(Event):
    case_id: str
    repeat: int
    metrics: tuple[Metric, ...]
    exit_status: int | None
    duration: float
    partial: bool = False


@dataclass(frozen=True)
class CaseFailed(Event):
    case_id: str
    repeat: int
    error: str
    transcript_tail: str
    exit_status: int | None = None
    signal: int | None = None
    metrics: tuple[Metric, ...] = ()  # what the tool printed before it failed, flagged partial
    duration: float = 0.0


@dataclass(frozen=True)
class CaseCancelled(Event):
    """A case stopped by the user's cancel (Cancel, Ctrl-C, SIGTERM). Not a failure: the tool
    did nothing wrong. What it measured until then is kept, flagged partial, and is not a
    complete result (a resumed session runs this case x repeat again)."""

    case_id: str
    repeat: int
    transcript_tail: str = ""
    exit_status: int | None = None
    signal: int | None = None
    metrics: tuple[Metric, ...] = ()  # flagged partial
    duration: float = 0.0


@dataclass(frozen=True)
class ConfigTornDown(Event):
    config: str


@dataclass(frozen=True)
class SessionFinished(Event):
    status: str  # "finished" | "failed" | "cancelled"
    failed_cases: int = 0
