"""Starting processes: a short command to its end (run()), a program on a terminal
(start_on_terminal), and what every child gets: its own session, stdin on /dev/null, the C locale,
the run token in its environment, a SIGKILL on DiskLab's death, its memory cgroup joined before
exec."""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import psutil

from disklab.core.proc.procfs import TOKEN_VAR
from disklab.core.proc.tracking import Tracker
from disklab.core.vocab.errors import ToolError

SBIN = "/usr/local/sbin:/usr/sbin:/sbin"  # bonnie++ and mkfs live here; not on a user's PATH
KILL_WAIT = 5.0  # seconds to wait for SIGKILLed processes to disappear (D state may not)
CLOSE_GRACE = 2.0  # SIGTERM -> SIGKILL grace when close() finds the tool still running

_PR_SET_PDEATHSIG = 1

try:  # looked up once here: the child, between fork and exec, must not dlopen (lock held)
    _prctl = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):  # pragma: no cover - not glibc/musl Linux
    _prctl = None


def child_setup(parent: int, cgroup_procs: int = -1,
                 barrier: tuple[int, int, int] | None = None) -> None:
    """In the child before exec: die with DiskLab (SIGKILL), however DiskLab dies; join the
    memory cgroup whose cgroup.procs the parent opened as `cgroup_procs` (when >= 0).

    The signal follows the *thread* that started the child, so start long-running tools from the
    thread that lives as long as the run (the runner's worker)."""
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # DiskLab died before prctl took effect
        os._exit(127)
    if cgroup_procs >= 0:  # an OSError here makes Popen raise SubprocessError: start() says so
        os.write(cgroup_procs, str(os.getpid()).encode())
    if barrier is not None:  # wait, forked and set up, until the group is released together
        read_end, write_end, ready = barrier
        os.close(write_end)  # else this child's own copy would keep the pipe from ending
        os.write(ready, b"1")  # tell the parent this member is at the barrier
        os.read(read_end, 1)  # returns at the parent's close of its write end (EOF)


