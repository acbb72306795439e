"""A session's schedule: its plan expanded once, before the first event, and read by every later
step (the first event's cases, the tools' versions, the work and ETA, which configurations
are made, each section's runs, the runs failed with a configuration that could not be made).

A run's command is built from the schedule's cases when its section runs, once: its directory
(a configuration's mountpoint, an image's loop device, a host's server port) exists only then.
Only the counts are kept of the pass that adds up the work (a plan may have 100000 runs: their
commands are never all held).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from disklab.core.plan.matrix import expand
from disklab.core.plan.targets import named_targets
from disklab.core.run.planning import Planned, plan_runs, runtime_of
from disklab.core.run.progress import Work
from disklab.core.vocab.model import Case, FsConfig, HostEndpoint, Plan, Target


@dataclass(frozen=True)
class Schedule:
    """The plan's cases in run order, the (section, repeat) rounds with a run to do, and the
    work they add up to; `as_root`: the tools run through the privileged helper; `only`: a
    resumed session's runs without a complete result (None: every run)."""

    plan: Plan
    cases: tuple[Case, ...]
    rounds: frozenset[tuple[str, int]]
    work: Work
    python: str = sys.executable
    as_root: bool = False
    only: frozenset[tuple[str, int]] | None = None

    @classmethod
    def of(cls, plan: Plan, python: str = sys.executable, as_root: bool = False,
           only: frozenset[tuple[str, int]] | None = None) -> Schedule:
        """The plan expanded (the one call of expand on a session's path) and counted."""
        cases = tuple(expand(plan))
        rounds: set[tuple[str, int]] = set()

        def kinds() -> Iterator[tuple[float, int | None, str]]:
            for run in plan_runs(plan, python, as_root=as_root, only=only, cases=cases):
                rounds.add((run.case.config, run.repeat))
                yield runtime_of(run.case), run.command.planned_bytes, run.case.config

        work = Work.of(kinds())
        return cls(plan, cases, frozenset(rounds), work, python, as_root, only)

    @property
    def sections(self) -> tuple[str, ...]:
        """The sections with a run to do, in run order."""
        needed = {label for label, _repeat in self.rounds}
        return tuple(label for label in self.plan.sections() if label in needed)

    @property
    def targets(self) -> Mapping[str, Target]:
        """The plan's targets by name."""
        return named_targets(self.plan)

    @property
    def configurations(self) -> tuple[FsConfig, ...]:
        """The plan's configurations, in its order."""
        return self.plan.configs

    @property
    def tools(self) -> set[str]:
        """The tools the cases run."""
        return {c.tool for c in self.cases}

    def runs(self, section: str, directory: str | None = None, *,
             placed: Mapping[str, str] | None = None, raw_device: str | None = None,
             repeat: int | None = None, endpoints: tuple[HostEndpoint, ...] | None = None
             ) -> Iterator[Planned]:
        """The runs of one section (of its round `repeat` only, when given), in run order,
        each command built now: its filesystem at `directory`, each stream target's at
        `placed[name]`, a raw section on `raw_device`, the hosts' servers at `endpoints`
        (each default: as previewed before a run)."""
        return plan_runs(self.plan, self.python,
                         None if directory is None else {section: directory}, self.as_root,
                         self.only, endpoints,
                         None if placed is None else {section: placed}, raw_device,
                         cases=self.cases, section=section, repeat=repeat)
