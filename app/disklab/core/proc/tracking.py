"""Every process a tool starts, tracked two ways: by parenthood (new processes in /proc,
looked for once a second) and by the run token in the environment that every descendant
inherits (found even after its parent died and it was re-parented to init)."""

from __future__ import annotations

import contextlib
import os

import psutil

from disklab.core.proc.procfs import (
    KEEP_OPEN,
    PROBE_MAX,
    ProcFiles,
    TreeEntry,
    has_token,
    is_process,
    last_pid,
    reapers,
    started_after,
    stat_fields,
)

# seconds between process-tree refreshes while a tool runs (read(), poll(), the monitor's
# descendants()). A refresh looks only at processes started since the last one (Tracker); an
# escapee is found by its token whenever it runs, and terminate() and close() refresh before
# they signal, so once a second loses nothing.
TRACK_EVERY = 1.0

class Tracker:
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
    whose parent could have adopted an escapee (reapers)."""

    def __init__(self, leader: int, token: str):
        self.leader = leader
        self.token = token.encode()
        self.tree: dict[int, ProcFiles] = {}  # descendants (the leader is not in here)
        self._known: dict[int, int] = {}  # pid -> /proc/<pid> inode: every process looked at
        self.last_pid: int | None = None  # ns_last_pid when /proc was last listed
        self._scanned = False
        self._again = True  # list /proc again even if no pid was handed out since
        self._leader: ProcFiles | None = None
        self._leader_start: int | None = None
        self.reapers = reapers()
        self._missing: set[int] = set()  # probed pids not (yet) in /proc
        self._list_next = True  # the next look lists /proc (else it opens the new pids)
        with contextlib.suppress(OSError, ValueError, IndexError):
            with open(f"/proc/{leader}/stat", "rb") as f:
                self._leader_start = int(stat_fields(f.read())[19])
            self._leader = ProcFiles(leader, self._leader_start, keep=True)

    def refresh(self) -> None:
        """Drop the processes that ended; add new descendants: children of the leader or of
        anything tracked, and any process started after the leader that carries the token
        (re-parented escapees)."""
        for pid in [pid for pid, p in self.tree.items() if p.stat() is None]:
            self.tree.pop(pid).close()
        last = last_pid()
        if self._scanned and last is not None and last == self.last_pid and not self._again:
            return  # no process was started anywhere since the last scan
        self._again = last is None or last != self.last_pid
        since, self.last_pid, self._scanned = self.last_pid, last, True
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
                    or ppid not in self.reapers):
                continue  # an escapee's parent is the one that adopted it: one of reapers
            if has_token(pid, self.token):
                found.add(pid)
        for pid in found:
            if pid in self.tree or (probed and not is_process(pid)):
                continue
            p = ProcFiles(pid, table[pid][1], keep=len(self.tree) < KEEP_OPEN)
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
                    fields = stat_fields(f.read())
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
                if self._known.get(pid) == inode and not started_after(pid, since, last):
                    continue  # looked at before, and its pid was not handed out again since
                try:
                    with open(f"/proc/{pid}/stat", "rb") as f:
                        fields = stat_fields(f.read())
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
