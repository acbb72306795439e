"""The flush between the phases: what the RAID study did before `rm -Rf` ("measures to ensure
data and metadata buffers were flushed out of server and RAID caches"), as far as this process
may: sync, drop the page cache, dentries and inodes (root only), and a flush of the device's
volatile write cache (root only: fsync on the block device node sends the device a FLUSH).

Each step says whether it was done and why not, so the transcript tells the reader what the
delete timing started from.
"""

from __future__ import annotations

import os
from pathlib import Path

from disklab.core.system.syncfs import syncfs

DROP_CACHES = "/proc/sys/vm/drop_caches"


def device_of(path: str) -> tuple[str | None, str]:
    """The block device node holding `path` and its write cache mode ('write back', 'write
    through', or '' when unknown); (None, why) when the filesystem has no block device of its
    own (tmpfs, btrfs's anonymous device numbers, overlay)."""
    st = os.stat(path)
    sys_dev = Path(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
    if not sys_dev.exists():
        return None, f"device {os.major(st.st_dev)}:{os.minor(st.st_dev)} is not a block device"
    real = sys_dev.resolve()
    name = real.name
    queue = real / "queue"
    if not queue.exists() and (real.parent / "queue").exists():  # a partition
        queue = real.parent / "queue"
    try:
        mode = (queue / "write_cache").read_text().strip()
    except OSError:
        mode = ""
    return f"/dev/{name}", mode


def flush(path: str) -> tuple[list[str], list[str]]:
    """Flush what can be flushed for the filesystem holding `path`: (done, skipped), one phrase
    each. Never raises: a flush that cannot be done is said, not fatal."""
    done: list[str] = []
    skipped: list[str] = []
    syncfs(path)
    os.sync()
    done.append("sync")
    root = os.geteuid() == 0
    if root:
        try:
            Path(DROP_CACHES).write_text("3\n")
            done.append("dropped the page cache, dentries and inodes (drop_caches = 3)")
        except OSError as e:
            skipped.append(f"drop_caches: {e.strerror or e}")
    else:
        skipped.append("caches not dropped: not root (the delete may find metadata in memory)")
    try:
        device, mode = device_of(path)
    except OSError as e:
        device, mode = None, f"cannot stat {path}: {e.strerror or e}"
    if device is None:
        skipped.append(f"no device write cache flush: {mode}")
    elif not root:
        skipped.append(f"no write cache flush of {device}: not root")
    else:
        try:
            dev_fd = os.open(device, os.O_RDONLY)
            try:
                os.fsync(dev_fd)
            finally:
                os.close(dev_fd)
            done.append(f"flushed the write cache of {device}"
                        + (f" ({mode})" if mode else ""))
        except OSError as e:
            skipped.append(f"write cache flush of {device}: {e.strerror or e}")
    return done, skipped
