"""The only module that starts processes (DESIGN.md rule 2).

Tools run on pipes (iozone, fio, bonnie++ and dd all flush their output on a pipe as on a pty), or
with stdout on a pty when an adapter says it needs one; always in a new session, with stdin on
/dev/null (a prompt must never wait for an answer nobody gives: mke2fs asks on a tty), in the C
locale (the parsers read '1.2 GB/s', not '1,2 GB/s'), and with a SIGKILL on DiskLab's death.

Output is split on '\\r' as well as '\\n' (dd and fio redraw progress with '\\r'), timestamped,
kept bounded in memory (head and tail of each stream) and handed to the caller line by line; the
runner stores every line in the library. The reader is poll-based and single-threaded: the
runner's loop asks for what arrived within a timeout, so there are no reader threads.

Killing: fio (without --thread) forks its jobs with setsid(), out of reach of a process-group
kill, and they keep writing after their parent died. So every process the tool starts is tracked
two ways: by parenthood (new processes in /proc, looked for once a second) and by a token in the
environment that every descendant inherits (found even after its parent died and it was
re-parented to init). terminate() sends SIGTERM to the group and to every tracked process, waits,
then SIGKILLs whatever survived. A cgroup would be tighter but needs root and a delegated
hierarchy; this works for any user.

Memory cgroups (a page-cache limit) are used for placement only: a ToolProcess given a group's
directory joins it in the child, between fork and exec (_child_setup writes the child's own pid
into cgroup.procs). That is race-free where writing the pid from the parent after the start is
not: Popen returns only once the child has exec'd, so the tool would already be running, and
could already have read, written or forked, outside the group. Joining before exec, every byte
the tool moves and every process it starts is in the group. The parent opens cgroup.procs
itself, so that a group it may not use is a ToolError naming it, not a child that fails.
"""

from __future__ import annotations

import codecs
import contextlib
import ctypes
import errno
import fcntl
import functools
import json
import os
import re
import select
import selectors
import shutil
import signal
import struct
import subprocess
import termios
import threading
import time
import uuid
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import psutil

from disklab.core.errors import ToolError

TOKEN_VAR = "DISKLAB_RUN"  # every process a tool starts inherits it: how escapees are found
SBIN = "/usr/local/sbin:/usr/sbin:/sbin"  # bonnie++ and mkfs live here; not on a user's PATH
KILL_WAIT = 5.0  # seconds to wait for SIGKILLed processes to disappear (D state may not)
CLOSE_GRACE = 2.0  # SIGTERM -> SIGKILL grace when close() finds the tool still running
# seconds between process-tree refreshes while a tool runs (read(), poll(), the monitor's
# descendants()). A refresh looks only at processes started since the last one (_Tracker); an
# escapee is found by its token whenever it runs, and terminate() and close() refresh before
# they signal, so once a second loses nothing.
TRACK_EVERY = 1.0
MAX_LINE = 1 << 20  # a "line" this long without an end is handed out anyway (terminator "")
MAX_PENDING = 50_000  # lines read but not yet taken by read(); older ones are dropped beyond
RECENT_LINES = 1000  # lines kept for tail()
_EOL = re.compile(r"\r\n|\r|\n")
_PR_SET_PDEATHSIG = 1

try:  # looked up once here: the child, between fork and exec, must not dlopen (lock held)
    _prctl = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):  # pragma: no cover - not glibc/musl Linux
    _prctl = None


