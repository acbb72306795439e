"""A plan check and a layout leave the target's filesystem nothing to write later (bench 1a).

The O_DIRECT probe of the check makes an unnamed file and writes a block; on ext4 its journal
transaction used to be committed by jbd2 seconds after the check, inside the measured window of
the case the GUI had just started; and a layout's metadata, left dirty after the tool's fsync,
was written back whenever another process synced. Real ext4 on a loop device, mounted noatime
(reads write nothing) and commit=1 so that a pending transaction shows within a second; the
device's own write counter is the witness.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from disklab.core.plan import direct_io
from disklab.core.plan.parse import parse_plan
from disklab.core.run.runner import run_plan
from disklab.core.system.fsprobe import direct_io_refusal
from disklab.core.vocab.events import CaseFinished, LogLine, Sample
from tests.helpers import ScratchFs, make_scratch_fs, teardown

pytestmark = [pytest.mark.root]

COMMIT_WAIT = 2.5  # seconds: more than commit=1 and its timer slack
PLAN = ('name = "q"\n[target]\ndirectory = "{dir}"\n[[test]]\ntool = "engine"\n'
        'mode = "randread"\nblock_size = "4k"\nsize = "8m"\ndirect = true\n')


@pytest.fixture
def fs(tmp_path: Path) -> Iterator[ScratchFs]:
    made = make_scratch_fs(tmp_path, size="256M")
    try:
        subprocess.run(["mount", "-o", "remount,noatime,commit=1", str(made.mountpoint)],
                       check=True)
        direct_io.forget()
        yield made
    finally:
        direct_io.forget()
        teardown(made)


def written(mnt: Path) -> int:
    """Bytes the filesystem's block device has written since it was attached."""
    dev = os.stat(mnt).st_dev
    stat = Path(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}/stat").read_text().split()
    return int(stat[6]) * 512


def settled(mnt: Path) -> int:
    """Sync, then wait until the device writes nothing for a commit interval: its count."""
    for _ in range(10):
        os.sync()
        before = written(mnt)
        time.sleep(COMMIT_WAIT)
        if written(mnt) == before:
            return before
    raise AssertionError("the scratch filesystem never went quiet")


def test_the_raw_probe_leaves_a_journal_commit_behind(fs: ScratchFs) -> None:
    """The instrument check: without the sync, the probe's metadata is written after it."""
    before = settled(fs.mountpoint)
    assert direct_io_refusal(str(fs.mountpoint)) is None
    after_probe = written(fs.mountpoint)
    time.sleep(COMMIT_WAIT)
    assert written(fs.mountpoint) > after_probe, (before, after_probe)


def test_a_plan_check_leaves_nothing_to_write_and_a_second_one_writes_nothing(
        fs: ScratchFs) -> None:
    settled(fs.mountpoint)
    plan = PLAN.format(dir=fs.mountpoint)
    parse_plan(plan)  # the first check in this process probes, then commits its own work
    after_check = written(fs.mountpoint)
    time.sleep(COMMIT_WAIT)
    assert written(fs.mountpoint) == after_check  # nothing left for jbd2 to commit later
    parse_plan(plan)  # the GUI's check again, e.g. while a case runs: no probe at all
    time.sleep(COMMIT_WAIT)
    assert written(fs.mountpoint) == after_check
    assert sorted(p.name for p in fs.mountpoint.iterdir()) == ["lost+found"]


def test_the_runner_syncs_the_layout_so_a_read_only_step_writes_nothing(fs: ScratchFs) -> None:
    """Another process's sync (or the flusher, 30 s on) in the middle of a read-only measured
    step used to write the layout's metadata to its device; the runner syncs after a layout."""
    plan = parse_plan(PLAN.format(dir=fs.mountpoint) + "runtime = 2\n").plan
    logs, window = [], []
    for event in run_plan(plan):
        if isinstance(event, LogLine) and event.stream == "disklab":
            logs.append(event.text)
        elif isinstance(event, Sample) and not window:
            window.append(written(fs.mountpoint))
            os.sync()  # what another process may do at any time
        elif isinstance(event, CaseFinished):
            window.append(written(fs.mountpoint))
    assert len(window) == 2 and window[1] == window[0]
    assert f"synced {fs.mountpoint} after the layout (syncfs)" in logs
    assert sorted(p.name for p in fs.mountpoint.iterdir()) == ["lost+found"]
