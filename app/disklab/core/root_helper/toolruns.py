"""Benchmark tools run as root for the client: started in the background of the helper, read a
few times a second, stopped, closed and cleaned up, so that the session stays one
request/answer conversation.

The argv is the tool adapter's, built here from parameters checked as the plan loader checks
them (core.plan.case_params), and checked once more as built: no option the adapters never
produce (fio's exec_prerun/exec_postrun, an --output other than the case's result file, a
command-line switch of fio's such as --server: passthrough.COMMAND_LINE), no shell
character, control character or '..' in any argument. A tool runs only in a filesystem this
helper mounted in this session (one its user cannot write), or on a raw device that
passes the destructive checks. Whatever the tool is, it runs with its working directory in
the case's own root-only directory (WORKDIR/out-TAG, 0700), its result file is made there
first (O_EXCL, O_NOFOLLOW) and handed back from there, and a python tool (the engine, the
tree load) runs isolated (python -I) from this helper's own package copy: nothing a user can
write is on its path, in its working directory, or where its output goes.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import psutil

import disklab
from disklab.core import proc, tools
from disklab.core.helper_client.protocol import (
    READ_WAIT_MAX,
    STOP_GRACE_MAX,
    CaseCleaned,
    ToolCleanup,
    ToolClose,
    ToolClosed,
    ToolLines,
    ToolRead,
    ToolStart,
    ToolStarted,
    ToolStop,
    ToolStopped,
    ToolTree,
    ToolTreeCounters,
)
from disklab.core.plan.parse import case_params
from disklab.core.plan.targets import NAME
from disklab.core.proc.group import ToolGroup
from disklab.core.proc.tool import ToolProcess
from disklab.core.root_helper import groups, paths
from disklab.core.root_helper.filesystems import destructive_target
from disklab.core.root_helper.state import Session, device_of
from disklab.core.system import devices
from disklab.core.system.cleanup import remove_files
from disklab.core.system.mountinfo import mount_at
from disklab.core.tools.base import PLACEMENT_KEY, Command, RunTarget
from disklab.core.tools.fio.passthrough import foreign_switch
from disklab.core.vocab.errors import RequestError, SafetyError

# the root of the package copy this helper runs (trust checked it): its python tools import it
PACKAGE_ROOT = str(Path(disklab.__file__).resolve().parents[1])
RESULT_MAX = 64 << 20  # bytes of a tool's result file returned (fio JSON is far smaller)
PLACEMENT = re.compile(rf"{NAME.pattern}(?:\+{NAME.pattern}){{0,63}}")  # "a+b+a"
NEVER = re.compile(r"exec_pre|exec_post|[;|&$`<>\x00-\x1f\x7f]|(?:^|[/=])\.\.(?:/|$)")
FIO_TOKENS = re.compile(r"\$(?:jobnum|jobname|filenum|clientuid)\b")  # fio's own, not a shell's


@dataclass
class ToolRun:
    """A tool the helper started for its client: one step (a prepare step or the measured one)
    of one case."""

    process: ToolProcess | ToolGroup
    command: Command
    tag: str


@dataclass
class CaseFiles:
    """The files of one case (by tag), kept until tool_cleanup or the helper's end."""

    files: tuple[str, ...]
    started: set[int] = field(default_factory=set)  # steps started (-1: the measured one)


@dataclass
class Runs:
    """The tools and cases of one session (Session.runs)."""

    runs: dict[int, ToolRun] = field(default_factory=dict)
    cases: dict[str, CaseFiles] = field(default_factory=dict)
    last: int = 0


def _runs(s: Session) -> Runs:
    if s.tools is None:
        s.tools = Runs()
    assert isinstance(s.tools, Runs)
    return s.tools


def _counters(c: proc.ProcCounters) -> list[float]:
    return [c.read_bytes, c.write_bytes, c.read_chars, c.write_chars, c.cpu_seconds]


def _tool_directory(s: Session, directory: str, device: str | None) -> str:
    """Where a tool may run as root: a filesystem mounted here (still holding the device
    mounted on it), or, for a raw device, the helper's own work directory."""
    real = os.path.realpath(directory)
    if device is not None and real == os.path.realpath(s.workdir):
        return real
    with contextlib.suppress(OSError):
        if paths.may_write(os.stat(real), s.user) and not s.user.is_root:
            raise SafetyError(f"{directory}: uid {s.user.uid} may write it; the helper runs "
                              "tools only where its user cannot plant a file or a link")
    kname = s.held.mounts.get(real)
    if kname is None:
        raise SafetyError(f"{directory}: the helper runs tools only in a filesystem it "
                          "mounted in this session, or on a raw device")
    entry = mount_at(real)
    try:
        same = entry is not None and devices.kernel_name(entry.source) == kname
    except SafetyError:
        same = False
    if not same:
        raise SafetyError(f"{directory} no longer holds /dev/{kname}; not running a tool there")
    return real


