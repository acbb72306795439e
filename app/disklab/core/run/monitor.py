"""Live samplers while a case runs: what the tool moves, what the device does, the page cache.

Application bytes (io counters of the tool's whole process tree) beside device bytes
(/proc/diskstats of the device under the target) show journaling write amplification live, and
Dirty/Writeback from /proc/meminfo show the page cache filling and draining. Nothing here starts a
process; everything is read from /proc and /sys.

Counting a process tree right is subtle: when a parent reaps a child, the kernel adds the child's
totals to the parent's /proc/<pid>/io (iozone -t N forks N children per phase), so summing every
process's last value would count the child twice. Here each process contributes its increments
while it is seen; when a child disappears, what was already counted of it becomes a debt of its
parent, paid from the parent's jump at the reap (which also brings the child's last bytes). The
tool's own leader is reaped by DiskLab, not by a parent in the tree: its final counters come from
ToolProcess.exit_counters, read while it was a zombie. So the total never goes down and nothing is
counted twice.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from disklab.core.proc import ProcCounters, TreeEntry, kept_files, read_tree
from disklab.core.system.cgroups import group_dirty, group_stat_of
from disklab.core.system.devices import device_for_path
from disklab.core.system.sysfs import SECTOR
from disklab.core.tools.base import ALL_TARGETS

# One device's counters: sectors read, sectors written, io_ticks (ms the device had a request
# in flight) and time_in_queue (ms requests spent in flight, summed over them): the kernel's
# own evidence of how busy the device was (busy = d io_ticks / dt, requests in flight = d
# time_in_queue / dt, Little's law), read from the same stat line as the byte counts.
DiskCounters = tuple[int, int, int, int]


def _diskstats() -> dict[str, DiskCounters]:
    """name -> DiskCounters from /proc/diskstats."""
    stats = {}
    for line in kept_files.read("/proc/diskstats").decode().splitlines():
        parts = line.split()
        if len(parts) >= 14:
            stats[parts[2]] = (int(parts[5]), int(parts[9]), int(parts[12]), int(parts[13]))
    return stats


def _disk_sectors(names: Iterable[str]) -> dict[str, DiskCounters]:
    """name -> DiskCounters of a few devices: each one's own sysfs stat file (one device's
    counters, where /proc/diskstats makes the kernel print every device's, a hundred loop
    devices on a test machine), else /proc/diskstats. Missing devices left out."""
    out: dict[str, DiskCounters] = {}
    rest = []
    for name in names:
        try:
            fields = kept_files.read(f"/sys/class/block/{name.replace('/', '!')}/stat",
                                     512).split()
            out[name] = (int(fields[2]), int(fields[6]), int(fields[9]), int(fields[10]))
        except (OSError, ValueError, IndexError):
            rest.append(name)
    if rest:
        with contextlib.suppress(OSError, ValueError):
            stats = _diskstats()
            out.update((name, stats[name]) for name in rest if name in stats)
    return out


def _cpu_times() -> tuple[int, int]:
    """(busy, total) jiffies of every CPU of the machine, from /proc/stat's first line: busy
    is everything but idle and iowait (a CPU waiting for I/O is free to compute)."""
    fields = [int(v) for v in kept_files.read("/proc/stat", 512).split(b"\n", 1)[0].split()[1:]]
    total = sum(fields[:8])  # user nice system idle iowait irq softirq steal (guest is in user)
    return total - fields[3] - fields[4], total


def _meminfo() -> dict[str, int]:
    """Dirty and Writeback, in bytes, from /proc/meminfo."""
    data = kept_files.read("/proc/meminfo")
    out = {}
    for key in ("Dirty", "Writeback"):
        at = data.find(b"\n" + key.encode() + b":")
        if at >= 0:
            out[key] = int(data[at + len(key) + 2:data.index(b"\n", at + 1)].split()[0]) * 1024
    return out


def _io(c: ProcCounters) -> tuple[int, int, int, int]:
    return (c.read_bytes, c.write_bytes, c.read_chars, c.write_chars)


_APP_KEYS = ("app_read_bps", "app_write_bps", "app_rchar_bps", "app_wchar_bps")
_TOTAL_KEYS = ("app_read_bytes", "app_write_bytes", "app_rchar_bytes", "app_wchar_bytes")


class Monitor:
    """Call sample() every 250-1000 ms; each call returns rates since the previous one.

    Prime it (first sample()) before the tool starts, so that the tool's first bytes count."""

    def __init__(self, directory: str, pids: Callable[[], Iterable[int]] | None = None):
        self.directory = directory
        self.device = device_for_path(directory)
        self._pids: Callable[[], Iterable[int]] | None = None
        self._finals: Callable[[], Mapping[int, ProcCounters]] | None = None
        self._finalized: set[int] = set()  # pids whose final counters were counted
        self._gone: dict[int, ProcCounters] = {}  # last seen counters of vanished processes
        if pids is not None:
            self.set_pids(pids)
        self._seen: Mapping[int, TreeEntry] = {}
        self._debt: dict[int, list[int]] = {}  # pid -> io counted of its vanished children
        self._disk_last: dict[str, DiskCounters] = {}
        self._cpu_last: tuple[int, int] | None = None
        self._last_t: float | None = None
        self.last_interval: float | None = None  # seconds covered by the last rates
        self._totals: dict[str, float] = {}
        self._group: Path | None = None  # the memory.stat of the tool's page_cache_limit group

    def set_pids(self, pids: Callable[[], Iterable[int]]) -> None:
        """Where the pids of the tool's live tree come from (ToolProcess.descendants). When it
        is a method of a tool process, that process also gives the counters (its
        tree_counters(): a tool run by the privileged helper is root's, unreadable here) and the
        final counters of the processes it reaped (its exit_counters())."""
        self._pids = pids
        owner = getattr(pids, "__self__", None)
        finals = getattr(owner, "exit_counters", None)
        self._finals = finals if callable(finals) else None
        tree = getattr(owner, "tree_counters", None)
        self._tree: Callable[[], Mapping[int, TreeEntry]] = (
            tree if callable(tree) else lambda: read_tree(list(pids())))

    def _read_tree(self) -> Mapping[int, TreeEntry]:
        return self._tree() if self._pids is not None else {}

    def _tree_increments(self, first: bool) -> tuple[list[int], float]:
        """io (read_bytes, write_bytes, read_chars, write_chars) and CPU seconds of the tree
        since the last call."""
        cur = self._read_tree()
        vanished = {pid: old for pid, old in self._seen.items()
                    if pid not in cur or cur[pid].create_time != old.create_time}
        finals = {pid: c for pid, c in (self._finals() if self._finals else {}).items()
                  if pid not in self._finalized and pid not in cur}
        self._finalized.update(finals)
        for pid, old in vanished.items():  # first: these debts apply in this very interval
            if pid in finals:
                continue
            if old.ppid in cur or old.ppid in finals:
                debt = self._debt.setdefault(old.ppid, [0, 0, 0, 0])
                for i, v in enumerate(_io(old.counters)):
                    debt[i] += v  # its parent reaps it and gains its totals
            else:  # re-parented, or reaped by DiskLab: its final counters may come later
                self._gone[pid] = old.counters
        inc = [0, 0, 0, 0]
        cpu = 0.0
        for pid, final in finals.items():
            before = vanished[pid].counters if pid in vanished else self._gone.pop(pid, None)
            if before is not None:
                self._add(inc, pid, final, before)
                cpu += max(0.0, final.cpu_seconds - before.cpu_seconds)
            elif not first:  # started and ended between two samples: all of it is new
                self._add(inc, pid, final, None)
                cpu += final.cpu_seconds
        for pid, now in cur.items():
            old = self._seen.get(pid)
            if old is not None and old.create_time == now.create_time:
                self._add(inc, pid, now.counters, old.counters)
                cpu += max(0.0, now.counters.cpu_seconds - old.counters.cpu_seconds)
            elif not first:  # new since the last call: everything it did so far is new
                self._add(inc, pid, now.counters, None)
                cpu += now.counters.cpu_seconds
        self._debt = {pid: d for pid, d in self._debt.items() if pid in cur and any(d)}
        self._seen = cur
        return inc, cpu

    def _add(self, inc: list[int], pid: int, now: ProcCounters,
             old: ProcCounters | None) -> None:
        """Add one process's io increment to `inc`, less what it owes for reaped children."""
        before = _io(old) if old is not None else (0, 0, 0, 0)
        delta = [max(0, a - b) for a, b in zip(_io(now), before, strict=True)]
        debt = self._debt.get(pid)
        for i in range(4):
            if debt:
                paid = min(debt[i], delta[i])
                delta[i] -= paid
                debt[i] -= paid
            inc[i] += delta[i]

    def sample(self) -> dict[str, float]:
        """Rates since the previous call: app_read_bps, app_write_bps (storage-level bytes of
        the tool's tree), app_rchar_bps, app_wchar_bps (bytes it passed to read/write, page cache
        included), cpu_pct (100 = one CPU), device_read_bps, device_write_bps (the device under
        the directory), backing_read_bps, backing_write_bps (the disk under a loop device's
        image), device_busy_pct and device_in_flight (and backing_*: the kernel's io_ticks and
        time_in_queue over the interval), machine_cpu_pct (every CPU: 100); and the levels
        dirty_bytes, writeback_bytes. The first call only primes the
        counters and returns the levels."""
        now = time.monotonic()
        first = self._last_t is None
        out: dict[str, float] = {}
        with contextlib.suppress(OSError, ValueError, IndexError):
            mem = _meminfo()
            out["dirty_bytes"] = float(mem.get("Dirty", 0))
            out["writeback_bytes"] = float(mem.get("Writeback", 0))
        dt = 0.0 if self._last_t is None else now - self._last_t
        if self._pids is not None:
            inc, cpu = self._tree_increments(first)
            if not first and dt > 0:
                for key, total_key, v in zip(_APP_KEYS, _TOTAL_KEYS, inc, strict=True):
                    out[key] = v / dt
                    self._totals[total_key] = self._totals.get(total_key, 0.0) + v
                out["cpu_pct"] = cpu / dt * 100
        self._sample_group(out)
        self._sample_disks(out, dt, first)
        self._sample_machine(out)
        if not first and dt > 0:
            self.last_interval = dt
        self._last_t = now
        return out

    def _sample_group(self, out: dict[str, float]) -> None:
        """group_dirty_bytes and group_writeback_bytes: the levels of the tool's own memory
        cgroup (page_cache_limit), against whose limit the kernel holds its writers (the
        machine's Dirty counts every other program's pages too). Found from the tool's first
        process once it runs; nothing outside a DiskLab group."""
        if self._group is None:
            for pid in list(self._seen)[:1]:
                self._group = group_stat_of(pid)
        if self._group is not None:
            levels = group_dirty(self._group)
            if levels:
                out["group_dirty_bytes"] = float(levels.get("dirty", 0))
                out["group_writeback_bytes"] = float(levels.get("writeback", 0))

    def _sample_machine(self, out: dict[str, float]) -> None:
        """machine_cpu_pct: how busy the machine's CPUs were since the last sample (100 = all
        of them): a tool short of CPU on a loaded machine is limited by the others' work."""
        with contextlib.suppress(OSError, ValueError, IndexError):
            now = _cpu_times()
            if self._cpu_last is not None and now[1] > self._cpu_last[1]:
                busy, total = (a - b for a, b in zip(now, self._cpu_last, strict=True))
                out["machine_cpu_pct"] = 100.0 * busy / total
            self._cpu_last = now

    def _sample_disks(self, out: dict[str, float], dt: float, first: bool) -> None:
        disks = []
        if self.device is not None:
            disks.append(("device", self.device.name))
            if self.device.backing is not None:
                disks.append(("backing", self.device.backing.name))
        if not disks:
            return
        stats = _disk_sectors(name for _prefix, name in disks)
        for prefix, name in disks:
            if name not in stats:
                continue
            if not first and dt > 0 and name in self._disk_last:
                (r0, w0, t0, q0), (r1, w1, t1, q1) = self._disk_last[name], stats[name]
                read, written = max(0, r1 - r0) * SECTOR, max(0, w1 - w0) * SECTOR
                out[f"{prefix}_read_bps"] = read / dt
                out[f"{prefix}_write_bps"] = written / dt
                # ms of ticks over s of time: busy in % (capped: ticks and our clock differ a
                # little), requests in flight on average
                out[f"{prefix}_busy_pct"] = min(100.0, max(0, t1 - t0) / (dt * 1000) * 100)
                out[f"{prefix}_in_flight"] = max(0, q1 - q0) / (dt * 1000)
                for key, v in ((f"{prefix}_read_bytes", read), (f"{prefix}_write_bytes", written)):
                    self._totals[key] = self._totals.get(key, 0.0) + v
            self._disk_last[name] = stats[name]

    def totals(self) -> dict[str, float]:
        """Bytes counted since the first sample: app_read_bytes, app_write_bytes,
        app_rchar_bytes, app_wchar_bytes, device_*_bytes, backing_*_bytes (for a summary such
        as write amplification = device_write_bytes / app_write_bytes)."""
        return dict(self._totals)


