"""The client of the privileged helper: one helper process, one authorisation, per session.

Everything that needs root (wipefs, mkfs, mount, umount, read-ahead, scheduler, drop_caches,
loop attach/detach, reading superblocks, tools on root's filesystems) is a request of
core.helper_client.protocol to the helper, which runs as root and re-checks each target itself
(DESIGN.md rule 7). The helper starts with working directory /, a minimal environment (a fixed
system PATH and the locale) and `python -I` by an absolute path:
  root    directly, as a child, when DiskLab already runs as root;
  pkexec  where polkit and the root-owned launcher are installed (action org.disklab.helper);
  sudo    otherwise: the root-owned launcher where it is installed, else this interpreter;
          `sudo -n` when no password is needed, else `sudo -S` with the password written to
          its stdin once, before the first request.
A helper whose code is not root's alone refuses to serve (HelperRefused, which says in words
what to do); the refusal is remembered, so a session is told once and not asked again.
It lives as long as the session, so a run of many hours needs one authorisation. Every command
it runs is returned with the answer, kept in `commands` and passed to `on_command` for the
session's log.
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
from disklab.core.helper_client import protocol
from disklab.core.helper_client.protocol import Request
from disklab.core.vocab.errors import (
    ConfigError,
    DisklabError,
    PlanError,
    PrivilegeError,
    Problem,
    RequestError,
    SafetyError,
    ToolError,
)
from disklab.core.vocab.model import Plan

HELPER_MODULE = "disklab.core.root_helper"
HELPER_LAUNCHER = "/usr/libexec/disklab/disklab-helper"  # the polkit policy's exec.path
LAUNCHER_ENV = "DISKLAB_HELPER"  # another root-owned launcher (a test's, a packager's prefix)
POLKIT_ACTION = "org.disklab.helper"
SUDO_PROMPT = "[disklab] password for %u: "
MODES = ("root", "pkexec", "sudo")
SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class HelperRefused(PrivilegeError):
    """The helper would not serve as root: its code could be changed by someone other than
    root. The message says why and what to do; `again` is the short form for later asks."""

    again = ("the privileged helper was refused (see the first warning: install a root-owned "
             "helper with `sudo disklab install-helper`)")


def launcher() -> str | None:
    """The root-owned launcher sudo and pkexec start, when one is installed."""
    path = os.environ.get(LAUNCHER_ENV) or HELPER_LAUNCHER
    return path if os.path.isabs(path) and os.path.isfile(path) else None


def interpreter(python: str | None = None) -> str:
    """The absolute path of the interpreter a root-mode helper runs (the venv's own path, not
    its target: the venv's site-packages come with it)."""
    return os.path.abspath(python or sys.executable)


def choose_mode() -> str:
    """root when we are root; pkexec where polkit and the launcher are; sudo otherwise."""
    if os.geteuid() == 0:
        return "root"
    if proc.which("pkexec") and Path("/usr/share/polkit-1/actions").is_dir() and launcher():
        return "pkexec"
    if proc.which("sudo"):
        return "sudo"
    raise PrivilegeError("formatting and mounting need root: run DiskLab as root, or install "
                         "polkit (pkexec) or sudo, and the helper (`sudo disklab install-helper`)")


def helper_argv(mode: str, python: str | None = None, sudo_password: bool = False,
                launcher_path: str | None = None) -> tuple[str, ...]:
    """The argv that starts the helper in `mode` (pure, so it is tested without root)."""
    module = (interpreter(python), "-I", "-m", HELPER_MODULE)
    if mode == "root":
        return module
    command = (launcher_path,) if launcher_path else module
    if mode == "pkexec":
        if not launcher_path:
            raise PrivilegeError("pkexec starts only the installed launcher "
                                 f"({HELPER_LAUNCHER}): `sudo disklab install-helper`")
        return ("pkexec", launcher_path)
    if mode == "sudo":
        return ("sudo", "-S" if sudo_password else "-n", "-p", SUDO_PROMPT, "--", *command)
    raise PrivilegeError(f"unknown privilege mode {mode!r} (one of {', '.join(MODES)})")


def helper_env() -> dict[str, str]:
    """The helper's whole environment: a fixed system PATH and the locale, nothing else."""
    return {"PATH": SAFE_PATH, "LANG": os.environ.get("LANG") or "C.UTF-8"}


def sudo_needs_password(python: str | None = None) -> bool:
    """True when sudo would ask for a password to start the helper: no cached credentials and
    no NOPASSWD rule for its command (`sudo -l` of that very command, so that a rule allowing
    only the launcher counts)."""
    argv = helper_argv("sudo", python, launcher_path=launcher())[5:]
    return proc.run(["sudo", "-n", "-l", "--", *argv], timeout=30).returncode != 0


def password_needed(plan: Plan) -> bool:
    """True when running `plan` will ask for a password: DiskLab is not root, the plan needs
    root (its target, or dropping caches), and the helper would start through sudo with a
    password. Front ends ask for it once, before the run (not on a GUI thread)."""
    if os.geteuid() == 0 or not (plan.target.needs_root or plan.drop_caches):
        return False
    try:
        mode = choose_mode()
    except PrivilegeError:
        return False  # the run says why it cannot get root
    return mode == "sudo" and sudo_needs_password()


class _Duplex(proc.LineProcess):
    """The helper process (started by proc, rule 2); a dead pipe is a PrivilegeError."""

    def send(self, line: str) -> None:
        try:
            super().send(line)
        except ToolError as e:
            raise PrivilegeError(f"the privileged helper is gone ({e})") from None


_ERRORS: dict[str, type[DisklabError]] = {"SafetyError": SafetyError, "ToolError": ToolError,
                                          "RequestError": RequestError}


def _refused_unread(answer: Mapping[str, Any]) -> bool:
    """The helper's answer to a line whose id it could not read: it answers lines in order, and
    the client sends one at a time, so this answers the line just sent (waiting for its id
    instead would wait for ever)."""
    return answer.get("id") is None and answer.get("ok") is False


def _error_of(answer: Mapping[str, Any]) -> DisklabError:
    kind, message = answer.get("kind", ""), str(answer.get("error"))
    if kind == "ConfigError":
        return ConfigError([tuple(p) for p in answer.get("problems") or [("config", message)]])
    if kind == "PlanError":
        return PlanError([Problem(str(k), str(m))
                          for k, m in answer.get("problems") or [("params", message)]])
    return _ERRORS.get(kind, DisklabError)(message)


class Privileged:
    """One privileged helper for a session: start(), call(request) -> answer, close().

    call() raises SafetyError for a refused target, ConfigError for a configuration that does
    not validate, RequestError for a request outside the protocol, ToolError for a command
    that failed, PrivilegeError when the helper is gone or refused; each of these carries
    `.ran` (the commands the request ran before it failed). `last_ran`: those of the last
    answer.
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
        self.last_ran: list[dict[str, Any]] = []
        self.helper_pid = 0
        self.served_uid: int | None = None
        self.workdir: str | None = None  # the helper's own directory (mounts, raw results)
        self.refused: HelperRefused | None = None
        self._proc: _Duplex | None = None
        self._next_id = 0

    # --- lifecycle --------------------------------------------------------------------------
    def start(self) -> None:
        if self.alive:
            return
        if self.refused is not None:
            raise HelperRefused(HelperRefused.again)
        mode = self.mode = self.mode or choose_mode()
        sudo_password = False
        if mode == "sudo":
            sudo_password = sudo_needs_password(self.python)
            if sudo_password and self.password is None:
                raise PrivilegeError("sudo needs a password and none can be asked for")
        argv = helper_argv(mode, self.python, sudo_password,
                           None if mode == "root" else launcher())
        self._proc = _Duplex(argv, helper_env(), cwd="/", only_env=True)
        self._proc.start()
        if sudo_password:
            assert self.password is not None
            self._proc.send(self.password())
        self._hello(mode, self._proc.read_line(self.start_timeout))

    def _hello(self, mode: str, line: str | None) -> None:
        assert self._proc is not None
        hello: Any = None
        with contextlib.suppress(ValueError, TypeError):
            hello = json.loads(line or "")
        if isinstance(hello, dict) and hello.get("kind") == "HelperRefused":
            self._proc.close(grace=2)
            self._proc = None
            self.refused = HelperRefused(
                f"the privileged helper refused to run as root ({mode}): {hello.get('error')}")
            raise self.refused
        if not isinstance(hello, dict) or not hello.get("ready"):
            why = self._proc.stderr_text().strip()[-500:] or (
                "no answer" if line is None else f"unexpected {line[:200]!r}")
            self._proc.close(grace=2)
            self._proc = None
            raise PrivilegeError(f"the privileged helper did not start ({mode}): {why}")
        self.helper_pid = int(hello.get("pid") or 0)
        self.workdir = hello.get("workdir")
        self.served_uid = hello.get("served_uid")
        if hello.get("uid") != 0 or hello.get("protocol") != protocol.PROTOCOL:
            self.close()
            raise PrivilegeError(f"the privileged helper runs as uid {hello.get('uid')} with "
                                 f"protocol {hello.get('protocol')}, not 0 and "
                                 f"{protocol.PROTOCOL}")

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

    def send_line(self, line: str, rid: int | None, what: str,
                  timeout: float | None = None) -> dict[str, Any]:
        """Send one line and wait for the answer with id `rid` (any id when None): the raw
        answer object. Tests use it to send what no dataclass would build."""
        if not self.alive:
            self.start()
        assert self._proc is not None
        self._proc.send(line)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            got = self._proc.read_line(1.0)
            if got == "" or (got is None and self._proc.poll() is not None):
                why = self._proc.stderr_text().strip()[-500:]
                self._proc.close(grace=2)  # reap it: the next request starts a new one
                self._proc = None
                raise PrivilegeError(f"the privileged helper died during {what}"
                                     + (f": {why}" if why else ""))
            if got is None:
                if deadline is not None and time.monotonic() > deadline:
                    raise PrivilegeError(f"no answer to {what} within {timeout:g} s")
                continue
            try:
                answer = json.loads(got)
            except ValueError:
                continue  # not protocol (the helper keeps stray output off stdout)
            if isinstance(answer, dict) and (rid is None or answer.get("id") == rid
                                             or _refused_unread(answer)):
                return answer
            self._keep(answer)  # the late answer of an interrupted request: keep its commands

    def call(self, request: Request, timeout: float | None = None) -> Any:
        """Ask the helper for one operation: its typed answer (protocol.ANSWERS[request.OP])."""
        self._next_id += 1
        rid = self._next_id
        answer = self.send_line(protocol.encode(rid, request), rid, request.OP, timeout)
        self.last_ran = ran = self._keep(answer)
        if answer.get("ok"):
            return protocol.answer_of(request.OP, answer.get("result"))
        error = _error_of(answer)
        error.ran = ran  # type: ignore[attr-defined]
        raise error
