"""run_plan(): the whole run as a generator of events (DESIGN.md rule 4).

The CLI iterates it directly; the GUI iterates it in one worker thread. Everything a run does is in
an event, and the library stores every event, so what the user saw is what is kept.

Repeats run in rounds (every case once, then every case again): slow drift of the device (SSD write
cache filling, a filesystem ageing, thermal throttling) then spreads over all cases instead of
biasing the ones that happened to run last.

Nothing is left behind: a case's files are removed after it whatever happens, including a failure,
a cancel, or the caller closing the generator; a running tool is killed with its whole tree.

Root work goes through one privileged helper per session (disklab.core.privilege), started on
first use. When DiskLab is not root and the target is root's (a raw device, or the filesystems
DiskLab makes on an image or a device), the tools run through that helper too.

A case with a page-cache limit runs every step of it in a memory cgroup of its own (made here, or
by the helper when its tools run there), recorded on disk while it exists and removed after the
case, so that its buffered figures are the device's and not the RAM's.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Collection, Generator, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from disklab.core import proc, tools
from disklab.core.fs.apply import CgroupRecord, Scratch, StateFile, session_state
from disklab.core.fs.options import journalled_data_seconds
from disklab.core.hosts.leftovers import remote_step
from disklab.core.hosts.servers import Servers, used_hosts
from disklab.core.hosts.ssh import Ask
from disklab.core.plan.matrix import expand
from disklab.core.plan.targets import config_targets, is_multi, named_targets, stream_targets
from disklab.core.privilege import Privileged, PrivilegedTool
from disklab.core.privilege.protocol import CgroupCreate, DropCaches, ToolCleanup
from disklab.core.proc.group import ToolGroup
from disklab.core.proc.tool import ToolProcess
from disklab.core.run.planning import Planned, plan_runs, planned_work, runtime_of
from disklab.core.run.progress import OverallProgress
from disklab.core.run.resume import Resumption, host_identity, target_identity
from disklab.core.run.watch import (
    TERM_GRACE,
    CancelFlag,
    CaseWatch,
    Ending,
    Share,
    outcome,
    overall_progress,
    progress_event,
)
from disklab.core.system.cgroups import (
    MemoryController,
    create_group,
    find_memory_controller,
    group_name,
    oom_kills,
    remove_group,
)
from disklab.core.system.cleanup import remove_files
from disklab.core.system.devices import check_destructive, identity, identity_of
from disklab.core.system.host import host_facts, target_device_facts
from disklab.core.system.mountinfo import filesystem_of
from disklab.core.system.syncfs import syncfs
from disklab.core.tools.base import ToolAdapter, ToolOutput
from disklab.core.tools.fio.client import adapter_for, host_names, server_files
from disklab.core.vocab.errors import DisklabError, PrivilegeError
from disklab.core.vocab.events import (
    CaseCancelled,
    CaseFailed,
    CaseFinished,
    CaseStarted,
    ConfigApplied,
    ConfigTornDown,
    Event,
    LogLine,
    Notice,
    SessionFinished,
    SessionResumed,
    SessionStarted,
)
from disklab.core.vocab.model import RAW_SECTION, Case, FsConfig, HostEndpoint, Plan
from disklab.core.vocab.units import format_size

SAMPLE_INTERVAL = 0.5  # seconds between monitor samples: DESIGN.md asks for 250-1000 ms



class _Never:
    def is_set(self) -> bool:
        return False


def tool_versions(names: set[str]) -> dict[str, str | None]:
    """Each tool's version as it prints it (None when it is missing or says nothing)."""
    versions: dict[str, str | None] = {}
    for name in sorted(names):
        adapter = tools.get_adapter(name)
        argv = adapter.version_argv()
        if adapter.builtin_version() is not None:
            versions[name] = adapter.builtin_version()
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


def _drop_caches(ctx: _Context) -> str | None:
    """sync + drop the page cache, dentries and inodes through the privileged helper (rule 7).
    Returns why not, when it cannot."""
    try:
        ctx.helper().call(DropCaches())
    except DisklabError as e:
        return f"caches not dropped ({e}): reads may come from memory"
    return None


@dataclass
class _Progress:
    """What the session has done so far, across configurations."""

    total_bytes: int
    run_count: int
    done_bytes: int = 0
    index: int = 0
    failed: int = 0
    status: str = "finished"
    overall: OverallProgress | None = None  # progress and ETA over every run


