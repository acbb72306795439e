"""One case x repeat: its files recorded, its page-cache limit made, its prepare steps run (not
measured), the layout synced and the caches dropped when asked, its measured step watched to
its end, and everything it made removed whatever happens (a failure, a cancel, the caller
closing the generator; a running tool is killed with its whole tree).

A step runs here, or as root through the session's helper when the target is root's, which
builds the same argv from the same parameters.
"""

from __future__ import annotations

import os
import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path

from disklab.core.helper_client import PrivilegedTool
from disklab.core.helper_client.protocol import DropCaches
from disklab.core.hosts.servers import Servers
from disklab.core.proc.group import ToolGroup
from disklab.core.proc.tool import ToolProcess
from disklab.core.run.cgroup_limit import PageCacheLimits
from disklab.core.run.helper import SessionHelper
from disklab.core.run.planning import Planned
from disklab.core.run.records import Records, remove_case_files
from disklab.core.run.watch import (
    TERM_GRACE,
    CancelFlag,
    CasePlace,
    CaseWatch,
    Ending,
    outcome,
    progress_event,
)
from disklab.core.system.syncfs import syncfs
from disklab.core.tools.base import ToolAdapter, ToolOutput
from disklab.core.tools.fio.client import adapter_for, host_names
from disklab.core.vocab.errors import DisklabError
from disklab.core.vocab.events import (
    CaseCancelled,
    CaseFailed,
    CaseFinished,
    CaseStarted,
    Event,
    LogLine,
    Notice,
)
from disklab.core.vocab.model import Case, HostEndpoint, Plan

Step = ToolProcess | PrivilegedTool | ToolGroup


@dataclass(frozen=True)
class CaseKit:
    """What every case of a session runs with: the plan (its target and drop_caches), the
    helper and whether the tools run through it, the leftovers' record, the page-cache
    limits (None: no test has one), the hosts' servers (None: no case uses a host), and the
    cancel flag and sampling interval its watcher reads."""

    plan: Plan
    helper: SessionHelper
    via_helper: bool
    library_path: str | None
    records: Records
    limits: PageCacheLimits | None
    servers: Servers | None
    cancel: CancelFlag
    sample_interval: float

    @property
    def endpoints(self) -> tuple[HostEndpoint, ...]:
        """Where the hosts' fio servers are reached (none without hosts)."""
        return self.servers.endpoints if self.servers is not None else ()


def run_case(kit: CaseKit, run: Planned, index: int, count: int, version: str | None,
             share: CasePlace) -> Generator[Event, None, str]:
    """One case x repeat. Returns 'ok', 'failed' or 'cancelled' (as the generator's value)."""
    case, repeat, command = run.case, run.repeat, run.command
    adapter = adapter_for(case.tool, case.params, kit.endpoints)
    yield CaseStarted(
        case=case, repeat=repeat, argv=command.argv, tool_version=version,
        planned_bytes=command.planned_bytes, run_index=index, run_count=count, t=time.time(),
    )
    started = time.monotonic()
    left: list[str] = []
    files = kit.records.case_files(run)
    remote = kit.records.server_files(run, kit.servers)
    try:
        down = kit.servers.failed(host_names(case.params)) if kit.servers else {}
        if down:  # a host that could not be reached or started, or whose server ended
            yield _failed(run, "; ".join(down.values()), started)
            return "failed"
        limited = (yield from kit.limits.limit(run)) if kit.limits is not None else None
        if limited is not None:
            yield _failed(run, limited, started)
            return "failed"
        steps = _prepare_and_measure(kit, run, adapter, share, started)
        ended = (yield from kit.limits.explain_oom(run, steps) if kit.limits is not None
                 else steps)
    finally:
        # no yield here: the caller may be closing the generator
        left = remove_case_files(run, kit.helper if kit.via_helper else None)
        if kit.limits is not None:
            left += kit.limits.remove(run)
        kit.records.settle(files, remote, left)
    if left:
        yield Notice(level="warning", message=f"could not remove {', '.join(left)}",
                     case_id=case.id, t=time.time())
    return ended


def _failed(run: Planned, error: str, started: float, tail: str = "") -> CaseFailed:
    return CaseFailed(case_id=run.case.id, repeat=run.repeat, error=error, transcript_tail=tail,
                      duration=time.monotonic() - started, t=time.time())


def _log(run: Planned, text: str) -> LogLine:
    return LogLine(case_id=run.case.id, stream="disklab", text=text, repeat=run.repeat,
                   t=time.time())


