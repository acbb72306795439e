"""run_plan(): the whole run as a generator of events (DESIGN.md rule 4).

The CLI iterates it directly; the GUI iterates it in one worker thread. Everything a run does is in
an event, and the library stores every event, so what the user saw is what is kept.

Repeats run in rounds (every case once, then every case again): slow drift of the device (SSD write
cache filling, a filesystem ageing, thermal throttling) then spreads over all cases instead of
biasing the ones that happened to run last.

Nothing is left behind: a case's files are removed after it whatever happens, including a failure,
a cancel, or the caller closing the generator; a running tool is killed with its whole tree.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import psutil

from disklab import __version__
from disklab.core import proc, tools
from disklab.core.errors import DisklabError
from disklab.core.events import (
    CaseFailed,
    CaseFinished,
    CaseStarted,
    ConfigApplied,
    ConfigTornDown,
    Event,
    LogLine,
    Notice,
    Progress,
    Sample,
    SessionFinished,
    SessionStarted,
)
from disklab.core.hostinfo import filesystem_of, host_facts
from disklab.core.matrix import expand
from disklab.core.model import Case, Metric, Plan
from disklab.core.monitor import Monitor
from disklab.core.tools.base import Command, RunTarget, ToolAdapter, ToolOutput

SAMPLE_INTERVAL = 0.5  # seconds between monitor samples (issue 2: every 500 ms)
TERM_GRACE = 5.0  # seconds between SIGTERM and SIGKILL on cancel


class CancelFlag(Protocol):
    def is_set(self) -> bool: ...


class _Never:
    def is_set(self) -> bool:
        return False


@dataclass(frozen=True)
class _Planned:
    case: Case
    repeat: int
    command: Command
    target: RunTarget


def tool_versions(names: set[str]) -> dict[str, str | None]:
    """Each tool's version as it prints it (None when it is missing or says nothing)."""
    versions: dict[str, str | None] = {}
    for name in sorted(names):
        adapter = tools.get_adapter(name)
        argv = adapter.version_argv()
        if name == "engine":
            versions[name] = f"disklab {__version__}"
            continue
        if argv is None:
            versions[name] = None
            continue
        try:
            done = proc.run(list(argv), timeout=10)
        except DisklabError:
            versions[name] = None
            continue
        versions[name] = adapter.parse_version(done.stdout + "\n" + done.stderr)
    return versions


def _drop_caches() -> str | None:
    """sync + drop the page cache, dentries and inodes. Returns why not, when it cannot."""
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
    except OSError as e:
        return f"caches not dropped ({e.strerror}): reads may come from memory"
    return None


def _remove(paths: tuple[str, ...]) -> list[str]:
    """Remove a case's files; returns the ones that could not be removed."""
    left = []
    for p in paths:
        try:
            if Path(p).is_dir() and not Path(p).is_symlink():
                shutil.rmtree(p)
            else:
                Path(p).unlink(missing_ok=True)
        except OSError:
            left.append(p)
    return left


def plan_runs(plan: Plan, python: str = sys.executable) -> list[_Planned]:
    """Every case x repeat with its command, in run order (rounds of repeats)."""
    cases = expand(plan)
    is_root = os.geteuid() == 0
    ram = psutil.virtual_memory().total
    runs = []
    for repeat in range(1, plan.repeats + 1):
        for case in cases:
            target = RunTarget(
                directory=plan.target.path,
                tag=f"{case.id}-r{repeat}",
                ram_bytes=ram,
                is_root=is_root,
                python=python,
            )
            command = tools.get_adapter(case.tool).build_command(case.params, target)
            runs.append(_Planned(case, repeat, command, target))
    return runs


def run_plan(
    plan: Plan,
    *,
    warnings: tuple[str, ...] = (),
    cancel: CancelFlag | None = None,
    python: str = sys.executable,
    sample_interval: float = SAMPLE_INTERVAL,
) -> Iterator[Event]:
    """Run every case of `plan` `repeats` times, yielding events as they happen."""
    cancel = cancel or _Never()
    runs = plan_runs(plan, python)
    cases = expand(plan)
    versions = tool_versions({c.tool for c in cases})
    host = host_facts(plan.target.path)
    host["tools"] = versions
    yield SessionStarted(
        name=plan.name,
        cases=tuple(cases),
        repeats=plan.repeats,
        host=host,
        plan_text=plan.source,
        warnings=warnings,
        t=time.time(),
    )
    for w in warnings:
        yield Notice(level="warning", message=w, t=time.time())
    config = plan.configs[0].label
    yield ConfigApplied(config=config, readback=filesystem_of(plan.target.path), t=time.time())

    total_bytes = sum(r.command.planned_bytes or 0 for r in runs)
    done_before = 0
    failed = 0
    status = "finished"
    for index, run in enumerate(runs):
        if cancel.is_set():
            status = "cancelled"
            break
        outcome = yield from _run_case(
            run, index, len(runs), versions.get(run.case.tool), plan,
            cancel, sample_interval, done_before, total_bytes,
        )
        done_before += run.command.planned_bytes or 0
        if outcome == "cancelled":
            status = "cancelled"
            break
        if outcome == "failed":
            failed += 1
            if plan.stop_on_failure:
                status = "failed"
                break
    yield ConfigTornDown(config=config, t=time.time())
    if status == "finished" and failed:
        status = "failed"
    yield SessionFinished(status=status, failed_cases=failed, t=time.time())