def _placed(s: Session, on: Any, r: ToolStart) -> dict[str, str]:
    """A placed case's stream targets -> their directories, each one a filesystem this
    helper mounted (checked as the case's own directory is)."""
    if not isinstance(on, str) or not PLACEMENT.fullmatch(on):
        raise RequestError(f"on {str(on)[:100]!r} is not a placement (names joined by '+')")
    if r.device is not None:
        raise RequestError("a raw device case is one stream: no placement")
    raw = r.directories or {}
    names = list(dict.fromkeys(on.split("+")))
    missing = [n for n in names if n not in raw]
    if missing:
        raise RequestError(f"no directory for target {missing[0]!r} of {on!r}")
    return {n: _tool_directory(s, raw[n], None) for n in names}


def _check_argv(command: Command) -> None:
    """Refuse an argv no adapter would build (a last line behind case_params)."""
    for argv in (command.argv, *command.prepare, *(a for _n, a in command.group)):
        for arg in argv:
            output = arg.startswith("--output=") and arg != f"--output={command.result_file}"
            if NEVER.search(FIO_TOKENS.sub("", arg)) or output or arg == foreign_switch(argv):
                raise SafetyError(f"{command.argv[0]}: the argument {arg[:200]!r} is not one "
                                  "DiskLab's adapter produces; not running it")


def _build(s: Session, r: ToolStart) -> tuple[Command, str]:
    raw_params = dict(r.params)
    on = raw_params.pop(PLACEMENT_KEY, None)
    params = case_params(r.tool, raw_params, device=r.device is not None)
    directory = _tool_directory(s, r.directory, r.device)
    placed = _placed(s, on, r) if on is not None else {}
    if on is not None:
        params[PLACEMENT_KEY] = on
    device = None
    if r.device is not None:
        device, _ = destructive_target(s, r.device, r.confirm, r.library_path, "raw I/O on")
    target = RunTarget(directory=directory, tag=r.tag, device=device,
                       ram_bytes=psutil.virtual_memory().total, is_root=True,
                       python=sys.executable, directories=placed)
    command = tools.get_adapter(r.tool).build_command(params, target)
    _check_argv(command)
    if not -1 <= r.step < len(command.prepare):
        raise RequestError(f"{r.tool} has {len(command.prepare)} prepare step(s), no step "
                           f"{r.step}")
    return _confined(command, _outputs(s, r.tag)), directory


def _outputs(s: Session, tag: str) -> str:
    """The case's own directory for what a tool hands back (its result file) and its working
    directory: made by root in root's work directory (0711: no one else can list it or make
    anything in it), mode 0700."""
    out = os.path.join(s.workdir, f"out-{tag}")
    try:
        os.mkdir(out, 0o700)
        s.builtin("mkdir", out)
    except FileExistsError:
        st = os.lstat(out)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
            raise SafetyError(f"{out} is not the helper's own directory") from None
    return out


def _isolated(argv: tuple[str, ...]) -> tuple[str, ...]:
    """`python -m MODULE ARGS` (the engine, the tree load) as `python -I -c BOOT ARGS`: the
    interpreter ignores PYTHON* variables, the user site and the working directory, and
    imports the module from this helper's own (checked) copy of the package."""
    if len(argv) < 3 or argv[0] != sys.executable or argv[1] != "-m":
        return argv
    boot = (f"import runpy, sys; sys.path.insert(0, {PACKAGE_ROOT!r}); "
            f"runpy.run_module({argv[2]!r}, run_name='__main__', alter_sys=True)")
    return (argv[0], "-I", "-c", boot, *argv[3:])


def _confined(command: Command, out: str) -> Command:
    """The command as the helper runs it: working directory `out`, its result file moved
    into `out` (the adapters put it beside the data), python tools isolated."""
    result = command.result_file
    moved = os.path.join(out, os.path.basename(result)) if result else None

    def fix(argv: tuple[str, ...]) -> tuple[str, ...]:
        if result and moved:
            argv = tuple(a.replace(f"--output={result}", f"--output={moved}")
                         if a.startswith("--output=") else (moved if a == result else a)
                         for a in argv)
        return _isolated(argv)

    files = tuple(moved if f == result else f for f in command.files)
    return replace(command, argv=fix(command.argv), cwd=out, files=files, result_file=moved,
                   prepare=tuple(fix(a) for a in command.prepare),
                   group=tuple((n, fix(a)) for n, a in command.group))


def _fresh_result(path: str | None) -> None:
    """Make the result file before the tool runs: O_CREAT|O_EXCL|O_NOFOLLOW in the case's
    own root-only directory, so that what the tool writes and the helper hands back is that
    new file and nothing a link points at."""
    if path is None:
        return
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600)
    os.close(fd)


