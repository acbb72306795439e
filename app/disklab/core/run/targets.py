"""Where a session's sections run, by the target's shape: directories as they are; a raw device,
checked again before its runs; images and format targets (one or several, or the partitions of
one) with each configuration made, mounted, read back and undone in turn (disklab.core.fs.apply).

Only what a shape uses is set up: a directory target makes nothing and asks for no helper; a
configuration's teardown runs whatever happens, without yielding (the caller may be closing
the generator).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Collection, Generator, Iterator
from typing import Any

from disklab.core.fs.apply import Scratch
from disklab.core.plan.targets import config_targets, is_multi, named_targets, stream_targets
from disklab.core.run.sections import Sections
from disklab.core.system.devices import check_destructive, identity, identity_of
from disklab.core.system.mountinfo import filesystem_of
from disklab.core.vocab.errors import DisklabError
from disklab.core.vocab.events import ConfigApplied, ConfigTornDown, Event, LogLine, Notice
from disklab.core.vocab.model import RAW_SECTION, FsConfig, Plan

Devices = dict[str, tuple[str, str | None]]  # stream target -> (device, confirm)


def run_target(s: Sections, state_dir: str) -> Iterator[Event]:
    """Every section of the session, on its target's shape."""
    plan = s.kit.plan
    if plan.target.kind == "directory":
        yield from _run_directories(s)
    elif plan.target.kind == "device" and not is_multi(plan):
        yield from _run_raw(s)
    else:
        yield from _run_configs(s, state_dir)


def _run_directories(s: Sections) -> Iterator[Event]:
    """Directory targets, one or several: used as they are, the one configuration's cases run
    with every stream target's files in its directory."""
    plan = s.kit.plan
    label = plan.configs[0].label
    readback = filesystem_of(plan.target.path)
    placed = None  # one target: every name `on` may use is its directory
    if is_multi(plan):
        targets = named_targets(plan)
        placed = {name: targets[parent].path
                  for name, (parent, _n) in stream_targets(targets).items()}
        readback = {**readback, "targets": {name: filesystem_of(path)
                                            for name, path in placed.items()}}
    yield ConfigApplied(config=label, readback=readback, t=time.time())
    yield from s.run(label, plan.target.path, placed)
    yield ConfigTornDown(config=label, t=time.time())


def _run_configs(s: Sections, state_dir: str) -> Iterator[Event]:
    """Image and format targets, one or several (or the partitions of one): images attached,
    partitioned when asked; then each configuration made on every target it names (each its own
    mkfs, mount and read-back), its cases run with every stream target mounted, and undone."""
    plan, kit = s.kit.plan, s.kit
    single = not is_multi(plan)
    notes: list[str] = []
    scratch: Scratch | None = None
    mountpoints: list[str] = []
    try:
        if s.stopping():
            return
        scratch = Scratch(kit.helper.get(), state_dir, kit.library_path, log=notes.append,
                          state=kit.records.record)
        devices = yield from _make_targets(s, scratch, single)
        if single and RAW_SECTION in s.schedule.sections and not s.stopping():
            yield from _run_raw_section(s, next(iter(devices.values()))[0])
        for config, repeat in _config_rounds(plan, s.schedule.rounds):
            if s.stopping():
                break
            placed = yield from _apply_config(s, scratch, config, devices, mountpoints, notes)
            if placed is None:
                continue
            yield from s.run(config.label, next(iter(placed.values())), placed, repeat=repeat)
            undone = [line for name in placed for line in scratch.release(devices[name][0])]
            yield ConfigTornDown(config=config.label, t=time.time())
            for line in undone:
                yield LogLine(case_id="", stream="disklab", text=line, t=time.time())
    except DisklabError as e:
        yield Notice(level="error", message=f"target setup failed: {e}", t=time.time())
        s.tally.status = "failed"
    finally:
        if scratch is not None:
            scratch.teardown()  # the mountpoints' directories too, once unmounted
        for m in mountpoints:
            with contextlib.suppress(OSError):
                os.rmdir(m)


def _config_rounds(plan: Plan, rounds: Collection[tuple[str, int]]
                   ) -> Iterator[tuple[FsConfig, int | None]]:
    """Each configuration to make, in the plan's order: once with all its repeats (None), or
    made again for each round of an interleaved plan. Only what has runs to do (`rounds`:
    (configuration, repeat) pairs; a resumed session's complete ones are left out) is made."""
    if plan.order != "interleaved":
        needed = {label for label, _repeat in rounds}
        yield from ((c, None) for c in plan.configs if c.label in needed)
        return
    for repeat in range(1, plan.repeats + 1):
        yield from ((c, repeat) for c in plan.configs if (c.label, repeat) in rounds)


