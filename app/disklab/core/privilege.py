"""The client of the privileged helper: one helper process, one authorisation, per session.

Everything that needs root (wipefs, mkfs, mount, umount, read-ahead, scheduler, drop_caches, loop
attach/detach, reading superblocks) is a request to disklab.core.privhelper, which runs as root
and re-checks each target itself (DESIGN.md rule 7). The helper starts:
  root    directly, as a child, when DiskLab already runs as root;
  pkexec  where polkit is available (action org.disklab.helper: the policy and launcher in
          resources/polkit, installed by `disklab install-desktop --system`);
  sudo    otherwise: `sudo -n` when no password is needed, else `sudo -S` with the password
          written to its stdin once, before the first request (no pty, no pexpect needed).
It lives as long as the session, so a run of many hours needs one authorisation (KDiskMark's
users lose long runs to a 5-minute polkit expiry). Every command it runs is returned with the
answer, kept in `commands` and passed to `on_command` for the session's log.

PrivilegedTool runs one step of a case as root through the helper (a raw device, or a
filesystem the helper mounted, is root's), with the interface of proc.ToolProcess that the
runner and the monitor use, so that a case reads the same whichever side runs its tool.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from disklab.core import proc
from disklab.core.errors import (
    ConfigError,
    DisklabError,
    PlanError,
    PrivilegeError,
    Problem,
    SafetyError,
    ToolError,
)
from disklab.core.model import Plan
from disklab.core.proc import OutputLine, ProcCounters, TreeEntry

HELPER_MODULE = "disklab.core.privhelper"
HELPER_LAUNCHER = "/usr/libexec/disklab/disklab-helper"  # installed with the polkit policy
POLKIT_ACTION = "org.disklab.helper"
SUDO_PROMPT = "[disklab] password for %u: "
MODES = ("root", "pkexec", "sudo")


def choose_mode() -> str:
    """root when we are root; pkexec where polkit is; sudo otherwise."""
    if os.geteuid() == 0:
        return "root"
    if proc.which("pkexec") and Path("/usr/share/polkit-1/actions").is_dir():
        return "pkexec"
    if proc.which("sudo"):
        return "sudo"
    raise PrivilegeError("formatting and mounting need root: run DiskLab as root, or install "
                         "polkit (pkexec) or sudo")


def sudo_needs_password(python: str | None = None) -> bool:
    """True when sudo would ask for a password to start the helper: no cached credentials and
    no NOPASSWD rule for it. Asks about the helper's own command (`sudo -l`), so that a rule
    allowing only that command, the safe one to give, counts."""
    module = (python or sys.executable, "-m", HELPER_MODULE)
    return proc.run(["sudo", "-n", "-l", "--", *module], timeout=30).returncode != 0


def password_needed(plan: Plan) -> bool:
    """True when running `plan` will ask for a password: DiskLab is not root, the plan needs
    root (its target, or dropping caches), and the helper would start through sudo with a
    password. Front ends ask for it once, before the run (it may start a process: not on a
    GUI thread)."""
    if os.geteuid() == 0 or not (plan.target.needs_root or plan.drop_caches):
        return False
    try:
        mode = choose_mode()
    except PrivilegeError:
        return False  # the run says why it cannot get root
    return mode == "sudo" and sudo_needs_password()


def helper_argv(mode: str, python: str | None = None, sudo_password: bool = False,
                launcher: str = HELPER_LAUNCHER) -> tuple[str, ...]:
    """The argv that starts the helper in `mode` (pure, so it is tested without root)."""
    python = python or sys.executable
    module = (python, "-m", HELPER_MODULE)
    if mode == "root":
        return module
    if mode == "pkexec":
        return ("pkexec", launcher) if os.path.exists(launcher) else ("pkexec", *module)
    if mode == "sudo":
        return ("sudo", "-S" if sudo_password else "-n", "-p", SUDO_PROMPT, "--", *module)
    raise PrivilegeError(f"unknown privilege mode {mode!r} (one of {', '.join(MODES)})")


class _Duplex(proc.LineProcess):
    """The helper process (started by proc, rule 2); a dead pipe is a PrivilegeError."""

    def send(self, line: str) -> None:
        try:
            super().send(line)
        except ToolError as e:
            raise PrivilegeError(f"the privileged helper is gone ({e})") from None


_ERRORS: dict[str, type[DisklabError]] = {"SafetyError": SafetyError, "ToolError": ToolError}


class Privileged:
    """One privileged helper for a session: start(), request(op, **args) -> result, close().

    request() raises SafetyError for a refused target, ConfigError for a configuration that
    does not validate, ToolError for a command that failed, PrivilegeError when the helper is
    gone; each of these carries `.ran` (the commands the request ran before it failed).
    """

    def __init__(
        self,
        mode: str | None = None,
        *,
        python: str | None = None,
        password: Callable[[], str] | None = None,
        on_command: Callable[[Mapping[str, Any]], None] | None = None,
        start_timeout: float = 300.0,
    ):
        self.mode = mode
        self.python = python
        self.password = password
        self.on_command = on_command
        self.start_timeout = start_timeout
        self.commands: list[dict[str, Any]] = []
        self.helper_pid = 0
        self.workdir: str | None = None  # the helper's own directory (raw-device result files)
        self._proc: _Duplex | None = None
        self._next_id = 0

    # --- lifecycle --------------------------------------------------------------------------
    def start(self) -> None:
        if self.alive:
            return
        mode = self.mode or choose_mode()
        self.mode = mode
        sudo_password = False
        if mode == "sudo":
            sudo_password = sudo_needs_password(self.python)
            if sudo_password and self.password is None:
                raise PrivilegeError("sudo needs a password and none can be asked for")
        env = None
        if mode == "root":  # the child finds this very disklab, installed or not
            here = str(Path(__file__).resolve().parents[2])
            env = {"PYTHONPATH": os.pathsep.join(
                p for p in (here, os.environ.get("PYTHONPATH")) if p)}
        self._proc = _Duplex(helper_argv(mode, self.python, sudo_password), env)
        self._proc.start()
        if sudo_password:
            assert self.password is not None
            self._proc.send(self.password())
        line = self._proc.read_line(self.start_timeout)
        hello: Any = None
        with contextlib.suppress(ValueError, TypeError):
            hello = json.loads(line or "")
        if not isinstance(hello, dict) or not hello.get("ready"):
            why = self._proc.stderr_text().strip()[-500:] or (
                "no answer" if line is None else f"unexpected {line!r}")
            self._proc.close(grace=2)
            self._proc = None
            raise PrivilegeError(f"the privileged helper did not start ({mode}): {why}")
        self.helper_pid = int(hello.get("pid") or 0)
        self.workdir = hello.get("workdir")
        if hello.get("uid") != 0:
            self.close()
            raise PrivilegeError(f"the privileged helper runs as uid {hello.get('uid')}, not 0")

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def close(self) -> None:
        if self._proc is not None:
            self._proc.close()
            self._proc = None

    def __enter__(self) -> Privileged:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- requests ---------------------------------------------------------------------------
    def _keep(self, answer: Mapping[str, Any]) -> list[dict[str, Any]]:
        ran = [c for c in answer.get("ran") or [] if isinstance(c, dict)]
        for cmd in ran:
            self.commands.append(cmd)
            if self.on_command is not None:
                self.on_command(cmd)
        return ran

    def request(self, op: str, timeout: float | None = None, **args: Any) -> dict[str, Any]:
        """Ask the helper for one operation; its result, with "ran": the commands it ran."""
        if not self.alive:
            self.start()
        assert self._proc is not None
        self._next_id += 1
        rid = self._next_id
        self._proc.send(json.dumps({"id": rid, "op": op, "args": args}))
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            line = self._proc.read_line(1.0)
            if line == "" or (line is None and self._proc.poll() is not None):
                why = self._proc.stderr_text().strip()[-500:]
                self._proc.close(grace=2)  # reap it: the next request starts a new one
                self._proc = None
                raise PrivilegeError(f"the privileged helper died during {op}"
                                     + (f": {why}" if why else ""))
            if line is None:
                if deadline is not None and time.monotonic() > deadline:
                    raise PrivilegeError(f"no answer to {op} within {timeout:g} s")
                continue
            try:
                answer = json.loads(line)
            except ValueError:
                continue  # not protocol (the helper keeps stray output off stdout)
            if answer.get("id") == rid:
                break
            self._keep(answer)  # the late answer of an interrupted request: keep its commands
        ran = self._keep(answer)
        if answer.get("ok"):
            result = dict(answer.get("result") or {})
            result["ran"] = ran
            return result
        kind, message = answer.get("kind", ""), str(answer.get("error"))
        error: DisklabError
        if kind == "ConfigError":
            error = ConfigError([tuple(p) for p in answer.get("problems") or [("config", message)]])
        elif kind == "PlanError":
            error = PlanError([Problem(str(k), str(m))
                               for k, m in answer.get("problems") or [("params", message)]])
        else:
            error = _ERRORS.get(kind, DisklabError)(message)
        error.ran = ran  # type: ignore[attr-defined]
        raise error


READ_SLACK = 30.0  # seconds past a tool_read's own wait before the helper counts as hung
STOP_SLACK = proc.KILL_WAIT + 30.0


def _tree_entry(values: list[Any]) -> TreeEntry:
    create_time, ppid, *counters = values
    return TreeEntry(float(create_time), int(ppid), _proc_counters(counters))


def _proc_counters(values: list[Any]) -> ProcCounters:
    rb, wb, rc, wc, cpu = values
    return ProcCounters(int(rb), int(wb), int(rc), int(wc), float(cpu))


class PrivilegedTool:
    """One step of a case (step -1: the measured run; 0..: its prepare steps) run as root by
    the session's helper. The helper builds the argv itself from the tool's name and the case's
    parameters (it takes intent, not argv), re-checks the target, and keeps the process; this
    side asks for its output a few times a second, as the runner asks a local ToolProcess."""

    def __init__(self, priv: Privileged, tool: str, params: Mapping[str, Any], *, tag: str,
                 directory: str, step: int = -1, device: str | None = None,
                 confirm: str | None = None, library_path: str | None = None,
                 directories: Mapping[str, str] | None = None):
        self.priv = priv
        self.request_args: dict[str, Any] = {
            "tool": tool, "params": dict(params), "tag": tag, "directory": directory,
            "step": step, "device": device, "confirm": confirm, "library_path": library_path}
        if directories:  # several targets (`on`): each stream target's directory
            self.request_args["directories"] = dict(directories)
        self.argv: tuple[str, ...] = ()
        self.pid = 0
        self.returncode: int | None = None
        self.signal: int | None = None
        self.survivors: list[int] = []
        self.result_text: str | None = None  # the tool's result file, read by the helper
        self._run: int | None = None
        self._done = False
        self._closed = False
        self._pending: list[OutputLine] = []  # read by wait(), not yet handed out
        self._seen: list[OutputLine] = []  # every line (for output() before close())
        self._tree: dict[int, TreeEntry] = {}
        self._finals: dict[int, ProcCounters] = {}
        self._final: dict[str, str] = {}  # stdout, stderr, tail as the helper kept them

    def start(self) -> None:
        answer = self.priv.request("tool_start", **self.request_args)
        self._run, self.pid = int(answer["run"]), int(answer["pid"])
        self.argv = tuple(answer["argv"])

    def read(self, timeout: float) -> list[OutputLine]:
        if self._pending:
            lines, self._pending = self._pending, []
            return lines
        if self._run is None or self._done or self._closed:
            return []
        answer = self.priv.request("tool_read", timeout=timeout + READ_SLACK, run=self._run,
                                   wait=timeout)
        lines = [OutputLine(float(t), str(stream), str(text), str(end))
                 for t, stream, text, end in answer["lines"]]
        self._seen += lines
        self._done = bool(answer["done"])
        self.returncode, self.signal = answer["returncode"], answer["signal"]
        return lines

    def poll(self) -> bool:
        return self._done and not self._pending

    def wait(self, timeout: float | None = None) -> int | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._done and self._run is not None and not self._closed:
            if deadline is not None and time.monotonic() >= deadline:
                break
            self._pending += self._fetch(0.5)
        return self.returncode

    def _fetch(self, wait: float) -> list[OutputLine]:
        pending, self._pending = self._pending, []
        try:
            return self.read(wait)
        finally:
            self._pending = pending + self._pending

    def terminate(self, grace: float = 5.0) -> None:
        if self._run is None or self._closed:
            return
        answer = self.priv.request("tool_stop", timeout=grace + STOP_SLACK, run=self._run,
                                   grace=grace)
        self.survivors = list(answer.get("survivors") or [])

    def close(self) -> None:
        """End the run in the helper (killing what is left of it) and take its whole output.
        Never raises: a helper that died leaves the output read so far."""
        if self._run is None or self._closed:
            return
        self._closed = True
        try:
            answer = self.priv.request("tool_close", timeout=STOP_SLACK, run=self._run)
        except DisklabError:
            return
        self._final = {k: str(answer.get(k) or "") for k in ("stdout", "stderr", "tail")}
        self.returncode, self.signal = answer["returncode"], answer["signal"]
        self.survivors = list(answer.get("survivors") or [])
        self.result_text = answer.get("result_file")
        self._done = True

    def __enter__(self) -> PrivilegedTool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- what the monitor and the runner read ------------------------------------------
    def descendants(self) -> list[int]:
        return list(self._tree)

    def tree_counters(self) -> dict[int, TreeEntry]:
        """The tree's counters now, read by the helper (the monitor's sample asks; never
        raises: a helper that is gone has no tree to show, as a vanished process has none)."""
        if self._run is None or self._closed:
            return {}
        try:
            answer = self.priv.request("tool_tree", timeout=READ_SLACK, run=self._run)
        except DisklabError:
            return {}
        self._tree = {int(pid): _tree_entry(v) for pid, v in answer["tree"].items()}
        self._finals = {int(pid): _proc_counters(v) for pid, v in answer["finals"].items()}
        return dict(self._tree)

    def exit_counters(self) -> dict[int, ProcCounters]:
        return dict(self._finals)

    def output(self, stream: str) -> str:
        if stream in self._final:
            return self._final[stream]
        return "".join(line.text + (line.terminator or "\n") for line in self._seen
                       if line.stream == stream)

    def tail(self, n_lines: int = 40) -> str:
        if "tail" in self._final:
            return "\n".join(self._final["tail"].splitlines()[-n_lines:])
        return "\n".join(line.text for line in self._seen[-n_lines:])