def _block_name(directory: str) -> str | None:
    """The kernel name of the block device a directory's filesystem is on, partition and all
    (/sys/dev/block/MAJ:MIN): a partition of a disk is itself here, not its disk."""
    try:
        st = os.stat(directory)
        link = os.path.realpath(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
    except OSError:
        return None
    name = os.path.basename(link)
    return name if name and name not in ("block", "") else None


class TargetDisks:
    """Each named target's own device rates while a placed case runs (several targets):
    device_read_bps:NAME and device_write_bps:NAME, one series per target, for a live curve
    per target beside the case's own; targets on one device share it (a+a is one curve). And
    their total, device_read_bps:all and device_write_bps:all, over the distinct devices: two
    directory targets on one filesystem are one disk's bytes, not twice them."""

    def __init__(self, directories: Mapping[str, str]):
        self.devices = {name: dev for name, d in directories.items()
                        if (dev := _block_name(d)) is not None}
        self._last: dict[str, DiskCounters] = {}
        self._last_t: float | None = None

    def sample(self) -> dict[str, float]:
        """Rates since the previous call per target (the first call primes and returns {})."""
        now = time.monotonic()
        stats = _disk_sectors(set(self.devices.values()))
        out: dict[str, float] = {}
        per_device: dict[str, tuple[float, float]] = {}
        dt = 0.0 if self._last_t is None else now - self._last_t
        for target, name in self.devices.items():
            if name not in stats:
                continue
            if dt > 0 and target in self._last:
                (r0, w0, _t0, _q0), (r1, w1, _t1, _q1) = self._last[target], stats[name]
                rates = max(0, r1 - r0) * SECTOR / dt, max(0, w1 - w0) * SECTOR / dt
                out[f"device_read_bps:{target}"], out[f"device_write_bps:{target}"] = rates
                per_device[name] = rates
            self._last[target] = stats[name]
        self._last_t = now
        if per_device:
            out[f"device_read_bps:{ALL_TARGETS}"] = math.fsum(r for r, _w in per_device.values())
            out[f"device_write_bps:{ALL_TARGETS}"] = math.fsum(w for _r, w in per_device.values())
        return out
