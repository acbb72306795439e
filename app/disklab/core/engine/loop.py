"""The engine's one accounting loop, over whichever I/O path a run takes (psync.py, aio.py,
uring.py), as fio's jobs run one loop over the engines behind its `ioengine_ops`.

Why one loop: what a completion means (counted only when it moved the whole block; a negative
result is the errno, a short one a full filesystem or a shrunk file, both ending the run with
what completed), its latency (from the request's preparation to the reap that returned it, as
fio's), the latency samples (every request up to a cap, then every 2nd, 4th...: the mean stays
exact from a running sum), the next block of the stream's order and the halt are the same on
every path. A path only moves requests: `submit_reap(slots, offsets)` hands the kernel a
batch and returns the (slots, results) it reaped.

The loop is written for speed, because the bench compares it with fio at 4 KiB (figure 4),
and at queue depth 32 on two CPUs the interpreter's work per request is the figure: it counts a
batch at a time, with C loops over lists (map, sum, max, slices of the order), not request by
request in bytecode; the path copies the completions out of the kernel's memory in one C call
per list and writes a batch into it likewise (bench/README.md, "the engine's work per
request").
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable, Sequence
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

    `depth`: requests it keeps in flight at most (a slot is 0..depth-1 and owns its buffer
    block for the whole run); `inflight`: requests submitted and not yet reaped.
    `submit_reap(slots, offsets)` submits one request per slot at that byte offset (none: only
    wait) and returns (slots, results) of at least one completion, two lists of equal length,
    or two empty ones when its wait timed out (so that a halt is seen); a result is the bytes
    moved or -errno (a request the kernel refused to take comes back so). OSError: the path
    itself failed (its wait refused); what is still in flight is abandoned to `close()`."""

    depth: int
    inflight: int

    def submit_reap(self, slots: Sequence[int], offsets: Sequence[int]
                    ) -> tuple[Sequence[int], Sequence[int]]: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Share:
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


def take(share: Share, p: int, count: int) -> tuple[Sequence[int], int]:
    """Up to `count` next offsets of the share from position p, and the position after them:
    one slice of the order (C speed); where the order ends, fewer (a size-based run) or around
    its end (a time-based run wraps around the file)."""
    order, step = share.order, share.step
    end = p + count * step
    if not share.wrap or end <= len(order):
        taken = order[p:end:step]  # a slice stops at the order's end
        return taken, p + len(taken) * step
    blocks = len(order)
    return [order[(p + i * step) % blocks] for i in range(count)], end % blocks


def _failed(slots: Sequence[int], results: Sequence[int], bs: int,
            fail: Callable[[int, int, int], None]) -> list[int]:
    """A batch with a failed request: each failure recorded (the slot's first kept) and the run
    halted; the slots whose requests moved their whole block, to be counted."""
    good = []
    for slot, res in zip(slots, results, strict=True):
        if res == bs:
            good.append(slot)
        elif res < 0:
            fail(OS_ERROR, -res, 0)
        else:
            fail(SHORT, 0, res)
    return good


def run(path: IoPath, share: Share, fields: list[memoryview], lat_out: memoryview,
        halt: memoryview) -> None:
    """Issue the share through `path` until its blocks are done (or, wrapping, until halted),
    counting each completion into the shared fields; a failure is recorded (the first of the
    slot's), halts the whole run and ends this loop once what is in flight has come back.

    Latency: from the request's preparation to the reap that returned it (fio's too); samples:
    every request's, then every 2nd, 4th... by a running count (the mean stays exact from the
    sum). A batch of several completions is counted at once by C loops over lists (map, sum,
    max, a slice of the samples, a slice of the order for the next offsets), not request by
    request in bytecode; a batch of one (queue depth 1 always) by the few scalar steps that
    cost less than setting those loops up. The slots reaped are resubmitted in that order."""
    ti, bs, depth, order, step = share.counter, share.block_size, path.depth, share.order, \
        share.step
    blocks, limit = len(order), share.samples - depth  # halved before a batch could overflow
    clock, submit_reap, ops_field = time.perf_counter_ns, path.submit_reap, fields[OPS]
    lat, one = array("q"), [0]
    mask = done_ops = lat_sum = lat_max = 0

    def fail(kind: int, code: int, n: int) -> None:
        if fields[ERR_KIND][ti] == NO_ERROR:
            fields[ERR_ERRNO][ti], fields[ERR_N][ti], fields[ERR_KIND][ti] = code, n, kind
        halt[0] = 1

    fields[STARTED][ti] = clock()
    offsets, p = take(share, share.first, 0 if halt[0] else depth)
    slots: Sequence[int] = range(len(offsets))
    sub = [clock()] * depth  # when each slot's request was prepared
    try:
        while slots or path.inflight:
            done, results = submit_reap(slots, offsets)
            now = clock()
            k = len(done)
            if k == 1 and results[0] == bs:
                d = now - sub[done[0]]
                lat_sum += d
                if d > lat_max:
                    lat_max = d
                done_ops += 1
                if not done_ops & mask:
                    lat.append(d)
            elif k:
                if results.count(bs) != k:
                    done = _failed(done, results, bs, fail)
                    k = len(done)
                ds = list(map(now.__sub__, map(sub.__getitem__, done)))
                lat_sum += sum(ds)
                lat_max = max(lat_max, max(ds, default=0))
                lat.extend(ds[(-(done_ops + 1)) & mask::mask + 1] if mask else ds)
                done_ops += k
            ops_field[ti] = done_ops
            if len(lat) > limit:  # a batch adds at most depth samples: never past the space
                lat = lat[1::2]  # keep the samples of every 2nd sampled request
                mask = mask * 2 + 1
            if k == 1 and p < blocks and not halt[0]:
                one[0] = order[p]
                offsets, slots, p = one, done, p + step
            else:
                offsets, p = take(share, p, 0 if halt[0] else k)
                slots = done if len(offsets) == k else done[:len(offsets)]
            for s in slots:
                sub[s] = now  # the request's clock starts as it is prepared (fio's too)
    except OSError as e:
        fail(OS_ERROR, e.errno or 5, 0)  # EIO when the error carries none
    finally:
        # the I/O ends at the last completion reaped: a path's teardown (io_destroy waits for an
        # RCU grace period, ~30 ms) is not timed, as fio's clock stops at its last completion
        fields[ENDED][ti] = clock()
        fields[LAT_SUM][ti] = lat_sum
        fields[LAT_MAX][ti] = lat_max
        kept = min(len(lat), share.samples)
        lat_out[share.lat_at:share.lat_at + kept] = lat[:kept]
        fields[SAMPLES][ti] = kept
