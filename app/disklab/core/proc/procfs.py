"""A tool's processes as /proc tells them: the tree under a pid, each one's I/O and CPU
counters, their /proc files kept open while few (read by path when many), new pids found
without listing /proc when the kernel handed out few."""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import psutil

TOKEN_VAR = "DISKLAB_RUN"  # every process a tool starts inherits it: how escapees are found


@dataclass(frozen=True)
class ProcCounters:
    """One process's totals since it started: what it moved and the CPU it used."""

    read_bytes: int  # storage level (psutil io_counters read_bytes)
    write_bytes: int
    read_chars: int  # what it passed to read()/write(), page-cache hits included
    write_chars: int
    cpu_seconds: float  # user + system of the process itself (not of its reaped children)


@dataclass(frozen=True)
class TreeEntry:
    """One live process of a tool's tree as seen at one moment, for the monitor."""

    create_time: float  # with the pid, the identity of a process (pids are reused)
    ppid: int
    counters: ProcCounters


def read_tree(pids: Sequence[int]) -> dict[int, TreeEntry]:
    """pid -> TreeEntry for each of `pids` still readable (gone or not ours: left out)."""
    seen = {}
    for pid in pids:
        try:
            p = psutil.Process(pid)
            with p.oneshot():
                io = p.io_counters()
                cpu = p.cpu_times()
                seen[pid] = TreeEntry(p.create_time(), p.ppid(), ProcCounters(
                    io.read_bytes, io.write_bytes, io.read_chars, io.write_chars,
                    cpu.user + cpu.system))
        except (psutil.Error, OSError):
            continue
    return seen


def process_counters(pid: int) -> ProcCounters | None:
    """Counters of a live or zombie process (a zombie's are its final ones); None if unreadable."""
    try:
        p = psutil.Process(pid)
        with p.oneshot():
            io = p.io_counters()
            cpu = p.cpu_times()
    except (psutil.Error, OSError):
        return None
    return ProcCounters(io.read_bytes, io.write_bytes, io.read_chars, io.write_chars,
                        cpu.user + cpu.system)


# How many processes of one tool keep their /proc files open (two descriptors each): more than
# that (iozone -t 512) are read by path, so a large tree cannot exhaust the descriptor limit.
KEEP_OPEN = 64
PROBE_MAX = 64  # up to this many pids handed out since the last look: open each, not list /proc
_LAST_PID = "/proc/sys/kernel/ns_last_pid"  # the pid the kernel handed out last (any process)


class _KeptFiles:
    """/proc files of the machine read again and again (ns_last_pid, meminfo, diskstats), each
    opened once and read with pread: an open and a close per read is most of a small read's
    cost. One set per process, shared by its threads (pread keeps no file position)."""

    def __init__(self) -> None:
        self._fds: dict[str, int] = {}
        self._lock = threading.Lock()

    def read(self, path: str, size: int = 16384) -> bytes:
        """The whole file (OSError if it cannot be read). A file that stopped working (a
        device's sysfs file after the device went away) is opened again once: the same name
        may be a new device now."""
        fd = self._fds.get(path)
        if fd is not None:
            try:
                return self._pread(fd, size)
            except OSError:
                self.forget(path)
        with self._lock:
            fd = self._fds.get(path)
            if fd is None:
                fd = self._fds[path] = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        return self._pread(fd, size)

    @staticmethod
    def _pread(fd: int, size: int) -> bytes:
        data = os.pread(fd, size, 0)
        while len(data) == size:  # larger than the guess: read it whole
            size *= 4
            data = os.pread(fd, size, 0)
        return data

    def forget(self, path: str) -> None:
        with self._lock:
            fd = self._fds.pop(path, None)
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)


kept_files = _KeptFiles()


def last_pid() -> int | None:
    try:
        return int(kept_files.read(_LAST_PID, 64))
    except (OSError, ValueError):  # not Linux's procfs, or not readable: scan every time
        return None


def started_after(pid: int, since: int | None, last: int | None) -> bool:
    """Was `pid` handed out after `since`, up to `last` (both ns_last_pid readings)? Pids wrap
    round at pid_max to low numbers; unknown readings count every pid as new."""
    if since is None or last is None:
        return True
    if last >= since:
        return since < pid <= last
    return pid > since or pid <= last  # wrapped round


