"""The engine's asynchronous paths, io_uring and AIO, on real files in a temporary directory (no
root, no device): how the path is chosen, how a stream's slots are split, that AIO's structures
match the kernel's, that every block is read once, a short file counts whole blocks only and a
stream's clock spans its requests on either path, and that a worker dies with its engine. What
only the ring does is tests/unit/test_engine_uring_worker.py's."""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from disklab.core.system.fsprobe import direct_io_refusal
from disklab.engine import aio, iopath, uring
from disklab.engine.report import summary
from disklab.engine.worker import Job, Runner, prepare_file
from tests.helpers import child_pids

KiB = 1024


def test_the_structures_have_the_kernels_layout() -> None:
    """include/uapi/linux/aio_abi.h: iocb is 64 bytes with aio_offset at byte 40, io_event 32
    with res at byte 16 (the hot loop writes and reads those words directly)."""
    assert ctypes.sizeof(aio.Iocb) == 64 and aio.Iocb.aio_offset.offset == 40
    assert aio.Iocb.aio_fildes.offset == 20 and aio.Iocb.aio_buf.offset == 24
    assert ctypes.sizeof(aio.IoEvent) == 32 and aio.IoEvent.res.offset == 16


def test_auto_takes_an_asynchronous_path_only_where_it_is_the_faster_path() -> None:
    """io_uring first, where this machine allows it (else AIO, saying why not io_uring)."""
    path, why = iopath.choose("auto", direct=True, queue_depth=8)
    no_uring = uring.unavailable()
    assert (path, why) == (("uring", "O_DIRECT at queue depth > 1") if no_uring is None else
                           ("aio", f"O_DIRECT at queue depth > 1; not io_uring: {no_uring}"))
    assert iopath.choose("auto", direct=True, queue_depth=1)[0] == "psync"
    assert iopath.choose("auto", direct=False, queue_depth=32)[0] == "psync"
    assert iopath.choose("psync", direct=True, queue_depth=32)[0] == "psync"
    assert iopath.choose("aio", direct=True, queue_depth=1)[0] == "aio"


def test_a_streams_slots_are_split_into_contiguous_ranges() -> None:
    assert aio.aio_groups(8) == [list(range(8))]
    assert aio.aio_groups(8, 2) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert aio.aio_groups(3, 8) == [[0], [1], [2]]
    assert sorted(t for g in aio.aio_groups(32, 3) for t in g) == list(range(32))


ASYNC = ["aio", pytest.param("uring", marks=pytest.mark.skipif(
    uring.unavailable() is not None, reason=str(uring.unavailable())))]


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


@pytest.mark.parametrize("io", ASYNC)
@pytest.mark.parametrize("groups", [1, 2])
def test_every_block_read_once_by_one_or_two_processes(direct_dir: Path, groups: int, io: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(direct_dir / "f")
    assert prepare_file(path, 1024 * KiB, direct=True)
    monkeypatch.setattr("disklab.engine.worker.AIO_PROCESSES_PER_STREAM", groups)
    for qd in (2, 5, 16):
        runner = _ran(Job("randread", [path], 4 * KiB, 1024 * KiB, queue_depth=qd,
                          direct=True, io=io))
        s = summary(runner)
        assert (s["io"], s["bytes"], s["ops"], s["partial"]) == (io, 1024 * KiB, 256, False)
        assert len(s["streams"][0]["lat_ns"]) == 5 and s["lat_ns"]["p50"] > 0
        assert sum(len(a) for a in runner.streams[0].latencies) == 256  # a sample per call


@pytest.mark.parametrize("io", ASYNC)
def test_a_short_read_counts_whole_blocks_only(direct_dir: Path, io: str) -> None:
    path = str(direct_dir / "f")
    assert prepare_file(path, 1024 * KiB, direct=True)
    runner = Runner(Job("read", [path], 64 * KiB, 1024 * KiB, queue_depth=4, direct=True,
                        io=io))
    runner.open()
    try:
        os.truncate(path, 256 * KiB - 4096)  # another program cut the file short
        runner.run()
    finally:
        runner.close()
    s = summary(runner)
    assert s["io"] == io and s["partial"] is True
    assert s["ops"] == 3 and s["bytes"] == 3 * 64 * KiB  # not the short block, not beyond
    assert runner.errors()[0].error.strerror.startswith("short read")


def test_killing_the_engine_ends_its_aio_workers(direct_dir: Path) -> None:
    path = str(direct_dir / "f")
    assert prepare_file(path, 1024 * KiB, direct=True)
    engine = subprocess.Popen(
        [sys.executable, "-m", "disklab.engine", "--mode", "randread", "--file", path,
         "--block-size", "4096", "--size", str(1024 * KiB), "--queue-depth", "8", "--direct",
         "--runtime", "60", "--interval", "0.1", "--io", "aio"], stdout=subprocess.PIPE,
        text=True)
    workers: set[int] = set()
    try:
        assert engine.stdout is not None
        assert json.loads(engine.stdout.readline())["type"] == "interval"
        workers = child_pids(engine.pid)
        assert len(workers) == 1  # one AIO process keeps the stream's 8 requests in flight
        engine.kill()
        engine.wait(10)
        deadline = time.monotonic() + 5
        while any(os.path.exists(f"/proc/{w}") for w in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [w for w in workers if os.path.exists(f"/proc/{w}")]
    finally:
        engine.kill()
        engine.wait(10)
        for w in workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(w, signal.SIGKILL)


def test_more_requests_than_the_system_allows_fall_back_or_say_which_limit() -> None:
    """fs.aio-max-nr bounds the AIO requests of the whole system: a run asking for more takes
    the pread/pwrite path under auto (where io_uring is not allowed either), and a forced aio
    names the limit and the way out."""
    limit = int(Path("/proc/sys/fs/aio-max-nr").read_text())
    streams = limit // 256 + 1  # streams x depth 256 is more than the limit
    problem = aio.unavailable(256, 256 * streams)
    assert problem is not None and "fs.aio-max-nr" in problem and str(256 * streams) in problem
    with pytest.raises(OSError) as e:
        iopath.choose("aio", direct=True, queue_depth=256, streams=streams)
    assert "sysctl fs.aio-max-nr" in str(e.value) and "io = psync" in str(e.value)


@pytest.mark.parametrize("io", ASYNC)
def test_a_run_is_timed_from_its_first_request_to_its_last_completion(direct_dir: Path,
                                                                      io: str) -> None:
    """The stream's clock stops at the last completion it reaped, as fio's does, not when the
    engine has reaped its worker process: the worker's io_destroy waits for an RCU grace
    period (~32 ms on this kernel), which made a 1 s AIO run read 3 % slow against fio
    (bench figure 4). With QD requests in flight from the first submission to the last
    completion, the requests' summed latency fills most of QD x the run's time."""
    path = str(direct_dir / "f")
    size, qd = 8 * 1024 * KiB, 8
    assert prepare_file(path, size, direct=True)
    s = summary(_ran(Job("randread", [path], 4 * KiB, size, queue_depth=qd, direct=True,
                         io=io)))
    st = s["streams"][0]
    assert s["io"] == io and st["ops"] == size // (4 * KiB)
    in_flight = st["ops"] * st["lat_ns"]["mean"] / 1e9  # request-seconds
    assert in_flight / (qd * st["seconds"]) > 0.75, (in_flight, st["seconds"])
