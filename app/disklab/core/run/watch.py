"""A measured step while its tool runs and how it ended: the case watcher (output lines and
the progress they tell, the samplers every interval, stall and cancel) and outcome(), the pure
decision of the case's end event from what the tool left and what the watcher saw."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from disklab.core import proc
from disklab.core.helper_client import PrivilegedTool
from disklab.core.proc.tool import ToolProcess
from disklab.core.run.monitor import Monitor, TargetDisks
from disklab.core.run.planning import Planned, runtime_of
from disklab.core.run.progress import OverallProgress
from disklab.core.tools.base import ToolAdapter, ToolOutput
from disklab.core.tools.fio.client import host_names
from disklab.core.vocab.errors import DisklabError, PrivilegeError
from disklab.core.vocab.events import (
    CaseCancelled,
    CaseFailed,
    CaseFinished,
    Event,
    LogLine,
    Progress,
    Sample,
)
from disklab.core.vocab.model import Case, Metric

# A sample may be taken up to this share of the interval before or after its time, when the
# tool's output wakes DiskLab anyway: one wake-up for both instead of two (the engine prints
# every 0.5 s too). The times stay on a fixed grid, so the rate is 1/interval all the same.
SAMPLE_SLACK = 0.2
TERM_GRACE = 5.0  # seconds between SIGTERM and SIGKILL on cancel
# A tool that prints nothing and moves no byte for this long is stuck (iozone -t spins forever
# when its children fail); long silences with I/O going on are normal and never stopped.
STALL_SECONDS = 600.0


class CancelFlag(Protocol):
    def is_set(self) -> bool: ...


@dataclass(frozen=True)
class CasePlace:
    """Where a case stands in its session, for its progress: the bytes of the runs before it
    and of them all, and the session's overall tracker (None: by bytes only)."""

    done_before: int
    total_bytes: int
    overall: OverallProgress | None = None


@dataclass
class Watched:
    """What the case watcher saw of a measured step until it ended, as outcome() reads it."""

    cancelled: bool = False  # the user cancelled: the tool was stopped
    stalled: bool = False  # no output and no I/O for STALL_SECONDS: the tool was stopped
    lost: DisklabError | None = None  # the privileged helper died, and its tool with it


