"""A long-running child spoken to in lines over stdin/stdout (the privileged helper)."""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from disklab.core.proc.spawn import which
from disklab.core.vocab.errors import ToolError


class LineProcess:
    """A long-running child spoken to in lines over stdin/stdout (the privileged helper);
    stderr kept bounded. Own session; it dies with DiskLab."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str] | None = None, *,
                 cwd: str | None = None, only_env: bool = False):
        """`env` is added to DiskLab's environment, or with `only_env` is the whole of it."""
        self.argv = tuple(argv)
        self.env = dict(env or {}) if only_env else ({**os.environ, **env} if env else None)
        self.cwd = cwd
        self._popen: subprocess.Popen[bytes] | None = None
        self._sel = selectors.DefaultSelector()
        self._buf = {"stdout": b"", "stderr": b""}
        self._lines: deque[str] = deque()
        self._stderr: deque[str] = deque(maxlen=200)
        self._open: set[str] = set()

    def start(self) -> None:
        if not self.argv or (which(self.argv[0]) is None and not os.path.isfile(self.argv[0])):
            raise ToolError(f"{self.argv[0] if self.argv else '(empty argv)'} is not installed")
        try:
            self._popen = subprocess.Popen(
                self.argv, env=self.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, start_new_session=True, cwd=self.cwd,
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
            raise ToolError(f"{self.argv[0]} is gone ({e})") from None

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
