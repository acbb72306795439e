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
from typing import Any

from disklab import __version__
from disklab.core.system.devices import device_for_path
from disklab.core.system.mountinfo import existing, filesystem_of
from disklab.core.system.sysfs import SECTOR, SYS_CLASS_BLOCK, parse_scheduler, read


def _cpu_model() -> str | None:
    for line in (read("/proc/cpuinfo") or "").splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Model", "Hardware", "cpu model") and value.strip():
            return value.strip()
    return platform.processor() or None


def _os_release() -> dict[str, str]:
    fields = {}
    for path in ("/etc/os-release", "/usr/lib/os-release"):
        for line in (read(path) or "").splitlines():
            key, sep, value = line.partition("=")
            if sep:
                fields[key.strip()] = value.strip().strip("'\"")
        if fields:
            break
    return fields


def _meminfo_kib(key: str) -> int | None:
    for line in (read("/proc/meminfo") or "").splitlines():
        if line.startswith(key + ":"):
            with contextlib.suppress(ValueError, IndexError):
                return int(line.split()[1]) * 1024
    return None


def block_facts(name: str) -> dict[str, Any]:
    """Model, firmware (an NVMe's firmware_rev, a SCSI disk's rev), size, rotational flag,
    scheduler (the active one) and read-ahead (KiB) of a block device by its sysfs name; a
    partition's queue facts are its disk's."""
    base = SYS_CLASS_BLOCK / name
    facts: dict[str, Any] = {"name": name, "path": f"/dev/{name}"}
    disk = base
    if (base / "partition").exists():
        disk = base.resolve().parent
        facts["disk"] = disk.name
    dev = read(base / "dev")
    if dev:
        facts["devno"] = dev
    size = read(base / "size")
    if size and size.isdigit():
        facts["size"] = int(size) * SECTOR
    for key, rel in (("model", "device/model"), ("vendor", "device/vendor"),
                     ("serial", "device/serial"), ("firmware", "device/firmware_rev"),
                     ("revision", "device/rev"), ("rotational", "queue/rotational"),
                     ("read_ahead_kb", "queue/read_ahead_kb"),
                     ("logical_block_size", "queue/logical_block_size"),
                     ("physical_block_size", "queue/physical_block_size")):
        value = read(disk / rel)
        if value:
            facts[key] = int(value) if value.isdigit() else value
    scheduler = parse_scheduler(read(disk / "queue/scheduler") or "")
    if scheduler:
        facts["scheduler"] = scheduler
    backing = read(disk / "loop/backing_file")
    if backing:
        facts["backing_file"] = backing
        direct = read(disk / "loop/dio")
        if direct is not None:
            facts["loop_direct_io"] = direct == "1"
    return facts


def _fact(reader: Callable[[], Any]) -> Any:
    """One fact, or None when it cannot be read: one missing fact must not hide the others."""
    try:
        return reader()
    except Exception:
        return None


def _dirty_threshold() -> int | None:
    """Bytes of dirty page cache at which the kernel starts to make writers wait: vm.dirty_bytes
    when set, else vm.dirty_ratio % of the memory that can be dirtied (about MemAvailable).
    Recorded with a session so that a write-back verdict (core.results.limits) can say how
    close Dirty came to it."""
    def vm(name: str) -> int:
        with open(f"/proc/sys/vm/{name}", encoding="ascii") as f:
            return int(f.read().strip())

    if vm("dirty_bytes") > 0:
        return vm("dirty_bytes")
    available = _meminfo_kib("MemAvailable")  # in bytes
    return None if available is None else available * vm("dirty_ratio") // 100


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
        "dirty_threshold_bytes": _fact(_dirty_threshold),
        "python": _fact(platform.python_version),
        "disklab_version": __version__,
        "python_executable": sys.executable or None,
    }


def _target_facts(directory: str) -> dict[str, Any]:
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


def target_device_facts(kind: str, path: str) -> dict[str, Any]:
    """The device facts of a target that is not a directory, as a session records them at its
    start (a step in a history is explained by what differs): a raw device's (device and
    format targets: block_facts, with `backing` for a loop device), and for a scratch image,
    which is attached later, the disk under the directory that holds it (`backing`, as for a
    loop device). {} when unknown."""
    where = path if kind in ("device", "format") else os.path.dirname(os.path.abspath(path))
    dev = _fact(lambda: device_for_path(where))
    if dev is None:
        return {}
    if kind not in ("device", "format"):
        return {"backing": block_facts(dev.name)}
    name = os.path.basename(os.path.realpath(path))
    facts = block_facts(name)
    if dev.backing is not None:
        facts["backing"] = block_facts(dev.backing.name)
    return facts


def host_facts(directory: str | None) -> dict[str, Any]:
    """Facts of this machine and, when given, of the filesystem and device under `directory`.

    Keys: hostname, kernel, kernel_version, machine, distribution, cpu_model, cpu_count,
    memory_bytes, python, python_executable, disklab_version; with a directory also directory,
    filesystem (filesystem_of), device (block_facts, with `backing` for a loop device), free_bytes,
    fs_size_bytes. A fact that cannot be read is absent."""
    facts: dict[str, Any] = _machine_facts()
    if directory:
        with contextlib.suppress(Exception):
            facts.update(_target_facts(directory))
    return {k: v for k, v in facts.items() if v is not None}
