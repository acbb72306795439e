"""What a run of a plan will be, before it runs, written once for every front end:
`check_plan` / `PlanSummary` / `summary_text` give a plan's verdict (cases, runs, bytes, an
estimated duration, its problems and warnings), so `disklab plan validate` and the Test matrix
page say the same thing about the same plan.

It lives in core.run because it counts what the runner will do (`run.planning.plan_runs`, the
work by kind of `run.progress`); the installed tools are core.installed, the shipped presets
core.resources, the library path and state directory core.system.directories.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from disklab.core.helper_client import password_needed
from disklab.core.installed import ToolRow, tool_rows
from disklab.core.plan.matrix import run_count
from disklab.core.plan.parse import CheckedPlan, parse_plan
from disklab.core.run import progress
from disklab.core.run.planning import plan_runs, runtime_of
from disklab.core.run.progress import Work
from disklab.core.vocab.errors import PlanError, Problem
from disklab.core.vocab.model import Plan
from disklab.core.vocab.units import MiB, human_bytes, human_rate

ASSUMED_RATE = 200 * MiB  # bytes/s for the estimate: a plain disk, not a promise


# --- a plan before it runs ---------------------------------------------------------------------

@dataclass
class PlanSummary:
    """What the check found: counts, bytes, and problems/warnings as text."""

    cases: int = 0
    repeats: int = 1
    runs: int = 0
    bytes: int = 0
    runtime: float = 0.0  # seconds of time-bound cases (runtime = ...)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    plan: Plan | None = None  # the checked plan, when there are no errors
    tools: list[ToolRow] = field(default_factory=list)  # the tools the plan uses, in order
    needs_password: bool = False  # sudo will want one for the privileged helper
    # the same errors and warnings with their plan keys (test[2].block_size, config[1].mount[2],
    # target.directory...), so a front end can show each at the field that has it
    problems: list[Problem] = field(default_factory=list)
    work: Work | None = None  # the runs by kind, time-based or size-based (core.run.progress)


def summarize(checked: CheckedPlan) -> PlanSummary:
    """The summary of a plan that passed the check. May start `sudo -l` (password_needed):
    not on a GUI thread."""
    plan = checked.plan
    counted = {"runs": 0, "bytes": 0, "runtime": 0.0}

    def kinds() -> Iterator[tuple[float, int | None, str]]:
        for run in plan_runs(plan):  # one at a time: a plan may have 100000 runs
            runtime = runtime_of(run.case)  # a paced case is time-bound too
            counted["runs"] += 1
            counted["bytes"] += run.command.planned_bytes or 0
            counted["runtime"] += runtime
            yield runtime, run.command.planned_bytes, run.case.config

    work = Work.of(kinds())
    runs, planned_bytes, runtime = counted["runs"], int(counted["bytes"]), counted["runtime"]
    used = list(dict.fromkeys(test.tool for test in plan.tests))
    return PlanSummary(
        cases=run_count(plan) // plan.repeats, repeats=plan.repeats, runs=runs,
        bytes=planned_bytes, runtime=runtime,
        warnings=[str(w) for w in checked.warnings], plan=plan, tools=tool_rows(used),
        needs_password=password_needed(plan), problems=list(checked.warnings),
        work=work)


def check_plan(text: str, library: str | None, *, path: str | None = None,
               target_dir: str | None = None) -> PlanSummary:
    """core.plan's verdict on a plan text: its summary, or its problems in `errors`."""
    try:
        checked = parse_plan(text, path=path, target_dir=target_dir, library=library)
    except PlanError as e:
        return PlanSummary(errors=[str(p) for p in e.problems], problems=list(e.problems))
    return summarize(checked)


def estimate_seconds(summary: PlanSummary, rate: float = ASSUMED_RATE) -> float:
    """Bytes at an assumed rate; a time-bound case (runtime = ...) lasts its runtime (its file
    size says nothing of how long it runs)."""
    if summary.work is not None:
        return summary.work.seconds + (summary.work.bytes / rate if rate else 0.0)
    return max(summary.bytes / rate if rate else 0.0, summary.runtime)


def format_duration(seconds: float | None) -> str:
    """progress.format_duration, and nothing for an unknown duration (an ETA not yet known)."""
    return "" if seconds is None else progress.format_duration(seconds)


def summary_text(summary: PlanSummary, rate: float = ASSUMED_RATE) -> str:
    """The one-line verdict every surface shows for a plan."""
    if summary.errors:
        return f"{len(summary.errors)} problem(s) to fix before the plan can run."
    at = "" if summary.work and not summary.work.bytes else f" at {human_rate(rate)}"
    return (f"{summary.cases} case(s) × {summary.repeats} repeat(s) = {summary.runs} run(s); "
            f"{_moved(summary)}; estimated "
            f"{format_duration(estimate_seconds(summary, rate))}{at}.")


def _moved(summary: PlanSummary) -> str:
    """"about 2 GiB moved" only for what moves a planned size; time-based runs by their time."""
    if summary.work is not None:
        return summary.work.describe()
    return f"about {human_bytes(summary.bytes)} moved"


# --- run and record ----------------------------------------------------------------------------
