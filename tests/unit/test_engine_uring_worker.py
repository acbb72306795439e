"""The engine's io_uring path on real files in a temporary directory (no device): the structures
match the kernel's, every block is read once by one or two ring processes, a short file counts
whole blocks only, a halted time-based run stops at once, and the stream's clock spans its
requests. Skipped, with the reason, where this machine forbids io_uring."""

from __future__ import annotations

import ctypes
import os
import threading
import time
from pathlib import Path

import pytest

from disklab.core.engine import iopath, uring
from disklab.core.engine.probe import direct_io_refusal
from disklab.core.engine.report import summary
from disklab.core.engine.worker import Job, Runner, prepare_file

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


def _ran(job: Job) -> Runner:
    """The job run to its end through a Runner of its own (opened and closed)."""
    runner = Runner(job)
    runner.open()
    try:
        runner.run()
    finally:
        runner.close()
    return runner


@pytest.fixture
def direct_dir(tmp_path: Path) -> Path:
    if direct_io_refusal(str(tmp_path)):
        pytest.skip(f"{tmp_path} refuses O_DIRECT")
    return tmp_path


@pytest.mark.parametrize("groups", [1, 2])
def test_every_block_read_once_by_one_or_two_ring_processes(direct_dir: Path, groups: int,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    path = str(direct_dir / "f")
    assert prepare_file(path, 1024 * KiB, direct=True)
    monkeypatch.setattr("disklab.core.engine.worker.AIO_PROCESSES_PER_STREAM", groups)
    for qd in (2, 5, 16):
        runner = _ran(Job("randread", [path], 4 * KiB, 1024 * KiB, queue_depth=qd,
                          direct=True, io="uring"))
        s = summary(runner)
        assert (s["io"], s["bytes"], s["ops"], s["partial"]) == ("uring", 1024 * KiB, 256, False)
        assert len(s["streams"][0]["lat_ns"]) == 5 and s["lat_ns"]["p50"] > 0
        assert sum(len(a) for a in runner.streams[0].latencies) == 256  # a sample per call


def test_a_write_through_the_ring_fills_the_file_with_the_requests_buffers(direct_dir: Path
                                                                           ) -> None:
    path = direct_dir / "w"
    size, bs = 2048 * KiB, 4 * KiB
    s = summary(_ran(Job("write", [str(path)], bs, size, queue_depth=8, direct=True,
                         io="uring")))
    assert (s["io"], s["bytes"], s["ops"], s["partial"]) == ("uring", size, size // bs, False)
    data = path.read_bytes()
    blocks = {data[i:i + bs] for i in range(0, size, bs)}
    assert len(data) == size and bytes(bs) not in blocks
    assert 1 < len(blocks) <= 8  # only the 8 in-flight buffers' contents, whole


def test_a_short_read_through_the_ring_counts_whole_blocks_only(direct_dir: Path) -> None:
    path = str(direct_dir / "f")
    assert prepare_file(path, 1024 * KiB, direct=True)
    runner = Runner(Job("read", [path], 64 * KiB, 1024 * KiB, queue_depth=4, direct=True,
                        io="uring"))
    runner.open()
    try:
        os.truncate(path, 256 * KiB - 4096)  # another program cut the file short
        runner.run()
    finally:
        runner.close()
    s = summary(runner)
    assert s["io"] == "uring" and s["partial"] is True
    assert s["ops"] == 3 and s["bytes"] == 3 * 64 * KiB  # not the short block, not beyond
    assert runner.errors()[0].error.strerror.startswith("short read")


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


def test_a_ring_run_is_timed_from_its_first_request_to_its_last_completion(direct_dir: Path
                                                                           ) -> None:
    """As the AIO path: QD requests in flight from the first submission to the last
    completion fill most of QD x the run's time with the requests' summed latency."""
    path = str(direct_dir / "f")
    size, qd = 8 * 1024 * KiB, 8
    assert prepare_file(path, size, direct=True)
    s = summary(_ran(Job("randread", [path], 4 * KiB, size, queue_depth=qd, direct=True,
                         io="uring")))
    st = s["streams"][0]
    assert s["io"] == "uring" and st["ops"] == size // (4 * KiB)
    in_flight = st["ops"] * st["lat_ns"]["mean"] / 1e9  # request-seconds
    assert in_flight / (qd * st["seconds"]) > 0.75, (in_flight, st["seconds"])
