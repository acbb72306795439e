"""A run's events as the lines a person reads: one wording for `disklab run` on a terminal, the
Run page's log pane and a stored session's event list in the Library (issue 29: three
`isinstance` chains said the same things three ways: "warning: x" here, "[warning] x" there,
`Notice: {"level": ...}` in the Library).

`EventText` knows the session's case titles (what differs among the cases, core labels) once
SessionStarted or SessionResumed came; `line(event)` is the event's text, or None for what is
not read as a line (samples, progress, the tool's own output: those have their own places).
`stored_line(row)` gives a stored event (Library.events) the same words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from disklab.core.results.labels import case_labels, case_titles
from disklab.core.vocab.events import (
    CaseCancelled,
    CaseFailed,
    CaseFinished,
    CaseStarted,
    ConfigApplied,
    ConfigTornDown,
    Event,
    Notice,
    SessionFinished,
    SessionResumed,
    SessionStarted,
)
from disklab.core.vocab.model import Case, Metric
from disklab.core.vocab.units import human_rate

INDENT = "    "  # a case's outcome, under the line that started it
TAIL_LINES = 8  # of a failed case's output, under its FAILED line


def figures_text(metrics: Sequence[Metric]) -> str:
    """A finished case's throughputs, each named by what tells it apart from the others (the
    target, the host: 'write target=a 374 MB/s, write target=all 675 MB/s')."""
    main = [m for m in metrics if m.unit == "B/s" and ":" not in m.name and m.value]
    labels = case_labels([{"params": dict(m.params or {})} for m in main])
    return ", ".join(" ".join(filter(None, (m.name, labels.label({"params": m.params or {}}),
                                             human_rate(m.value or 0.0)))) for m in main)


def notice_text(level: str, message: str) -> str:
    return f"{level}: {message}"


def config_text(config: str, applied: bool, mismatches: Sequence[str] = ()) -> str:
    text = f"configuration {config!r} {'applied' if applied else 'torn down'}"
    if mismatches:
        text += f" (read back differs: {'; '.join(mismatches)})"
    return text


def failed_text(error: str) -> str:
    return f"{INDENT}FAILED: {error}"


def cancelled_text(duration: float | None, partial_figures: int) -> str:
    kept = (f"{partial_figures} partial figure(s) kept, not counted as a result"
            if partial_figures else "no figure")
    after = f" after {duration:.1f} s" if duration is not None else ""
    return f"{INDENT}cancelled{after}: {kept}"


def resumed_text(previous: str, runs: int, complete: int) -> str:
    return f"resumed ({previous}): {runs} run(s) to do, {complete} complete run(s) kept"


class EventText:
    """The lines of one run's events (one instance per run: it learns the cases' titles)."""

    def __init__(self) -> None:
        self.titles: dict[str, str] = {}  # case id -> "config | what differs"
        self.common = ""  # what every case shares, said once at the start

    def know(self, cases: Sequence[Case]) -> None:
        titles, self.common = case_titles(cases)
        self.titles = {c.id: f"{c.config} | {t}" for c, t in zip(cases, titles, strict=True)}

    def line(self, event: Event) -> str | None:
        """The event's line (a failed case's: with the last lines of its output under it),
        None for an event not read as a line."""
        if isinstance(event, SessionStarted):
            self.know(event.cases)
            return f"{event.name}: {len(event.cases)} cases x {event.repeats} repeats"
        if isinstance(event, SessionResumed):
            self.know(event.cases)
            return f"{event.name}: session {event.session_id} " + resumed_text(
                event.previous_status, len(event.runs), event.complete)
        if isinstance(event, Notice):
            return notice_text(event.level, event.message)
        if isinstance(event, CaseStarted):
            title = self.titles.get(event.case.id) or f"{event.case.config} | {event.case.tool}"
            return f"[{event.run_index + 1}/{event.run_count}] {title} (repeat {event.repeat})"
        if isinstance(event, CaseFinished):
            text = figures_text(event.metrics)
            return f"{INDENT}done in {event.duration:.1f} s: {text or 'no throughput figure'}"
        if isinstance(event, CaseFailed):
            # the case named: in the log pane the tool's own lines came between
            title = self.titles.get(event.case_id, event.case_id)
            text = failed_text(f"{title}, repeat {event.repeat}: {event.error}")
            tail = (event.transcript_tail or "").rstrip().splitlines()[-TAIL_LINES:]
            return "\n".join([text, *(f"{INDENT}  | {line}" for line in tail)])
        if isinstance(event, CaseCancelled):
            return cancelled_text(event.duration, len(event.metrics))
        if isinstance(event, ConfigApplied):
            return config_text(event.config, True, event.mismatches)
        if isinstance(event, ConfigTornDown):
            return config_text(event.config, False)
        if isinstance(event, SessionFinished):
            return f"session {event.status}"
        return None


def stored_line(row: Mapping[str, Any]) -> str:
    """A stored event (Library.events: kind, case_id and the recorder's fields) in the words
    a live run showed for it; a kind without its own words as its fields."""
    kind = row.get("kind")
    if kind == "Notice":
        return notice_text(str(row.get("level")), str(row.get("message")))
    if kind == "ConfigApplied":
        return config_text(str(row.get("config")), True, row.get("mismatches") or ())
    if kind == "ConfigTornDown":
        return config_text(str(row.get("config")), False)
    if kind == "CaseFailed":
        return f"case {row.get('case_id')}: " + failed_text(str(row.get("error"))).strip()
    if kind == "CaseCancelled":
        return f"case {row.get('case_id')}: " + cancelled_text(
            None, int(row.get("partial_figures") or 0)).strip()
    if kind == "SessionResumed":
        runs = row.get("runs")
        count = len(runs) if isinstance(runs, list | tuple) else int(runs or 0)
        return "session " + resumed_text(str(row.get("previous_status")), count,
                                         int(row.get("complete") or 0))
    fields = ", ".join(f"{k}={v}" for k, v in row.items() if k not in ("t", "kind"))
    return f"{kind}: {fields}"