def run_plan(
    plan: Plan,
    *,
    warnings: tuple[str, ...] = (),
    cancel: CancelFlag | None = None,
    python: str = sys.executable,
    sample_interval: float = SAMPLE_INTERVAL,
    state_dir: str | None = None,
    library_path: str | None = None,
    password: Callable[[], str] | None = None,
    privileged_tools: bool | None = None,
    resume: Resumption | None = None,
    ask: Ask | None = None,
) -> Iterator[Event]:
    """Run every case of `plan` `repeats` times, yielding events as they happen.

    `resume`: take up that incomplete session instead (its plan is `plan`): SessionResumed
    comes instead of SessionStarted, and only its runs without a complete result run.

    A directory target runs as it is. An image or format target gets each configuration made,
    mounted, read back and undone in turn (disklab.core.fs.apply); `state_dir` keeps the record of
    what is set up, so that the next start can clean up after a kill. `password` is asked (once)
    when sudo needs one for the privileged helper. `privileged_tools`: the tools of an image,
    format or device target run through the helper (default: when DiskLab is not root).
    `ask`: how ssh's questions (host key, password, passphrase) reach a person, when a plan's
    hosts are started over SSH; their servers are stopped when the run ends, however it ends.
    """
    cancel = cancel or _Never()
    via_helper = plan.target.needs_root and (os.geteuid() != 0 if privileged_tools is None
                                             else privileged_tools)
    only = frozenset(resume.runs) if resume is not None else None
    work = planned_work(plan, python, as_root=via_helper, only=only)
    run_count, total_bytes = work.runs, work.total_bytes
    cases = expand(plan)
    versions = tool_versions({c.tool for c in cases})
    host = _host_record(plan, versions)
    limits = _limits(plan)
    controller = find_memory_controller() if limits else None
    record = session_state(state_dir or tempfile.gettempdir())
    servers = Servers(used_hosts(plan), ask, cancel.is_set, record=record)
    try:
        host_problems = servers.start(client_version=versions.get("fio"))
        if servers.states:
            host["hosts"] = dict(servers.facts())
    except BaseException:
        servers.close()
        raise
    if limits:  # the session says which figures were taken under a page-cache limit
        host["page_cache_limit"] = _limits_record(plan, limits, controller, via_helper)
    yield _session_start(plan, cases, host, warnings, resume)
    if resume is not None:
        warnings = (*warnings, *_version_changes(resume, versions))
    for w in (*warnings, *host_problems):
        yield Notice(level="warning", message=w, t=time.time())
    state = _Progress(total_bytes=total_bytes, run_count=run_count,
                      overall=OverallProgress(work, time.monotonic()))
    ctx = _Context(plan, versions, cancel, sample_interval, python, state,
                   library_path=library_path, password=password, via_helper=via_helper,
                   controller=controller,
                   cgroups=CgroupRecord(state_dir or tempfile.gettempdir()),
                   only=only,
                   record=record, servers=servers)
    if via_helper:
        yield Notice(level="info", t=time.time(), message=(
            "the tools run as root through the privileged helper: the target is root's"))
    try:
        yield from _run_target(ctx, state_dir)
        yield from _helper_log(ctx)  # the teardown's commands
    finally:
        servers.close()
        if ctx.priv is not None:
            ctx.priv.close()
            if ctx.priv.workdir:
                _forget_dir(ctx, ctx.priv.workdir)
    if cancel.is_set():  # whenever it came, even during the last teardown
        state.status = "cancelled"
    elif state.status == "finished" and state.failed:
        state.status = "failed"
    yield SessionFinished(status=state.status, failed_cases=state.failed, t=time.time())


def _host_record(plan: Plan, versions: Mapping[str, str | None]) -> dict[str, Any]:
    """The session's record of where it ran: the host's facts, the tools' versions, and what
    a resume compares to refuse another machine or another target."""
    host = host_facts(plan.target.path if plan.target.kind == "directory" else None)
    if plan.target.kind != "directory" and plan.target.path:
        host["target_device"] = target_device_facts(plan.target.kind, plan.target.path)
    host["tools"] = versions
    host["order"] = plan.order  # how the configurations' repeats were laid out in time
    host.update(host_identity())
    host["target"] = {"kind": plan.target.kind, "path": plan.target.path,
                      "size": plan.target.size, "identity": target_identity(plan.target)}
    if plan.targets:  # several targets: each one's facts, by name
        host["targets"] = {name: {"kind": t.kind, "path": t.path, "size": t.size,
                                  "partitions": t.partitions}
                           for name, t in plan.targets.items()}
    return host


def _limits_record(plan: Plan, limits: Mapping[str, int], controller: MemoryController | None,
                   via_helper: bool) -> dict[str, Any]:
    """The session's record of its page-cache limits: the plan's, each test's, the memory
    controller that held them and who made the groups."""
    return {"plan": plan.page_cache_limit, "tests": limits,
            "controller": controller.to_json() if controller else None,
            "made_by": "privileged helper" if via_helper else "disklab"}


def _session_start(plan: Plan, cases: list[Case], host: dict[str, Any],
                   warnings: tuple[str, ...], resume: Resumption | None
                   ) -> SessionStarted | SessionResumed:
    """The session's first event: started, or the incomplete session `resume` taken up."""
    if resume is None:
        return SessionStarted(name=plan.name, cases=tuple(cases), repeats=plan.repeats,
                              host=host, plan_text=plan.source, warnings=warnings, t=time.time())
    return SessionResumed(session_id=resume.session_id, name=plan.name, cases=tuple(cases),
                          repeats=plan.repeats, runs=resume.runs, complete=resume.complete,
                          previous_status=resume.previous_status, host=host,
                          plan_text=plan.source, t=time.time())