def _run_case(
    run: _Planned,
    index: int,
    count: int,
    version: str | None,
    plan: Plan,
    cancel: CancelFlag,
    sample_interval: float,
    done_before: int,
    total_bytes: int,
) -> Iterator[Event]:
    """One case x repeat. Returns 'ok', 'failed' or 'cancelled' (as the generator's value)."""
    case, repeat, command = run.case, run.repeat, run.command
    adapter = tools.get_adapter(case.tool)
    yield CaseStarted(
        case=case, repeat=repeat, argv=command.argv, tool_version=version,
        planned_bytes=command.planned_bytes, run_index=index, run_count=count, t=time.time(),
    )
    started = time.monotonic()
    left: list[str] = []
    try:
        outcome = yield from _prepare_and_measure(run, adapter, index, count, cancel,
                                                  sample_interval, done_before, total_bytes,
                                                  plan, started)
    finally:
        # no yield here: the caller may be closing the generator
        left = _remove(command.files)
    if left:
        yield Notice(level="warning", message=f"could not remove {', '.join(left)}",
                     case_id=case.id, t=time.time())
    return outcome


def _prepare_and_measure(
    run: _Planned,
    adapter: ToolAdapter,
    index: int,
    count: int,
    cancel: CancelFlag,
    sample_interval: float,
    done_before: int,
    total_bytes: int,
    plan: Plan,
    started: float,
) -> Iterator[Event]:
    case, repeat, command = run.case, run.repeat, run.command

    def log(text: str) -> LogLine:
        return LogLine(case_id=case.id, stream="disklab", text=text, repeat=repeat, t=time.time())

    for step in command.prepare:
        yield log("prepare: " + " ".join(step))
        result = yield from _run_step(step, command, case, repeat, cancel)
        if result is None:
            yield CaseFailed(case_id=case.id, repeat=repeat, error="cancelled by the user",
                             transcript_tail="", duration=time.monotonic() - started,
                             t=time.time())
            return "cancelled"
        if result.returncode != 0:
            tail = result.tail()
            yield CaseFailed(
                case_id=case.id, repeat=repeat,
                error=f"preparing the test failed (exit {result.returncode}): {step[0]}",
                transcript_tail=tail, exit_status=result.returncode,
                signal=result.signal, duration=time.monotonic() - started, t=time.time(),
            )
            return "failed"
    if plan.drop_caches or (command.reads_after_prepare and adapter.is_buffered(case.params)):
        why_not = _drop_caches()
        if why_not:
            yield Notice(level="warning", message=why_not, case_id=case.id, t=time.time())
        else:
            yield log("dropped caches (sync; echo 3 > /proc/sys/vm/drop_caches)")
    return (yield from _measure(run, adapter, index, count, cancel, sample_interval,
                                done_before, total_bytes, started))


def _run_step(
    argv: tuple[str, ...], command: Command, case: Case, repeat: int, cancel: CancelFlag
) -> Iterator[Event]:
    """Run an unmeasured preparation step to its end; None if cancelled."""
    p = proc.ToolProcess(argv, cwd=command.cwd, env=dict(command.env) or None)
    p.start()
    with p:
        while not p.poll():
            for line in p.read(0.5):
                yield LogLine(case_id=case.id, stream=line.stream, text=line.text,
                              repeat=repeat, t=line.t)
            if cancel.is_set():
                p.terminate(TERM_GRACE)
                return None
        p.wait()
    return p


