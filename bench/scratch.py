"""A scratch ext4 filesystem for benchmarks: a file on the machine's disk on a loop device attached
with --direct-io=on (without it O_DIRECT on the loop becomes page-cache I/O on the backing file and
'direct' figures are memory speed). Always detached and removed afterwards."""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path


def _run(argv: list[str]) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout.strip()


@contextlib.contextmanager
def scratch_ext4(size: str = "6G", base: str = "/var/tmp", options: str = "") -> Iterator[Path]:
    """Yields the mountpoint of a fresh ext4 on a direct-io loop device; `options` are mount
    options ("noatime": reads then write nothing, so a device's write counter is DiskLab's)."""
    if os.geteuid() != 0:
        raise SystemExit("bench needs root (loop devices, mkfs, mount)")
    work = Path(tempfile.mkdtemp(prefix="disklab-bench-", dir=base))
    image, mnt = work / "scratch.img", work / "mnt"
    mnt.mkdir()
    _run(["truncate", "-s", size, str(image)])
    device = _run(["losetup", "--find", "--show", "--direct-io=on", str(image)])
    try:
        _run(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", device])
        _run(["mount", *(["-o", options] if options else []), device, str(mnt)])
        try:
            yield mnt
        finally:
            # a tool's io_uring with registered files (fio's in figure 4) keeps the filesystem
            # busy for a moment after the tool exits, until a kernel worker frees the ring
            settle = time.monotonic() + 3
            while (subprocess.run(["umount", str(mnt)], check=False).returncode
                   and os.path.ismount(mnt) and time.monotonic() < settle):
                time.sleep(0.2)
    finally:
        subprocess.run(["losetup", "-d", device], check=False)
        image.unlink(missing_ok=True)
        mnt.rmdir()
        work.rmdir()
