"""A session's course through its sections (the raw-device section, each configuration): each
section's runs in the plan's order, the tally of what was done, and the stop between two steps
(a cancel, or a failure that ends the session).

Repeats run in rounds (every case once, then every case again): slow drift of the device (SSD
write cache filling, a filesystem ageing, thermal throttling) then spreads over all cases
instead of biasing the ones that happened to run last.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from disklab.core.plan.targets import named_targets, stream_targets
from disklab.core.run.case import CaseKit, run_case
from disklab.core.run.planning import Planned, runtime_of
from disklab.core.run.progress import OverallProgress
from disklab.core.run.schedule import Schedule
from disklab.core.run.watch import CasePlace, overall_progress
from disklab.core.system.devices import check_destructive
from disklab.core.vocab.errors import DisklabError
from disklab.core.vocab.events import CaseFailed, Event, Notice


@dataclass
class Tally:
    """What the session has done so far, across sections."""

    total_bytes: int
    run_count: int
    done_bytes: int = 0
    index: int = 0
    failed: int = 0
    status: str = "finished"
    overall: OverallProgress | None = None  # progress and ETA over every run

    def count(self, run: Planned, outcome: str, stop_on_failure: bool) -> None:
        """One run ended with `outcome`."""
        self.index += 1
        self.done_bytes += run.command.planned_bytes or 0
        if outcome == "cancelled":
            self.status = "cancelled"
        elif outcome == "failed":
            self.failed += 1
            if stop_on_failure:
                self.status = "failed"


@dataclass
class Sections:
    """Runs the sections of one session's schedule with its case kit, counting into its
    tally."""

    schedule: Schedule
    kit: CaseKit
    tally: Tally
    versions: Mapping[str, str | None]

    def stopping(self) -> bool:
        """Whether the session stops before its next step: a cancel (which makes it
        'cancelled', wherever it came: during a setup, between two configurations, between
        two cases) or a failure that ends it."""
        if self.kit.cancel.is_set():
            self.tally.status = "cancelled"
        return self.tally.status != "finished"

    def run(self, label: str, directory: str, placed: Mapping[str, str] | None = None,
            raw_device: str | None = None, repeat: int | None = None) -> Iterator[Event]:
        """Every run of one section (of its round `repeat` only, when given), its filesystem
        mounted at `directory` (and, with several targets, each stream target's at
        `placed[name]`)."""
        kit, tally = self.kit, self.tally
        if placed is None:  # one target: every name `on` may use ("target") is this directory
            placed = {name: directory for name in stream_targets(named_targets(kit.plan))}
        for run in self.schedule.runs(label, directory, placed=placed, raw_device=raw_device,
                                      repeat=repeat, endpoints=kit.endpoints):
            if self.stopping():
                return
            if run.target.device is not None:
                refused = self._recheck_device()
                if refused:
                    yield Notice(level="error", message=refused, case_id=run.case.id,
                                 t=time.time())
                    tally.status = "failed"
                    return
            if tally.overall is not None:
                tally.overall.start_run(time.monotonic(), runtime_of(run.case),
                                        run.command.planned_bytes, run.case.config)
            outcome = yield from run_case(
                kit, run, tally.index, tally.run_count, self.versions.get(run.case.tool),
                CasePlace(tally.done_bytes, tally.total_bytes, tally.overall))
            if tally.overall is not None and tally.overall.end_run(time.monotonic()):
                yield overall_progress(run, tally.overall)  # a run that ended without "done"
            yield from kit.helper.log()
            tally.count(run, outcome, kit.plan.stop_on_failure)

    def _recheck_device(self) -> str | None:
        """Why the raw device may not be written now (its identity or safety changed since the
        plan was confirmed: another device on the same path), or None. Checked before every
        raw case."""
        target = self.kit.plan.target
        if target.kind == "image":
            return None  # the loop device of an image this session attached
        try:
            check_destructive(target.path, target.confirm, self.kit.library_path)
        except DisklabError as e:
            return f"{target.path} refused before a raw case: {e}"
        return None

    def fail(self, label: str, error: str) -> Iterator[Event]:
        """A section that could not be made: its runs are failed with the reason."""
        yield Notice(level="error", message=f"{label}: {error}", t=time.time())
        for run in self.schedule.runs(label):
            yield CaseFailed(case_id=run.case.id, repeat=run.repeat, error=error,
                             transcript_tail="", t=time.time())
            self.tally.failed += 1
            self.tally.index += 1
            if self.tally.overall is not None:
                self.tally.overall.skip_run(runtime_of(run.case), run.command.planned_bytes)
