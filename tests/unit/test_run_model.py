"""The Run page's bookkeeping lives in gui.run_model, without Qt: fed a run's events, the model
counts the runs done, kept, cancelled and failed, follows each case's phase and the session's
state, keeps the log lines and progress for the next drawing, and tells its view what to draw.
The page only draws (tests/gui/test_run_*.py hold the page to it)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from disklab.core.vocab.events import (
    CaseCancelled,
    CaseFailed,
    CaseFinished,
    CaseStarted,
    ConfigApplied,
    LogLine,
    Notice,
    Progress,
    Sample,
    SessionFinished,
    SessionResumed,
    SessionStarted,
)
from disklab.core.vocab.model import Case, Metric
from disklab.gui import run_model
from disklab.gui.run_model import CANCELLED, DONE, FAILED, RunModel

A = Case("a", 0, "as is", "engine", 1, {"mode": "write"})
B = Case("b", 1, "as is", "engine", 1, {"mode": "read"})


class Drawn:
    """A view that notes what it is told to draw, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def __getattr__(self, name: str) -> Any:
        return lambda *args: self.calls.append((name, args))

    def of(self, name: str) -> list[Any]:
        return [args for called, args in self.calls if called == name]


def _run(model: RunModel, view: Drawn, *events: Any) -> None:
    for ev in events:
        model.take(ev, view)


def _figure(value: float) -> tuple[Metric, ...]:
    return (Metric("write", value, "B/s"),)


def test_a_session_counts_its_runs_and_ends_with_its_words() -> None:
    model, view = RunModel(), Drawn()
    model.launched()
    _run(model, view,
         SessionStarted(name="s", cases=(A, B), repeats=2, host={}, plan_text="",
                        warnings=("slow disk",)),
         CaseStarted(case=A, repeat=1, argv=("engine", "--write"), run_index=0, run_count=4, t=1),
         Progress(case_id="a", done_bytes=1, total_bytes=4, phase="write", t=1.1),
         Progress(case_id="a", done_bytes=2, total_bytes=4, phase="verify", t=1.2),
         Sample(case_id="a", series="app_bps", value=5.0, t=1.3),
         LogLine(case_id="a", stream="stderr", text="oops", t=1.4),
         LogLine(case_id="a", stream="result", text="{}", t=1.5),
         CaseFinished(case_id="a", repeat=1, metrics=_figure(100.0), exit_status=0,
                      duration=1.0, t=2),
         CaseFailed(case_id="b", repeat=1, error="exit 1", transcript_tail="", t=3),
         CaseCancelled(case_id="a", repeat=2, metrics=_figure(50.0), t=4),
         Notice(level="info", message="quiet"), Notice(level="warning", message="hot"),
         ConfigApplied(config="xfs", readback={}, t=5),
         SessionFinished(status="cancelled", t=6))
    assert model.events_seen == 14 and model.progress_seen == 2
    assert (model.done, model.failed_runs, model.cancelled_runs) == ({"a": 1}, 1, 1)
    assert model.failures == {"b": "exit 1"} and model.phase == {"a": "verify"}
    assert model.status == "cancelled"
    (cases,) = view.of("cases")
    assert cases == ((A, B), {}, False)  # not the standard set: no tiles
    (starting,) = view.of("case_starting")
    assert starting[1:] == ("running 1/2", None)
    assert view.of("case_state") == [("a", "done 1/2", DONE), ("b", "failed: exit 1", FAILED),
                                     ("a", "cancelled (partial figures kept)", CANCELLED)]
    assert [args[2] for args in view.of("marker")] == ["case", "phase", "config"]
    assert view.of("state_text") == [("Run 1 of 4: engine mode=write (repeat 1)",),
                                     ("warning: hot",)]
    assert view.of("case_ended") == [("a",)] and len(view.of("sample")) == 1
    (shown,) = view.of("show_progress")  # the last progress, drawn before the end
    assert shown[0].phase == "verify" and model.take_progress() is None
    log = model.take_log()
    assert "$ engine --write" in log and "! oops" in log and "{}" not in log
    assert any("slow disk" in line for line in log) and model.take_log() == []
    assert model.ended(7) == "Cancelled; what finished is kept. Session 7 is in the library."


def test_a_resumed_session_counts_the_repeats_it_kept() -> None:
    model, view = RunModel(), Drawn()
    model.launched()
    _run(model, view,
         SessionResumed(session_id=3, name="s", cases=(A, B), repeats=3, runs=(("a", 3),),
                        complete=5, previous_status="cancelled", host={}),
         CaseStarted(case=A, repeat=3, argv=("engine",), t=1),
         CaseFinished(case_id="a", repeat=3, metrics=_figure(1.0), exit_status=0,
                      duration=1.0, t=2))
    (cases,) = view.of("cases")
    assert cases == ((A, B), {"a": "waiting (2/3 kept)", "b": "done (kept)"}, None)
    assert model.kept == {"a": 2, "b": 3}
    assert view.of("case_state") == [("a", "done", DONE)]
    assert model.ended(3) == "Finished with 0 failed case(s). Session 3 is in the library."
    model.reset()
    assert (model.status, model.done, model.kept, model.events_seen) == ("idle", {}, {}, 0)


def test_the_model_imports_no_qt() -> None:
    tree = ast.parse(Path(run_model.__file__).read_text(encoding="utf-8"))
    imported = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not {m for m in imported if m.startswith(("PySide6", "pyqtgraph", "disklab.gui"))}
