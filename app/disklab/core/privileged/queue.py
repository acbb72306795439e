"""Queue settings and the page cache: read-ahead and I/O scheduler of a device this helper
attached or formatted (or a dead helper of this user recorded: restoring them after a kill),
and drop_caches, which touches no device."""

from __future__ import annotations

from disklab.core.errors import RequestError, SafetyError
from disklab.core.fs.commands import scheduler_argv, setra_argv
from disklab.core.privilege.protocol import Done, DropCaches, Scheduler, SchedulerSet, Setra
from disklab.core.privileged.state import TIMEOUTS, Session, device_of
from disklab.core.system.sysfs import read_scheduler


def _tunable(s: Session, device: str) -> str:
    path, kname = device_of(device)
    if not s.owns(kname):
        raise SafetyError(f"{device}: the helper tunes only a device it attached or formatted "
                          "in this session")
    return path


def setra(s: Session, r: Setra) -> Done:
    s.run(setra_argv(_tunable(s, r.device), r.sectors))
    return Done()


def scheduler(s: Session, r: Scheduler) -> SchedulerSet:
    path = _tunable(s, r.device)
    current, available = read_scheduler(path)
    if r.name not in available:
        raise RequestError(f"{r.device} offers no scheduler {r.name!r} "
                           f"(available: {', '.join(available) or 'none'})")
    if current != r.name:
        _write, file, value = scheduler_argv(path, r.name)
        s.write_file(file, value)
    return SchedulerSet(current or "")


def drop_caches(s: Session, r: DropCaches) -> Done:
    """sync, then drop clean page cache, dentries and inodes (drop_caches keeps dirty data)."""
    s.run(("sync",), timeout=TIMEOUTS["umount"])
    s.write_file("/proc/sys/vm/drop_caches", "3")
    return Done()