class CaseWatch:
    """The measured step's loop while its tool runs: its output lines and the progress they
    give, the samplers every interval (and the overall ETA between the tool's lines), the
    stall and cancel checks. It decides nothing about the case's result (outcome() does)."""

    def __init__(self, run: Planned, p: ToolProcess | PrivilegedTool,
                 adapter: ToolAdapter, cancel: CancelFlag, sample_interval: float,
                 share: CasePlace) -> None:
        self.case, self.repeat, self.p = run.case, run.repeat, p
        self.parser = adapter.progress_parser(run.case.params)
        self.cancel, self.interval, self.share = cancel, sample_interval, share
        self.planned = run.command.planned_bytes
        self.seen = Watched()
        self.last: Progress | None = None  # the tool's last progress, repeated as time passes
        # a raw device target's own counters; else the device under the files
        self.monitor = Monitor(run.target.device or run.command.cwd or run.target.directory,
                               pids=p.descendants)
        self.monitor.sample()  # primed before the start, so that the tool's first bytes count
        # several targets: each one's device rates too (a curve per target in the live plots)
        names = set(str(run.case.params.get("on") or "").split("+")) - {""}
        self.disks = TargetDisks({n: d for n, d in run.target.directories.items()
                                  if n in names}) if names else None
        if self.disks is not None:
            self.disks.sample()
        self.t0 = self.last_activity = time.monotonic()
        self.last_moved = -1.0

    def watch(self) -> Iterator[Event]:
        """Follow the started tool to its end; what was seen is in `self.seen`."""
        p = self.p
        self.t0 = self.last_activity = time.monotonic()
        next_sample = self.t0 + self.interval
        slack = self.interval * SAMPLE_SLACK
        try:
            while not p.poll():
                lines = p.read(max(0.0, next_sample + slack - time.monotonic()))
                if lines:
                    self.last_activity = time.monotonic()
                yield from self._lines(lines)
                now = time.monotonic()
                if now >= next_sample - slack:
                    next_sample = max(next_sample + self.interval, now + self.interval - slack)
                    yield from self._sample(now)
                if self.cancel.is_set() and not self.seen.cancelled:
                    self.seen.cancelled = True
                    yield self._log("cancelled: stopping the tool and its processes")
                    p.terminate(TERM_GRACE)
            p.wait()
        except PrivilegeError as e:  # the helper died, and its tool with it (PDEATHSIG)
            self.seen.lost = e
        # a last sample closes the series, so that a case shorter than the interval has one
        yield from samples(self.monitor, self.case, self.repeat, self.disks)

    def _log(self, text: str) -> LogLine:
        return LogLine(case_id=self.case.id, stream="disklab", repeat=self.repeat,
                       t=time.time(), text=text)

    def _lines(self, lines: list[proc.OutputLine]) -> Iterator[Event]:
        """The tool's lines into the transcript, and the progress they tell."""
        case, repeat, share = self.case, self.repeat, self.share
        for line in lines:
            yield LogLine(case_id=case.id, stream=line.stream, text=line.text,
                          repeat=repeat, t=line.t)
            for update in self.parser.feed_many(line.stream, line.text):
                progress = progress_event(case, repeat, update.done_bytes,
                                     update.total_bytes or self.planned, update.phase,
                                     update.message, time.monotonic() - self.t0,
                                     share.done_before, share.total_bytes, share.overall,
                                     target=update.target)
                yield progress
                if update.target is not None:  # one target's share: not the case's
                    continue
                self.last = progress
                if update.rate is not None and update.rate >= 0:
                    # the tool's own figure of its rate, beside the sampled counters
                    yield Sample(case_id=case.id, series="tool_bps", value=update.rate,
                                 repeat=repeat, t=line.t)

    def _sample(self, now: float) -> Iterator[Event]:
        """The samplers' figures; the overall ETA moved on; a stuck tool stopped."""
        yield from samples(self.monitor, self.case, self.repeat, self.disks)
        share, last = self.share, self.last
        if share.overall is not None and (last is None or now - self.t0 - last.elapsed >= 1.0):
            # time passes between the tool's lines: the overall ETA moves on
            self.last = progress_event(self.case, self.repeat, last.done_bytes if last else None,
                                  last.total_bytes if last else self.planned,
                                  last.phase if last else None,
                                  last.message if last else None, now - self.t0,
                                  share.done_before, share.total_bytes, share.overall)
            yield self.last
        moved = sum(v for k, v in self.monitor.totals().items() if k.startswith("app_"))
        if moved != self.last_moved:
            self.last_moved, self.last_activity = moved, now
        elif now - self.last_activity > STALL_SECONDS and not self.seen.stalled:
            self.seen.stalled = True
            yield self._log(f"no output and no I/O for {STALL_SECONDS:.0f} s: stopping the "
                            "stuck tool")
            self.p.terminate(TERM_GRACE)


@dataclass(frozen=True)
class Ending:
    """How the tool process ended, beside its output: for the case's end event."""

    tail: str  # the transcript's last lines
    signal: int | None
    duration: float
    t: float  # wall-clock time of the end event


