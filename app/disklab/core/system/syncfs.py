"""syncfs(2): write back one filesystem's dirty data and metadata, not every mount's (Python
has no os.syncfs). The runner syncs a case's layout before its measured step, the plan check
after its O_DIRECT probe, and the file-tree tool between its phases."""

from __future__ import annotations

import ctypes
import os

_libc = ctypes.CDLL(None, use_errno=True)


def syncfs(path: str) -> None:
    """syncfs(2) on the filesystem holding `path` (Python has no os.syncfs): only this
    filesystem's dirty data, not every mount's, is written inside a timing."""
    fd = os.open(path, os.O_RDONLY)
    try:
        if _libc.syncfs(fd) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), path)
    finally:
        os.close(fd)