def _apply_config(s: Sections, scratch: Scratch, config: FsConfig, devices: Devices,
                  mountpoints: list[str], notes: list[str]
                  ) -> Generator[Event, None, dict[str, str] | None]:
    """Make `config` on each stream target it names and say what the kernel applied; stream
    target -> its mountpoint, or None when one could not be made (its runs are failed, what
    was made of it undone). One target's read-back is the configuration's own; several
    targets' are under "targets", their mismatches named by target."""
    single = not is_multi(s.kit.plan)
    placed: dict[str, str] = {}
    readbacks: dict[str, dict[str, Any]] = {}
    failed = None
    for name in config_targets(config, named_targets(s.kit.plan)):
        device, confirm = devices[name]
        mountpoint = scratch.mountpoint()  # the helper makes it in its own directory
        mountpoints.append(mountpoint)
        try:
            readbacks[name] = scratch.apply(config, device, mountpoint, confirm=confirm)
        except DisklabError as e:
            failed = f"could not apply{'' if single else f' on target {name} ({device})'}: {e}"
            break
        finally:
            while notes:  # what the making said (mkfs's warnings), before what follows
                yield Notice(level="warning", message=notes.pop(0), t=time.time())
        placed[name] = mountpoint
    if failed is not None:
        for made in placed:
            scratch.release(devices[made][0])
        yield from s.fail(config.label, failed)
        return None
    first = next(iter(readbacks.values()))
    if single:
        readback, mismatches = first, tuple(first.get("mismatches") or ())
    else:
        readback = {**first, "targets": readbacks}
        mismatches = tuple(f"{name}: {m}" for name, rb in readbacks.items()
                           for m in rb.get("mismatches") or ())
    yield ConfigApplied(config=config.label, readback=readback, mismatches=mismatches,
                        t=time.time())
    yield from s.kit.helper.log()
    for m in mismatches:
        yield Notice(level="warning", message=f"{config.label}: {m}", t=time.time())
    return placed


def _make_targets(s: Sections, scratch: Scratch, single: bool
                  ) -> Generator[Event, None, Devices]:
    """Attach each image, partition what asks for it; stream target -> (device, confirm)."""
    devices: Devices = {}
    for name, target in named_targets(s.kit.plan).items():
        if target.kind == "image":
            device = scratch.attach_image(target.path, int(target.size or 0))
            confirm = None  # the identity read when DiskLab attached it
            yield Notice(level="info", t=time.time(), message=(
                f"image {target.path} on {device} (direct I/O): its figures also include "
                "the filesystem that holds the image" if single else
                f"target {name}: image {target.path} on {device} (direct I/O)"))
        else:
            device, confirm = target.path, target.confirm
        if target.partitions:
            parts = scratch.partition(device, target.partitions, confirm)
            yield from s.kit.helper.log()
            yield Notice(level="info", t=time.time(), message=(
                f"target {name}: {device} split into {len(parts)} GPT partitions "
                f"({', '.join(f'{name}{i}={p}' for i, p in enumerate(parts, start=1))})"))
            for i, part in enumerate(parts, start=1):
                devices[f"{name}{i}"] = (part, None)  # identities read by the helper
        else:
            devices[name] = (device, confirm)
    return devices


def _run_raw(s: Sections) -> Iterator[Event]:
    """A raw device target: its identity and safety are checked again right before the runs
    and before every case (the device may have been swapped since the plan was confirmed)."""
    plan = s.kit.plan
    try:
        device = check_destructive(plan.target.path, plan.target.confirm, s.kit.library_path)
    except DisklabError as e:
        yield Notice(level="error", message=f"{plan.target.path} refused: {e}", t=time.time())
        s.tally.status = "failed"
        return
    yield from _run_on_device(s, plan.configs[0].label, plan.target.path, identity_of(device))


def _run_raw_section(s: Sections, device: str) -> Iterator[Event]:
    """The raw = true tests of an image or format target, on its block device before any
    configuration is made (the SAN study: the LUN first, then the filesystem on it). The device
    is the one the target's confirm (or this session's attach) already covers."""
    yield from _run_on_device(s, RAW_SECTION, device, identity(device), raw_device=device)


def _run_on_device(s: Sections, label: str, path: str, ident: str,
                   raw_device: str | None = None) -> Iterator[Event]:
    """One section's cases on a block device; result files go to a temporary directory that
    is removed afterwards (the helper's own, when the tools run through it)."""
    kit = s.kit
    try:
        work = kit.helper.get().workdir if kit.via_helper else kit.records.make_dir("disklab-raw-")
    except DisklabError as e:
        yield Notice(level="error", message=f"the tools cannot run as root: {e}", t=time.time())
        s.tally.status = "failed"
        return
    assert work is not None
    yield ConfigApplied(config=label, readback={"device": path, "identity": ident},
                        t=time.time())
    try:
        yield from s.run(label, work, raw_device=raw_device)
    finally:
        if not kit.via_helper:
            shutil.rmtree(work, ignore_errors=True)
            kit.records.forget_dir(work)
    yield ConfigTornDown(config=label, t=time.time())
