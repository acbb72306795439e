"""The engine's accounting loop in C where it was built (`_native.c`), engine/loop.py's `run`
where it was not: the same requests counted into the same shared memory.

Why a loop in C: at 4 KiB the interpreter's work between a request's completion and the next
request is in series with the device (bench/README.md, figure 4: the engine at 0.88-0.96 of fio
for that alone, on a 2-vCPU VM). The extension is optional at install (setup.py): a
machine without a C compiler gets the Python loop, and the run's summary says which loop ran
("loop"). The pread/pwrite and io_uring paths run in C; Linux AIO, the path for machines that
forbid io_uring, stays in Python.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Any

from disklab.engine import loop

try:
    import disklab.engine._native as _native
except ModuleNotFoundError as e:  # not built: no C compiler when the package was installed
    if e.name != "disklab.engine._native":
        raise
    _native = None  # an extension that is there but does not load (a missing symbol) raises

if _native is not None and (_native.FIELDS, _native.ENDED, _native.SHORT, _native.SAMPLES) != (
        loop.FIELDS, loop.ENDED, loop.SHORT, loop.SAMPLES):  # built from another _native.c
    raise ImportError("disklab.engine._native was built for another layout of the shared "
                      "memory than engine/loop.py's: rebuild it (make setup)")

ORDER_RANGE, ORDER_TABLE, ORDER_GRID = 0, 1, 2


def which(io_path: str, asked: str = "auto") -> str:
    """The loop a run on I/O path `io_path` takes here, `asked` being the job's "auto" or
    "python": "C" or "Python" (the summary's "loop")."""
    c = _native is not None and io_path in ("psync", "uring") and asked != "python"
    return "C" if c else "Python"


def run(path: loop.IoPath, share: loop.LoopShare, fields: list[memoryview], lat_out: memoryview,
        halt: memoryview, python: bool = False) -> None:
    """loop.run(path, share, ...), in C when the extension was built, the path has a native
    form (`path.native`: psync.PsyncPath, uring.UringPath) and `python` is not asked for."""
    form = getattr(path, "native", None)
    if _native is None or form is None or python:
        loop.run(path, share, fields, lat_out, halt)
        return
    args = _share(share, fields, lat_out, halt)
    if form[0] == "psync":
        _native.run_psync(args, *form[1:])
    else:
        path.inflight = _native.run_uring(args, form[1])


def _share(share: loop.LoopShare, fields: list[memoryview], lat_out: memoryview,
           halt: memoryview) -> tuple[Any, ...]:
    """The share as run_psync / run_uring read it: the order's kind and tables, the share's
    numbers, and the shared memory whole (slot `counter`'s fields at counter * FIELDS)."""
    base = fields[loop.OPS]
    if base.strides != (loop.FIELDS * 8,) or base.obj is None:
        raise ValueError("fields: strided views of one int64 buffer, FIELDS apart")
    return (*_order(share.order), share.first, share.step, share.wrap, share.block_size,
            share.counter, share.samples, share.lat_at, memoryview(base.obj), lat_out, halt)


def _order(order: Sequence[int]) -> tuple[Any, ...]:
    """(kind, n, scale, m, q, grid, table 1-3) for worker.block_order's three kinds; any other
    sequence as a table of its offsets."""
    if isinstance(order, range) and order.start == 0 and order.step > 0:
        return ORDER_RANGE, len(order), order.step, 0, 0, 0, None, None, None
    if isinstance(order, array) and order.typecode == "q":
        return ORDER_TABLE, len(order), 1, 0, 0, 0, order, None, None
    grid = getattr(order, "grid", None)
    if grid is not None:  # worker.GridOrder
        return (ORDER_GRID, len(order), order.scale, order.m, order.q, grid, order.p, order.pq,
                order.tail)
    return ORDER_TABLE, len(order), 1, 0, 0, 0, array("q", order), None, None
