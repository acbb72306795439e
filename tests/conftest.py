"""Shared fixtures: scratch filesystems on loop devices, made and always torn down.

Tests that need a real filesystem (O_DIRECT, mkfs, the tools) get one here: a sparse image file,
`losetup --find --show --direct-io=on`, mkfs, mount; teardown unmounts and detaches the very device
it attached, by name, whatever the test did. The making and tearing down is tests/helpers.py's,
for the tests that manage their own filesystems.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import IS_ROOT, ScratchFs, make_scratch_fs, teardown

INSTALLER = "scripts/install-system-packages.sh"


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


@pytest.fixture
def workdir(module_scratch_fs: ScratchFs) -> Iterator[Path]:
    """The module's shared ext4 scratch filesystem (loop device, direct-io=on) for one test,
    left as it was found: the engine's files removed, nothing else there."""
    d = Path(module_scratch_fs.mountpoint)
    yield d
    for p in d.iterdir():
        if p.name.startswith("disklab-"):
            p.unlink()
    assert sorted(p.name for p in d.iterdir()) == ["lost+found"]
