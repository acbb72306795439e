"""Shared fixtures: scratch filesystems on loop devices, made and always torn down.

Tests that need a real filesystem (O_DIRECT, mkfs, the tools) get one here: a sparse image file,
`losetup --find --show --direct-io=on`, mkfs, mount; teardown unmounts and detaches the very device
it attached, by name, whatever the test did.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

IS_ROOT = os.geteuid() == 0
INSTALLER = "scripts/install-system-packages.sh"


@dataclass
class ScratchFs:
    image: Path
    device: str
    mountpoint: Path
    fstype: str


def _run(argv: list[str]) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout.strip()


def make_scratch_fs(base: Path, fstype: str = "ext4", size: str = "1G") -> ScratchFs:
    """Make an image, attach it, mkfs it and mount it under `base`. Caller must teardown()."""
    image = base / f"scratch-{fstype}.img"
    mountpoint = base / f"mnt-{fstype}"
    mountpoint.mkdir()
    _run(["truncate", "-s", size, str(image)])
    device = _run(["losetup", "--find", "--show", "--direct-io=on", str(image)])
    fs = ScratchFs(image, device, mountpoint, fstype)
    try:
        mkfs = {
            "ext4": ["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0"],
            "xfs": ["mkfs.xfs", "-q", "-f"],
            "btrfs": ["mkfs.btrfs", "-q", "-f"],
        }[fstype]
        _run([*mkfs, device])
        _run(["mount", device, str(mountpoint)])
    except BaseException:
        teardown(fs)
        raise
    return fs


def teardown(fs: ScratchFs) -> None:
    """Unmount and detach exactly what make_scratch_fs attached; never raises."""
    if os.path.ismount(fs.mountpoint):
        subprocess.run(["umount", str(fs.mountpoint)], check=False)
        if os.path.ismount(fs.mountpoint):
            subprocess.run(["umount", "-l", str(fs.mountpoint)], check=False)
    subprocess.run(["losetup", "-d", fs.device], check=False, capture_output=True)
    fs.image.unlink(missing_ok=True)


def _need_root_tools(*tools: str) -> None:
    if not IS_ROOT:
        pytest.skip("needs root for loop devices and mount")
    for t in tools:
        if shutil.which(t) is None:
            pytest.fail(f"{t} is not installed: `make test` installs it ({INSTALLER})")


@pytest.fixture
def scratch_fs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ScratchFs]:
    """A fresh 1 GiB ext4 filesystem on a loop device, mounted; removed after the test."""
    _need_root_tools("losetup", "mkfs.ext4")
    base = tmp_path_factory.mktemp("scratch", numbered=True)
    fs = make_scratch_fs(base, "ext4")
    try:
        yield fs
    finally:
        teardown(fs)


@pytest.fixture(scope="module")
def module_scratch_fs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ScratchFs]:
    """Like scratch_fs, shared by the tests of one module (tests must clean their own files)."""
    _need_root_tools("losetup", "mkfs.ext4")
    base = tmp_path_factory.mktemp("mscratch", numbered=True)
    fs = make_scratch_fs(base, "ext4")
    try:
        yield fs
    finally:
        teardown(fs)


FIXTURES = Path(__file__).parent / "fixtures"
