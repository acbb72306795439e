"""What the filesystem under a directory allows, and errors told in its terms.

`direct_io_refusal` is asked by `plan validate` before a run, so that a filesystem that refuses
O_DIRECT (ramfs; tmpfs before Linux 6.6; some FUSE filesystems) is named up front instead of
failing a case hours into a session. The engine words its own errors with the same helpers.
"""

from __future__ import annotations

import contextlib
import errno
import mmap
import os
import shutil

from disklab.core.system import sysfs
from disklab.core.system.mountinfo import filesystem_of
from disklab.core.vocab.units import human_bytes

PROBE_BYTES = 4096  # one aligned block: every device's logical block size divides it


def _where(directory: str) -> str:
    fs = filesystem_of(directory)
    if not fs:
        return directory
    return f"{fs['fstype']} at {fs['mountpoint']}"


def _code(err: OSError) -> str:
    return errno.errorcode.get(err.errno or 0, str(err.errno))


def refusal_message(directory: str, err: OSError) -> str:
    """'tmpfs at /tmp refuses O_DIRECT (EINVAL); use direct = false or a disk filesystem'."""
    return (f"{_where(directory)} refuses O_DIRECT ({_code(err)}); "
            "use direct = false or a disk filesystem")


def direct_io_refusal(directory: str) -> str | None:
    """None when O_DIRECT works in `directory`, else why not (naming the filesystem).

    Opens an unnamed file there (O_TMPFILE, or a named one where that is not supported) with
    O_DIRECT and writes one aligned block: some filesystems accept the open and refuse the I/O.
    Other failures (a missing directory, permissions) are not ours to judge: None.
    """
    try:
        fd = os.open(directory, os.O_TMPFILE | os.O_RDWR | os.O_DIRECT, 0o600)
        path = None
    except OSError as e:
        # EINVAL: O_DIRECT refused, or (on some filesystems) O_TMPFILE: a named file tells
        if e.errno not in (errno.EINVAL, errno.EOPNOTSUPP, errno.EISDIR):
            return None
        path = os.path.join(directory, f".disklab-probe-{os.getpid()}-{os.urandom(4).hex()}")
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR | os.O_DIRECT, 0o600)
        except OSError as e2:
            if e2.errno != errno.EINVAL:
                return None
            with contextlib.suppress(OSError):  # the refused open has created it all the same
                os.unlink(path)
            return refusal_message(directory, e2)
    buf = mmap.mmap(-1, PROBE_BYTES)
    try:
        os.pwrite(fd, buf, 0)
    except OSError as e:
        return refusal_message(directory, e) if e.errno == errno.EINVAL else None
    finally:
        buf.close()
        os.close(fd)
        if path is not None:
            with contextlib.suppress(OSError):
                os.unlink(path)
    return None


def logical_block_size(path: str) -> int | None:
    """The logical block size of the device holding `path` (O_DIRECT's alignment unit)."""
    try:
        dev = os.stat(path).st_dev
    except OSError:
        return None
    return sysfs.logical_block_size(sysfs.devno(dev))


def explain(err: OSError, path: str, *, direct: bool = False, block_size: int | None = None,
            opening: bool = False) -> str:
    """One sentence a user can act on, for an OSError the engine met on `path`."""
    directory = os.path.dirname(os.path.abspath(path))
    code = err.errno
    if code == errno.EINVAL and direct:
        if opening:
            return refusal_message(directory, err)
        refusal = direct_io_refusal(directory)
        if refusal:
            return refusal
        lbs = logical_block_size(path)
        need = f"a multiple of the device's logical block size ({lbs} bytes)" if lbs else (
            "a multiple of the device's logical block size")
        return (f"{path}: {_where(directory)} refused an O_DIRECT transfer of {block_size} "
                f"bytes (EINVAL); the block size must be {need}")
    if code in (errno.ENOSPC, errno.EDQUOT):
        try:
            free = shutil.disk_usage(directory).free
        except OSError:
            free = None
        left = f"{human_bytes(free)} ({free} bytes) free" if free is not None else "free unknown"
        what = "no space left" if code == errno.ENOSPC else "disk quota exceeded"
        return f"{what} in {directory} ({_where(directory)}): {left}"
    if code == errno.ENOENT:
        if not os.path.isdir(directory):
            return f"directory {directory} does not exist"
        return f"{path} does not exist (read and rewrite modes need a --prepare run first)"
    if code == errno.EROFS:
        return f"{path}: {_where(directory)} is mounted read-only"
    text = err.strerror or str(err)
    return f"{path}: {text} ({_code(err)})"
