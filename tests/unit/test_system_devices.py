"""system.devices.device_for_path without root: the device under a path, read from sysfs.
(Classification and the destructive checks need loop devices: tests/integration.)"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from disklab.core.system.devices import device_for_path
from disklab.core.system.mountinfo import filesystem_of


def test_the_device_under_the_root_filesystem_is_its_mount_source() -> None:
    dev = device_for_path("/")
    source = filesystem_of("/").get("source", "")
    if dev is None:
        pytest.skip(f"/ has no block device here ({source})")
    st = os.stat("/").st_dev
    if os.major(st) != 0:
        assert dev.devno == f"{os.major(st)}:{os.minor(st)}"
    if source.startswith("/dev/"):
        assert dev.name == Path(os.path.realpath(source)).name
    assert dev.path.startswith("/dev/")


def test_filesystems_without_a_device_have_none() -> None:
    assert device_for_path("/proc") is None
    if filesystem_of("/dev/shm").get("fstype") == "tmpfs":
        assert device_for_path("/dev/shm") is None


def test_a_path_not_yet_made_is_on_its_parents_device(tmp_path: Path) -> None:
    assert device_for_path(str(tmp_path / "not" / "yet")) == device_for_path(str(tmp_path))