def _prepare_and_measure(kit: CaseKit, run: Planned, adapter: ToolAdapter, share: CasePlace,
                         started: float) -> Generator[Event, None, str]:
    """The case's prepare steps, the layout synced and the caches dropped when asked, then
    its measured step."""
    case, command = run.case, run.command
    prepared = yield from _prepare(kit, run, started)
    if prepared is not None:
        return prepared
    if command.prepare:
        synced = _sync_layout(run)
        if synced:
            yield _log(run, f"synced {', '.join(synced)} after the layout (syncfs)")
    if kit.plan.drop_caches or (command.reads_after_prepare
                                and adapter.is_buffered(case.params)):
        why_not = _drop_caches(kit.helper)
        if why_not:
            yield Notice(level="warning", message=why_not, case_id=case.id, t=time.time())
        else:
            yield _log(run, "dropped caches through the privileged helper (sync; drop_caches = 3)")
    try:
        for path, text in command.inputs:  # fio --client's job files, sent to the servers
            Path(path).write_text(text)
        p = _tool_process(kit, run, -1)
    except OSError as e:
        yield _failed(run, f"could not write {e.filename}: {e.strerror}", started)
        return "failed"
    except DisklabError as e:  # the helper could not start: asked once, said for each case
        yield _failed(run, str(e), started)
        return "failed"
    return (yield from _measure(kit, run, p, adapter, share, started))


def _prepare(kit: CaseKit, run: Planned, started: float) -> Generator[Event, None, str | None]:
    """The case's unmeasured prepare steps (a layout the measured step reads); None when they
    all succeeded, else 'failed' or 'cancelled'."""
    case, repeat = run.case, run.repeat
    for number, step in enumerate(run.command.prepare):
        yield _log(run, "prepare: " + " ".join(step))
        try:
            result = yield from _run_step(_tool_process(kit, run, number), step, case, repeat,
                                          kit.cancel)
        except DisklabError as e:
            yield _failed(run, f"preparing the test failed: {e}", started)
            return "failed"
        if result is None:
            yield CaseCancelled(case_id=case.id, repeat=repeat, transcript_tail="",
                                duration=time.monotonic() - started, t=time.time())
            return "cancelled"
        if result.returncode != 0:
            yield CaseFailed(
                case_id=case.id, repeat=repeat,
                error=f"preparing the test failed (exit {result.returncode}): {step[0]}",
                transcript_tail=result.tail(), exit_status=result.returncode,
                signal=result.signal, duration=time.monotonic() - started, t=time.time(),
            )
            return "failed"
    return None


def _drop_caches(helper: SessionHelper) -> str | None:
    """sync + drop the page cache, dentries and inodes through the privileged helper (rule 7).
    Returns why not, when it cannot."""
    try:
        helper.get().call(DropCaches())
    except DisklabError as e:
        return f"caches not dropped ({e}): reads may come from memory"
    return None


def _tool_process(kit: CaseKit, run: Planned, step: int) -> Step:
    """The process of one step of a case (-1: the measured run, 0..: a prepare step): here, or
    as root through the session's helper, which builds the same argv from the same parameters."""
    command = run.command
    if kit.via_helper:
        target = kit.plan.target
        return PrivilegedTool(
            kit.helper.get(), run.case.tool, run.case.params, tag=run.target.tag,
            directory=run.target.directory, step=step, device=run.target.device,
            confirm=target.confirm if target.kind in ("device", "format") else None,
            library_path=kit.library_path,
            directories=run.target.directories if "on" in run.case.params else None)
    cgroup = kit.limits.group_of(run) if kit.limits is not None else None
    env = dict(command.env) or None
    if step < 0 and command.group:  # several processes, released together
        return ToolGroup(command.group, cwd=command.cwd, env=env, cgroup=cgroup,
                         timing_file=command.result_file)
    if step >= 0:
        return ToolProcess(command.prepare[step], cwd=command.cwd, env=env, cgroup=cgroup)
    return ToolProcess(command.argv, cwd=command.cwd, env=env, pty=command.needs_pty,
                       cgroup=cgroup)


def _start(p: Step, planned: tuple[str, ...], case: Case, repeat: int) -> Iterator[Event]:
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


def _run_step(p: Step, argv: tuple[str, ...], case: Case, repeat: int, cancel: CancelFlag
              ) -> Generator[Event, None, Step | None]:
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


def _measure(kit: CaseKit, run: Planned, p: Step, adapter: ToolAdapter, share: CasePlace,
             started: float) -> Generator[Event, None, str]:
    """The measured step: started, watched to its end, its result file kept with the
    transcript, and its outcome. Returns 'ok', 'failed' or 'cancelled'."""
    case, repeat, command = run.case, run.repeat, run.command
    # a ToolGroup reads like one ToolProcess (core.proc.group), which CaseWatch's hints omit
    watch = CaseWatch(run, p, adapter, kit.cancel, kit.sample_interval, share)  # type: ignore[arg-type]
    with p:
        try:
            yield from _start(p, command.argv, case, repeat)
        except DisklabError as e:
            yield _failed(run, str(e), started)
            return "failed"
        yield from watch.watch()
    duration = time.monotonic() - started
    if watch.seen.lost is not None:
        yield _failed(run, str(watch.seen.lost), started, tail=p.tail())
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
            yield progress_event(case, repeat, command.planned_bytes, command.planned_bytes,
                                 "done", None, duration, share.done_before, share.total_bytes,
                                 share.overall)
    yield ended
    return ("ok" if isinstance(ended, CaseFinished)
            else "cancelled" if isinstance(ended, CaseCancelled) else "failed")
