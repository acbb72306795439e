"""Free space of mounted filesystems: what the Target page shows beside each device."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass

from disklab.core.system.devices import Device


def free_space(devices: Iterable[Device]) -> dict[str, int]:
    """Free bytes of each mounted device's filesystem (statvfs of its first mountpoint that
    can be read), by device path; devices without one are left out."""
    out = {}
    for d in devices:
        for mp in d.mountpoints:
            try:
                out[d.path] = shutil.disk_usage(mp).free
            except OSError:
                continue
            break
    return out


@dataclass(frozen=True)
class DirectorySpace:
    """What a directory target offers: whether it is a directory, its filesystem's free and
    total bytes, whether this user may write there, or why it could not be read."""

    exists: bool
    free: int = 0
    total: int = 0
    writable: bool = False
    error: str = ""


def directory_space(path: str) -> DirectorySpace:
    """The space and access of a directory (statvfs, access(2))."""
    if not os.path.isdir(path):
        return DirectorySpace(exists=False)
    try:
        usage = shutil.disk_usage(path)
    except OSError as e:
        return DirectorySpace(exists=True, error=str(e))
    return DirectorySpace(True, usage.free, usage.total, os.access(path, os.W_OK | os.X_OK))
