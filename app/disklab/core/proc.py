"""The only module that starts processes (DESIGN.md rule 2).

Tools run on pipes (iozone, fio, bonnie++ and dd all flush their output on a pipe as on a pty),
in a new session with stdin closed, and die with DiskLab (parent-death signal) so that a killed
DiskLab leaves no tool writing to the disk. Output is split on '\\r' as well as '\\n' (dd and fio
redraw progress with '\\r'), timestamped, and kept bounded. The reader is poll-based and
single-threaded: the runner's loop asks for what arrived within a timeout, so no threads.

Killing: SIGTERM to the process group and to every descendant seen (psutil), then SIGKILL after a
grace period. Descendants are tracked because fio without --thread forks jobs that call setsid()
and would escape a group kill.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import pty as pty_mod
import selectors
import shutil
import signal
import subprocess
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import psutil

from disklab.core.errors import ToolError

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child, before exec: SIGKILL when DiskLab dies, however it dies."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def which(name: str) -> str | None:
    """Path of an executable (also in sbin, where bonnie++ and mkfs live), or None."""
    path = os.environ.get("PATH", "") + ":/usr/local/sbin:/usr/sbin:/sbin"
    return shutil.which(name, path=path)


@dataclass(frozen=True)
class Completed:
    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


def run(argv: Sequence[str], timeout: float = 60.0, input: str | None = None) -> Completed:
    """A short command to its end (version probes, mkfs, mount): output captured, stdin closed
    unless `input` is given. ToolError when it cannot start or does not finish in time."""
    argv = tuple(argv)
    if not argv or (which(argv[0]) is None and not os.path.isfile(argv[0])):
        raise ToolError(f"{argv[0] if argv else '(empty argv)'} is not installed")
    try:
        done = subprocess.run(
            argv, input=input, capture_output=True, text=True, errors="replace",
            timeout=timeout, stdin=None if input is not None else subprocess.DEVNULL,
            start_new_session=True, preexec_fn=_die_with_parent,
        )
    except subprocess.TimeoutExpired as e:
        raise ToolError(f"{argv[0]} did not finish within {timeout:g} s") from e
    except OSError as e:
        raise ToolError(f"cannot start {argv[0]}: {e.strerror}") from e
    return Completed(argv, done.returncode, done.stdout, done.stderr)


@dataclass(frozen=True)
class OutputLine:
    t: float  # time.time() when it was read
    stream: str  # "stdout" | "stderr"
    text: str
    terminator: str  # "\n", "\r", or "" for a last line without one


class _Kept:
    """One stream's text, bounded: the head and the tail are kept, the middle is counted."""

    def __init__(self, limit: int):
        self.limit = limit
        self.head: list[str] = []
        self.head_size = 0
        self.tail: deque[str] = deque()
        self.tail_size = 0
        self.dropped = 0

    def add(self, text: str) -> None:
        if self.head_size < self.limit // 2:
            self.head.append(text)
            self.head_size += len(text)
            return
        self.tail.append(text)
        self.tail_size += len(text)
        while self.tail_size > self.limit // 2 and len(self.tail) > 1:
            gone = self.tail.popleft()
            self.tail_size -= len(gone)
            self.dropped += len(gone)

    def text(self) -> str:
        middle = [f"[... {self.dropped} characters dropped ...]\n"] if self.dropped else []
        return "".join(self.head + middle + list(self.tail))


