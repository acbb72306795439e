"""A caching layer under a configuration: dm-cache, the successor of EnhanceIO (the data=journal
study's SSD cache, gone from current kernels) and what lvmcache builds on.

A [[config]] asks for it as `cache = { device = "/dev/sdX", confirm = "PATH SERIAL SIZE",
mode = "writeback" | "writethrough" }`: the cache device split into dm-cache's metadata and data
parts, the cache target over the filesystem's device. This module checks the table and whether
the kernel can do it at all (`dmsetup targets`), so that `disklab plan validate` says why not
where it cannot. Building the cache is not done by this build yet: a plan with `cache` is
refused with that reason too, rather than run without the cache it asked for.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from disklab.core import proc
from disklab.core.vocab.errors import DisklabError

MODES = ("writeback", "writethrough")
KEYS = ("device", "confirm", "mode")


def table_problems(value: Any) -> list[tuple[str, str]]:
    """Problems of a `cache = {...}` table, keyed relative to it ('cache.mode')."""
    if not isinstance(value, Mapping):
        return [("cache", 'must be a table: cache = { device = "/dev/sdX", confirm = "...", '
                          'mode = "writeback" }')]
    problems = [(f"cache.{k}", f"unknown key (known: {', '.join(KEYS)})")
                for k in value if k not in KEYS]
    device = value.get("device")
    if not isinstance(device, str) or not device.startswith("/dev/"):
        problems.append(("cache.device", f"{device!r} is not a device path (/dev/...)"))
    confirm = value.get("confirm")
    if not isinstance(confirm, str) or not confirm.strip():
        problems.append(("cache.confirm", "the cache device is overwritten: give its confirm "
                                          "('PATH SERIAL SIZE', from `disklab devices`)"))
    if value.get("mode", "writethrough") not in MODES:
        problems.append(("cache.mode", f"{value.get('mode')!r} is not one of "
                                       f"{', '.join(MODES)}"))
    return problems


def unavailable() -> str:
    """Why this machine cannot put a dm-cache under a configuration (always a reason: where the
    kernel has the target, that this build does not set it up yet)."""
    try:
        done = proc.run(["dmsetup", "targets"], timeout=10)
    except DisklabError as e:
        return f"dmsetup is not available ({e}): install the Debian package dmsetup"
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or ["no message"])[0]
        return f"this kernel has no device-mapper (dmsetup targets: {said})"
    targets = {line.split()[0] for line in done.stdout.splitlines() if line.split()}
    if "cache" not in targets:
        module = _module_file("dm-cache")
        if module:
            return (f"the dm-cache module is not loaded (modprobe dm-cache; {module}); "
                    f"dmsetup targets lists: {', '.join(sorted(targets))}")
        return (f"this kernel ({platform.release()}) has no dm-cache target; dmsetup targets "
                f"lists: {', '.join(sorted(targets))}")
    return ("the kernel has dm-cache, but this build of DiskLab does not set it up yet: build "
            "it with lvmcache (lvconvert --type cache) and point a format target at the cached "
            "logical volume")


def _module_file(name: str) -> str | None:
    """The kernel module file of `name` for the running kernel, if it is installed."""
    base = Path("/lib/modules") / platform.release()
    if not base.is_dir():
        return None
    stem = name.replace("-", "[-_]")
    for path in base.glob(f"kernel/drivers/md/{stem}.ko*"):
        return os.fspath(path)
    return None