def _version_changes(resume: Resumption, versions: Mapping[str, str | None]) -> list[str]:
    """A tool whose version changed since the session started: its resumed figures come from
    another program than its earlier ones."""
    before = resume.tools or {}
    return [f"{name} is {now!r} now, the session started with {before[name]!r}: its resumed "
            "runs' figures may differ from the earlier ones"
            for name, now in versions.items() if name in before and before[name] != now]


def _run_target(ctx: _Context, state_dir: str | None) -> Iterator[Event]:
    plan = ctx.plan
    if plan.target.kind == "directory":
        yield from _run_directories(ctx)
    elif plan.target.kind == "device" and not is_multi(plan):
        yield from _run_raw(ctx)
    else:
        yield from _run_configs(ctx, state_dir)


def _run_directories(ctx: _Context) -> Iterator[Event]:
    """Directory targets, one or several: used as they are, the one configuration's cases run
    with every stream target's files in its directory."""
    plan = ctx.plan
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
    yield from _run_config(ctx, label, plan.target.path, placed)
    yield ConfigTornDown(config=label, t=time.time())


@dataclass
class _Context:
    plan: Plan
    versions: Mapping[str, str | None]
    cancel: CancelFlag
    sample_interval: float
    python: str
    state: _Progress
    library_path: str | None = None
    password: Callable[[], str] | None = None
    via_helper: bool = False  # the tools run as root through the privileged helper
    priv: Privileged | None = None  # the session's privileged helper
    no_priv: str | None = None  # why the helper could not start (said once, not retried)
    # what this session is about to create (files, directories, mounts), for the next start
    record: StateFile | None = None
    ran: list[Mapping[str, Any]] = field(default_factory=list)  # its commands, not yet logged
    controller: MemoryController | None = None  # for page-cache limits made here
    cgroups: CgroupRecord | None = None  # the record of the memory cgroups that exist
    groups: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)  # tag -> group
    only: Collection[tuple[str, int]] | None = None  # the (case, repeat) pairs to run
    servers: Servers | None = None  # the fio servers of the plan's hosts

    @property
    def endpoints(self) -> tuple[HostEndpoint, ...]:
        return self.servers.endpoints if self.servers is not None else ()

    def helper(self) -> Privileged:
        """The session's one privileged helper, started on first use: one authorisation (one
        password prompt at most) per session, and a helper that cannot start is not asked
        again for every case."""
        if self.priv is None:
            if self.no_priv:
                raise PrivilegeError(self.no_priv)
            priv = Privileged(password=self.password, on_command=self.ran.append)
            try:
                priv.start()
            except DisklabError as e:
                self.no_priv = getattr(e, "again", str(e))  # said in full once, then short
                raise
            self.priv = priv
            if self.record is not None and priv.workdir:
                # the helper removes its directory when it ends; should a kill's signal cut
                # that short, the next start removes it (when empty) by this record
                self.record.add({"kind": "dir", "path": priv.workdir, "owner": "helper"})
        return self.priv


def _helper_log(ctx: _Context) -> Iterator[LogLine]:
    """What the privileged helper ran since the last call, into the session's transcript (every
    root command is kept with the session, rule 8)."""
    while ctx.ran:
        cmd = ctx.ran.pop(0)
        if cmd.get("ended"):
            continue  # a tool's end: its status is in CaseFinished or CaseFailed
        text = " ".join(str(a) for a in cmd.get("argv") or ())
        if cmd.get("background"):
            text = f"started as root (pid {cmd.get('pid')}): {text}"
        elif cmd.get("error") or cmd.get("returncode") not in (0, None):
            text += f"  -> {cmd.get('error') or 'exit ' + str(cmd.get('returncode'))}"
        yield LogLine(case_id="", stream="helper", text=text, t=time.time())


