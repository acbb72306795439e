"""What a plan will run: each case x repeat with its command and where it runs (Planned), its
directories previewed before they exist. A session reads it through its Schedule
(core.run.schedule), which expands the plan once."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass

import psutil

from disklab.core import tools
from disklab.core.fs.commands import preview_device, preview_mountpoint
from disklab.core.hosts.servers import planned_endpoints
from disklab.core.plan.matrix import expand
from disklab.core.plan.targets import named_targets, stream_targets
from disklab.core.tools.base import Command, RunTarget
from disklab.core.tools.fio.client import adapter_for
from disklab.core.vocab.model import RAW_SECTION, Case, HostEndpoint, Plan


@dataclass(frozen=True)
class Planned:
    case: Case
    repeat: int
    command: Command
    target: RunTarget


def plan_runs(plan: Plan, python: str = sys.executable,
              directories: Mapping[str, str] | None = None,
              as_root: bool = False,
              only: Collection[tuple[str, int]] | None = None,
              endpoints: tuple[HostEndpoint, ...] | None = None,
              placements: Mapping[str, Mapping[str, str]] | None = None,
              raw_device: str | None = None,
              cases: Sequence[Case] | None = None,
              section: str | None = None,
              repeat: int | None = None,
              ) -> Iterator[Planned]:
    """Every case x repeat with its command, in run order, one at a time (a plan may have
    100000 runs: their commands are made as they are needed, never all held), in the plan's
    order (Plan.rounds): configuration by configuration, each with its rounds of repeats, or
    interleaved, each configuration's repeat r before any repeat r + 1. `directories` maps
    a config label to where its filesystem is mounted (default: the plan's target directory;
    for an image or a format target, preview_mountpoint, where a configuration is shown mounted
    before a run: the tools' files are on the filesystem made there, never beside the image
    file); `as_root`: the tools run through the privileged helper; `only`: just these
    (case id, repeat) pairs (a resumed session's runs without a complete result); `endpoints`:
    where the hosts' fio servers are reached (default: as the plan says, before any starts);
    `placements`: config label -> stream target name -> its directory, for the cases placed
    with `on` (default: the directory targets' paths, else a preview mountpoint per target);
    `raw_device`: the device the raw-device section's cases run on (an image's loop device once
    attached; default: as `plan show` previews it); `cases`: the plan's cases when already
    expanded (a Schedule's); `section`, `repeat`: just that section's runs, of that round."""
    cases = expand(plan) if cases is None else cases
    hosts = planned_endpoints(plan) if endpoints is None else endpoints
    is_root = as_root or os.geteuid() == 0
    ram = psutil.virtual_memory().total
    device = plan.target.path if plan.target.kind == "device" else None
    default = {"directory": plan.target.path, "device": tempfile.gettempdir()}.get(
        plan.target.kind) or preview_mountpoint()
    previews = _preview_directories(plan)
    by_section: dict[str, list[Case]] = {}
    for case in cases:
        by_section.setdefault(case.config, []).append(case)
    for label, r in plan.rounds():  # by configuration, or interleaved by repeat
        if section not in (None, label) or repeat not in (None, r):
            continue
        directory = (directories or {}).get(label, default)
        placed = (placements or {}).get(label, previews)
        on = device
        if label == RAW_SECTION and plan.raw_section:  # (a device target's label is the same)
            on = raw_device or preview_device(plan.target.kind, plan.target.path)
            directory = (directories or {}).get(label, tempfile.gettempdir())
        for case in by_section.get(label, ()):
            if only is not None and (case.id, r) not in only:
                continue
            target = RunTarget(directory=directory, tag=f"{case.id}-r{r}",
                               device=on, ram_bytes=ram, is_root=is_root,
                               python=python, hosts=hosts, directories=placed)
            command = adapter_for(case.tool, case.params, hosts).build_command(
                case.params, target)
            yield Planned(case, r, command, target)


def _preview_directories(plan: Plan) -> dict[str, str]:
    """Stream target -> directory before a run: a directory target's path; for the targets
    DiskLab mounts, a preview mountpoint per stream target (the run makes new ones)."""
    targets = named_targets(plan)
    out: dict[str, str] = {}
    for name, (parent, _n) in stream_targets(targets).items():
        target = targets[parent]
        out[name] = (target.path if target.kind == "directory"
                     else f"{preview_mountpoint()}-{name}")
    return out


def runtime_of(case: Case) -> float:
    """A time-bound case's seconds (0: size-based): its runtime, else how long its tool's own
    pacing makes it last (fio's rate, rate_iops), which no device's speed changes."""
    try:
        runtime = max(0.0, float(case.params.get("runtime") or 0))
    except (TypeError, ValueError):
        runtime = 0.0
    if runtime or case.tool not in tools.tool_names():
        return runtime
    return tools.get_adapter(case.tool).paced_seconds(case.params) or 0.0
