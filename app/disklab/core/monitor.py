"""Live samplers while a case runs: what the tool moves, what the device does, the page cache.

Application bytes (psutil io counters of the tool's whole process tree) next to device bytes
(/proc/diskstats of the device under the target) show journaling write amplification live, and
Dirty/Writeback from /proc/meminfo show the page cache filling and draining. Rates are computed
over monotonic time between calls; counters of processes that exited are kept so the total never
goes down (iozone -t N forks N children that finish at different times).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import psutil

from disklab.core.hostinfo import device_name, filesystem_of

SECTOR = 512  # /proc/diskstats counts 512-byte sectors whatever the device's block size


@dataclass(frozen=True)
class BlockDevice:
    name: str  # "vda", "loop0", "sda1"
    path: str
    devno: str
    disk: str | None = None  # the whole disk of a partition
    backing: BlockDevice | None = None  # for a loop device: the device under its backing file


def device_for_path(path: str) -> BlockDevice | None:
    """The block device under a path: mountinfo -> /sys/dev/block; a loop device also names the
    device under its backing file. None for tmpfs, overlay and other device-less filesystems."""
    fs = filesystem_of(path)
    if not fs:
        return None
    name = device_name(fs["devno"])
    if name is None and fs["source"].startswith("/dev/"):  # btrfs: anonymous st_dev
        name = Path(os.path.realpath(fs["source"])).name
    if name is None or not (Path("/sys/class/block") / name).exists():
        return None
    return _block(name, depth=0)


def _block(name: str, depth: int) -> BlockDevice:
    sys_dir = Path("/sys/class/block") / name
    devno = (sys_dir / "dev").read_text().strip() if (sys_dir / "dev").exists() else ""
    disk = sys_dir.resolve().parent.name if (sys_dir / "partition").exists() else None
    backing = None
    backing_file = sys_dir / "loop" / "backing_file"
    if backing_file.exists() and depth < 4:
        with contextlib.suppress(OSError):
            under = device_for_path(os.path.dirname(backing_file.read_text().strip()))
            backing = under
    return BlockDevice(name, f"/dev/{name}", devno, disk, backing)


def _diskstats() -> dict[str, tuple[int, int]]:
    """name -> (sectors read, sectors written)."""
    stats = {}
    with open("/proc/diskstats") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 10:
                stats[parts[2]] = (int(parts[5]), int(parts[9]))
    return stats


def _meminfo() -> dict[str, int]:
    out = {}
    with open("/proc/meminfo") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("Dirty", "Writeback"):
                out[key] = int(rest.split()[0]) * 1024
    return out


class Monitor:
    """Call sample() every ~500 ms; each call returns rates since the previous one."""

    def __init__(self, directory: str, pids: Callable[[], Iterable[int]] | None = None):
        self.device = device_for_path(directory)
        self._pids = pids or (lambda: ())
        self._procs: dict[int, psutil.Process] = {}
        # per pid: last (read_bytes, write_bytes, read_chars, write_chars)
        self._io: dict[int, tuple[int, int, int, int]] = {}
        self._cpu: dict[int, float] = {}
        self._last_totals: tuple[int, int, int, int] | None = None
        self._last_disk: dict[str, tuple[int, int]] = {}
        self._last_cpu_total = 0.0
        self._last_t: float | None = None

    def set_pids(self, pids: Callable[[], Iterable[int]]) -> None:
        self._pids = pids

    def _tree_totals(self) -> tuple[tuple[int, int, int, int], float]:
        """Summed io counters and CPU seconds of every process seen; dead ones keep their last."""
        for pid in self._pids():
            if pid not in self._procs:
                with contextlib.suppress(psutil.Error):
                    self._procs[pid] = psutil.Process(pid)
        for pid, p in list(self._procs.items()):
            try:
                with p.oneshot():
                    io = p.io_counters()
                    cpu = p.cpu_times()
                self._io[pid] = (io.read_bytes, io.write_bytes, io.read_chars, io.write_chars)
                self._cpu[pid] = cpu.user + cpu.system
            except psutil.Error:
                del self._procs[pid]  # gone: its last counters stay in _io and _cpu
        totals = tuple(sum(v[i] for v in self._io.values()) for i in range(4))
        return totals, sum(self._cpu.values())  # type: ignore[return-value]

    def sample(self) -> dict[str, float]:
        """Rates (B/s) since the last call, CPU %, and the page-cache levels (bytes)."""
        now = time.monotonic()
        totals, cpu_total = self._tree_totals()
        disk_names = []
        if self.device is not None:
            disk_names.append(("device", self.device.name))
            if self.device.backing is not None:
                disk_names.append(("backing", self.device.backing.name))
        try:
            stats = _diskstats()
        except OSError:
            stats = {}
        out: dict[str, float] = {}
        try:
            mem = _meminfo()
            out["dirty_bytes"] = float(mem.get("Dirty", 0))
            out["writeback_bytes"] = float(mem.get("Writeback", 0))
        except OSError:
            pass
        if self._last_t is not None and now > self._last_t:
            dt = now - self._last_t
            last = self._last_totals or totals
            keys = ("app_read_bps", "app_write_bps", "app_rchar_bps", "app_wchar_bps")
            for key, new, old in zip(keys, totals, last, strict=True):
                out[key] = max(0, new - old) / dt
            for prefix, name in disk_names:
                if name in stats and name in self._last_disk:
                    r0, w0 = self._last_disk[name]
                    r1, w1 = stats[name]
                    out[f"{prefix}_read_bps"] = max(0, r1 - r0) * SECTOR / dt
                    out[f"{prefix}_write_bps"] = max(0, w1 - w0) * SECTOR / dt
            out["cpu_pct"] = max(0.0, cpu_total - self._last_cpu_total) / dt * 100
        self._last_t = now
        self._last_totals = totals
        self._last_cpu_total = cpu_total
        for _prefix, name in disk_names:
            if name in stats:
                self._last_disk[name] = stats[name]
        return out
