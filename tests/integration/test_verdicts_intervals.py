"""Issue 44 points 3 and 4: each figure judged over the interval its tool measured it in, on
real runs through `disklab run` and `disklab show --json`, as a user reads them: bonnie++'s
phases each from the samples of its own phase, fio's figures over fio's own job runtime (not
its start and its file layout)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from disklab.core import proc
from tests.helpers import Loops

pytestmark = [pytest.mark.root, pytest.mark.slow]


def disklab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "disklab.cli.main", *args],
                          capture_output=True, text=True, timeout=600)


def run(tmp_path: Path, plan_text: str) -> dict[str, Any]:
    """Run a plan into a fresh library; its session as `show --json` gives it."""
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text)
    library = tmp_path / "lib.sqlite3"
    done = disklab("run", str(plan), "--library", str(library))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    shown = disklab("show", "1", "--json", "--library", str(library))
    assert shown.returncode == 0, shown.stderr
    return dict(json.loads(shown.stdout))


def run_ends(tmp_path: Path) -> list[dict[str, Any]]:
    from disklab.core.library import Library
    with Library.open(tmp_path / "lib.sqlite3") as lib:
        return lib.run_ends(1)


def kinds(row: dict[str, Any]) -> set[str]:
    return {x["kind"] for x in row["limited_by"]}


def short(row: dict[str, Any]) -> dict[str, Any] | None:
    return next((x for x in row["limited_by"] if x["kind"] == "too_short"), None)


@pytest.fixture
def lun(tmp_path: Path) -> Iterator[Path]:
    """A scratch ext4 on its own loop device (its counters are this test's only)."""
    if os.geteuid() != 0:
        pytest.skip("needs root (loop devices, mkfs, mount)")
    missing = [t for t in ("mkfs.ext4", "losetup") if proc.which(t) is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")
    loops = Loops(tmp_path)
    try:
        yield loops.mount(loops.device("a", "1200M"), "lun-a")
    finally:
        loops.cleanup()


BONNIE = """\
name = "bonnie phases"
repeats = 1
[target]
directory = "{directory}"

[[test]]
tool = "bonnie"
size = "128m"
ram = "64m"
files = 1
"""


# alone: its per-char read is read from the page cache only while nothing drops the caches,
# and another worker's session with drop_caches = true drops them for every process (the
# verdict then said "cpu" alone, truly: the device read the file)
@pytest.mark.alone
def test_each_bonnie_phase_is_judged_from_its_own_samples(lun: Path, tmp_path: Path) -> None:
    """bonnie++ writes its file a byte at a time (seconds of one-byte write calls), writes and
    rewrites it in blocks, reads it back a byte at a time and in blocks, from the page cache
    (128 MiB on a machine with GBs free): the per-char read says 'read from the page cache'
    and the per-char write, whose phase read nothing, does not; the block read (a fraction of
    a second) is too short to judge over its own time, not judged over the run's seconds.
    The old code gave every figure the run's one verdict."""
    if proc.which("bonnie++") is None:
        pytest.skip("not installed: bonnie++")
    session = run(tmp_path, BONNIE.format(directory=lun))
    by_metric = {r["metric"]: r for r in session["results"] if r["tool"] == "bonnie"}
    char_write, char_read = by_metric["char_write"], by_metric["char_read"]
    # its own verdict: read from the page cache, or (one sample in its second, on a loaded
    # machine) too short to judge; never the write phase's
    assert kinds(char_read) & {"page_cache_read", "too_short"}, char_read["limited_by"]
    assert kinds(char_read) != kinds(char_write), (char_read["limited_by"],
                                                   char_write["limited_by"])
    assert "page_cache_read" not in kinds(char_write), char_write["limited_by"]
    assert kinds(char_write) != kinds(char_read)
    # the figures of one phase share its verdict (char_read and char_read:latency)
    assert by_metric["char_read:latency"]["limited_by"] == char_read["limited_by"]
    block_read = short(by_metric["block_read:latency"])
    assert block_read is not None and block_read["evidence"]["seconds"] < 1.0
    (ended,) = run_ends(tmp_path)
    assert ended["duration"] > 3 * block_read["evidence"]["seconds"]


FIO = """\
name = "a fast fio job after its layout"
repeats = 1
[target]
directory = "{directory}"

[[test]]
tool = "fio"
rw = "randwrite"
bs = "4k"
size = "768m"
iodepth = 16
ioengine = "libaio"
direct = true
[test.fio_options]
overwrite = 1
io_size = "8m"
"""


def test_a_fast_fio_job_is_judged_over_its_own_runtime(lun: Path, tmp_path: Path) -> None:
    """fio lays out a 768 MiB file (overwrite = 1: written in full and synced) and then writes
    8 MiB at random, direct, in a fraction of a second: the figures are judged over fio's own
    job runtime (its JSON's job_runtime) and are too short to judge, not judged over the run's
    seconds of layout (the old code's device, CPU or 'nothing found')."""
    if proc.which("fio") is None:
        pytest.skip("not installed: fio")
    session = run(tmp_path, FIO.format(directory=lun))
    rows = [r for r in session["results"] if r["tool"] == "fio"]
    assert {r["metric"].split(":")[0] for r in rows} >= {"write", "cpu"}
    from disklab.core.library import Library
    with Library.open(tmp_path / "lib.sqlite3") as lib:
        (case,) = lib.cases(1)
        (ended,) = lib.run_ends(1)
        lines = lib.transcript(1, case["case_id"], int(ended["repeat"]))
    report = json.loads("\n".join(t for _t, stream, t in lines if stream == "result"))
    runtime = report["jobs"][0]["job_runtime"] / 1000
    # the run held fio's start and its layout besides the job (the old code judged all of it)
    assert ended["duration"] > runtime + 0.2 and runtime < 1.0, (ended["duration"], runtime)
    for r in rows:
        found = short(r)
        assert found is not None, (r["metric"], r["limited_by"])
        assert found["evidence"]["seconds"] == pytest.approx(runtime, abs=0.002)
