"""Hardware and software facts recorded with every session, read from /proc and /sys.

A figure without its context (CPU, memory, kernel, the filesystem and its mount options, the
device, its scheduler and read-ahead) cannot be compared later. Facts are read directly from the
kernel's files, never by starting a program; a fact that cannot be read is left out, and reading
facts never fails a run.
"""

from __future__ import annotations

import contextlib
import os
import platform
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

SECTOR = 512  # /sys/block/*/size and /proc/diskstats count 512-byte sectors, whatever the device


def _read(path: str | Path) -> str | None:
    try:
        return Path(path).read_text().strip()
    except (OSError, UnicodeDecodeError):
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


def existing(path: str) -> str | None:
    """The real path of `path`, or of its nearest existing parent (a directory a plan will
    create lives on its parent's filesystem); None if nothing of it exists."""
    p = Path(os.path.realpath(path))
    for candidate in (p, *p.parents):
        if candidate.exists():
            return str(candidate)
    return None


def mount_of(path: str) -> dict[str, str] | None:
    """The mountinfo row of the mount holding `path`: the longest mountpoint that contains it;
    when one is mounted over another, the later one (as the kernel resolves it)."""
    real = existing(path)
    if real is None:
        return None
    best: dict[str, str] | None = None
    for m in mounts():
        mp = m["mountpoint"]
        inside = real == mp or real.startswith(mp.rstrip("/") + "/")
        if inside and (best is None or len(mp) >= len(best["mountpoint"])):
            best = m
    return best


def filesystem_of(directory: str) -> dict[str, Any]:
    """The filesystem holding `directory`: fstype, source, mountpoint, options (the mount's),
    super_options (the superblock's: data=, journal options), devno. {} when unknown."""
    m = mount_of(directory)
    if m is None:
        return {}
    return {
        "fstype": m["fstype"], "source": m["source"], "mountpoint": m["mountpoint"],
        "options": m["options"], "super_options": m["super"], "devno": m["devno"],
    }


def same_filesystem(a: str, b: str) -> bool:
    """True when two paths (or their nearest existing parents) are on the same filesystem, e.g.
    the library on the device under test (our commits would disturb the measurement)."""
    ra, rb = existing(a), existing(b)
    if ra is None or rb is None:
        return False
    try:
        return os.stat(ra).st_dev == os.stat(rb).st_dev
    except OSError:
        return False


def device_name(devno: str) -> str | None:
    """'254:0' -> 'vda' via /sys/dev/block."""
    link = Path("/sys/dev/block") / devno
    return link.resolve().name if link.exists() else None


def _cpu_model() -> str | None:
    for line in (_read("/proc/cpuinfo") or "").splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Model", "Hardware", "cpu model") and value.strip():
            return value.strip()
    return platform.processor() or None


def _os_release() -> dict[str, str]:
    fields = {}
    for path in ("/etc/os-release", "/usr/lib/os-release"):
        for line in (_read(path) or "").splitlines():
            key, sep, value = line.partition("=")
            if sep:
                fields[key.strip()] = value.strip().strip("'\"")
        if fields:
            break
    return fields


def _meminfo_kib(key: str) -> int | None:
    for line in (_read("/proc/meminfo") or "").splitlines():
        if line.startswith(key + ":"):
            with contextlib.suppress(ValueError, IndexError):
                return int(line.split()[1]) * 1024
    return None


def block_facts(name: str) -> dict[str, Any]:
    """Model, size, rotational flag, scheduler (the active one) and read-ahead (KiB) of a block
    device by its sysfs name; a partition's queue facts are its disk's."""
    base = Path("/sys/class/block") / name
    facts: dict[str, Any] = {"name": name, "path": f"/dev/{name}"}
    disk = base
    if (base / "partition").exists():
        disk = base.resolve().parent
        facts["disk"] = disk.name
    dev = _read(base / "dev")
    if dev:
        facts["devno"] = dev
    size = _read(base / "size")
    if size and size.isdigit():
        facts["size"] = int(size) * SECTOR
    for key, rel in (("model", "device/model"), ("vendor", "device/vendor"),
                     ("serial", "device/serial"), ("rotational", "queue/rotational"),
                     ("read_ahead_kb", "queue/read_ahead_kb"),
                     ("logical_block_size", "queue/logical_block_size"),
                     ("physical_block_size", "queue/physical_block_size")):
        value = _read(disk / rel)
        if value:
            facts[key] = int(value) if value.isdigit() else value
    sched = _read(disk / "queue/scheduler")
    if sched:
        active = [s.strip("[]") for s in sched.split() if s.startswith("[")]
        facts["scheduler"] = active[0] if active else sched
    backing = _read(disk / "loop/backing_file")
    if backing:
        facts["backing_file"] = backing
        direct = _read(disk / "loop/dio")
        if direct is not None:
            facts["loop_direct_io"] = direct == "1"
    return facts


def _fact(read: Callable[[], Any]) -> Any:
    """One fact, or None when it cannot be read: one missing fact must not hide the others."""
    try:
        return read()
    except Exception:
        return None


def _machine_facts() -> dict[str, Any]:
    release = _fact(_os_release) or {}
    return {
        "hostname": _fact(socket.gethostname),
        "kernel": _fact(lambda: os.uname().release),
        "kernel_version": _fact(lambda: os.uname().version),
        "machine": _fact(lambda: os.uname().machine),
        "distribution": release.get("PRETTY_NAME") or release.get("NAME"),
        "cpu_model": _fact(_cpu_model),
        "cpu_count": _fact(os.cpu_count),
        "memory_bytes": _fact(lambda: _meminfo_kib("MemTotal")),
        "python": _fact(platform.python_version),
        "python_executable": sys.executable or None,
    }


def _target_facts(directory: str) -> dict[str, Any]:
    from disklab.core.monitor import device_for_path  # monitor imports this module

    facts: dict[str, Any] = {"directory": directory}
    fs = _fact(lambda: filesystem_of(directory))
    if fs:
        facts["filesystem"] = fs
    dev = _fact(lambda: device_for_path(directory))
    if dev is not None:
        device = block_facts(dev.name)
        if dev.backing is not None:  # a loop device: the disk under its image matters too
            device["backing"] = block_facts(dev.backing.name)
        facts["device"] = device
    real = _fact(lambda: existing(directory))
    if real is not None:
        with contextlib.suppress(OSError):
            st = os.statvfs(real)
            facts["free_bytes"] = st.f_bavail * st.f_frsize
            facts["fs_size_bytes"] = st.f_blocks * st.f_frsize
    return facts


def host_facts(directory: str | None) -> dict[str, Any]:
    """Facts of this machine and, when given, of the filesystem and device under `directory`.

    Keys: hostname, kernel, kernel_version, machine, distribution, cpu_model, cpu_count,
    memory_bytes, python, python_executable; with a directory also directory, filesystem
    (filesystem_of), device (block_facts, with `backing` for a loop device), free_bytes,
    fs_size_bytes. A fact that cannot be read is absent."""
    facts: dict[str, Any] = _machine_facts()
    if directory:
        with contextlib.suppress(Exception):
            facts.update(_target_facts(directory))
    return {k: v for k, v in facts.items() if v is not None}