@functools.cache
def _boot_time() -> float:
    """Seconds since the epoch at boot (/proc/stat btime): a start time in clock ticks plus
    this is psutil's create_time, so that a TreeEntry reads the same whoever made it."""
    with open("/proc/stat", "rb") as f:
        for line in f:
            if line.startswith(b"btime"):
                return float(line.split()[1])
    return 0.0


def stat_fields(stat: bytes) -> list[bytes]:
    """/proc/<pid>/stat after "pid (comm) " (comm may hold ")"): [0] state, [1] ppid,
    [11] utime, [12] stime (clock ticks), [19] start time (clock ticks since boot)."""
    return stat[stat.rfind(b")") + 2:].split()


class ProcFiles:
    """One process of a tool's tree: its identity (pid and start time) and its /proc stat and
    io files, kept open while it lives. A kept /proc file reads the process it was opened for,
    or fails (ESRCH) once that process is gone: never the stranger that got its pid later. So
    sampling a process is one pread per file, with no open and no close."""

    __slots__ = ("_io", "_keep", "_stat", "handle", "pid", "start")

    def __init__(self, pid: int, start: int, keep: bool):
        self.pid = pid
        self.start = start
        self.handle: psutil.Process | None = None  # for signals (checks the identity too)
        self._keep = keep
        self._stat = self._io = -1
        if keep:
            with contextlib.suppress(OSError):
                self._stat = os.open(f"/proc/{pid}/stat", os.O_RDONLY | os.O_CLOEXEC)

    def _read(self, name: str, fd: int) -> tuple[bytes, int]:
        if fd < 0 and self._keep:
            fd = os.open(f"/proc/{self.pid}/{name}", os.O_RDONLY | os.O_CLOEXEC)
        if fd >= 0:
            return os.pread(fd, 4096, 0), fd
        with open(f"/proc/{self.pid}/{name}", "rb") as f:
            return f.read(), -1

    def stat(self) -> list[bytes] | None:
        """The stat fields (stat_fields), or None once the process is gone."""
        try:
            data, self._stat = self._read("stat", self._stat)
        except OSError:
            return None
        fields = stat_fields(data)
        if len(fields) <= 19 or int(fields[19]) != self.start:  # read by path: another's pid
            return None
        return fields

    def entry(self, zombie: bool) -> TreeEntry | None:
        """What the monitor samples of it now; None when gone, unreadable, or a zombie (unless
        `zombie`: a zombie's counters are its final ones)."""
        fields = self.stat()
        if fields is None or (fields[0] == b"Z" and not zombie):
            return None
        try:
            first = self._io < 0  # opened (or read) by path now: the pid may have changed hands
            data, self._io = self._read("io", self._io)
            io = data.split()  # rchar: N wchar: N syscr: N syscw: N read_bytes: N write_bytes: N
            if first and self.stat() is None:
                return None
            return TreeEntry(_boot_time() + self.start / _CLK_TCK, int(fields[1]), ProcCounters(
                int(io[9]), int(io[11]), int(io[1]), int(io[3]),
                (int(fields[11]) + int(fields[12])) / _CLK_TCK))
        except (OSError, ValueError, IndexError):  # not ours to read (another user's)
            return None

    def close(self) -> None:
        for fd in (self._stat, self._io):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._stat = self._io = -1
        self._keep = False  # read by path from now on (after close(), nothing stays open)


_CLK_TCK = os.sysconf("SC_CLK_TCK")


def has_token(pid: int, token: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            environ = f.read()
    except OSError:
        return False
    prefix = TOKEN_VAR.encode() + b"="
    for entry in environ.split(b"\0"):
        if entry.startswith(prefix):
            return token in entry[len(prefix):].split(b":")
    return False


def is_process(pid: int) -> bool:
    """A process (its thread group's leader), not another thread of one."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            status = f.read()
        at = status.index(b"\nTgid:")
        return int(status[at + 6:status.index(b"\n", at + 1)]) == pid
    except (OSError, ValueError):
        return False


def reapers() -> set[int]:
    """Where a tool's process goes when its parent dies: to the nearest subreaper among its
    ancestors, else to init. Its ancestors outside the tool are this process and this
    process's ancestors, so a re-parented escapee's parent is one of these (or init): only such
    new processes need their environment read for the token (not every process another user
    starts)."""
    out = {1, os.getpid()}
    pid = os.getppid()
    while pid > 1 and pid not in out:
        out.add(pid)
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                pid = int(stat_fields(f.read())[1])
        except (OSError, ValueError, IndexError):
            break
    return out
