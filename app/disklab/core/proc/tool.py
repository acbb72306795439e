"""A running tool: started on pipes or a pty, read with a timeout, its process tree tracked
and killed whole (see the package's docstring). What it says, cut into lines, is
lines.OutputLines': this module only moves the bytes."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import selectors
import signal
import struct
import subprocess
import termios
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import IO

import psutil

from disklab.core.proc.lines import OutputLine, OutputLines
from disklab.core.proc.procfs import ProcCounters, TreeEntry, process_counters
from disklab.core.proc.spawn import (
    CLOSE_GRACE,
    KILL_WAIT,
    child_env,
    child_setup,
    resolve,
    start_failure,
)
from disklab.core.proc.tracking import TRACK_EVERY, Tracker
from disklab.core.vocab.errors import ToolError


class ToolProcess:
    """A running tool: start(), then read(timeout) until poll() is True; use it as a context
    manager so that nothing of it outlives the block."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        pty: bool = False,
        keep_bytes: int = 8 << 20,
        cgroup: str | None = None,
        barrier: tuple[int, int, int] | None = None,
    ):
        self.argv = tuple(str(a) for a in argv)
        # a ToolGroup's start pipe (read, write ends) and its "at the barrier" pipe's write end
        self.barrier = barrier
        self.cwd = cwd
        self.use_pty = pty
        self.cgroup = cgroup  # a memory cgroup's directory the tool joins before exec
        self._token = uuid.uuid4().hex
        self._env = child_env(env, self._token)
        self.pid = 0
        self.returncode: int | None = None
        self.signal: int | None = None
        self.survivors: list[int] = []  # pids that outlived SIGKILL (stuck in D state)
        self._popen: subprocess.Popen[bytes] | None = None
        self._sel: selectors.BaseSelector | None = None
        self._fds: dict[int, str] = {}  # open output fds -> stream name
        self._files: list[IO[bytes]] = []  # pipe file objects owning fds
        self._pidfd: int | None = None
        self._lines = OutputLines(keep_bytes, pty)
        self._tracker: Tracker | None = None
        self._last_track = 0.0
        self._exit_counters: dict[int, ProcCounters] = {}
        self._closed = False

    # -- starting ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start the tool. ToolError (naming it) if it is missing, not executable or fails."""
        if self._popen is not None:
            raise ToolError(f"{self.argv[0]} was already started")
        exe = resolve(self.argv, self._env)
        master = slave = procs = -1
        if self.cgroup is not None:
            try:
                procs = os.open(os.path.join(self.cgroup, "cgroup.procs"),
                                os.O_WRONLY | os.O_CLOEXEC)
            except OSError as e:
                raise ToolError(f"cannot start {self.argv[0]} in the memory cgroup "
                                f"{self.cgroup}: {e.strerror}") from None
        try:
            if self.use_pty:
                master, slave = os.openpty()
                with contextlib.suppress(OSError):  # a sane window: some tools size output
                    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
            parent = os.getpid()
            self._popen = subprocess.Popen(
                self.argv, executable=exe, cwd=self.cwd, env=self._env,
                stdin=subprocess.DEVNULL, stdout=slave if self.use_pty else subprocess.PIPE,
                stderr=subprocess.PIPE, start_new_session=True,
                preexec_fn=lambda: child_setup(parent, procs, self.barrier),
            )
        except (OSError, subprocess.SubprocessError) as e:
            if master >= 0:
                os.close(master)
            if isinstance(e, OSError):
                raise ToolError(start_failure(self.argv[0], e)) from e
            raise ToolError(f"{self.argv[0]} could not join the memory cgroup {self.cgroup}"
                            ) from e
        finally:
            for fd in (slave, procs):
                if fd >= 0:
                    os.close(fd)
        self.pid = self._popen.pid
        self._tracker = Tracker(self.pid, self._token)
        self._sel = selectors.DefaultSelector()
        if self.use_pty:
            out_fd = master
        else:
            assert self._popen.stdout is not None
            out_fd = self._popen.stdout.fileno()
            self._files.append(self._popen.stdout)
        assert self._popen.stderr is not None
        self._files.append(self._popen.stderr)
        for fd, stream in ((out_fd, "stdout"), (self._popen.stderr.fileno(), "stderr")):
            os.set_blocking(fd, False)
            self._sel.register(fd, selectors.EVENT_READ, stream)
            self._fds[fd] = stream
        with contextlib.suppress(OSError, AttributeError):  # wakes select() when the tool exits
            self._pidfd = os.pidfd_open(self.pid)
            self._sel.register(self._pidfd, selectors.EVENT_READ, "exit")

    # -- reading ----------------------------------------------------------------------------

    def read(self, timeout: float) -> list[OutputLine]:
        """Lines that arrived, waiting up to `timeout` seconds for the first ones: complete
        lines (split on \\r, \\n and \\r\\n), and a line without an end only once its stream
        has ended. Returns at once when there is nothing more to come."""
        if self._popen is None:
            return []
        deadline = time.monotonic() + max(0.0, timeout)
        first = 0.0 if self._lines.waiting() else max(0.0, timeout)
        self._pump(first)  # one wait, not a look first
        while not self._lines.waiting() and not self._io_done():
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self._pump(left)
        self._track_now_and_then()
        return self._lines.take()

    def poll(self) -> bool:
        """True when the tool has exited, both streams have ended and read() has handed out
        every line (so a loop `while not p.poll(): p.read(...)` misses nothing)."""
        if self._popen is None:
            return False
        self._pump(0.0)
        self._track_now_and_then()
        return self._io_done() and not self._lines.waiting()

    def wait(self, timeout: float | None = None) -> int | None:
        """Wait until the tool has exited and its output has ended (reading it meanwhile: lines
        stay for read()). The exit status, or None if it is still running after `timeout`."""
        if self._popen is None:
            return None
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._io_done():
            left = 0.2 if deadline is None else min(0.2, deadline - time.monotonic())
            if left <= 0:
                break
            self._pump(left)
        return self.returncode

    def _io_done(self) -> bool:
        return self.returncode is not None and not self._fds

    def _pump(self, timeout: float) -> None:
        """Wait up to `timeout` for output or the exit, and take in what is there."""
        if self._sel is None or not self._sel.get_map():
            if self.returncode is None and timeout > 0:
                time.sleep(min(timeout, 0.05))  # no pidfd: look again shortly
            self._check_exit()
            return
        exited = self._pidfd is None  # the pidfd is readable once the tool has exited
        for key, _ in self._sel.select(timeout):
            if key.data == "exit":
                exited = True
            else:
                self._read_fd(key.fd, key.data)
        if exited:  # else it is still running: no waitid needed to know that
            self._check_exit()

    def _read_fd(self, fd: int, stream: str) -> None:
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return
        except OSError as e:
            if e.errno != errno.EIO:  # EIO: every writer of the pty has gone
                raise
            data = b""
        now = time.time()
        if data:
            self._lines.add(stream, data, now)
            return
        self._close_fd(fd)
        self._lines.end(stream, now)

    def _close_fd(self, fd: int) -> None:
        assert self._sel is not None
        with contextlib.suppress(KeyError, ValueError):
            self._sel.unregister(fd)
        self._fds.pop(fd, None)
        for f in list(self._files):
            if f.fileno() == fd:
                f.close()
                self._files.remove(f)
                return
        with contextlib.suppress(OSError):
            os.close(fd)  # the pty master

    def _check_exit(self) -> bool:
        """Reap the leader once it has exited, after keeping its final counters (a zombie's
        /proc/<pid>/io is complete; a reaped process's is gone)."""
        if self.returncode is not None:
            return True
        if self._popen is None:
            return False
        try:
            if os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
                return False
            counters = process_counters(self.pid)  # still a zombie: its totals are final
            if counters is not None:
                self._exit_counters[self.pid] = counters
        except ChildProcessError:  # already reaped (by Popen): poll() has the status
            pass
        code = self._popen.poll()
        if code is None:
            return False
        self.returncode = code
        self.signal = -code if code < 0 else None
        if self._pidfd is not None:
            if self._sel is not None:
                with contextlib.suppress(KeyError, ValueError):
                    self._sel.unregister(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None
        return True

    # -- the process tree -------------------------------------------------------------------

    def track(self) -> None:
        """Refresh the set of descendants (children, their children, and any process carrying
        this run's token), so that a kill reaches the ones that left the process group."""
        if self._tracker is not None:
            self._tracker.refresh()
            self._last_track = time.monotonic()

    def _track_now_and_then(self) -> None:
        if time.monotonic() - self._last_track >= TRACK_EVERY:
            self.track()

    def descendants(self) -> list[int]:
        """Live pids of the tool's tree, the leader included (for the monitor)."""
        if self._tracker is None:
            return []
        self._track_now_and_then()
        self._check_exit()
        pids = [self.pid] if self.returncode is None else []
        return pids + [p.pid for p in self._tracker.alive()]

    def tree_counters(self) -> dict[int, TreeEntry]:
        """The live tree's counters now (what the monitor samples): the tracked processes'
        kept /proc files, one read each."""
        if self._tracker is None:
            return {}
        self._track_now_and_then()
        self._check_exit()
        return self._tracker.counters(leader=self.returncode is None)

    def exit_counters(self) -> dict[int, ProcCounters]:
        """pid -> final counters of the processes DiskLab reaped (the leader), read while they
        were zombies: the monitor counts their last bytes with them."""
        return dict(self._exit_counters)

    def _running(self) -> bool:
        self._check_exit()
        return self.returncode is None or (self._tracker is not None
                                           and bool(self._tracker.alive()))

    # -- stopping ---------------------------------------------------------------------------

    def terminate(self, grace: float = 5.0) -> None:
        """SIGTERM to the process group and to every tracked descendant (also those that
        setsid()'d away), then SIGKILL to whatever is left after `grace` seconds. Output keeps
        being read meanwhile (a tool blocked on a full pipe could not finish). Idempotent;
        pids that outlive SIGKILL (D state) are left in `survivors`."""
        if self._popen is None or self._tracker is None:
            return
        self.track()
        if not self._running():
            return
        tracker = self._tracker
        signalled = {p.pid for p in tracker.signal(signal.SIGTERM, self.returncode is None)}
        deadline = time.monotonic() + max(0.0, grace)
        while time.monotonic() < deadline and self._running():
            self._pump(0.05)
            self.track()
            for p in tracker.alive():  # started during the shutdown: they get SIGTERM too
                if p.pid not in signalled:
                    with contextlib.suppress(psutil.Error):
                        p.send_signal(signal.SIGTERM)
                        signalled.add(p.pid)
        deadline = time.monotonic() + KILL_WAIT
        while self._running() and time.monotonic() < deadline:
            self.track()
            tracker.signal(signal.SIGKILL, self.returncode is None)
            self._pump(0.05)
        self.survivors = ([self.pid] if self.returncode is None else []) + [
            p.pid for p in tracker.alive()]
        deadline = time.monotonic() + 0.5  # the last output of the dead: EOF comes at once
        while self._fds and time.monotonic() < deadline:
            self._pump(0.05)

    def close(self) -> None:
        """Kill what is still running of the tool, and close the pipes. Output stays readable
        with output() and tail(); lines not yet read stay for read()."""
        if self._popen is None or self._closed:
            return
        self.track()
        if self._running():
            self.terminate(CLOSE_GRACE)
        else:
            while self._fds:  # drain what is left; a writer may still be closing
                before = len(self._fds)
                self._pump(0.05)
                if len(self._fds) == before:
                    break
        for fd in list(self._fds):
            self._close_fd(fd)
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
        if self._sel is not None:
            self._sel.close()
            self._sel = None
        if self._tracker is not None:
            self._tracker.close()
        self._closed = True

    def __enter__(self) -> ToolProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what was said ----------------------------------------------------------------------

    @property
    def lines_dropped(self) -> int:
        """Lines nobody read() before MAX_PENDING more arrived."""
        return self._lines.dropped

    def output(self, stream: str) -> str:
        """Everything kept of one stream (see OutputLines.output)."""
        return self._lines.output(stream)

    def tail(self, n_lines: int = 40) -> str:
        """The last lines of both streams and any unfinished one (see OutputLines.tail)."""
        return self._lines.tail(n_lines)