def _measure(
    run: _Planned,
    adapter: ToolAdapter,
    index: int,
    count: int,
    cancel: CancelFlag,
    sample_interval: float,
    done_before: int,
    total_bytes: int,
    started: float,
) -> Iterator[Event]:
    case, repeat, command = run.case, run.repeat, run.command
    parser = adapter.progress_parser(case.params)
    planned = command.planned_bytes
    p = proc.ToolProcess(command.argv, cwd=command.cwd, env=dict(command.env) or None,
                         pty=command.needs_pty)
    monitor = Monitor(command.cwd or run.target.directory, pids=p.descendants)
    monitor.sample()  # primed before the start, so that the tool's first bytes count
    p.start()
    cancelled = False
    with p:
        t0 = time.monotonic()
        next_sample = t0 + sample_interval
        while not p.poll():
            now = time.monotonic()
            for line in p.read(max(0.0, next_sample - now)):
                yield LogLine(case_id=case.id, stream=line.stream, text=line.text,
                              repeat=repeat, t=line.t)
                update = parser.feed(line.stream, line.text)
                if update is not None:
                    yield _progress(case, repeat, update.done_bytes,
                                    update.total_bytes or planned, update.phase,
                                    update.message, time.monotonic() - t0,
                                    done_before, total_bytes)
            now = time.monotonic()
            if now >= next_sample:
                next_sample = now + sample_interval
                t = time.time()
                for series, value in monitor.sample().items():
                    yield Sample(case_id=case.id, series=series, value=value, repeat=repeat, t=t)
            if cancel.is_set() and not cancelled:
                cancelled = True
                yield LogLine(case_id=case.id, stream="disklab", repeat=repeat, t=time.time(),
                              text="cancelled: stopping the tool and its processes")
                p.terminate(TERM_GRACE)
        p.wait()
        # a last sample closes the series, so that a case shorter than the interval has one
        t = time.time()
        for series, value in monitor.sample().items():
            yield Sample(case_id=case.id, series=series, value=value, repeat=repeat, t=t)
    duration = time.monotonic() - started
    result_text = None
    if command.result_file and os.path.exists(command.result_file):
        result_text = Path(command.result_file).read_text(errors="replace")
        # the result file is evidence too (rule 8): kept with the transcript, re-parsable later
        t = time.time()
        for text in result_text.splitlines():
            yield LogLine(case_id=case.id, stream="result", text=text, repeat=repeat, t=t)
    output = ToolOutput(stdout=p.output("stdout"), stderr=p.output("stderr"),
                        result_file=result_text, exit_status=p.returncode)
    if cancelled or p.returncode != 0:
        metrics = tuple(_flag_partial(adapter.parse_partial(output, case.params)))
        if cancelled:
            error = "cancelled by the user"
        elif p.signal:
            error = f"{case.tool} was killed by signal {p.signal}"
        else:
            error = f"{case.tool} exited with status {p.returncode}"
            try:
                adapter.parse_result(output, case.params)
            except DisklabError as e:
                error = f"{error}: {e}"
        yield CaseFailed(case_id=case.id, repeat=repeat, error=error, transcript_tail=p.tail(),
                         exit_status=p.returncode, signal=p.signal, metrics=metrics,
                         duration=duration, t=time.time())
        return "cancelled" if cancelled else "failed"
    try:
        metrics = tuple(adapter.parse_result(output, case.params))
    except DisklabError as e:
        yield CaseFailed(case_id=case.id, repeat=repeat, error=str(e), transcript_tail=p.tail(),
                         exit_status=p.returncode, duration=duration, t=time.time())
        return "failed"
    if planned:
        yield _progress(case, repeat, planned, planned, "done", None, duration,
                        done_before, total_bytes)
    yield CaseFinished(case_id=case.id, repeat=repeat, metrics=metrics,
                       exit_status=p.returncode, duration=duration, t=time.time())
    return "ok"


def _flag_partial(metrics: list[Metric]) -> list[Metric]:
    return [
        m if m.note and "partial" in m.note
        else Metric(m.name, m.value, m.unit, f"partial{': ' + m.note if m.note else ''}", m.params)
        for m in metrics
    ]


def _progress(
    case: Case,
    repeat: int,
    done: int | None,
    total: int | None,
    phase: str | None,
    message: str | None,
    elapsed: float,
    done_before: int,
    total_bytes: int,
) -> Progress:
    """Progress with the ETA of this case (bytes left at the rate so far) and the overall share."""
    eta = None
    if done and total and elapsed > 0:
        eta = max(0.0, (total - done) * elapsed / done)
    overall = None
    if total_bytes:
        overall = min(1.0, (done_before + (done or 0)) / total_bytes)
    return Progress(case_id=case.id, done_bytes=done, total_bytes=total, phase=phase,
                    message=message, repeat=repeat, elapsed=elapsed, eta=eta, overall=overall,
                    t=time.time())
