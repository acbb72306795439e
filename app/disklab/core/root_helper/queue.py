"""Queue settings and the page cache: read-ahead and I/O scheduler of a device this helper
attached or formatted (or a dead helper of this user recorded: restoring them after a kill),
and drop_caches, which touches no device. The helper keeps each device's first value and puts
it back at its end."""

from __future__ import annotations

import contextlib

from disklab.core.fs.commands import scheduler_argv, setra_argv
from disklab.core.helper_client.protocol import Done, DropCaches, Scheduler, SchedulerSet, Setra
from disklab.core.root_helper.state import TIMEOUTS, Session, device_of
from disklab.core.system.sysfs import read_readahead, read_scheduler
from disklab.core.vocab.errors import RequestError, SafetyError


def _tunable(s: Session, device: str) -> str:
    path, kname = device_of(device)
    if not s.owns(kname):
        raise SafetyError(f"{device}: the helper tunes only a device it attached or formatted "
                          "in this session")
    return path


def _keep(s: Session, path: str, what: str, value: object) -> None:
    """The device's value before the session's first change of it (restored by `close`)."""
    before = s.held.tuned.setdefault(path, {})
    if value is not None and what not in before:
        before[what] = str(value)
        s.save()


def setra(s: Session, r: Setra) -> Done:
    path = _tunable(s, r.device)
    current = read_readahead(path)
    if current == r.sectors:
        return Done()
    _keep(s, path, "readahead", current)
    s.run(setra_argv(path, r.sectors))
    return Done()


def scheduler(s: Session, r: Scheduler) -> SchedulerSet:
    path = _tunable(s, r.device)
    current, available = read_scheduler(path)
    if current == r.name:
        return SchedulerSet(current)
    if r.name not in available:
        raise RequestError(f"{r.device} offers no scheduler {r.name!r} "
                           f"(available: {', '.join(available) or 'none'})")
    _keep(s, path, "scheduler", current)
    _write, file, value = scheduler_argv(path, r.name)
    s.write_file(file, value)
    return SchedulerSet(current or "")


def close(s: Session) -> None:
    """The end of the session: every tuned device back to its first value."""
    for path, before in list(s.held.tuned.items()):
        for what, value in before.items():
            with contextlib.suppress(Exception):
                if what == "readahead":
                    setra(s, Setra(path, int(value)))
                else:
                    scheduler(s, Scheduler(path, value))
        s.held.tuned.pop(path, None)


def drop_caches(s: Session, r: DropCaches) -> Done:
    """sync, then drop clean page cache, dentries and inodes (drop_caches keeps dirty data)."""
    s.run(("sync",), timeout=TIMEOUTS["umount"])
    s.write_file("/proc/sys/vm/drop_caches", "3")
    return Done()
