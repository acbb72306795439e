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
import selectors
import signal
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
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


class _Duplex:
    """A long-running child spoken to in lines over stdin/stdout; stderr kept bounded.

    This is the process-starting part of privilege and belongs in disklab.core.proc (rule 2:
    only proc starts processes); proc has no bidirectional process yet, so it lives here with
    the same flags proc uses (own session, stdin/stdout pipes) until it moves there.
    """

    def __init__(self, argv: Sequence[str], env: Mapping[str, str] | None = None):
        self.argv = tuple(argv)
        self.env = {**os.environ, **env} if env else None
        self._popen: subprocess.Popen[bytes] | None = None
        self._sel = selectors.DefaultSelector()
        self._buf = {"stdout": b"", "stderr": b""}
        self._lines: deque[str] = deque()
        self._stderr: deque[str] = deque(maxlen=200)
        self._open: set[str] = set()

    def start(self) -> None:
        if not self.argv or (proc.which(self.argv[0]) is None and not os.path.isfile(self.argv[0])):
            raise ToolError(f"{self.argv[0] if self.argv else '(empty argv)'} is not installed")
        try:
            self._popen = subprocess.Popen(
                self.argv, env=self.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, start_new_session=True,
            )
        except OSError as e:
            raise ToolError(f"cannot start {self.argv[0]}: {e.strerror}") from e
        for f, name in ((self._popen.stdout, "stdout"), (self._popen.stderr, "stderr")):
            assert f is not None
            os.set_blocking(f.fileno(), False)
            self._sel.register(f, selectors.EVENT_READ, name)
            self._open.add(name)

    @property
    def pid(self) -> int:
        return self._popen.pid if self._popen else 0

    def send(self, line: str) -> None:
        assert self._popen is not None and self._popen.stdin is not None
        try:
            self._popen.stdin.write(line.encode() + b"\n")
            self._popen.stdin.flush()
        except (BrokenPipeError, ValueError, OSError) as e:
            raise PrivilegeError(f"the privileged helper is gone ({e})") from None

    def read_line(self, timeout: float) -> str | None:
        """The next stdout line; None if none came within timeout; '' at end of output."""
        deadline = time.monotonic() + timeout
        while not self._lines:
            if "stdout" not in self._open:
                return ""
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            for key, _ in self._sel.select(left):
                self._drain(key.fileobj, key.data)
        return self._lines.popleft()

    def _drain(self, f: Any, name: str) -> None:
        try:
            data = os.read(f.fileno(), 65536)
        except BlockingIOError:
            return
        if not data:
            self._sel.unregister(f)
            self._open.discard(name)
            data = b"\n" if self._buf[name] else b""
        buf = self._buf[name] + data
        *lines, self._buf[name] = buf.split(b"\n")
        for raw in lines:
            text = raw.decode("utf-8", errors="replace")
            (self._lines if name == "stdout" else self._stderr).append(text)

    def stderr_text(self) -> str:
        with contextlib.suppress(Exception):
            for key, _ in self._sel.select(0):
                if key.data == "stderr":
                    self._drain(key.fileobj, "stderr")
        return "\n".join(self._stderr)

    def poll(self) -> int | None:
        return self._popen.poll() if self._popen else None

    def close(self, grace: float = 10.0) -> int | None:
        """End of input (the helper exits by itself), then SIGTERM, then SIGKILL."""
        if self._popen is None:
            return None
        with contextlib.suppress(OSError, ValueError):
            if self._popen.stdin:
                self._popen.stdin.close()
        try:
            self._popen.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self._popen.pid, signal.SIGTERM)
            try:
                self._popen.wait(timeout=5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(self._popen.pid, signal.SIGKILL)
                self._popen.wait(timeout=5)
        for f in (self._popen.stdout, self._popen.stderr):
            if f is not None:
                with contextlib.suppress(KeyError, ValueError):
                    self._sel.unregister(f)
                f.close()
        self._sel.close()
        return self._popen.returncode


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