def start(s: Session, r: ToolStart) -> ToolStarted:
    """Start one step of a case (a prepare step, or -1: the measured run) in the background."""
    command, _directory = _build(s, r)
    book = _runs(s)
    case = book.cases.get(r.tag)
    if case is None or case.files != command.files:
        clobbered = [f for f in command.files if os.path.lexists(f)]
        if clobbered:
            raise SafetyError(f"{', '.join(clobbered)} already exist(s): a case's files are "
                              "its own, made and removed by DiskLab")
        case = book.cases[r.tag] = CaseFiles(command.files)
    if r.step in case.started:
        raise RequestError(f"step {r.step} of {r.tag} was already run")
    case.started.add(r.step)
    if r.device is not None:
        s.written_raw(device_of(r.device)[1])  # its filesystem is no longer the one mkfs made
    if r.step < 0:
        _fresh_result(command.result_file)
    argv = command.argv if r.step < 0 else command.prepare[r.step]
    group = s.held.groups.get(r.tag)
    process: ToolProcess | ToolGroup
    if r.step < 0 and command.group:  # several processes released together (dd on targets)
        process = ToolGroup(command.group, cwd=command.cwd, env=dict(command.env) or None,
                                 cgroup=group, timing_file=command.result_file)
    else:
        process = ToolProcess(argv, cwd=command.cwd, env=dict(command.env) or None,
                                   pty=command.needs_pty, cgroup=group)
    entry: dict[str, Any] = {"argv": list(argv), "cwd": command.cwd, "background": True}
    if command.group and r.step < 0:
        entry["group"] = [list(a) for _n, a in command.group]
    if group is not None:
        entry["cgroup"] = group
    s.ran.append(entry)
    try:
        process.start()
    except Exception as e:
        entry["error"] = str(e)
        raise
    entry["pid"] = process.pid
    book.last += 1
    book.runs[book.last] = ToolRun(process, command, r.tag)
    return ToolStarted(book.last, process.pid, list(argv), command.cwd, command.result_file,
                       list(command.files))


def _run(s: Session, number: int) -> ToolRun:
    run = _runs(s).runs.get(number)
    if run is None:
        raise RequestError(f"no tool run {number} (closed, or never started)")
    return run


def read(s: Session, r: ToolRead) -> ToolLines:
    """What the tool printed since the last read (waiting up to `wait` s for it)."""
    p = _run(s, r.run).process
    lines = p.read(min(r.wait, READ_WAIT_MAX))
    return ToolLines([[line.t, line.stream, line.text, line.terminator] for line in lines],
                     p.poll(), p.returncode, p.signal, p.lines_dropped)


def tree(s: Session, r: ToolTree) -> ToolTreeCounters:
    """The counters of the tool's live tree and the final ones of what it reaped (only root
    can read a root process's)."""
    p = _run(s, r.run).process
    return ToolTreeCounters(
        {str(pid): [e.create_time, e.ppid, *_counters(e.counters)]
         for pid, e in p.tree_counters().items()},
        {str(pid): _counters(c) for pid, c in p.exit_counters().items()})


def stop(s: Session, r: ToolStop) -> ToolStopped:
    """SIGTERM to the tool's whole tree, SIGKILL after `grace` s (proc.terminate)."""
    run = _run(s, r.run)
    run.process.terminate(min(r.grace, STOP_GRACE_MAX))
    return ToolStopped(list(run.process.survivors))


def close_run(s: Session, r: ToolClose) -> ToolClosed:
    """End a tool run (killing what is left of it): its whole output, exit status and result
    file (read without following a link)."""
    run = _run(s, r.run)
    p = run.process
    p.close()
    del _runs(s).runs[r.run]
    result = None
    path = run.command.result_file
    if path:
        with contextlib.suppress(OSError):
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as f:
                if stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                    result = f.read(RESULT_MAX).decode("utf-8", errors="replace")
    s.ran.append({"argv": list(p.argv), "returncode": p.returncode, "signal": p.signal,
                  "ended": True})
    return ToolClosed(p.output("stdout"), p.output("stderr"), p.tail(), p.returncode, p.signal,
                      list(p.survivors), result)


def cleanup(s: Session, r: ToolCleanup) -> CaseCleaned:
    """Remove the files of the case `tag` (after its last step, whatever happened)."""
    book = _runs(s)
    for number, run in list(book.runs.items()):
        if run.tag == r.tag:
            run.process.close()
            del book.runs[number]
    case = book.cases.pop(r.tag, None)
    left = remove_files(case.files) if case else []
    with contextlib.suppress(OSError):
        os.rmdir(os.path.join(s.workdir, f"out-{r.tag}"))
    group = groups.remove_case_group(s, r.tag)
    return CaseCleaned(left + ([group] if group else []))


def close(s: Session) -> None:
    """The end of the session: stop every tool, remove every case's files."""
    book = _runs(s)
    for run in book.runs.values():
        with contextlib.suppress(Exception):
            run.process.close()
    book.runs.clear()
    for case in book.cases.values():
        with contextlib.suppress(Exception):
            remove_files(case.files)
    book.cases.clear()
