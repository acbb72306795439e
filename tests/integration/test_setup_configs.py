"""Applying the issue's four configurations to a scratch image, reading them back, and undoing
everything: after teardown (also after a failure, and after a SIGKILL through the next start's
recovery) nothing DiskLab made stays mounted or attached."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from disklab.core import proc
from disklab.core.fs.apply import (
    STATE_PREFIX,
    Scratch,
    leftover_files,
    readback_directory,
    recover_leftovers,
)
from disklab.core.helper_client import Privileged
from disklab.core.system import sysfs
from disklab.core.vocab.errors import SafetyError, ToolError
from disklab.core.vocab.model import FsConfig
from tests.helpers import ScratchFs

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root for loop devices and mount"),
]
GiB = 1 << 30
MiB = 1 << 20

CONFIGS = (
    FsConfig("ext4 default", "ext4"),
    FsConfig("ext4 nodelalloc", "ext4", mount=("nodelalloc",)),
    FsConfig("ext4 data=journal, 16 MB journal", "ext4", {"journal_size": 16 * MiB},
             ("noatime", "data=journal"), readahead=4096, scheduler="mq-deadline"),
    FsConfig("xfs su=128k sw=10", "xfs", {"su": 128 * 1024, "sw": 10}, ("noatime",)),
)


def attached(image: Path) -> list[str]:
    done = subprocess.run(["losetup", "-n", "-O", "NAME", "-j", str(image)],
                          capture_output=True, text=True)
    return done.stdout.split()


def force_clean(image: Path, mountpoints: list[Path]) -> None:
    """The test's own safety net, by name, in case the code under test failed to clean."""
    for mnt in mountpoints:
        if os.path.ismount(mnt):
            subprocess.run(["umount", "-l", str(mnt)], check=False)
    for dev in attached(image):
        subprocess.run(["losetup", "-d", dev], check=False)
    image.unlink(missing_ok=True)


@pytest.fixture(scope="module")
def helper() -> Iterator[Privileged]:
    for tool in ("losetup", "mke2fs", "mkfs.xfs", "dumpe2fs", "xfs_info", "wipefs", "blockdev"):
        if proc.which(tool) is None:
            pytest.fail(f"{tool} is not installed")
    with Privileged() as p:
        yield p


def test_four_configs_applied_read_back_and_torn_down(helper: Privileged, tmp_path: Path
                                                      ) -> None:
    image = tmp_path / "scratch.img"
    mnt = Path(helper.workdir or "") / f"disklab-mnt-{tmp_path.name}"  # the helper's own
    scratch = Scratch(helper, tmp_path / "state")
    try:
        dev = scratch.attach_image(image, GiB)
        assert dev.startswith("/dev/loop")
        assert image.stat().st_size == GiB
        assert Path(f"/sys/block/{Path(dev).name}/loop/dio").read_text().strip() == "1"
        state = json.loads(scratch.state.path.read_text())
        assert state["steps"][0]["kind"] == "loop" and state["steps"][0]["device"] == dev
        readahead_before = sysfs.read_readahead(dev)
        scheduler_before, _ = sysfs.read_scheduler(dev)
        readbacks = {}
        for config in CONFIGS:
            rb = scratch.apply(config, dev, mnt)
            assert rb["mismatches"] == [], (config.label, rb["mismatches"])
            assert rb["fs"] == config.fs and rb["errors"] == [], (config.label, rb["errors"])
            assert os.path.ismount(mnt)
            readbacks[config.label] = rb
            scratch.release(dev)
            assert not os.path.ismount(mnt)
        default, nodelalloc, journal, xfs = (readbacks[c.label] for c in CONFIGS)
        assert "nodelalloc" not in default["mount_options"]
        assert "nodelalloc" in nodelalloc["mount_options"]
        assert journal["journal_size"] == 16 * MiB  # from dumpe2fs "Total journal blocks"
        assert "data=journal" in journal["mount_options"]
        assert "noatime" in journal["mount_options"]
        assert journal["readahead"] == 4096 and journal["scheduler"] == "mq-deadline"
        # the mkfs tool's dry run checks the options, then the wipe, then the mkfs
        assert journal["commands"][0][:2] == ["mke2fs", "-n"]
        assert journal["commands"][1] == ["wipefs", "--all", "--force", dev]
        assert ["mke2fs", "-t", "ext4", "-F", "-J", "size=16", "-E",
                "lazy_itable_init=0,lazy_journal_init=0", dev] in journal["commands"]
        assert xfs["sunit"] == 128 * 1024 and xfs["swidth"] == 10 * 128 * 1024  # xfs_info
        assert xfs["sw"] == 10
        # release() restored what the data=journal config changed
        assert sysfs.read_readahead(dev) == readahead_before
        assert sysfs.read_scheduler(dev)[0] == scheduler_before
        messages = scratch.teardown()
        assert f"detached {dev} ({image})" in messages
        assert f"removed {image}" in messages
        assert attached(image) == [] and not image.exists() and not os.path.ismount(mnt)
        assert not scratch.state.path.exists()
        assert helper.commands  # every command the helper ran is kept for the session
    finally:
        force_clean(image, [mnt])


def test_a_changed_option_is_flagged(helper: Privileged, tmp_path: Path) -> None:
    """ext4 turns commit=0 into its default 5: the read-back shows it, mismatches says so."""
    image = tmp_path / "flag.img"
    mnt = Path(helper.workdir or "") / f"disklab-mnt-{tmp_path.name}"  # the helper's own
    scratch = Scratch(helper, tmp_path)
    try:
        dev = scratch.attach_image(image, 256 * MiB)
        rb = scratch.apply(FsConfig("commit=0", "ext4", mount=("commit=0",)), dev, mnt)
        assert rb["mismatches"] == ["mount[1] commit=0: read back commit=5"]
    finally:
        scratch.teardown()
        force_clean(image, [mnt])
    assert attached(image) == [] and not os.path.ismount(mnt)


