"""The pread/pwrite path for loop.run (loop.IoPath), as fio's psync engine: one request in flight,
its call both the submission and the completion. A worker process runs one loop a slot, each in
a thread of its own (worker.py: a process per CPU), so queue depth N keeps N calls in flight.

Used for buffered I/O (Linux runs asynchronous I/O on the page cache synchronously) and at queue
depth 1, where one call a request is the least a request can cost (engine/iopath.py)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence


class PsyncPath:
    """One slot's synchronous calls into its block of the worker's buffer: preadv into it (no
    bytes object per call, as os.pread would make), pwrite from it."""

    depth = 1
    inflight = 0  # a call returns with its request done
    submit_reap: Callable[[Sequence[int], Sequence[int]], tuple[list[int], list[int]]]

    def __init__(self, fd: int, write: bool, block: memoryview):
        io, arg = (os.pwrite, block) if write else (os.preadv, [block])
        slot, results, none = [0], [0], ([], [])

        def submit_reap(slots: Sequence[int], offsets: Sequence[int]
                        ) -> tuple[list[int], list[int]]:
            """The call itself; an OSError (the errno) is the run's, as the loop takes it.
            A closure over its arguments and its two one-entry lists: at queue depth 1 the
            time between two calls is what the device waits for, so nothing is looked up or
            made in it."""
            if not slots:
                return none
            results[0] = io(fd, arg, offsets[0])
            return slot, results

        self.submit_reap = submit_reap

    def close(self) -> None:
        """Nothing to release: the buffer is the worker's."""
