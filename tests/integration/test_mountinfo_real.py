"""The production mountinfo parser on a real mount whose path needs escaping: a loop image
mounted at a directory named with a space, a tab, a newline and a backslash is found by every
lookup (mount_at, mount_of, filesystem_of, device_for_path, the read-back), by its real name.

Needs root (loop devices, mount); what it attached and mounted is torn down by name.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from disklab.core.fs.readback import readback
from disklab.core.system.devices import device_for_path
from disklab.core.system.mountinfo import MOUNTINFO, filesystem_of, mount_at, mount_of
from tests.helpers import IS_ROOT

pytestmark = [pytest.mark.root]

NAME = "my disk\twith tab\nnewline and back\\slash"


def _run(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def odd_mount(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """(device, mountpoint): a 64 MiB ext4 image on a loop device, mounted at NAME."""
    if not IS_ROOT:
        pytest.skip("needs root for loop devices and mount")
    image = tmp_path / "odd.img"
    mountpoint = tmp_path / NAME
    mountpoint.mkdir()
    _run("truncate", "-s", "64M", str(image))
    device = _run("losetup", "--find", "--show", str(image))
    try:
        _run("mkfs.ext4", "-q", "-F", device)
        _run("mount", "-o", "noatime", device, str(mountpoint))
        yield device, str(mountpoint)
    finally:
        if os.path.ismount(mountpoint):
            subprocess.run(["umount", str(mountpoint)], check=False)
        subprocess.run(["losetup", "-d", device], check=False)
        image.unlink(missing_ok=True)


def test_a_mountpoint_with_space_tab_newline_and_backslash_is_found(odd_mount) -> None:
    device, mountpoint = odd_mount
    escaped = (mountpoint.replace("\\", "\\134").replace(" ", "\\040")
               .replace("\t", "\\011").replace("\n", "\\012"))
    assert escaped in MOUNTINFO.read_text()  # the kernel's form, which the parser undoes
    entry = mount_at(mountpoint)
    assert entry is not None
    assert entry.mountpoint == mountpoint and entry.source == device and entry.fstype == "ext4"
    assert "noatime" in entry.option_list()
    assert mount_of(os.path.join(mountpoint, "not", "yet")) == entry
    fs = filesystem_of(mountpoint)
    assert fs["mountpoint"] == mountpoint and fs["source"] == device
    dev = device_for_path(mountpoint)
    assert dev is not None and dev.path == device
    rb = readback(device, mountpoint, "ext4")
    assert f"{mountpoint} is not mounted" not in rb["errors"]
    assert rb["mount_source"] == device and "noatime" in rb["mount_options"]
