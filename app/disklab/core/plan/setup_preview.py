"""What applying a plan's configurations runs as root, shown before it runs: the one preview
`disklab plan show` prints and the Configurations page shows, at the device and mountpoint a
preview names (core.fs.commands: `preview_device`, `preview_mountpoint`, the very
`setup_commands` the root helper runs)."""

from __future__ import annotations

from dataclasses import dataclass

from disklab.core.fs.commands import (
    command_line,
    partition_argvs,
    partition_device,
    preview_device,
    preview_mountpoint,
    setup_commands,
)
from disklab.core.plan.targets import named_targets, partition_names
from disklab.core.vocab.model import RAW_SECTION, FsConfig, Plan

AS_IS_NOTE = "(the target's filesystem is used as it is: nothing is formatted)"
MADE = ("image", "format")  # the kinds of target a configuration is made on


@dataclass(frozen=True)
class SetupStep:
    """One part of the preview: what it is (a target's partitioning, the raw device section,
    a configuration on one stream target), the command lines it runs, or a note instead."""

    heading: str
    commands: tuple[str, ...] = ()
    note: str = ""


def config_commands(config: FsConfig, device: str, mountpoint: str) -> list[str]:
    """The command lines of applying `config` to `device` and mounting it at `mountpoint`, as
    a user would type them; AS_IS_NOTE alone for a configuration that formats nothing.
    ConfigError for one whose commands cannot be built."""
    if config.fs is None:
        return [AS_IS_NOTE]
    return [command_line(c.argv) for c in setup_commands(config, device, mountpoint)]


def setup_preview(plan: Plan) -> list[SetupStep]:
    """Every image and format target's steps in plan order: the partitioning of a split target
    (partition_argvs), the raw device section, then each configuration on each stream target
    it is made on (a partition's mountpoint named after it)."""
    targets = named_targets(plan)
    several = len(targets) > 1 or plan.target.partitions > 0
    steps: list[SetupStep] = []
    for name, target in targets.items():
        if target.kind not in MADE:
            continue
        device = preview_device(target.kind, target.path)
        places = {name: device}
        if target.partitions:
            steps.append(SetupStep(
                f"target {name}: {target.partitions} GPT partitions of {device}:",
                tuple(command_line(argv) for argv in
                      partition_argvs(device, target.size, target.partitions))))
            places = {stream: partition_device(device, i) for i, stream in enumerate(
                partition_names(name, target.partitions), start=1)}
        if plan.raw_section:
            steps.append(SetupStep(f"{RAW_SECTION} {device}: the raw = true tests read and "
                                   "write it, before any configuration is made"))
        for config in plan.configs:
            for stream, on in places.items():
                if config.targets and stream not in config.targets:
                    continue
                where = f"{stream} ({on})" if several else on
                heading = f"configuration {config.label!r} on {where}:"
                if config.fs is None:
                    steps.append(SetupStep(heading, note=AS_IS_NOTE))
                    continue
                mountpoint = preview_mountpoint() + (f"-{stream}" if several else "")
                steps.append(SetupStep(heading, tuple(config_commands(config, on, mountpoint))))
    return steps
