"""The engine's worker on real files in a temporary directory (no root, no device): what the
summary counts when a run ends normally and when its file shrinks under it, how its queue slots
are dealt to worker processes, and that those die with the engine."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from disklab.engine.report import summary
from disklab.engine.worker import Job, Runner, prepare_file, slot_groups
from tests.helpers import child_pids

KiB = 1024


def _run(job: Job, shrink_to: int | None = None) -> tuple[dict, Runner]:
    runner = Runner(job)
    runner.open()
    try:
        if shrink_to is not None:
            os.truncate(job.files[0], shrink_to)  # another program cut the file short
        runner.run()
    finally:
        runner.close()
    return summary(runner), runner


def test_every_block_read_once_at_each_queue_depth(tmp_path: Path) -> None:
    path = str(tmp_path / "f")
    assert prepare_file(path, 1024 * KiB, direct=False)
    for qd in (1, 3, 8):
        s, _ = _run(Job("randread", [path], 4 * KiB, 1024 * KiB, queue_depth=qd))
        assert (s["bytes"], s["ops"], s["partial"]) == (1024 * KiB, 256, False)
        assert s["streams"][0]["bytes"] == 1024 * KiB
        assert s["lat_ns"]["p50"] is not None and s["lat_ns"]["max"] >= s["lat_ns"]["p50"]


def test_a_file_that_shrinks_stops_the_run_and_counts_whole_blocks_only(tmp_path: Path) -> None:
    path = str(tmp_path / "f")
    assert prepare_file(path, 1024 * KiB, direct=False)
    # 3 KiB short of 256 KiB: the block that straddles the new end is a short read
    s, runner = _run(Job("read", [path], 64 * KiB, 1024 * KiB), shrink_to=253 * KiB)
    assert s["partial"] is True
    assert s["ops"] == 3  # three whole 64 KiB blocks, then the short one
    assert s["bytes"] == s["streams"][0]["bytes"] == 3 * 64 * KiB  # not the short read's 61 KiB
    assert runner.errors()[0].error.errno == errno.ENODATA


def test_each_stream_is_timed_on_its_own_and_the_aggregate_over_the_span(tmp_path: Path
                                                                         ) -> None:
    paths = [str(tmp_path / "slow"), str(tmp_path / "fast")]
    job = Job("write", paths, 4 * KiB, 4096 * KiB, fsync=True,
              stream_block_sizes=(4 * KiB, 1024 * KiB))
    s, _ = _run(job)
    slow, fast = s["streams"]
    assert (slow["block_size"], fast["block_size"]) == (4 * KiB, 1024 * KiB)
    assert (slow["ops"], fast["ops"]) == (1024, 4)
    for st in (slow, fast):
        assert st["bytes"] == 4096 * KiB
        assert st["seconds"] == pytest.approx(st["end"] - st["start"])
        assert st["bw"] == pytest.approx(st["bytes"] / st["seconds"])
        assert st["fsync_seconds"] is not None  # each stream fsyncs its own file
    span = max(st["end"] for st in (slow, fast)) - min(st["start"] for st in (slow, fast))
    assert min(st["start"] for st in (slow, fast)) == 0.0
    assert s["seconds"] == pytest.approx(span)
    assert s["bw"] == pytest.approx(s["bytes"] / span)
    assert s["fsync_seconds"] == max(slow["fsync_seconds"], fast["fsync_seconds"])
    for p in paths:
        assert os.path.getsize(p) == 4096 * KiB


def test_a_run_halted_before_it_starts_reports_no_time_and_no_rate(tmp_path: Path) -> None:
    path = str(tmp_path / "f")
    runner = Runner(Job("write", [path], 4 * KiB, 64 * KiB))
    runner.open()
    runner.halt(interrupted=True)
    try:
        runner.run()
    finally:
        runner.close()
    s = summary(runner)
    assert s["partial"] is True and s["bytes"] == 0 and s["bw"] == 0.0
    assert s["streams"][0]["bw"] == 0.0 and s["fsync_seconds"] is None


def test_slots_are_dealt_to_one_worker_process_per_cpu() -> None:
    assert slot_groups(1, cpus=2) == [[0]]
    assert slot_groups(8, cpus=2) == [[0, 2, 4, 6], [1, 3, 5, 7]]
    assert slot_groups(3, cpus=8) == [[0], [1], [2]]  # never more processes than slots
    assert sorted(t for g in slot_groups(32, cpus=3) for t in g) == list(range(32))


def test_killing_the_engine_ends_its_worker_processes(tmp_path: Path) -> None:
    """The engine's workers are processes: a SIGKILL of the engine (which it cannot catch)
    must not leave them issuing I/O on the user's disk."""
    path = str(tmp_path / "f")
    assert prepare_file(path, 1024 * KiB, direct=False)
    engine = subprocess.Popen(
        [sys.executable, "-m", "disklab.engine", "--mode", "randread", "--file", path,
         "--block-size", "4096", "--size", str(1024 * KiB), "--queue-depth", "4",
         "--runtime", "60", "--interval", "0.1"], stdout=subprocess.PIPE, text=True)
    workers: set[int] = set()
    try:
        assert engine.stdout is not None
        assert json.loads(engine.stdout.readline())["type"] == "interval"
        workers = child_pids(engine.pid)
        assert len(workers) == min(4, os.cpu_count() or 1)
        engine.kill()
        engine.wait(10)
        deadline = time.monotonic() + 5
        while any(os.path.exists(f"/proc/{w}") for w in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [w for w in workers if os.path.exists(f"/proc/{w}")]
    finally:
        engine.kill()
        engine.wait(10)
        for w in workers:  # when the test failed: leave no orphan reading the disk
            with contextlib.suppress(ProcessLookupError):
                os.kill(w, signal.SIGKILL)


def test_a_defect_in_the_engine_ends_in_an_error_not_a_summary_of_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """An exception inside the run (a bug, as a stream's end once raised TypeError) ended the
    run thread, and the engine printed a summary of 0 s and 6.7e16 B/s with exit status 0."""
    from disklab.engine import cli

    path = str(tmp_path / "f")
    assert prepare_file(path, 256 * KiB, direct=False)

    def defect(self: Runner, *_args: object) -> None:
        raise TypeError("a defect")

    monkeypatch.setattr(Runner, "_end_stream", defect)
    code = cli.main(["--mode", "read", "--file", path, "--block-size", "4096",
                     "--size", str(256 * KiB)])
    out, err = capsys.readouterr()
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == cli.EXIT_ERROR
    assert not [line for line in lines if line["type"] == "summary"]
    assert lines[-1]["type"] == "error" and "TypeError: a defect" in lines[-1]["message"]
    assert "Traceback" in err
