"""Does a directory's filesystem accept O_DIRECT? Asked by `plan validate` before a run."""

from __future__ import annotations

import errno
import os

from disklab.core.hostinfo import filesystem_of


def refusal_message(directory: str, err: OSError) -> str:
    fs = filesystem_of(directory)
    where = f"{fs.get('fstype', 'the filesystem')} at {fs.get('mountpoint', directory)}"
    return (f"{where} refuses O_DIRECT ({errno.errorcode.get(err.errno or 0, err.errno)}): "
            "use direct = false, or a directory on a disk filesystem")


def direct_io_refusal(directory: str) -> str | None:
    """None when O_DIRECT works in `directory`, else why not (naming the filesystem)."""
    try:
        fd = os.open(directory, os.O_TMPFILE | os.O_RDWR | os.O_DIRECT, 0o600)
    except OSError as e:
        if e.errno in (errno.EOPNOTSUPP, errno.EISDIR):  # no O_TMPFILE here: try a named file
            return _named_probe(directory)
        if e.errno == errno.EINVAL:
            return refusal_message(directory, e)
        return None  # not ours to judge (permissions...): the run will say
    os.close(fd)
    return None


def _named_probe(directory: str) -> str | None:
    path = os.path.join(directory, f".disklab-probe-{os.getpid()}")
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_DIRECT, 0o600)
    except OSError as e:
        return refusal_message(directory, e) if e.errno == errno.EINVAL else None
    os.close(fd)
    os.unlink(path)
    return None
