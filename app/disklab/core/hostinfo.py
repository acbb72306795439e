"""Hardware and software facts recorded with every session, read from /proc and /sys.

A figure without its context (CPU, memory, kernel, the filesystem and its mount options, the
device, its scheduler and read-ahead) cannot be compared later. Missing facts are left out;
reading facts never fails a run.
"""

from __future__ import annotations

import contextlib
import os
import platform
import socket
import sys
from pathlib import Path
from typing import Any


def _read(path: str | Path) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def _unescape(field: str) -> str:
    """mountinfo escapes space, tab, newline and backslash as octal."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def mounts() -> list[dict[str, str]]:
    """/proc/self/mountinfo as dicts: devno, root, mountpoint, options, fstype, source, super."""
    rows = []
    for line in (_read("/proc/self/mountinfo") or "").splitlines():
        left, _, right = line.partition(" - ")
        a, b = left.split(), right.split()
        if len(a) < 6 or len(b) < 2:
            continue
        rows.append({
            "devno": a[2], "root": _unescape(a[3]), "mountpoint": _unescape(a[4]),
            "options": a[5], "fstype": b[0], "source": _unescape(b[1]),
            "super": b[2] if len(b) > 2 else "",
        })
    return rows


def filesystem_of(directory: str) -> dict[str, Any]:
    """The mount holding `directory`: fstype, source, options (mount and superblock), mountpoint."""
    try:
        path = os.path.realpath(directory)
        os.stat(path)
    except OSError:
        return {}
    best: dict[str, str] | None = None
    for m in mounts():  # the longest mountpoint holding the path; the last mounted wins a tie
        mp = m["mountpoint"]
        inside = path == mp or path.startswith(mp.rstrip("/") + "/")
        if inside and (best is None or len(mp) >= len(best["mountpoint"])):
            best = m
    if best is None:
        return {}
    return {
        "fstype": best["fstype"], "source": best["source"], "mountpoint": best["mountpoint"],
        "options": best["options"], "super_options": best["super"], "devno": best["devno"],
    }


def same_filesystem(a: str, b: str) -> bool:
    """True when two paths (or the nearest existing parents) live on the same filesystem."""

    def dev(p: str) -> int | None:
        path = Path(p).resolve()
        for candidate in (path, *path.parents):
            with contextlib.suppress(OSError):
                return candidate.stat().st_dev
        return None

    da, db = dev(a), dev(b)
    return da is not None and da == db


def _cpu_model() -> str | None:
    for line in (_read("/proc/cpuinfo") or "").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or None


def _distribution() -> str | None:
    for line in (_read("/etc/os-release") or "").splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip('"')
    return None


def _mem_total() -> int | None:
    for line in (_read("/proc/meminfo") or "").splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024
    return None


def block_facts(name: str) -> dict[str, Any]:
    """Model, size, rotational flag, scheduler and read-ahead of a block device (sysfs name)."""
    base = Path("/sys/class/block") / name
    facts: dict[str, Any] = {"name": name}
    disk = base
    if (base / "partition").exists():
        disk = base.resolve().parent
        facts["disk"] = disk.name
    size = _read(base / "size")
    if size:
        facts["size"] = int(size) * 512
    for key, rel in (("model", "device/model"), ("vendor", "device/vendor"),
                     ("serial", "device/serial"), ("rotational", "queue/rotational"),
                     ("read_ahead_kb", "queue/read_ahead_kb"),
                     ("logical_block_size", "queue/logical_block_size")):
        value = _read(disk / rel)
        if value is not None:
            facts[key] = int(value) if value.isdigit() else value
    sched = _read(disk / "queue/scheduler")
    if sched:
        active = [s.strip("[]") for s in sched.split() if s.startswith("[")]
        facts["scheduler"] = active[0] if active else sched
    backing = _read(base / "loop/backing_file")
    if backing:
        facts["backing_file"] = backing
    return facts


def device_name(devno: str) -> str | None:
    """'254:0' -> 'vda' via /sys/dev/block."""
    link = Path("/sys/dev/block") / devno
    return link.resolve().name if link.exists() else None


def host_facts(directory: str | None) -> dict[str, Any]:
    """Facts of this machine and, when given, of the filesystem and device under `directory`."""
    facts: dict[str, Any] = {
        "hostname": socket.gethostname(),
        "kernel": platform.release(),
        "distribution": _distribution(),
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "memory_bytes": _mem_total(),
        "python": sys.version.split()[0],
    }
    if directory:
        fs = filesystem_of(directory)
        if fs:
            facts["filesystem"] = fs
            name = device_name(fs["devno"])
            if name is None and fs["source"].startswith("/dev/"):
                name = Path(os.path.realpath(fs["source"])).name
            if name and (Path("/sys/class/block") / name).exists():
                facts["device"] = block_facts(name)
        with contextlib.suppress(OSError):
            st = os.statvfs(directory)
            facts["free_bytes"] = st.f_bavail * st.f_frsize
    return {k: v for k, v in facts.items() if v is not None}