def _child_setup(parent: int, cgroup_procs: int = -1,
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


def _resolve(argv: Sequence[str], env: Mapping[str, str]) -> str:
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


def _child_env(env: Mapping[str, str] | None, token: str) -> dict[str, str]:
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


def _last_pid() -> int | None:
    try:
        return int(kept_files.read(_LAST_PID, 64))
    except (OSError, ValueError):  # not Linux's procfs, or not readable: scan every time
        return None


def _after(pid: int, since: int | None, last: int | None) -> bool:
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


def _stat_fields(stat: bytes) -> list[bytes]:
    """/proc/<pid>/stat after "pid (comm) " (comm may hold ")"): [0] state, [1] ppid,
    [11] utime, [12] stime (clock ticks), [19] start time (clock ticks since boot)."""
    return stat[stat.rfind(b")") + 2:].split()


class _Proc:
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
        """The stat fields (_stat_fields), or None once the process is gone."""
        try:
            data, self._stat = self._read("stat", self._stat)
        except OSError:
            return None
        fields = _stat_fields(data)
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


def _has_token(pid: int, token: bytes) -> bool:
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


def _is_process(pid: int) -> bool:
    """A process (its thread group's leader), not another thread of one."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            status = f.read()
        at = status.index(b"\nTgid:")
        return int(status[at + 6:status.index(b"\n", at + 1)]) == pid
    except (OSError, ValueError):
        return False


def _reapers() -> set[int]:
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
                pid = int(_stat_fields(f.read())[1])
        except (OSError, ValueError, IndexError):
            break
    return out


class _Tracker:
    """Every process of one tool's tree, by parenthood and by the environment token.

    Finding them used to read /proc/<pid>/stat of every process on the machine at each refresh
    (most of what watching a tool cost, more on a desktop with hundreds of processes). Now a
    process is looked at once, when it is new: the kernel's last handed-out pid
    (/proc/sys/kernel/ns_last_pid) says whether any process was started since the last scan
    (none: nothing to scan), and which pids are new (those handed out since, pid wrap-around
    included). A pid seen before and not handed out again is the same process, still not ours;
    a pid handed out again (reused) is looked at again, also when the counter reads lower than
    at the last look (written back by checkpoint/restore): then /proc is listed and a new
    process's /proc/<pid> is a new inode, which the listing gives without a stat. (A counter
    written back and moved past its last reading within one look's interval is not noticed.)
    A pid is handed out a moment before its process shows in /proc, so the scan after one that
    found a change runs once more. The token is looked for only in new processes
    whose parent could have adopted an escapee (_reapers)."""

    def __init__(self, leader: int, token: str):
        self.leader = leader
        self.token = token.encode()
        self.tree: dict[int, _Proc] = {}  # descendants (the leader is not in here)
        self._known: dict[int, int] = {}  # pid -> /proc/<pid> inode: every process looked at
        self._last_pid: int | None = None  # ns_last_pid when /proc was last listed
        self._scanned = False
        self._again = True  # list /proc again even if no pid was handed out since
        self._leader: _Proc | None = None
        self._leader_start: int | None = None
        self._reapers = _reapers()
        self._missing: set[int] = set()  # probed pids not (yet) in /proc
        self._list_next = True  # the next look lists /proc (else it opens the new pids)
        with contextlib.suppress(OSError, ValueError, IndexError):
            with open(f"/proc/{leader}/stat", "rb") as f:
                self._leader_start = int(_stat_fields(f.read())[19])
            self._leader = _Proc(leader, self._leader_start, keep=True)

    def refresh(self) -> None:
        """Drop the processes that ended; add new descendants: children of the leader or of
        anything tracked, and any process started after the leader that carries the token
        (re-parented escapees)."""
        for pid in [pid for pid, p in self.tree.items() if p.stat() is None]:
            self.tree.pop(pid).close()
        last = _last_pid()
        if self._scanned and last is not None and last == self._last_pid and not self._again:
            return  # no process was started anywhere since the last scan
        self._again = last is None or last != self._last_pid
        since, self._last_pid, self._scanned = self._last_pid, last, True
        probed = (not self._list_next and since is not None and last is not None
                  and 0 <= last - since <= PROBE_MAX)
        # a few new pids: open each; the first look, many, or the counter went round: list /proc
        table = (self._probe([*range(since + 1, last + 1)])
                 if probed else self._list(since, last))
        kids: dict[int, list[int]] = {}
        for pid, (ppid, _start) in table.items():
            kids.setdefault(ppid, []).append(pid)
        roots = list(self.tree)
        if self._leader is not None and self._leader.stat() is not None:  # not a reused pid
            roots.append(self.leader)
        found: set[int] = set()
        while roots:
            pid = roots.pop()
            for child in kids.get(pid, ()):
                if child not in found and child != self.leader:
                    found.add(child)
                    roots.append(child)
        me = os.getpid()
        for pid, (ppid, start) in table.items():
            if (pid in found or pid in self.tree or pid in (me, self.leader)
                    or self._leader_start is None or start < self._leader_start
                    or ppid not in self._reapers):
                continue  # an escapee's parent is the one that adopted it: one of _reapers
            if _has_token(pid, self.token):
                found.add(pid)
        for pid in found:
            if pid in self.tree or (probed and not _is_process(pid)):
                continue
            p = _Proc(pid, table[pid][1], keep=len(self.tree) < KEEP_OPEN)
            try:
                p.handle = psutil.Process(pid)
            except psutil.Error:
                p.close()
                continue
            if p.stat() is None:  # ended meanwhile (the handle may be a stranger's)
                p.close()
                continue
            self.tree[pid] = p

    def _probe(self, pids: list[int]) -> dict[int, tuple[int, int]]:
        """pid -> (ppid, start time) of each of `pids` that exists (threads too: their ids
        come from the same counter and /proc/<tid> opens, though unlisted), and of the pids
        that did not exist at the last probe (a pid is handed out a moment before /proc shows
        its process)."""
        table = {}
        missing = set()
        for pid in [*pids, *self._missing]:
            try:
                with open(f"/proc/{pid}/stat", "rb") as f:
                    fields = _stat_fields(f.read())
                table[pid] = (int(fields[1]), int(fields[19]))
            except (OSError, ValueError, IndexError):
                missing.add(pid)
        self._missing = missing - self._missing  # looked at twice: gone (or a short life)
        return table

    def _list(self, since: int | None, last: int | None) -> dict[int, tuple[int, int]]:
        """pid -> (ppid, start time) of the processes in /proc not looked at before."""
        table: dict[int, tuple[int, int]] = {}
        listed: dict[int, int] = {}
        with os.scandir("/proc") as entries:
            for entry in entries:
                if not entry.name.isdigit():
                    continue
                pid, inode = int(entry.name), entry.inode()
                listed[pid] = inode
                if self._known.get(pid) == inode and not _after(pid, since, last):
                    continue  # looked at before, and its pid was not handed out again since
                try:
                    with open(f"/proc/{pid}/stat", "rb") as f:
                        fields = _stat_fields(f.read())
                    table[pid] = (int(fields[1]), int(fields[19]))
                except (OSError, ValueError, IndexError):
                    continue
        self._known = {pid: listed[pid] for pid in self._known.keys() & listed.keys()}
        self._known.update((pid, listed[pid]) for pid in table)
        # a process may show in /proc a moment after its pid was handed out: the next look
        # opens the new pids not listed (if they are few), or lists /proc once more
        few = since is not None and last is not None and 0 <= last - since <= PROBE_MAX
        self._missing = {pid for pid in range(since + 1, last + 1)
                         if pid not in listed} if few else set()
        self._list_next = not few
        return table

    def alive(self) -> list[psutil.Process]:
        """The tracked processes still running (not zombies)."""
        out = []
        for p in self.tree.values():
            fields = p.stat()
            if fields is not None and fields[0] != b"Z" and p.handle is not None:
                out.append(p.handle)
        return out

    def counters(self, leader: bool) -> dict[int, TreeEntry]:
        """pid -> TreeEntry of the live tree (the leader too when `leader`), one read of each
        kept file per process."""
        out = {}
        if leader and self._leader is not None:
            entry = self._leader.entry(zombie=True)
            if entry is not None:
                out[self.leader] = entry
        for pid, p in self.tree.items():
            entry = p.entry(zombie=False)
            if entry is not None:
                out[pid] = entry
        return out

    def signal(self, sig: int, group: bool) -> list[psutil.Process]:
        """Send `sig` to the leader's group (when it still exists) and to every live tracked
        process; returns the processes signalled."""
        if group:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.leader, sig)
        sent = []
        for p in self.alive():
            with contextlib.suppress(psutil.Error):
                p.send_signal(sig)
                sent.append(p)
        return sent

    def close(self) -> None:
        """Close the kept files (reads go by path from now on)."""
        for p in self.tree.values():
            p.close()
        if self._leader is not None:
            self._leader.close()


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
    child_env = _child_env(env, token)
    exe = _resolve(argv, child_env)
    parent = os.getpid()
    try:
        popen = subprocess.Popen(
            argv, executable=exe, cwd=cwd, env=child_env,
            stdin=subprocess.DEVNULL if input is None else subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
            preexec_fn=lambda: _child_setup(parent),
        )
    except OSError as e:
        raise ToolError(_start_failure(argv[0], e)) from e
    data = input.encode() if isinstance(input, str) else input
    try:
        out, err = popen.communicate(data, timeout=timeout)
    except subprocess.TimeoutExpired:
        tracker = _Tracker(popen.pid, token)
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
        last = err.decode("utf-8", "replace").strip().splitlines()[-1:]
        raise ToolError(f"{argv[0]} did not finish within {timeout:g} s and was stopped"
                        + (f" (last said: {last[0]})" if last else "")) from None
    return Completed(argv, popen.returncode, out.decode("utf-8", "replace"),
                     err.decode("utf-8", "replace"))


def _start_failure(name: str, e: OSError) -> str:
    what = f": {e.filename}" if e.filename and e.filename != name else ""
    return f"cannot start {name}: {e.strerror or e}{what}"


@dataclass(frozen=True)
class OutputLine:
    t: float  # time.time() when it was read
    stream: str  # "stdout" | "stderr"
    text: str
    terminator: str  # "\n" (also for "\r\n"), "\r", or "" for a line without an end


class _Kept:
    """One stream's bytes, bounded: the head and the tail are kept, the middle is counted."""

    def __init__(self, limit: int):
        self.head_limit = max(0, limit) // 2
        self.tail_limit = max(0, limit) - self.head_limit
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.dropped = 0  # whole chunks dropped from the front of the tail

    def add(self, data: bytes) -> None:
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        self.tail.append(data)
        self.tail_size += len(data)
        while self.tail and self.tail_size - len(self.tail[0]) >= self.tail_limit:
            gone = self.tail.popleft()
            self.tail_size -= len(gone)
            self.dropped += len(gone)

    def text(self) -> str:
        tail = b"".join(self.tail)
        cut = max(0, len(tail) - self.tail_limit)
        dropped = self.dropped + cut
        head = self.head.decode("utf-8", "replace")
        rest = tail[cut:].decode("utf-8", "replace")
        if not dropped:
            return head + rest
        sep = "" if not head or head.endswith("\n") else "\n"
        return f"{head}{sep}[... {dropped} bytes dropped ...]\n{rest}"


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
        self._env = _child_env(env, self._token)
        self.pid = 0
        self.returncode: int | None = None
        self.signal: int | None = None
        self.survivors: list[int] = []  # pids that outlived SIGKILL (stuck in D state)
        self.lines_dropped = 0  # lines nobody read() before MAX_PENDING more arrived
        self._popen: subprocess.Popen[bytes] | None = None
        self._sel: selectors.BaseSelector | None = None
        self._fds: dict[int, str] = {}  # open output fds -> stream name
        self._files: list[IO[bytes]] = []  # pipe file objects owning fds
        self._pidfd: int | None = None
        self._kept = {"stdout": _Kept(keep_bytes), "stderr": _Kept(keep_bytes)}
        self._decoders = {s: codecs.getincrementaldecoder("utf-8")("replace")
                          for s in ("stdout", "stderr")}
        self._partial = {"stdout": "", "stderr": ""}
        self._skip_lf = {"stdout": False, "stderr": False}  # a chunk ended in "\r"
        self._pending: deque[OutputLine] = deque()
        self._recent: deque[OutputLine] = deque(maxlen=RECENT_LINES)
        self._tracker: _Tracker | None = None
        self._last_track = 0.0
        self._exit_counters: dict[int, ProcCounters] = {}
        self._closed = False

    # -- starting ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start the tool. ToolError (naming it) if it is missing, not executable or fails."""
        if self._popen is not None:
            raise ToolError(f"{self.argv[0]} was already started")
        exe = _resolve(self.argv, self._env)
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
                preexec_fn=lambda: _child_setup(parent, procs, self.barrier),
            )
        except (OSError, subprocess.SubprocessError) as e:
            if master >= 0:
                os.close(master)
            if isinstance(e, OSError):
                raise ToolError(_start_failure(self.argv[0], e)) from e
            raise ToolError(f"{self.argv[0]} could not join the memory cgroup {self.cgroup}"
                            ) from e
        finally:
            for fd in (slave, procs):
                if fd >= 0:
                    os.close(fd)
        self.pid = self._popen.pid
        self._tracker = _Tracker(self.pid, self._token)
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
        self._pump(0.0 if self._pending else max(0.0, timeout))  # one wait, not a look first
        while not self._pending and not self._io_done():
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self._pump(left)
        self._track_now_and_then()
        lines = list(self._pending)
        self._pending.clear()
        return lines

    def poll(self) -> bool:
        """True when the tool has exited, both streams have ended and read() has handed out
        every line (so a loop `while not p.poll(): p.read(...)` misses nothing)."""
        if self._popen is None:
            return False
        self._pump(0.0)
        self._track_now_and_then()
        return self._io_done() and not self._pending

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
            self._kept[stream].add(data)
            self._split(stream, self._decoders[stream].decode(data), now)
            return
        self._close_fd(fd)
        self._split(stream, self._decoders[stream].decode(b"", final=True), now)
        rest, self._partial[stream] = self._partial[stream], ""
        if rest:
            self._emit(OutputLine(now, stream, rest, ""))

    def _split(self, stream: str, text: str, now: float) -> None:
        if self._skip_lf[stream] and text:
            self._skip_lf[stream] = False
            if text.startswith("\n"):  # the "\n" of a "\r\n" cut between two reads
                text = text[1:]
        partial = self._partial[stream]
        pos = 0
        for m in _EOL.finditer(text):
            line = partial + text[pos:m.start()]
            partial = ""
            pos = m.end()
            if m.group() == "\r":
                if pos == len(text):
                    self._skip_lf[stream] = True
                if not line:  # a bare carriage return before a redraw ("\rNN bytes copied")
                    continue
                self._emit(OutputLine(now, stream, line, "\r"))
            else:
                self._emit(OutputLine(now, stream, line, "\n"))
        partial += text[pos:]
        if len(partial) > MAX_LINE:  # never grow without bound: hand it out as it is
            self._emit(OutputLine(now, stream, partial, ""))
            partial = ""
        self._partial[stream] = partial

    def _emit(self, line: OutputLine) -> None:
        if len(self._pending) >= MAX_PENDING:
            self._pending.popleft()
            self.lines_dropped += 1
        self._pending.append(line)
        self._recent.append(line)

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

    def output(self, stream: str) -> str:
        """Everything kept of one stream, as the tool wrote it (on a pty, with '\\r\\n' back to
        '\\n'); when it was longer than keep_bytes, its head and tail around a
        '[... N bytes dropped ...]' line."""
        text = self._kept[stream].text()
        if self.use_pty and stream == "stdout":
            text = text.replace("\r\n", "\n")
        return text

    def tail(self, n_lines: int = 40) -> str:
        """The last lines of both streams in the order they came, and any unfinished line
        still open, for an error report."""
        lines = [line.text for line in list(self._recent)[-n_lines:]] if n_lines > 0 else []
        lines += [rest for rest in self._partial.values() if rest]
        return "\n".join(lines[-n_lines:] if n_lines > 0 else [])


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


