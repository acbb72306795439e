"""The engine's worker on real files in a temporary directory (no root, no device): what the
summary counts when a run ends normally and when its file shrinks under it."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from disklab.core.engine.report import summary
from disklab.core.engine.worker import Job, Runner, prepare_file

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
