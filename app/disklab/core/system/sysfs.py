"""Block devices as sysfs shows them: device numbers to kernel names, queues, read-ahead.

Every way DiskLab names a device (a mount's st_dev, a node's st_rdev, dumpe2fs's journal device
number) ends in a "major:minor" number; /sys/dev/block/MAJOR:MINOR links to the device's sysfs
directory, whose name is the kernel name ("loop0", "vda1", "dm-0") that /proc/diskstats and
/sys/class/block use. That link is read here and nowhere else. Nothing here starts a process
and nothing raises for a device that is not there: the answer is None.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

SECTOR = 512  # /sys/block/*/size and /proc/diskstats count 512-byte sectors, whatever the device
SYS_DEV_BLOCK = Path("/sys/dev/block")
SYS_CLASS_BLOCK = Path("/sys/class/block")


def read(path: str | Path) -> str | None:
    """A sysfs or procfs file's text, stripped; None when it cannot be read."""
    try:
        return Path(path).read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None


def devno(number: int) -> str:
    """An st_dev or st_rdev as the kernel writes it: 'major:minor'."""
    return f"{os.major(number)}:{os.minor(number)}"


def device_dir(number: str) -> Path | None:
    """The sysfs directory of the block device 'major:minor' (resolved: its name is the kernel
    name, its parent the disk of a partition); None when there is no such block device."""
    try:
        return (SYS_DEV_BLOCK / number).resolve(strict=True)
    except OSError:
        return None


def kernel_name(number: str) -> str | None:
    """'254:0' -> 'vda': the kernel name of a device number; None when there is none."""
    found = device_dir(number)
    return found.name if found is not None else None


def node_number(path: str) -> str | None:
    """The device number of a block special file (any alias of it); None for anything else."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return devno(st.st_rdev) if stat.S_ISBLK(st.st_mode) else None


def disk_dir(number: str) -> Path | None:
    """The sysfs directory of the whole disk of a device: a partition's queue is its disk's."""
    found = device_dir(number)
    if found is not None and (found / "partition").exists():
        return found.parent
    return found


def queue_dir(device: str) -> Path | None:
    """/sys/block/<disk>/queue of a device node (a partition's disk holds the queue)."""
    number = node_number(device)
    disk = disk_dir(number) if number else None
    queue = disk / "queue" if disk is not None else None
    return queue if queue is not None and queue.is_dir() else None


def parse_scheduler(text: str) -> str | None:
    """The active scheduler of a queue/scheduler file: 'none [mq-deadline] kyber' ->
    'mq-deadline'; a file without brackets names the only one."""
    m = re.search(r"\[([^\]]+)\]", text)
    return m.group(1) if m else (text.strip() or None)


def read_scheduler(device: str) -> tuple[str | None, tuple[str, ...]]:
    """(current scheduler, available ones) of a device node; (None, ()) when it has none."""
    queue = queue_dir(device)
    text = (read(queue / "scheduler") or "") if queue else ""
    available = tuple(s.strip("[]") for s in text.split())
    return parse_scheduler(text) if text else None, available


def read_readahead(device: str) -> int | None:
    """Read-ahead of a device node in 512-byte sectors (what blockdev --getra reports)."""
    queue = queue_dir(device)
    text = read(queue / "read_ahead_kb") if queue else None
    return int(text) * 2 if text is not None and text.isdigit() else None


def logical_block_size(number: str) -> int | None:
    """The logical block size (bytes) of the device 'major:minor': O_DIRECT's alignment unit."""
    disk = disk_dir(number)
    text = read(disk / "queue" / "logical_block_size") if disk is not None else None
    return int(text) if text is not None and text.isdigit() else None