def _hangup_default() -> None:
    """In a terminal's child before exec: SIGHUP back to its default. A signal ignored is
    inherited through exec, and ssh installs its SIGHUP handler only when SIGHUP is not ignored
    (OpenSSH's clientloop); DiskLab started under `nohup` (a long headless run) would then leave
    ssh deaf to the hangup its pty sends when DiskLab dies, and the remote fio server running.
    Found by the SIGKILL test of SSH hosts run under nohup."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def start_on_terminal(program: str, args: Sequence[str], env: Mapping[str, str]) -> Any:
    """Start `program` on a pty of its own, driven with pexpect (its expect/sendline child).

    For ssh alone (core.hosts.ssh): it asks its questions (host key, password, passphrase) on
    its controlling terminal, never on a pipe, and a person answers them. Unlike a tool, it
    gets no SIGKILL on DiskLab's death: its pty's hangup ends the SSH session, and with it the
    remote command, which a SIGKILL of ssh would leave running; so SIGHUP is at its default
    (_hangup_default). pexpect is imported here, when a host is started over SSH: not at every
    start of the application, which imports this module. pexpect.ExceptionPexpect when the
    program cannot be started."""
    import pexpect  # the one process on a terminal: see the docstring

    return pexpect.spawn(program, list(args), env=dict(env), encoding="utf-8",
                         codec_errors="replace", timeout=None, echo=False,
                         preexec_fn=_hangup_default)


def which(name: str, path: str | None = None) -> str | None:
    """Path of an executable on PATH (or `path`), then in the sbin directories; None if absent.
    A name with a slash is checked as it is."""
    if not name:
        return None
    if "/" in name:
        return name if os.path.isfile(name) and os.access(name, os.X_OK) else None
    search = path if path is not None else os.environ.get("PATH", os.defpath)
    return shutil.which(name, path=f"{search}:{SBIN}" if search else SBIN)


def resolve(argv: Sequence[str], env: Mapping[str, str]) -> str:
    """The executable to run for argv[0], or a ToolError that names it and says what is wrong."""
    if not argv or not argv[0]:
        raise ToolError("cannot start a tool: empty command")
    name = argv[0]
    if "/" in name:
        if not os.path.exists(name):
            raise ToolError(f"{name} does not exist")
        if os.path.isdir(name) or not os.access(name, os.X_OK):
            raise ToolError(f"{name} is not executable")
        return name
    found = which(name, env.get("PATH", os.defpath))
    if found is None:
        raise ToolError(f"{name} is not installed (not found on PATH nor in {SBIN})")
    return found


def child_env(env: Mapping[str, str] | None, token: str) -> dict[str, str]:
    """DiskLab's environment + the command's variables + the C locale (unless the command sets
    LC_ALL) + the tracking token (appended to an outer DiskLab's, so nesting keeps both)."""
    merged = dict(os.environ)
    merged["LC_ALL"] = "C"
    merged.update(env or {})
    outer = merged.get(TOKEN_VAR)
    merged[TOKEN_VAR] = f"{outer}:{token}" if outer else token
    return merged


@dataclass(frozen=True)
class Completed:
    """A finished short command (run())."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    @property
    def signal(self) -> int | None:
        return -self.returncode if self.returncode < 0 else None

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def run(
    argv: Sequence[str],
    timeout: float = 60.0,
    input: str | bytes | None = None,
    *,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Completed:
    """A short command to its end (version probes, sync, mkfs, mount): output captured, stdin
    closed unless `input` is given. ToolError when it cannot start or does not finish in time
    (then its whole tree is stopped first)."""
    argv = tuple(str(a) for a in argv)
    token = uuid.uuid4().hex
    environment = child_env(env, token)
    exe = resolve(argv, environment)
    parent = os.getpid()
    try:
        popen = subprocess.Popen(
            argv, executable=exe, cwd=cwd, env=environment,
            stdin=subprocess.DEVNULL if input is None else subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
            preexec_fn=lambda: child_setup(parent),
        )
    except OSError as e:
        raise ToolError(start_failure(argv[0], e)) from e
    data = input.encode() if isinstance(input, str) else input
    try:
        out, err = popen.communicate(data, timeout=timeout)
    except subprocess.TimeoutExpired:
        tracker = Tracker(popen.pid, token)
        tracker.refresh()
        for sig, wait in ((signal.SIGTERM, 2.0), (signal.SIGKILL, KILL_WAIT)):
            tracker.signal(sig, group=popen.poll() is None)
            with contextlib.suppress(subprocess.TimeoutExpired):
                popen.wait(wait)
            psutil.wait_procs(tracker.alive(), timeout=wait)
            tracker.refresh()
            if popen.poll() is not None and not tracker.alive():
                break
        try:
            out, err = popen.communicate(timeout=1.0)
        except subprocess.TimeoutExpired:
            out, err = b"", b""
        last = last_said(err) or last_said(out)
        raise ToolError(f"{argv[0]} did not finish within {timeout:g} s and was stopped"
                        + (f" (last said: {last})" if last else "")) from None
    return Completed(argv, popen.returncode, out.decode("utf-8", "replace"),
                     err.decode("utf-8", "replace"))


def last_said(data: bytes, limit: int = 200) -> str:
    """The last line a stopped tool wrote on one stream (a carriage return ends a line too:
    fio's progress), its last `limit` characters: what the tool was doing when it was stopped,
    said in the error (stderr's, or else stdout's: fio's client greets a server there)."""
    lines = data.decode("utf-8", "replace").replace("\r", "\n").split("\n")
    text = next((line.strip() for line in reversed(lines) if line.strip()), "")
    return text[-limit:]


def start_failure(name: str, e: OSError) -> str:
    what = f": {e.filename}" if e.filename and e.filename != name else ""
    return f"cannot start {name}: {e.strerror or e}{what}"