def _run_config(ctx: _Context, label: str, directory: str,
                placed: Mapping[str, str] | None = None,
                raw_device: str | None = None, repeat: int | None = None) -> Iterator[Event]:
    """Every run of one configuration (of its round `repeat` only, when given), its
    filesystem mounted at `directory` (and, with several targets, each stream target's at
    `placed[name]`)."""
    state = ctx.state
    if placed is None:  # one target: every name `on` may use ("target") is this directory
        placed = {name: directory for name in stream_targets(named_targets(ctx.plan))}
    runs = (r for r in plan_runs(ctx.plan, ctx.python, {label: directory}, ctx.via_helper,
                                 ctx.only, ctx.endpoints, placements={label: placed},
                                 raw_device=raw_device)
            if r.case.config == label and repeat in (None, r.repeat))
    for run in runs:
        if _stopping(ctx):
            return
        if run.target.device is not None:
            refused = _recheck_device(ctx)
            if refused:
                yield Notice(level="error", message=refused, case_id=run.case.id,
                             t=time.time())
                state.status = "failed"
                return
        if state.overall is not None:
            state.overall.start_run(time.monotonic(), runtime_of(run.case),
                                    run.command.planned_bytes, run.case.config)
        outcome = yield from _run_case(
            run, state.index, state.run_count, ctx.versions.get(run.case.tool), ctx,
            ctx.cancel, ctx.sample_interval, state.done_bytes, state.total_bytes,
        )
        if state.overall is not None and state.overall.end_run(time.monotonic()):
            yield overall_progress(run, state.overall)  # a run that ended without "done"
        yield from _helper_log(ctx)
        state.index += 1
        state.done_bytes += run.command.planned_bytes or 0
        if outcome == "cancelled":
            state.status = "cancelled"
        elif outcome == "failed":
            state.failed += 1
            if ctx.plan.stop_on_failure:
                state.status = "failed"


def _stopping(ctx: _Context) -> bool:
    """Whether the session stops before its next step: a cancel (which makes it 'cancelled',
    wherever it came: during a setup, between two configurations, between two cases) or a
    failure that ends it."""
    if ctx.cancel.is_set():
        ctx.state.status = "cancelled"
    return ctx.state.status != "finished"


def _recheck_device(ctx: _Context) -> str | None:
    """Why the raw device may not be written now (its identity or safety changed since the plan
    was confirmed: another device on the same path), or None. Checked before every raw case."""
    target = ctx.plan.target
    if target.kind == "image":
        return None  # the loop device of an image this session attached
    try:
        check_destructive(target.path, target.confirm, ctx.library_path)
    except DisklabError as e:
        return f"{target.path} refused before a raw case: {e}"
    return None


def _run_configs(ctx: _Context, state_dir: str | None) -> Iterator[Event]:
    """Image and format targets, one or several (or the partitions of one): images attached,
    partitioned when asked; then each configuration made on every target it names (each its own
    mkfs, mount and read-back), its cases run with every stream target mounted, and undone.
    Teardown runs whatever happens, without yielding (the caller may be closing us)."""
    plan = ctx.plan
    single = not is_multi(plan)
    targets = named_targets(plan)
    notes: list[str] = []
    scratch: Scratch | None = None
    mountpoints: list[str] = []
    try:
        if _stopping(ctx):
            return
        scratch = Scratch(ctx.helper(), state_dir or tempfile.gettempdir(), ctx.library_path,
                          log=notes.append, state=ctx.record)
        devices = yield from _make_targets(ctx, scratch, targets, single)
        rounds = {(r.case.config, r.repeat) for r in plan_runs(plan, ctx.python, only=ctx.only)}
        needed = {label for label, _repeat in rounds}
        if single and RAW_SECTION in needed and not _stopping(ctx):
            yield from _run_raw_section(ctx, next(iter(devices.values()))[0])
        for config, repeat in _config_rounds(plan, rounds):
            if _stopping(ctx):
                break
            placed = yield from _apply_config(ctx, scratch, config, devices, mountpoints, notes)
            if placed is None:
                continue
            yield from _run_config(ctx, config.label, next(iter(placed.values())), placed,
                                   repeat=repeat)
            undone = [line for name in placed for line in scratch.release(devices[name][0])]
            yield ConfigTornDown(config=config.label, t=time.time())
            for line in undone:
                yield LogLine(case_id="", stream="disklab", text=line, t=time.time())
    except DisklabError as e:
        yield Notice(level="error", message=f"target setup failed: {e}", t=time.time())
        ctx.state.status = "failed"
    finally:
        if scratch is not None:
            scratch.teardown()  # the mountpoints' directories too, once unmounted
        for m in mountpoints:
            with contextlib.suppress(OSError):
                os.rmdir(m)


