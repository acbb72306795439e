"""monitor on real loop-device filesystems: the device under a path (ext4 and btrfs), and a real
dd writing 64 MiB with O_DIRECT seen by the tool's counters and by the device's.

Needs root (loop devices, mount): the `scratch_fs` fixture skips without it.
"""

from __future__ import annotations

import os
import time
from collections import defaultdict
from pathlib import Path

import pytest

from disklab.core.proc.tool import ToolProcess
from disklab.core.run.monitor import Monitor, TargetDisks
from disklab.core.system.devices import device_for_path
from disklab.core.system.host import host_facts
from tests.helpers import IS_ROOT, Loops, make_scratch_fs, sh, teardown

pytestmark = [pytest.mark.root]

MiB = 1 << 20
GIVE_UP = 60.0


def test_the_device_under_a_loop_mounted_filesystem_is_the_loop_and_its_backing_disk(
        scratch_fs) -> None:
    dev = device_for_path(str(scratch_fs.mountpoint))
    assert dev is not None
    assert dev.name == os.path.basename(scratch_fs.device) and dev.path == scratch_fs.device
    st = os.stat(scratch_fs.mountpoint).st_dev
    assert dev.devno == f"{os.major(st)}:{os.minor(st)}" and dev.parent is None
    # the image file lives on another filesystem: its device is the loop's backing
    assert dev.backing is not None
    assert dev.backing == device_for_path(str(scratch_fs.image.parent))
    assert dev.backing.name != dev.name
    facts = host_facts(str(scratch_fs.mountpoint))
    assert facts["filesystem"]["fstype"] == "ext4"
    assert facts["filesystem"]["source"] == scratch_fs.device
    assert facts["device"]["name"] == dev.name
    assert facts["device"]["backing_file"] == str(scratch_fs.image)
    assert facts["device"]["loop_direct_io"] is True  # conftest attaches with --direct-io=on
    assert facts["device"]["size"] == 1 << 30
    assert facts["device"]["backing"]["name"] == dev.backing.name


def test_a_direct_dd_write_shows_in_the_tool_and_the_device_rates(scratch_fs) -> None:
    target = scratch_fs.mountpoint / "dd.out"
    p = ToolProcess(["dd", "if=/dev/zero", f"of={target}", "bs=256k", "count=256",
                     "oflag=direct"])
    monitor = Monitor(str(scratch_fs.mountpoint), pids=p.descendants)
    assert set(monitor.sample()) == {"dirty_bytes", "writeback_bytes"}  # primed
    samples: list[dict[str, float]] = []
    moved: dict[str, float] = defaultdict(float)  # rate x interval, summed

    def take() -> None:
        s = monitor.sample()
        samples.append(s)
        for key, rate in s.items():
            if key.endswith("_bps"):
                moved[key] += rate * (monitor.last_interval or 0.0)

    give_up = time.monotonic() + GIVE_UP
    with p:
        p.start()
        while not p.poll():
            assert time.monotonic() < give_up
            p.read(0.05)
            take()
    take()  # after the exit: dd's last bytes (from its final counters) and the last I/O
    assert p.returncode == 0, p.tail()
    assert target.stat().st_size == 64 * MiB
    assert any(s.get("app_write_bps", 0) > 0 for s in samples)
    assert any(s.get("device_write_bps", 0) > 0 for s in samples)
    assert moved["app_write_bps"] == pytest.approx(64 * MiB, rel=0.10)
    assert moved["app_wchar_bps"] == pytest.approx(64 * MiB, rel=0.10)
    assert moved["device_write_bps"] == pytest.approx(64 * MiB, rel=0.10)
    # the disk under the image got at least the same (other writers there only add to it)
    assert moved["backing_write_bps"] >= 0.9 * 64 * MiB
    assert all({"dirty_bytes", "writeback_bytes"} <= set(s) for s in samples)
    assert monitor.totals()["device_write_bytes"] == pytest.approx(moved["device_write_bps"])


@pytest.fixture
def btrfs_fs(tmp_path_factory: pytest.TempPathFactory):
    if not IS_ROOT:
        pytest.skip("needs root for loop devices and mount")
    base = tmp_path_factory.mktemp("btrfs", numbered=True)
    fs = make_scratch_fs(base, "btrfs")
    try:
        yield fs
    finally:
        teardown(fs)


def test_btrfs_anonymous_st_dev_is_resolved_through_the_mount_source(btrfs_fs) -> None:
    st = os.stat(btrfs_fs.mountpoint).st_dev
    assert os.major(st) == 0  # btrfs gives an anonymous device number
    dev = device_for_path(str(btrfs_fs.mountpoint / "not-yet"))
    assert dev is not None and dev.path == btrfs_fs.device
    assert dev.backing == device_for_path(str(Path(btrfs_fs.image).parent))
    assert host_facts(str(btrfs_fs.mountpoint))["filesystem"]["fstype"] == "btrfs"


def test_targets_on_one_device_are_one_disk_in_the_total(tmp_path: Path) -> None:
    # two directory targets on one filesystem (a, a2) and one on another (b): each target's
    # curve is its device's rate, the total ("write all") counts each device once
    if not IS_ROOT:
        pytest.skip("needs root (loop devices, mkfs, mount)")
    loops = Loops(tmp_path)
    try:
        x = loops.mount(loops.device("x", "64M"), "x")
        y = loops.mount(loops.device("y", "64M"), "y")
        dirs = {"a": x / "a", "a2": x / "a2", "b": y / "b"}
        for d in dirs.values():
            d.mkdir()
        disks = TargetDisks({name: str(d) for name, d in dirs.items()})
        assert disks.sample() == {}  # primed
        for d, mib in ((dirs["a"], 8), (dirs["b"], 4)):
            sh("dd", "if=/dev/zero", f"of={d / 'f'}", "bs=1M", f"count={mib}", "oflag=direct")
        rates = disks.sample()
        a, a2, b = (rates[f"device_write_bps:{n}"] for n in ("a", "a2", "b"))
        assert a == a2 > 0 and b > 0  # one device, one curve's worth
        assert rates["device_write_bps:all"] == pytest.approx(a + b)  # not a + a2 + b
        assert b < a  # 4 MiB against 8 (the figures are each device's, not swapped)
    finally:
        loops.cleanup()
