"""Which I/O path a run takes: the pread/pwrite workers (psync), Linux native AIO (aio.py) or
io_uring (uring.py), and why, in a sentence the summary carries ("io", "io_why").

Why a choice at all: at queue depth 1 one call at a time is what every path does, and pread is
the shortest; buffered asynchronous I/O is not asynchronous on Linux (AIO on the page cache runs
inside io_submit); O_DIRECT at queue depth > 1 is where one process keeping the whole queue in
flight beats a thread per request. There, io_uring (one system call a batch) before AIO (two),
measured in bench figure 4: see bench/README.md."""

from __future__ import annotations

import errno

from disklab.engine import aio, uring

PATHS = ("auto", "psync", "aio", "uring")
ASYNC_PATHS = ("aio", "uring")  # one process keeps many requests in flight; O_DIRECT only


def choose(io: str, direct: bool, queue_depth: int, streams: int = 1) -> tuple[str, str]:
    """(the I/O path a run takes, why): 'uring', 'aio' or 'psync'. `io` is the user's choice
    (one of PATHS; a forced asynchronous path on a buffered run is refused before this, by the
    command line's check). A forced path that cannot run here raises OSError with the reason;
    auto falls back to the next path and says why."""
    if io == "psync":
        return "psync", "asked for (io = psync)"
    if io in ASYNC_PATHS:
        problem = _unavailable(io, queue_depth, streams)
        if problem:
            raise OSError(errno.ENOSYS, problem)
        return io, f"asked for (io = {io})"
    if not direct:
        return "psync", "buffered I/O: Linux runs asynchronous I/O on the page cache synchronously"
    if queue_depth < 2:
        return "psync", "queue depth 1: one call at a time"
    no_uring = _unavailable("uring", queue_depth, streams)
    if not no_uring:
        return "uring", "O_DIRECT at queue depth > 1"
    no_aio = _unavailable("aio", queue_depth, streams)
    if not no_aio:
        return "aio", f"O_DIRECT at queue depth > 1; not io_uring: {no_uring}"
    return "psync", f"{no_uring}; {no_aio}"


def _unavailable(path: str, queue_depth: int, streams: int) -> str | None:
    if path == "uring":
        return uring.unavailable()
    return aio.unavailable(queue_depth, queue_depth * streams)