def _config_rounds(plan: Plan, rounds: set[tuple[str, int]]
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


def _apply_config(ctx: _Context, scratch: Scratch, config: FsConfig,
                  devices: Mapping[str, tuple[str, str | None]], mountpoints: list[str],
                  notes: list[str]) -> Generator[Event, None, dict[str, str] | None]:
    """Make `config` on each stream target it names and say what the kernel applied; stream
    target -> its mountpoint, or None when one could not be made (its runs are failed, what
    was made of it undone). One target's read-back is the configuration's own; several
    targets' are under "targets", their mismatches named by target."""
    single = not is_multi(ctx.plan)
    placed: dict[str, str] = {}
    readbacks: dict[str, dict[str, Any]] = {}
    failed = None
    for name in config_targets(config, named_targets(ctx.plan)):
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
        yield from _config_failed(ctx, config.label, failed)
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
    yield from _helper_log(ctx)
    for m in mismatches:
        yield Notice(level="warning", message=f"{config.label}: {m}", t=time.time())
    return placed


def _make_targets(ctx: _Context, scratch: Scratch, targets: Mapping[str, Any], single: bool
                  ) -> Generator[Event, None, dict[str, tuple[str, str | None]]]:
    """Attach each image, partition what asks for it; stream target -> (device, confirm)."""
    devices: dict[str, tuple[str, str | None]] = {}
    for name, target in targets.items():
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
            yield from _helper_log(ctx)
            yield Notice(level="info", t=time.time(), message=(
                f"target {name}: {device} split into {len(parts)} GPT partitions "
                f"({', '.join(f'{name}{i}={p}' for i, p in enumerate(parts, start=1))})"))
            for i, part in enumerate(parts, start=1):
                devices[f"{name}{i}"] = (part, None)  # identities read by the helper
        else:
            devices[name] = (device, confirm)
    return devices


def _run_raw(ctx: _Context) -> Iterator[Event]:
    """A raw device target: its identity and safety are checked again right before the runs
    and before every case (the device may have been swapped since the plan was confirmed)."""
    plan = ctx.plan
    try:
        device = check_destructive(plan.target.path, plan.target.confirm, ctx.library_path)
    except DisklabError as e:
        yield Notice(level="error", message=f"{plan.target.path} refused: {e}", t=time.time())
        ctx.state.status = "failed"
        return
    yield from _run_on_device(ctx, plan.configs[0].label, plan.target.path, identity_of(device))


def _run_raw_section(ctx: _Context, device: str) -> Iterator[Event]:
    """The raw = true tests of an image or format target, on its block device before any
    configuration is made (the SAN study: the LUN first, then the filesystem on it). The device
    is the one the target's confirm (or this session's attach) already covers."""
    yield from _run_on_device(ctx, RAW_SECTION, device, identity(device), raw_device=device)


def _run_on_device(ctx: _Context, label: str, path: str, ident: str,
                   raw_device: str | None = None) -> Iterator[Event]:
    """One section's cases on a block device; result files go to a temporary directory that
    is removed afterwards (the helper's own, when the tools run through it)."""
    try:
        work = (ctx.helper().workdir if ctx.via_helper or ctx.record is None
                else ctx.record.make_dir("disklab-raw-"))
    except DisklabError as e:
        yield Notice(level="error", message=f"the tools cannot run as root: {e}", t=time.time())
        ctx.state.status = "failed"
        return
    assert work is not None
    yield ConfigApplied(config=label, readback={"device": path, "identity": ident},
                        t=time.time())
    try:
        yield from _run_config(ctx, label, work, raw_device=raw_device)
    finally:
        if not ctx.via_helper:
            shutil.rmtree(work, ignore_errors=True)
            _forget_dir(ctx, work)
    yield ConfigTornDown(config=label, t=time.time())


def _forget_dir(ctx: _Context, path: str) -> None:
    """Drop the record of a directory DiskLab made, once it is gone."""
    if ctx.record is not None and not os.path.exists(path):
        for step in list(ctx.record.steps):
            if step.get("kind") == "dir" and step.get("path") == path:
                ctx.record.remove(step)


def _config_failed(ctx: _Context, label: str, error: str) -> Iterator[Event]:
    """A configuration that could not be made: its runs are failed with the reason."""
    yield Notice(level="error", message=f"{label}: {error}", t=time.time())
    for run in plan_runs(ctx.plan, ctx.python, only=ctx.only):
        if run.case.config != label:
            continue
        yield CaseFailed(case_id=run.case.id, repeat=run.repeat, error=error,
                         transcript_tail="", t=time.time())
        ctx.state.failed += 1
        ctx.state.index += 1
        if ctx.state.overall is not None:
            ctx.state.overall.skip_run(runtime_of(run.case), run.command.planned_bytes)


def _run_case(
    run: Planned,
    index: int,
    count: int,
    version: str | None,
    ctx: _Context,
    cancel: CancelFlag,
    sample_interval: float,
    done_before: int,
    total_bytes: int,
) -> Iterator[Event]:
    """One case x repeat. Returns 'ok', 'failed' or 'cancelled' (as the generator's value)."""
    case, repeat, command = run.case, run.repeat, run.command
    adapter = adapter_for(case.tool, case.params, ctx.endpoints)
    yield CaseStarted(
        case=case, repeat=repeat, argv=command.argv, tool_version=version,
        planned_bytes=command.planned_bytes, run_index=index, run_count=count, t=time.time(),
    )
    started = time.monotonic()
    left: list[str] = []
    record = _record_files(ctx, run)
    remote = _record_server_files(ctx, run)
    try:
        down = ctx.servers.failed(host_names(case.params)) if ctx.servers else {}
        if down:  # a host that could not be reached or started, or whose server ended
            yield CaseFailed(case_id=case.id, repeat=repeat, error="; ".join(down.values()),
                             transcript_tail="", duration=time.monotonic() - started,
                             t=time.time())
            return "failed"
        limited = yield from _limit_page_cache(ctx, run)
        if limited is not None:
            yield CaseFailed(case_id=case.id, repeat=repeat, error=limited, transcript_tail="",
                             duration=time.monotonic() - started, t=time.time())
            return "failed"
        outcome = yield from _explain_oom(ctx, run, _prepare_and_measure(
            run, adapter, cancel, sample_interval,
            Share(done_before, total_bytes, ctx.state.overall), ctx, started))
    finally:
        # no yield here: the caller may be closing the generator
        left = _cleanup(ctx, run) + _remove_group(ctx, run)
        if remote is not None and ctx.record is not None:  # the client ended: fio unlinked
            ctx.record.remove(remote)
        if record is not None and ctx.record is not None:
            if left:  # what could not be removed stays recorded for the next start
                still = {os.path.abspath(p) for p in left}
                record["paths"] = [p for p in record["paths"] if p in still]
            if left and record["paths"]:
                ctx.record.save()
            else:
                ctx.record.remove(record)
    if left:
        yield Notice(level="warning", message=f"could not remove {', '.join(left)}",
                     case_id=case.id, t=time.time())
    return outcome


def _explain_oom(ctx: _Context, run: Planned,
                 events: Generator[Event, None, str]) -> Generator[Event, None, str]:
    """The case's events, with a SIGKILL that the memory cgroup's OOM killer dealt said as such.

    Why: from outside an OOM kill is a plain signal 9 ("iozone was killed by signal 9"); the
    group's own counter (read before the group is removed) tells the user that the page-cache
    limit was reached, and what to change."""
    group = ctx.groups.get(run.target.tag)
    try:
        while True:
            try:
                event = next(events)
            except StopIteration as stop:
                return stop.value
            if (group is not None and isinstance(event, CaseFailed) and event.signal == 9
                    and oom_kills(group[0]) > 0):
                event = replace(event, error=_oom_words(ctx.plan, run.case))
            yield event
    finally:
        events.close()


def _oom_words(plan: Plan, case: Case) -> str:
    """What the OOM kill means for this case: the limit, and data=journal's part in it."""
    limit = plan.page_cache_limit_of(case.test_index)
    words = (f"{case.tool} was killed by the kernel's OOM killer: the memory cgroup's limit of "
             f"{format_size(limit or 0)} (page_cache_limit) was reached")
    config = next((c for c in plan.configs if c.label == case.config), None)
    held = journalled_data_seconds(config.fs, config.mount) if config else None
    if held is not None:
        words += (f"; data=journal with commit={held} keeps up to {held} s of written data in "
                  "memory until the journal commits (or fills): raise page_cache_limit, "
                  "lower commit or make the journal smaller")
    return words


def _record_files(ctx: _Context, run: Planned) -> dict[str, Any] | None:
    """Record the files the case is about to create, before it runs, so that the next start
    removes them when this process is killed. Only files that are not there yet: DiskLab never
    claims a file it did not make. The tools run as root through the helper make theirs in
    root's places, which the helper's own cleanup and the teardown of the mount handle."""
    if ctx.record is None or ctx.via_helper:
        return None
    new = [f for f in run.command.files if not os.path.lexists(f)]
    if not new:
        return None
    return ctx.record.record_files(run.target.directory, new)


def _record_server_files(ctx: _Context, run: Planned) -> dict[str, Any] | None:
    """Record the data files a case's fio servers are about to make (core.hosts.leftovers):
    a kill of this process leaves them on the servers, and the next start removes them."""
    if ctx.record is None or ctx.servers is None or not host_names(run.case.params):
        return None
    try:
        placed = server_files(run.case.params, run.target)
    except DisklabError:  # a host without a server: the case fails before any file is made
        return None
    ssh = {name: s.host for name, s in ctx.servers.states.items() if s.ssh is not None}
    return ctx.record.add(remote_step((ep, ssh.get(ep.name), paths) for ep, paths in placed))


def _cleanup(ctx: _Context, run: Planned) -> list[str]:
    """Remove a case's files (through the helper when its tool ran as root); the ones left."""
    if not ctx.via_helper:
        return remove_files(run.command.files)
    try:
        return list(ctx.helper().call(ToolCleanup(run.target.tag)).left)
    except DisklabError:
        return [f for f in run.command.files if os.path.lexists(f)]


def _limits(plan: Plan) -> dict[str, int]:
    """The page-cache limit of each [[test]] table that has one ("test[N]" -> bytes)."""
    return {f"test[{s.index + 1}]": limit for s in plan.tests
            if (limit := plan.page_cache_limit_of(s.index)) is not None}


def _limit_page_cache(ctx: _Context, run: Planned) -> Iterator[Event]:
    """Make the case's memory cgroup when its test has a page-cache limit (through the helper
    when the tools run there); returns why it could not, or None."""
    limit = ctx.plan.page_cache_limit_of(run.case.test_index)
    if limit is None:
        return None
    tag = run.target.tag
    assert ctx.cgroups is not None
    try:
        if ctx.via_helper:
            path = ctx.helper().call(CgroupCreate(tag, limit)).path
            step = ctx.cgroups.add(path)
        else:
            if ctx.controller is None:
                return "page_cache_limit: no memory cgroup controller is available"
            name = group_name(tag)
            step = ctx.cgroups.add(ctx.controller.base / name)
            try:
                path = str(create_group(ctx.controller, name, limit))
            except BaseException:
                ctx.cgroups.done(step)
                raise
    except DisklabError as e:
        yield from _helper_log(ctx)
        return f"page_cache_limit: {e}"
    ctx.groups[tag] = (path, step)
    yield LogLine(case_id=run.case.id, stream="disklab", repeat=run.repeat, t=time.time(),
                  text=f"page cache limited to {format_size(limit)}: every step runs in the "
                       f"memory cgroup {path}")
    return None


def _remove_group(ctx: _Context, run: Planned) -> list[str]:
    """Remove the case's memory cgroup (the helper's tool_cleanup already removed its own);
    what is left. Never raises, never yields."""
    made = ctx.groups.pop(run.target.tag, None)
    if made is None:
        return []
    path, step = made
    assert ctx.cgroups is not None
    if not ctx.via_helper:
        try:
            remove_group(path)
        except DisklabError:
            return [path]
    elif os.path.isdir(path):
        return []  # tool_cleanup named it; the record stays for the next start to remove it
    ctx.cgroups.done(step)
    return []


def _tool_process(ctx: _Context, run: Planned, step: int) -> ToolProcess | PrivilegedTool:
    """The process of one step of a case (-1: the measured run, 0..: a prepare step): here, or
    as root through the session's helper, which builds the same argv from the same parameters."""
    command = run.command
    if ctx.via_helper:
        target = ctx.plan.target
        return PrivilegedTool(
            ctx.helper(), run.case.tool, run.case.params, tag=run.target.tag,
            directory=run.target.directory, step=step, device=run.target.device,
            confirm=target.confirm if target.kind in ("device", "format") else None,
            library_path=ctx.library_path,
            directories=run.target.directories if "on" in run.case.params else None)
    group = ctx.groups.get(run.target.tag)
    cgroup = group[0] if group is not None else None
    if step < 0 and command.group:  # several processes, released together
        return ToolGroup(command.group, cwd=command.cwd, env=dict(command.env) or None,
                              cgroup=cgroup, timing_file=command.result_file)
    if step >= 0:
        return ToolProcess(command.prepare[step], cwd=command.cwd,
                                env=dict(command.env) or None, cgroup=cgroup)
    return ToolProcess(command.argv, cwd=command.cwd, env=dict(command.env) or None,
                            pty=command.needs_pty, cgroup=cgroup)


def _start(p: ToolProcess | PrivilegedTool | ToolGroup, planned: tuple[str, ...],
           case: Case, repeat: int) -> Iterator[Event]:
    """Start a step's process; when the helper ran another argv than the one announced (its
    own interpreter for the engine), the transcript says so (rule 8: the argv that ran)."""
    p.start()
    if isinstance(p, ToolGroup):  # every stream's own argv, and their common start
        for name, argv in p.members:
            yield LogLine(case_id=case.id, stream="disklab", repeat=repeat, t=time.time(),
                          text=f"stream on {name}: " + " ".join(argv))
        yield LogLine(case_id=case.id, stream="disklab", repeat=repeat, t=time.time(),
                      text=f"{len(p.members)} processes released together "
                           f"(pid {', '.join(map(str, p.pids))})")
        return
    if tuple(p.argv) != tuple(planned):
        yield LogLine(case_id=case.id, stream="disklab", repeat=repeat, t=time.time(),
                      text="ran as root by the privileged helper: " + " ".join(p.argv))


def _prepare_and_measure(run: Planned, adapter: ToolAdapter, cancel: CancelFlag,
                         sample_interval: float, share: Share, ctx: _Context, started: float
                         ) -> Iterator[Event]:
    """The case's prepare steps (not measured), the layout synced and the caches dropped when
    asked, then its measured step."""
    case, repeat, command = run.case, run.repeat, run.command

    def log(text: str) -> LogLine:
        return LogLine(case_id=case.id, stream="disklab", text=text, repeat=repeat, t=time.time())

    for number, step in enumerate(command.prepare):
        yield log("prepare: " + " ".join(step))
        try:
            result = yield from _run_step(_tool_process(ctx, run, number), step, case, repeat,
                                          cancel)
        except DisklabError as e:
            yield CaseFailed(case_id=case.id, repeat=repeat, error=f"preparing the test "
                             f"failed: {e}", transcript_tail="",
                             duration=time.monotonic() - started, t=time.time())
            return "failed"
        if result is None:
            yield CaseCancelled(case_id=case.id, repeat=repeat, transcript_tail="",
                                duration=time.monotonic() - started, t=time.time())
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
    if command.prepare:
        synced = _sync_layout(run)
        if synced:
            yield log(f"synced {', '.join(synced)} after the layout (syncfs)")
    if ctx.plan.drop_caches or (command.reads_after_prepare
                                and adapter.is_buffered(case.params)):
        why_not = _drop_caches(ctx)
        if why_not:
            yield Notice(level="warning", message=why_not, case_id=case.id, t=time.time())
        else:
            yield log("dropped caches through the privileged helper (sync; drop_caches = 3)")
    try:
        for path, text in command.inputs:  # fio --client's job files, sent to the servers
            Path(path).write_text(text)
        p = _tool_process(ctx, run, -1)
    except OSError as e:
        yield CaseFailed(case_id=case.id, repeat=repeat, error=f"could not write {e.filename}: "
                         f"{e.strerror}", transcript_tail="",
                         duration=time.monotonic() - started, t=time.time())
        return "failed"
    except DisklabError as e:  # the helper could not start: asked once, said for each case
        yield CaseFailed(case_id=case.id, repeat=repeat, error=str(e), transcript_tail="",
                         duration=time.monotonic() - started, t=time.time())
        return "failed"
    return (yield from _measure(run, p, adapter, cancel, sample_interval, share, started))


def _sync_layout(run: Planned) -> list[str]:
    """syncfs the filesystems a case's prepare steps laid its files out on; the directories
    synced. A layout's metadata (bitmaps, inode table, the directory's block) stays dirty in
    the page cache after the tool's own fsync's journal commit, and the kernel's flusher
    writes it back when it likes: 30 s later, or at once when another process calls sync or
    the machine's dirty memory crosses its threshold; a read-only measured step then sees
    the layout's writes on its device (traced in bench figure 1a). Synced here, the measured
    step starts from a filesystem with nothing to write. A raw device target has no
    filesystem; a directory that cannot be opened is left as it is."""
    if run.target.device:
        return []
    synced = []
    for directory in dict.fromkeys([run.target.directory, *run.target.directories.values()]):
        if not directory or not os.path.isdir(directory):
            continue
        try:
            syncfs(directory)
        except OSError:
            continue
        synced.append(directory)
    return synced


def _run_step(
    p: ToolProcess | PrivilegedTool, argv: tuple[str, ...], case: Case, repeat: int,
    cancel: CancelFlag
) -> Iterator[Event]:
    """Run an unmeasured preparation step to its end; None if cancelled."""
    with p:
        yield from _start(p, argv, case, repeat)
        while not p.poll():
            for line in p.read(0.5):
                yield LogLine(case_id=case.id, stream=line.stream, text=line.text,
                              repeat=repeat, t=line.t)
            if cancel.is_set():
                p.terminate(TERM_GRACE)
                return None
        p.wait()
    return p


def _measure(run: Planned, p: ToolProcess | PrivilegedTool, adapter: ToolAdapter,
             cancel: CancelFlag, sample_interval: float, share: Share, started: float
             ) -> Iterator[Event]:
    """The measured step: started, watched to its end, its result file kept with the
    transcript, and its outcome. Returns 'ok', 'failed' or 'cancelled'."""
    case, repeat, command = run.case, run.repeat, run.command
    watch = CaseWatch(run, p, adapter, cancel, sample_interval, share)
    with p:
        try:
            yield from _start(p, command.argv, case, repeat)
        except DisklabError as e:
            yield CaseFailed(case_id=case.id, repeat=repeat, error=str(e), transcript_tail="",
                             duration=time.monotonic() - started, t=time.time())
            return "failed"
        yield from watch.watch()
    duration = time.monotonic() - started
    if watch.seen.lost is not None:
        yield CaseFailed(case_id=case.id, repeat=repeat, error=str(watch.seen.lost),
                         transcript_tail=p.tail(), duration=duration, t=time.time())
        return "failed"
    result_text = p.result_text if isinstance(p, PrivilegedTool) else None
    if result_text is None and command.result_file and os.path.exists(command.result_file):
        result_text = Path(command.result_file).read_text(errors="replace")
    if result_text is not None:
        # the result file is evidence too (rule 8): kept with the transcript, re-parsable later
        t = time.time()
        for text in result_text.splitlines():
            yield LogLine(case_id=case.id, stream="result", text=text, repeat=repeat, t=t)
    output = ToolOutput(stdout=p.output("stdout"), stderr=p.output("stderr"),
                        result_file=result_text, exit_status=p.returncode)
    ended = outcome(case, repeat, adapter, output, watch.seen,
                    Ending(p.tail(), p.signal, duration, time.time()))
    if isinstance(ended, CaseFinished):
        if share.overall is not None:  # measured and parsed: the run counts as done from here
            share.overall.end_run(time.monotonic())
        if command.planned_bytes:
            yield progress_event(case, repeat, command.planned_bytes, command.planned_bytes, "done",
                            None, duration, share.done_before, share.total_bytes,
                            share.overall)
    yield ended
    return ("ok" if isinstance(ended, CaseFinished)
            else "cancelled" if isinstance(ended, CaseCancelled) else "failed")
