"""The pread/pwrite path for loop.run (loop.IoPath), as fio's psync engine: one request in flight,
its call both the submission and the completion. A worker process runs one loop a slot, each in
a thread of its own (worker.py: a process per CPU), so queue depth N keeps N calls in flight.

Used for buffered I/O (Linux runs asynchronous I/O on the page cache synchronously) and at queue
depth 1, where one call a request is the least a request can cost (engine/iopath.py)."""

from __future__ import annotations

import os


class PsyncPath:
    """One slot's synchronous calls into its block of the worker's buffer: preadv into it (no
    bytes object per call, as os.pread would make), pwrite from it."""

    depth = 1
    inflight = 0  # a call returns with its request done

    def __init__(self, fd: int, write: bool, block: memoryview):
        self.batch_slot, self.batch_offset = [0], [0]
        self._fd = fd
        self._io, self._arg = (os.pwrite, block) if write else (os.preadv, [block])
        self._slots, self._results = [0], [0]

    def submit_reap(self, n: int) -> tuple[list[int], list[int]]:
        """The call itself; an OSError (the errno) is the run's, as the loop takes it."""
        if not n:
            return [], []
        self._results[0] = self._io(self._fd, self._arg, self.batch_offset[0])
        return self._slots, self._results

    def close(self) -> None:
        """Nothing to release: the buffer is the worker's."""
