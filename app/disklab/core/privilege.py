"""The client of the privileged helper: one helper process, one authorisation, per session.

Everything that needs root (wipefs, mkfs, mount, umount, read-ahead, scheduler, drop_caches, loop
attach/detach, reading superblocks) is a request to disklab.core.privhelper, which runs as root
and re-checks each target itself (DESIGN.md rule 7). The helper starts:
  root    directly, as a child, when DiskLab already runs as root;
  pkexec  where polkit is available (action org.disklab.helper, packaging/polkit);
  sudo    otherwise: `sudo -n` when no password is needed, else `sudo -S` with the password
          written to its stdin once, before the first request (no pty, no pexpect needed).
It lives as long as the session, so a run of many hours needs one authorisation (KDiskMark's
users lose long runs to a 5-minute polkit expiry). Every command it runs is returned with the
answer, kept in `commands` and passed to `on_command` for the session's log.
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
from disklab.core.errors import DisklabError, SafetyError, ToolError
from disklab.core.filesystems import ConfigError

HELPER_MODULE = "disklab.core.privhelper"
HELPER_LAUNCHER = "/usr/libexec/disklab/disklab-helper"  # installed with the polkit policy
POLKIT_ACTION = "org.disklab.helper"
SUDO_PROMPT = "[disklab] password for %u: "
MODES = ("root", "pkexec", "sudo")


class PrivilegeError(DisklabError):
    """The helper could not be started or authorised, or died."""


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
            done = proc.run(["sudo", "-n", "true"], timeout=30)
            sudo_password = done.returncode != 0
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
        else:
            error = _ERRORS.get(kind, DisklabError)(message)
        error.ran = ran  # type: ignore[attr-defined]
        raise error
