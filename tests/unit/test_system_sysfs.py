"""system.sysfs: the one device-number -> kernel-name resolver, and the queue files.

Expected names come from the other door of the same kernel: /sys/class/block/NAME/dev holds the
number of the device NAME; a device node's st_rdev is its number.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from disklab.core.system import sysfs

CLASS = Path("/sys/class/block")


def test_every_block_device_number_resolves_to_its_kernel_name() -> None:
    names = sorted(p.name for p in CLASS.iterdir()) if CLASS.is_dir() else []
    if not names:
        pytest.skip("no block devices in sysfs here")
    for name in names:
        number = (CLASS / name / "dev").read_text().strip()
        assert sysfs.kernel_name(number) == name
        assert sysfs.device_dir(number) == (CLASS / name).resolve()
        partition = (CLASS / name / "partition").exists()
        disk = sysfs.disk_dir(number)
        assert disk is not None and (disk == (CLASS / name).resolve().parent) == partition
    assert sysfs.kernel_name("4095:1048575") is None  # no such device
    assert sysfs.kernel_name("not a number") is None


def test_a_device_node_gives_its_number_and_anything_else_none(tmp_path: Path) -> None:
    nodes = [p for p in Path("/dev").iterdir() if p.is_block_device()]
    for node in nodes[:5]:
        assert sysfs.node_number(str(node)) == sysfs.devno(os.stat(node).st_rdev)
    assert sysfs.node_number(str(tmp_path)) is None
    assert sysfs.node_number(str(tmp_path / "missing")) is None
    assert sysfs.devno(os.makedev(254, 17)) == "254:17"


def test_parse_scheduler() -> None:
    assert sysfs.parse_scheduler("none [mq-deadline] kyber bfq \n") == "mq-deadline"
    assert sysfs.parse_scheduler("none\n") == "none"
    assert sysfs.parse_scheduler("") is None


def test_a_missing_device_has_no_queue() -> None:
    assert sysfs.queue_dir("/dev/nonexistent-disklab") is None
    assert sysfs.read_scheduler("/dev/nonexistent-disklab") == (None, ())
    assert sysfs.read_readahead("/dev/nonexistent-disklab") is None