class ToolProcess:
    """A running tool: start(), then read(timeout) until poll() is True."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        pty: bool = False,
        keep_bytes: int = 8 << 20,
    ):
        self.argv = tuple(argv)
        self.cwd = cwd
        self.env = {**os.environ, **env} if env else None
        self.use_pty = pty
        self._kept = {"stdout": _Kept(keep_bytes), "stderr": _Kept(keep_bytes)}
        self._recent: deque[tuple[float, str, str]] = deque(maxlen=200)
        self._partial = {"stdout": "", "stderr": ""}
        self._pending_cr = {"stdout": False, "stderr": False}
        self._popen: subprocess.Popen[bytes] | None = None
        self._sel = selectors.DefaultSelector()
        self._fds: dict[int, str] = {}
        self._tree: dict[int, psutil.Process] = {}
        self.returncode: int | None = None
        self.signal: int | None = None
        self.pid = 0

    def start(self) -> None:
        exe = self.argv[0] if self.argv else ""
        if not exe or (which(exe) is None and not os.path.isfile(exe)):
            raise ToolError(f"{exe or '(empty argv)'} is not installed or not executable")
        out_w = err_w = None
        try:
            if self.use_pty:
                master, slave = pty_mod.openpty()
                stdout, stderr = slave, subprocess.PIPE
            else:
                stdout, stderr = subprocess.PIPE, subprocess.PIPE
            self._popen = subprocess.Popen(
                self.argv, cwd=self.cwd, env=self.env, stdin=subprocess.DEVNULL,
                stdout=stdout, stderr=stderr, start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        except OSError as e:
            raise ToolError(f"cannot start {exe}: {e.strerror}") from e
        self.pid = self._popen.pid
        if self.use_pty:
            os.close(slave)
            out_w = master
        else:
            assert self._popen.stdout is not None
            out_w = self._popen.stdout.fileno()
        assert self._popen.stderr is not None
        err_w = self._popen.stderr.fileno()
        for fd, name in ((out_w, "stdout"), (err_w, "stderr")):
            os.set_blocking(fd, False)
            self._sel.register(fd, selectors.EVENT_READ)
            self._fds[fd] = name
        with contextlib.suppress(psutil.Error):
            self._tree[self.pid] = psutil.Process(self.pid)

    def read(self, timeout: float) -> list[OutputLine]:
        """Lines that arrived within `timeout` seconds (complete ones; a partial last line only
        when its stream has ended)."""
        lines: list[OutputLine] = []
        if not self._fds:
            if self._popen is not None and self._popen.poll() is None:
                time.sleep(min(timeout, 0.05))
            return lines
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            events = self._sel.select(max(0.0, left))
            for key, _ in events:
                lines += self._drain(key.fd)
            if lines or left <= 0 or not self._fds:
                break
        self.track()
        return lines

    def _drain(self, fd: int) -> list[OutputLine]:
        stream = self._fds[fd]
        try:
            data = os.read(fd, 65536)
        except OSError as e:
            data = b"" if e.errno == errno.EIO else None  # EIO: the pty's other side closed
            if data is None:
                return []
        now = time.time()
        if not data:
            self._sel.unregister(fd)
            del self._fds[fd]
            if self.use_pty and stream == "stdout":
                os.close(fd)
            rest = self._partial[stream]
            self._partial[stream] = ""
            return [self._keep(OutputLine(now, stream, rest, ""))] if rest else []
        text = data.decode("utf-8", errors="replace")
        return self._split(stream, text, now)

    def _split(self, stream: str, text: str, now: float) -> list[OutputLine]:
        out = []
        if self._pending_cr[stream] and text.startswith("\n"):
            text = text[1:]  # the "\n" of a "\r\n" split over two reads
        self._pending_cr[stream] = False
        buf = self._partial[stream] + text
        start = 0
        i = 0
        n = len(buf)
        while i < n:
            c = buf[i]
            if c == "\n" or c == "\r":
                term = c
                line = buf[start:i]
                if c == "\r" and i + 1 < n and buf[i + 1] == "\n":
                    i += 1
                    term = "\n"
                elif c == "\r" and i + 1 == n:
                    self._pending_cr[stream] = True
                out.append(self._keep(OutputLine(now, stream, line, term)))
                start = i + 1
            i += 1
        self._partial[stream] = buf[start:]
        return out

    def _keep(self, line: OutputLine) -> OutputLine:
        self._kept[line.stream].add(line.text + (line.terminator or ""))
        self._recent.append((line.t, line.stream, line.text))
        return line

    def track(self) -> None:
        """Refresh the set of descendants, so that a kill reaches those that left the group."""
        for p in list(self._tree.values()):
            try:
                for child in p.children(recursive=True):
                    self._tree.setdefault(child.pid, child)
            except psutil.Error:
                continue

    def descendants(self) -> list[int]:
        """Live pids of the tool's tree, the leader included (for the monitor)."""
        self.track()
        return [pid for pid, p in self._tree.items() if _alive(p)]

    def poll(self) -> bool:
        """True when the tool has exited and both of its streams are drained."""
        if self._popen is None:
            return True
        if self.returncode is None:
            code = self._popen.poll()
            if code is not None:
                self._set_code(code)
        return self.returncode is not None and not self._fds

    def _set_code(self, code: int) -> None:
        self.returncode = code
        self.signal = -code if code < 0 else None

    def wait(self, timeout: float | None = None) -> int | None:
        """Wait for the exit and read what is left of the output."""
        if self._popen is None:
            return None
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.poll():
            if deadline is not None and time.monotonic() > deadline:
                return None
            self.read(0.1)
        return self.returncode

    def terminate(self, grace: float = 5.0) -> None:
        """SIGTERM to the group and every tracked descendant, SIGKILL to survivors after grace."""
        if self._popen is None:
            return
        self.track()
        self._signal_all(signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if self._popen.poll() is not None and not any(
                _alive(p) for pid, p in self._tree.items() if pid != self.pid
            ):
                break
            self.read(0.05)
        self.track()
        self._signal_all(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._popen.wait(timeout=5)
        psutil.wait_procs([p for p in self._tree.values() if _alive(p)], timeout=5)

    def _signal_all(self, sig: int) -> None:
        assert self._popen is not None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)
        for p in self._tree.values():
            if _alive(p):
                with contextlib.suppress(psutil.Error):
                    p.send_signal(sig)

    def output(self, stream: str) -> str:
        """Everything kept of one stream (head and tail when it was very long)."""
        kept = self._kept[stream].text()
        return kept + self._partial[stream]

    def tail(self, n_lines: int = 40) -> str:
        """The last lines of both streams in time order, for an error report."""
        recent = list(self._recent)[-n_lines:]
        return "\n".join(text for _t, _s, text in recent)

    def close(self) -> None:
        if self._popen is not None and self._popen.poll() is None:
            self.terminate(1.0)
        for fd in list(self._fds):
            self._sel.unregister(fd)
            if self.use_pty:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._fds.clear()
        if self._popen is not None:
            for f in (self._popen.stdout, self._popen.stderr):
                if f is not None:
                    f.close()
            if self.returncode is None and self._popen.returncode is not None:
                self._set_code(self._popen.returncode)
        self._sel.close()

    def __enter__(self) -> ToolProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _alive(p: psutil.Process) -> bool:
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
