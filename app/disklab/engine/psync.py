"""The pread/pwrite path for loop.run (loop.IoPath), as fio's psync engine: one request in flight,
its call both the submission and the completion. A worker process runs one loop a slot, each in
a thread of its own (worker.py: a process per CPU), so queue depth N keeps N calls in flight.

Used for buffered I/O (Linux runs asynchronous I/O on the page cache synchronously) and at queue
depth 1, where one call a request is the least a request can cost (engine/iopath.py)."""

from __future__ import annotations

import os
from collections.abc import Callable


class PsyncPath:
    """One slot's synchronous calls into its block of the worker's buffer: preadv into it (no
    bytes object per call, as os.pread would make), pwrite from it."""

    depth = 1
    split = 2  # never reached: a batch is one request (loop.IoPath)
    inflight = 0  # a call returns with its request done
    submit_reap: Callable[[int], tuple[tuple[int, int], ...]]  # made in __init__

    def __init__(self, fd: int, write: bool, block: memoryview):
        self.batch_slot, self.batch_offset = [0], [0]
        self.native = ("psync", fd, write, block)  # what native.run hands the C loop
        io, arg = (os.pwrite, block) if write else (os.preadv, [block])
        offsets = self.batch_offset

        def submit_reap(n: int) -> tuple[tuple[int, int], ...]:
            """The call itself; an OSError (the errno) is the run's, as the loop takes it.
            A closure over its arguments: at queue depth 1 the time between two calls is
            what the device waits for, so no attribute is looked up in it, and the one
            completion is one pair (a zip of two lists costs 2.5 times as much)."""
            if not n:
                return ()
            return ((0, io(fd, arg, offsets[0])),)

        self.submit_reap = submit_reap

    def submit(self, n: int) -> None:
        """Never called (split > depth): a call here is its submission and completion both."""
        raise NotImplementedError("a pread/pwrite slot submits only as it waits")

    def close(self) -> None:
        """Nothing to release: the buffer is the worker's."""