def test_teardown_after_a_failed_mkfs_leaves_nothing(helper: Privileged, tmp_path: Path) -> None:
    image = tmp_path / "fail.img"
    mnt = Path(helper.workdir or "") / f"disklab-mnt-{tmp_path.name}"  # the helper's own
    scratch = Scratch(helper, tmp_path)
    try:
        dev = scratch.attach_image(image, 256 * MiB)
        too_big = FsConfig("log larger than the device", "xfs", {"log_size": GiB})
        with pytest.raises(ToolError, match=r"mkfs\.xfs"):
            scratch.apply(too_big, dev, mnt)
        assert scratch.teardown() == [f"detached {dev} ({image})", f"removed {image}"]
        assert attached(image) == [] and not os.path.ismount(mnt) and not mnt.exists()
    finally:
        force_clean(image, [mnt])


def test_image_swapped_behind_the_loop_number_aborts_apply(helper: Privileged, tmp_path: Path
                                                           ) -> None:
    image = tmp_path / "mine.img"
    other = tmp_path / "other.img"
    subprocess.run(["truncate", "-s", str(256 * MiB), str(other)], check=True)
    mnt = Path(helper.workdir or "") / f"disklab-mnt-{tmp_path.name}"  # the helper's own
    scratch = Scratch(helper, tmp_path)
    try:
        dev = scratch.attach_image(image, 256 * MiB)
        subprocess.run(["losetup", "-d", dev], check=True)
        if subprocess.run(["losetup", dev, str(other)], capture_output=True).returncode != 0:
            pytest.skip("another process took the loop number")
        with pytest.raises(SafetyError, match="does not match"):
            scratch.apply(CONFIGS[0], dev, mnt)
        assert not os.path.ismount(mnt)
        scratch.teardown()
        assert attached(other) == [dev]  # not DiskLab's: left alone
        assert not image.exists()
    finally:
        force_clean(image, [mnt])
        force_clean(other, [])


KILLED_RUN = textwrap.dedent("""
    import sys, time
    from disklab.core.vocab.model import FsConfig
    from disklab.core.helper_client import Privileged
    from disklab.core.fs.apply import Scratch
    state, image = sys.argv[1:3]
    helper = Privileged()
    helper.start()
    scratch = Scratch(helper, state)
    dev = scratch.attach_image(image, 256 << 20)
    mnt = scratch.mountpoint()
    scratch.apply(FsConfig("ra", "ext4", readahead=1024), dev, mnt)
    print(dev, mnt, helper.helper_pid, flush=True)
    time.sleep(120)
""")


def _gone(pid: int, timeout: float = 10.0) -> None:
    """Wait until process `pid` has exited (gone, or a zombie no one has reaped yet)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return
        except psutil.NoSuchProcess:
            return
        time.sleep(0.02)
    raise AssertionError(f"process {pid} still runs {timeout:g} s after SIGKILL")


# alone: every helper serving root adopts a dead helper's record of root (state._inherit), so
# a helper another worker's test started in the test's window undid the killed session first
# (the recovery then said, truly, that no loop device held the image any more)
@pytest.mark.alone
def test_leftovers_of_a_killed_run_are_recovered(tmp_path: Path) -> None:
    state = tmp_path / "library-dir"
    image = tmp_path / "killed.img"
    mnt = tmp_path / "unknown"
    run = subprocess.Popen([sys.executable, "-c", KILLED_RUN, str(state), str(image)],
                           stdout=subprocess.PIPE, text=True)
    try:
        assert run.stdout is not None
        dev, where, helper_pid = run.stdout.readline().split()
        mnt = Path(where)
        assert dev.startswith("/dev/loop"), dev
        assert os.path.ismount(mnt) and attached(image) == [dev]
        assert leftover_files(state) == []  # its owner still runs: not a leftover
        # both killed at once: the helper cannot undo its session, so its root-owned record
        # lets the next helper undo it (a helper that sees its client go undoes it itself)
        os.kill(int(helper_pid), signal.SIGKILL)
        run.send_signal(signal.SIGKILL)
        run.wait()
        _gone(int(helper_pid))  # a dying helper still "serving" is not a dead one's record
        (record,) = leftover_files(state)
        assert record.name == f"{STATE_PREFIX}{run.pid}.json"
        assert os.path.ismount(mnt) and attached(image) == [dev]  # what SIGKILL left behind
        cleaned = recover_leftovers(state)
        tail = f"(left by DiskLab pid {run.pid})"
        assert f"unmounted {mnt} ({dev}) {tail}" in cleaned
        assert f"detached {dev} ({image}) {tail}" in cleaned
        assert f"removed {image} {tail}" in cleaned
        assert not os.path.ismount(mnt) and attached(image) == []
        assert not record.exists() and recover_leftovers(state) == []
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        force_clean(image, [mnt])


def test_a_directory_target_is_read_back_as_is(scratch_fs: ScratchFs) -> None:
    """As DiskLab's user reads it (here root): the root helper reads back only its own mounts."""
    rb = readback_directory(str(scratch_fs.mountpoint))
    assert rb["fs"] == "ext4" and rb["device"] == scratch_fs.device
    assert rb["errors"] == [] and rb["has_journal"]
    assert f"blockdev --getra {scratch_fs.device}" in rb["raw"]
    # conftest's mkfs: "mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0" on 1 GiB
    assert rb["block_size"] == 4096 and rb["block_count"] == 262144
    assert readback_directory(str(scratch_fs.mountpoint))["block_size"] == 4096
