"""What is mounted where: /proc/self/mountinfo, read by one parser.

The kernel writes a space, tab, newline or backslash in a path as an octal escape (a mountpoint
"/mnt/my disk" reads "/mnt/my\\040disk"); paths are unescaped here once, so that every caller
compares real paths. A directory's filesystem is the mount with the longest mountpoint that
contains it, the last one when two are mounted on the same point (the visible one).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MOUNTINFO = Path("/proc/self/mountinfo")
_OCTAL = re.compile(r"\\([0-7]{3})")


@dataclass(frozen=True)
class MountEntry:
    """One line of mountinfo."""

    devno: str  # "major:minor" of the filesystem (0:xx for btrfs, tmpfs, ...)
    root: str  # the directory of the filesystem mounted here (a bind mount's subdirectory)
    mountpoint: str
    options: str  # per-mount options, comma-separated ("rw,noatime")
    fstype: str
    source: str  # "/dev/loop0", "tmpfs", "server:/export"
    super_options: str = ""  # the superblock's options ("rw,data=journal")

    def option_list(self) -> list[str]:
        """Per-mount options (noatime) then the superblock's (data=journal), each once."""
        vfs = [o for o in self.options.split(",") if o]
        sup = [o for o in self.super_options.split(",") if o]
        return list(dict.fromkeys(vfs + sup))


def unescape(field: str) -> str:
    """mountinfo's octal escapes (\\040 space, \\011 tab, \\012 newline, \\134 backslash) ->
    the characters, in one pass (so an escaped backslash never starts another escape)."""
    return _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), field)


def parse_mountinfo(text: str) -> list[MountEntry]:
    """mountinfo text -> entries, in the kernel's order; lines that do not read are skipped."""
    entries = []
    for line in text.splitlines():
        left, _, right = line.partition(" - ")
        a, b = left.split(), right.split()
        if len(a) < 6 or len(b) < 2:
            continue
        entries.append(MountEntry(
            devno=a[2], root=unescape(a[3]), mountpoint=unescape(a[4]), options=a[5],
            fstype=b[0], source=unescape(b[1]), super_options=b[2] if len(b) > 2 else ""))
    return entries


def mounts() -> list[MountEntry]:
    """Every mount this process sees, now."""
    try:
        return parse_mountinfo(MOUNTINFO.read_text())
    except (OSError, UnicodeDecodeError):
        return []


def existing(path: str) -> str | None:
    """The real path of `path`, or of its nearest existing parent (a directory a plan will
    create lives on its parent's filesystem); None if nothing of it exists."""
    p = Path(os.path.realpath(path))
    for candidate in (p, *p.parents):
        if candidate.exists():
            return str(candidate)
    return None


def mount_of(path: str) -> MountEntry | None:
    """The mount holding `path` (or its nearest existing parent): the longest mountpoint that
    contains it; when one is mounted over another, the later one (as the kernel resolves it)."""
    real = existing(path)
    if real is None:
        return None
    best: MountEntry | None = None
    for m in mounts():
        mp = m.mountpoint
        inside = real == mp or real.startswith(mp.rstrip("/") + "/")
        if inside and (best is None or len(mp) >= len(best.mountpoint)):
            best = m
    return best


def mount_at(mountpoint: str, text: str | None = None) -> MountEntry | None:
    """The entry mounted exactly at `mountpoint` (the last one: it is the visible one); None
    when nothing is. `text`: mountinfo to read instead of this process's."""
    real = os.path.realpath(mountpoint)
    found = None
    for entry in mounts() if text is None else parse_mountinfo(text):
        if entry.mountpoint == real:
            found = entry
    return found


def filesystem_of(directory: str) -> dict[str, Any]:
    """The filesystem holding `directory` as the facts stored with a session: fstype, source,
    mountpoint, options (the mount's), super_options (the superblock's: data=, journal options),
    devno. {} when unknown."""
    m = mount_of(directory)
    if m is None:
        return {}
    return {"fstype": m.fstype, "source": m.source, "mountpoint": m.mountpoint,
            "options": m.options, "super_options": m.super_options, "devno": m.devno}


def same_filesystem(a: str, b: str) -> bool:
    """True when two paths (or their nearest existing parents) are on the same filesystem, e.g.
    the library on the device under test (its commits would disturb the measurement)."""
    ra, rb = existing(a), existing(b)
    if ra is None or rb is None:
        return False
    try:
        return os.stat(ra).st_dev == os.stat(rb).st_dev
    except OSError:
        return False