def outcome(case: Case, repeat: int, adapter: ToolAdapter, output: ToolOutput,
            seen: Watched, ending: Ending) -> CaseFinished | CaseFailed | CaseCancelled:
    """A measured step's end event, decided from its output and what the watcher saw, and
    nothing else (no process, no clock: tested on its own). A cancelled case keeps what the
    tool measured until then, flagged partial; a stuck, killed or failing tool fails the case
    with its partial figures (a case on several hosts keeps each host's rows as the tool
    flagged them); a report that does not parse fails it with the parser's words."""
    status = output.exit_status
    common = {"case_id": case.id, "repeat": repeat, "transcript_tail": ending.tail,
              "exit_status": status, "duration": ending.duration, "t": ending.t}
    on_hosts = bool(host_names(case.params))  # each host's rows flagged by what became of it
    if seen.cancelled or seen.stalled or status != 0:
        partial = adapter.parse_partial(output, case.params)
        metrics = tuple(partial if on_hosts and not seen.cancelled else flag_partial(partial))
        if seen.cancelled:  # not a failure: what the tool measured until then is kept, partial
            return CaseCancelled(signal=ending.signal, metrics=metrics, **common)
        if seen.stalled:
            error = (f"{case.tool} printed nothing and moved no data for {STALL_SECONDS:.0f} s "
                     "and was stopped (stuck)")
        elif ending.signal:
            error = f"{case.tool} was killed by signal {ending.signal}"
        else:
            error = f"{case.tool} exited with status {status}"
            try:
                adapter.parse_result(output, case.params)
            except DisklabError as e:
                error = f"{error}: {e}"
        return CaseFailed(error=error, signal=ending.signal, metrics=metrics, **common)
    try:
        metrics = tuple(adapter.parse_result(output, case.params))
    except DisklabError as e:  # a host that failed keeps the others' figures
        kept = tuple(adapter.parse_partial(output, case.params)) if on_hosts else ()
        return CaseFailed(error=str(e), metrics=kept, **common)
    return CaseFinished(case_id=case.id, repeat=repeat, metrics=metrics, exit_status=status,
                        duration=ending.duration, t=ending.t)


def samples(monitor: Monitor, case: Case, repeat: int,
             disks: TargetDisks | None = None) -> Iterator[Sample]:
    t = time.time()
    for series, value in monitor.sample().items():
        yield Sample(case_id=case.id, series=series, value=value, repeat=repeat, t=t)
    if disks is not None:  # device_write_bps:a, ... (several targets)
        for series, value in disks.sample().items():
            yield Sample(case_id=case.id, series=series, value=value, repeat=repeat, t=t)


def flag_partial(metrics: list[Metric]) -> list[Metric]:
    return [
        m if m.note and "partial" in m.note
        else Metric(m.name, m.value, m.unit, f"partial{': ' + m.note if m.note else ''}", m.params)
        for m in metrics
    ]


def progress_event(
    case: Case,
    repeat: int,
    done: int | None,
    total: int | None,
    phase: str | None,
    message: str | None,
    elapsed: float,
    done_before: int,
    total_bytes: int,
    tracker: OverallProgress | None = None,
    target: str | None = None,
) -> Progress:
    """Progress with the ETA of this case (the time left of a time-based case, else bytes left
    at the rate so far) and the session's overall share and ETA (core.run.progress; by bytes only
    without a tracker). A target's own progress (several targets) is that target's bytes: no
    ETA, no overall."""
    if target is not None:
        return Progress(case_id=case.id, done_bytes=done, total_bytes=total, phase=phase,
                        message=message, repeat=repeat, elapsed=elapsed, t=time.time(),
                        target=target)
    eta = fraction = None
    runtime = runtime_of(case)
    if runtime > 0:
        fraction = min(1.0, elapsed / runtime) if phase != "done" else 1.0
        eta = max(0.0, runtime - elapsed) if phase != "done" else 0.0
    elif done is not None and total:
        fraction = min(1.0, done / total)
        if done and elapsed > 0:
            eta = max(0.0, (total - done) * elapsed / done)
    overall = overall_eta = None
    runs_done = None
    if tracker is not None:
        tracker.update(measured=elapsed if phase != "done" else None, done_bytes=done)
        est = tracker.estimate(time.monotonic())
        overall, overall_eta, runs_done = est.fraction, est.eta, est.runs_done
    elif total_bytes:
        overall = min(1.0, (done_before + (done or 0)) / total_bytes)
    return Progress(case_id=case.id, done_bytes=done, total_bytes=total, phase=phase,
                    message=message, repeat=repeat, elapsed=elapsed, eta=eta, overall=overall,
                    overall_eta=overall_eta, fraction=fraction, runs_done=runs_done,
                    t=time.time())


def overall_progress(run: Planned, tracker: OverallProgress) -> Progress:
    """After a run ended: the overall share and ETA with that run counted as done."""
    est = tracker.estimate(time.monotonic())
    return Progress(case_id=run.case.id, done_bytes=None, total_bytes=None, phase=None,
                    repeat=run.repeat, overall=est.fraction, overall_eta=est.eta,
                    runs_done=est.runs_done, t=time.time())
