"""The engine's one accounting loop, over whichever I/O path a run takes (psync.py, aio.py,
uring.py), as fio's jobs run one loop over the engines behind its `ioengine_ops`.

Why one loop: what a completion means (counted only when it moved the whole block; a negative
result is the errno, a short one a full filesystem or a shrunk file, both ending the run with
what completed), its latency (from the request's preparation to the reap that returned it, as
fio's), the latency samples (every request up to a cap, then every 2nd, 4th...: the mean stays
exact from a running sum), the next block of the stream's order and the halt are the same on
every path. A path only moves requests: `submit_reap(n)` hands the kernel the batch the loop
wrote into `batch_slot[:n]` / `batch_offset[:n]` and returns the (slot, result) pairs it reaped.

The pread/pwrite and io_uring paths run this loop in C (engine/_native.c, through
engine/native.py), statement for statement: this one is the reference the C one is tested
against (tests/unit/test_engine_native.py), the loop of the AIO path, and the fallback where the
extension was not built. It too is written for speed (bench figure 4 compares it with fio): no
function call and no allocation per request beyond the path's call per batch (or per part of a
long batch, `IoPath.split`); the
completions come as a zip of two lists (slots, results) that the path copies out of the
kernel's memory in one C call each, not request by request (zip: 35 ns a pair here, where
strict=True costs 200 ns more a batch, much at queue depth 1, one request a batch).
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

# Per slot, in shared memory (worker._SlotMemory): the counters the engine process reads live,
# then what it reads at the end. A slot's fields fill 128 bytes of their own (two cache lines,
# no neighbour's: no false sharing between processes on different CPUs).
(OPS, LAT_SUM, LAT_MAX, STARTED, SAMPLES, ERR_KIND, ERR_ERRNO, ERR_N, ENDED) = range(9)
FIELDS = 16
NO_ERROR, OS_ERROR, SHORT = 0, 1, 2


class IoPath(Protocol):
    """What an I/O path gives the loop (fio's ioengine_ops: queue, commit, getevents, event).

    `depth`: requests it keeps in flight at most; `batch_slot` / `batch_offset`: `depth` entries
    the loop fills with the next requests (a slot is 0..depth-1 and owns its buffer block for
    the whole run; the offset is in bytes); `inflight`: requests submitted and not yet reaped.
    `submit_reap(n)` submits the first n entries and returns (slot, result) pairs of at least
    one completion, or none when its wait timed out (so that a halt is seen); a result is the
    bytes moved or -errno (a request the kernel refused to take comes back so). OSError: the path
    itself failed (its wait refused); what is still in flight is abandoned to `close()`.
    `split`: when the loop has prepared this many requests of one batch it calls `submit(split)`
    (the first entries, handed to the kernel without a wait) and goes on with the batch's rest,
    so that a long batch reaches the device in parts as its completions are counted, not as one
    convoy (bench/README.md, figure 4); a path without such a call has `split` > `depth`."""

    depth: int
    split: int
    batch_slot: list[int]
    batch_offset: list[int]
    inflight: int

    def submit_reap(self, n: int) -> Iterable[tuple[int, int]]: ...

    def submit(self, n: int) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class LoopShare:
    """Which requests one loop issues and where it counts them: the byte offsets first,
    first + step, ... of the stream's order (wrapping around when time-based); its counters in
    slot `counter`'s shared entries, up to `samples` latency samples from `lat_at` of the
    shared sample array."""

    order: Sequence[int]
    first: int
    step: int
    wrap: bool
    block_size: int
    counter: int
    samples: int
    lat_at: int


def fill(path: IoPath, share: LoopShare, halt: memoryview) -> tuple[int, int]:
    """The first batch: one request per slot while the order lasts. (requests, next position)."""
    order, blocks, p, n = share.order, len(share.order), share.first, 0
    while n < path.depth and not halt[0]:
        if p >= blocks:
            if not share.wrap:
                break
            p %= blocks
        path.batch_slot[n] = n
        path.batch_offset[n] = order[p]
        p += share.step
        n += 1
    return n, p


def run(path: IoPath, share: LoopShare, fields: list[memoryview], lat_out: memoryview,
        halt: memoryview) -> None:
    """Issue the share through `path` until its blocks are done (or, wrapping, until halted),
    counting each completion into the shared fields; a failure is recorded (the first of the
    slot's), halts the whole run and ends this loop once what is in flight has come back."""
    ti, bs, order, step = share.counter, share.block_size, share.order, share.step
    blocks, wrap = len(order), share.wrap
    limit = share.samples - path.depth  # halved before a batch could overflow it
    clock = time.perf_counter_ns
    next_slot, next_offset, submit_reap = path.batch_slot, path.batch_offset, path.submit_reap
    submit, split = path.submit, path.split
    ops_field = fields[OPS]
    lat = array("q")
    keep = lat.append
    mask = done_ops = lat_sum = lat_max = 0

    def fail(kind: int, code: int, n: int = 0) -> None:
        if fields[ERR_KIND][ti] == NO_ERROR:
            fields[ERR_ERRNO][ti], fields[ERR_N][ti], fields[ERR_KIND][ti] = code, n, kind
        halt[0] = 1

    fields[STARTED][ti] = clock()
    n, p = fill(path, share, halt)
    sub = [clock()] * path.depth
    try:
        while n or path.inflight:
            done = submit_reap(n)
            now = clock()
            n = 0
            last = 0 if halt[0] else blocks  # halted: no request after these (p >= 0)
            for slot, res in done:
                if res != bs:
                    if res < 0:
                        fail(OS_ERROR, -res)
                    else:
                        fail(SHORT, 0, res)
                    last = 0
                    continue
                d = now - sub[slot]
                done_ops += 1
                lat_sum += d
                if d > lat_max:
                    lat_max = d
                if not done_ops & mask:
                    keep(d)
                if p >= last:  # the order's end, or halted
                    if not (wrap and last):
                        continue
                    p %= blocks  # a time-based run wraps around the file
                next_slot[n] = slot
                next_offset[n] = order[p]
                sub[slot] = now  # the request's clock starts as it is prepared (fio's too)
                p += step
                n += 1
                if n == split:  # a long batch: its first requests go to the device now
                    submit(n)
                    n = 0
            ops_field[ti] = done_ops
            if len(lat) > limit:  # a batch adds at most depth samples: never past the space
                lat = lat[1::2]  # keep the samples of every 2nd sampled request
                keep = lat.append
                mask = mask * 2 + 1
    except OSError as e:
        fail(OS_ERROR, e.errno or 5)  # EIO when the error carries none
    finally:
        # the I/O ends at the last completion reaped: a path's teardown (io_destroy waits for an
        # RCU grace period, ~30 ms) is not timed, as fio's clock stops at its last completion
        fields[ENDED][ti] = clock()
        fields[LAT_SUM][ti] = lat_sum
        fields[LAT_MAX][ti] = lat_max
        kept = min(len(lat), share.samples)
        lat_out[share.lat_at:share.lat_at + kept] = lat[:kept]
        fields[SAMPLES][ti] = kept