GROUP_POLL = 0.02  # seconds between looks at a group's members (their end times' resolution)
GROUP_START = 30.0  # seconds the members of a group may take to reach the barrier


class ToolGroup:
    """Several tools started together (the streams of one case on several targets, e.g. one
    dd per target): each is forked and set up, then waits in the child, before exec, on one
    pipe; the parent closes the pipe's write end and all of them go at once (a barrier, not
    "as soon as each is ready"). It reads like one ToolProcess to the runner. Each member's
    lines come out prefixed "[i:name] " (i its place in the group, name its target), and the
    release time and each member's end time are written to `timing_file` as JSON when all
    have ended, so that the adapter can give per-target figures and the start skew."""

    def __init__(self, members: Sequence[tuple[str, Sequence[str]]], *,
                 cwd: str | None = None, env: Mapping[str, str] | None = None,
                 cgroup: str | None = None, timing_file: str | None = None):
        self.members = [(str(name), tuple(str(a) for a in argv)) for name, argv in members]
        if not self.members:
            raise ToolError("a group of tools needs at least one member")
        self.argv = self.members[0][1]
        self.timing_file = timing_file
        self._barrier = os.pipe()
        self._ready = os.pipe()
        barrier = (*self._barrier, self._ready[1])
        self._procs = [ToolProcess(argv, cwd=cwd, env=env, cgroup=cgroup, barrier=barrier)
                       for _name, argv in self.members]
        self.released: float | None = None
        self.ended: list[float | None] = [None] * len(self._procs)
        self._written = False
        # Popen returns only once its child has exec'd, so each member is started from a
        # thread of its own; the thread lives until close(): a child's PDEATHSIG follows the
        # thread that forked it.
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._errors: list[BaseException] = []

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self._procs]

    @property
    def returncode(self) -> int | None:
        codes = [p.returncode for p in self._procs]
        if any(c is None for c in codes):
            return None
        return next((c for c in codes if c), 0)

    @property
    def signal(self) -> int | None:
        return next((p.signal for p in self._procs if p.signal), None)

    @property
    def pid(self) -> int:
        """The first member's pid (the group's own pids are `pids`)."""
        return self._procs[0].pid

    @property
    def survivors(self) -> list[int]:
        return [pid for p in self._procs for pid in p.survivors]

    @property
    def lines_dropped(self) -> int:
        return sum(p.lines_dropped for p in self._procs)

    def _member(self, p: ToolProcess, started: threading.Event) -> None:
        try:
            p.start()
        except BaseException as e:  # said by start(); the child never ran
            self._errors.append(e)
            with contextlib.suppress(OSError):
                os.write(self._ready[1], b"0")  # not at the barrier: do not wait for it
        finally:
            started.set()
        self._stop.wait()

    def start(self) -> None:
        """Fork every member (each stops before exec), then release them all at once.
        ToolError when one could not start (the others are then stopped)."""
        read_end, write_end = self._barrier
        events = []
        for i, p in enumerate(self._procs):
            started = threading.Event()
            t = threading.Thread(target=self._member, args=(p, started), daemon=True,
                                 name=f"tool-group-{i}")
            t.start()
            self._threads.append(t)
            events.append(started)
        arrived = 0
        deadline = time.monotonic() + GROUP_START
        while arrived < len(self._procs) and time.monotonic() < deadline:
            ready, _, _ = select.select([self._ready[0]], [], [], 0.1)
            if ready:
                arrived += len(os.read(self._ready[0], len(self._procs)))
        self.released = time.time()
        os.close(write_end)  # the barrier: every member execs now
        for e in events:
            e.wait(GROUP_START)
        os.close(read_end)
        for fd in self._ready:
            os.close(fd)
        if self._errors or arrived < len(self._procs):
            self.close()
            error = self._errors[0] if self._errors else None
            raise ToolError(f"the group of {len(self._procs)} processes could not start"
                            + (f": {error}" if error else " (not all reached the barrier)"))

    def _prefix(self, i: int, lines: list[OutputLine]) -> list[OutputLine]:
        name = self.members[i][0]
        return [OutputLine(line.t, line.stream, f"[{i}:{name}] {line.text}", line.terminator)
                for line in lines]

    def _note_ends(self) -> None:
        now = time.time()
        for i, p in enumerate(self._procs):
            if self.ended[i] is None and p.poll():
                self.ended[i] = now
        if all(e is not None for e in self.ended):
            self._write_timing()

    def _write_timing(self) -> None:
        if self._written or self.timing_file is None:
            return
        self._written = True
        doc = {"released": self.released, "streams": [
            {"target": name, "argv": list(argv), "pid": p.pid, "ended": end,
             "returncode": p.returncode}
            for (name, argv), p, end in zip(self.members, self._procs, self.ended, strict=True)]}
        with contextlib.suppress(OSError):
            Path(self.timing_file).write_text(json.dumps(doc))

    def read(self, timeout: float) -> list[OutputLine]:
        deadline = time.monotonic() + max(0.0, timeout)
        while True:
            out: list[OutputLine] = []
            for i, p in enumerate(self._procs):
                out += self._prefix(i, p.read(0.0))
            self._note_ends()
            if out or time.monotonic() >= deadline or self.poll():
                return out
            time.sleep(min(GROUP_POLL, max(0.0, deadline - time.monotonic())))

    def poll(self) -> bool:
        done = all(p.poll() for p in self._procs)
        if done:
            self._note_ends()
        return done

    def wait(self, timeout: float | None = None) -> int | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not all(p.returncode is not None for p in self._procs):
            self._note_ends()
            if deadline is not None and time.monotonic() >= deadline:
                return None
            for p in self._procs:
                p.wait(GROUP_POLL)
        self._note_ends()
        return self.returncode

    def descendants(self) -> list[int]:
        return [pid for p in self._procs for pid in p.descendants()]

    def tree_counters(self) -> dict[int, TreeEntry]:
        return read_tree(self.descendants())

    def exit_counters(self) -> dict[int, ProcCounters]:
        return {pid: c for p in self._procs for pid, c in p.exit_counters().items()}

    def terminate(self, grace: float = 5.0) -> None:
        for p in self._procs:
            p.terminate(grace)

    def close(self) -> None:
        for p in self._procs:
            p.close()
        self._note_ends()
        self._stop.set()
        for t in self._threads:
            t.join(1.0)

    def __enter__(self) -> ToolGroup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def output(self, stream: str) -> str:
        """Every member's output of one stream, each line prefixed as read() gives it."""
        parts = []
        for i, p in enumerate(self._procs):
            name = self.members[i][0]
            parts += [f"[{i}:{name}] {line}" for line in
                      p.output(stream).replace("\r", "\n").splitlines() if line]
        return "\n".join(parts) + ("\n" if parts else "")

    def tail(self, n_lines: int = 40) -> str:
        tails = [f"[{i}:{self.members[i][0]}] {line}" for i, p in enumerate(self._procs)
                 for line in p.tail(n_lines).splitlines()]
        return "\n".join(tails[-n_lines:] if n_lines > 0 else [])
