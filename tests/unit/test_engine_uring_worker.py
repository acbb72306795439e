"""What only the engine's io_uring path does, on real files in a temporary directory (no device):
the structures match the kernel's, a ring maps its queues as the kernel sized them, a halted
time-based run stops at once. What both asynchronous paths do is
tests/unit/test_engine_async_worker.py's (and, on a real ext4, tests/integration/
test_engine_async.py's). Skipped, with the reason, where this machine forbids io_uring."""

from __future__ import annotations

import ctypes
import mmap
import os
import threading
import time
from collections.abc import Iterable
from pathlib import Path

import pytest

from disklab.core.system.fsprobe import direct_io_refusal
from disklab.engine import iopath, loop, uring
from disklab.engine.loop import FIELDS
from disklab.engine.report import summary
from disklab.engine.worker import Job, Runner, aligned_buffer, block_order, prepare_file

KiB = 1024
WHY_NOT = uring.unavailable()
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=str(WHY_NOT))


def test_the_structures_have_the_kernels_layout() -> None:
    """include/uapi/linux/io_uring.h: io_uring_params is 120 bytes with sq_off at byte 40 and
    cq_off at 80; io_uring_getevents_arg 24 bytes with ts at 16."""
    assert ctypes.sizeof(uring.Params) == 120
    assert uring.Params.sq_off.offset == 40 and uring.Params.cq_off.offset == 80
    assert ctypes.sizeof(uring.GeteventsArg) == 24 and uring.GeteventsArg.ts.offset == 16


def test_a_ring_maps_its_queues_as_the_kernel_sized_them() -> None:
    ring = uring.Ring(5)
    try:
        p = ring.params
        assert p.sq_entries == 8 and p.cq_entries == 16  # rounded up to a power of two, CQ 2x
        assert ring.sq[p.sq_off[uring._SQ_MASK] // 4] == 7
        assert ring.cq[p.cq_off[uring._CQ_MASK] // 4] == 15
        assert len(ring.sqes) == 8 * uring._SQE_WORDS
    finally:
        ring.close()
    assert ring.fd == -1


def test_auto_takes_io_uring_for_direct_io_at_queue_depth_above_1() -> None:
    assert iopath.choose("auto", direct=True, queue_depth=8) == (
        "uring", "O_DIRECT at queue depth > 1")
    assert iopath.choose("uring", direct=True, queue_depth=1) == (
        "uring", "asked for (io = uring)")
    assert iopath.choose("auto", direct=True, queue_depth=1)[0] == "psync"
    assert iopath.choose("auto", direct=False, queue_depth=8)[0] == "psync"


@pytest.fixture
def direct_dir(tmp_path: Path) -> Path:
    if direct_io_refusal(str(tmp_path)):
        pytest.skip(f"{tmp_path} refuses O_DIRECT")
    return tmp_path


def test_a_halt_ends_a_time_based_ring_run_at_once(direct_dir: Path) -> None:
    path = str(direct_dir / "f")
    assert prepare_file(path, 1024 * KiB, direct=True)
    runner = Runner(Job("randread", [path], 4 * KiB, 1024 * KiB, queue_depth=8, direct=True,
                        runtime=60.0, io="uring"))
    runner.open()
    try:
        threading.Timer(0.5, runner.halt, kwargs={"interrupted": True}).start()
        t = time.monotonic()
        runner.run()
        took = time.monotonic() - t
    finally:
        runner.close()
    s = summary(runner)
    assert took < 5, took  # not the 60 s asked for
    assert s["partial"] is True and s["ops"] > 0 and s["bytes"] == s["ops"] * 4 * KiB


def test_a_deep_ring_enters_long_batches_in_parts_and_reads_every_block_once(
        direct_dir: Path) -> None:
    """At queue depth 32 a batch of more than uring.SPLIT requests goes to the kernel in parts
    (loop.IoPath.split): every part and every batch is recorded as the kernel was handed it,
    and over the run each block of the file is asked for exactly once, each completion a whole
    block (the loop counts nothing else), with every request reaped."""
    blocks, bs = 1024, 4 * KiB
    path = str(direct_dir / "f")
    assert prepare_file(path, blocks * bs, direct=True)
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    ring = uring.UringPath(fd, False, bs, aligned_buffer(32 * bs, fill=False), 32)
    asked: list[int] = []
    parts: list[int] = []
    submit, submit_reap = ring.submit, ring.submit_reap

    def recorded_submit(n: int) -> None:
        parts.append(n)
        asked.extend(ring.batch_offset[:n])
        submit(n)

    def recorded_submit_reap(n: int) -> Iterable[tuple[int, int]]:
        asked.extend(ring.batch_offset[:n])
        return submit_reap(n)

    ring.submit, ring.submit_reap = recorded_submit, recorded_submit_reap
    mem = mmap.mmap(-1, FIELDS * 8)
    fields = [memoryview(mem).cast("q")[f::FIELDS] for f in range(FIELDS)]
    lat = memoryview(mmap.mmap(-1, 2 * blocks * 8)).cast("q")  # room: every latency kept
    halt = memoryview(mmap.mmap(-1, mmap.PAGESIZE)).cast("B")
    try:
        loop.run(ring, loop.LoopShare(block_order(blocks, True, 7, bs), 0, 1, False, bs, 0,
                                  2 * blocks, 0), fields, lat, halt)
    finally:
        ring.close()
        os.close(fd)
    assert ring.split == uring.SPLIT and parts and set(parts) == {uring.SPLIT}
    assert sorted(asked) == list(range(0, blocks * bs, bs))
    assert fields[loop.OPS][0] == blocks and fields[loop.ERR_KIND][0] == loop.NO_ERROR
    assert ring.inflight == 0 and fields[loop.SAMPLES][0] == blocks
