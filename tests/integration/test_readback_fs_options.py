"""ext4's own list of the options it runs with: /proc/mounts leaves out what ext4 applies
implicitly (journal_checksum, implied by journal_async_commit and metadata_csum), which gave a
false "not among the mount options read back" warning for a filesystem that applied it."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from disklab.core.fs.readback import mismatches, readback
from disklab.core.vocab.model import FsConfig

pytestmark = [pytest.mark.root]


@pytest.fixture
def ext4_journal_checksum(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A real ext4 image mounted with journal_checksum, unmounted and detached by name after."""
    if os.geteuid() != 0:
        pytest.skip("needs root (loop devices, mount)")
    image, mnt = tmp_path / "jc.img", tmp_path / "mnt"
    mnt.mkdir()
    subprocess.run(["truncate", "-s", "128M", str(image)], check=True)
    dev = subprocess.run(["losetup", "--find", "--show", str(image)], check=True,
                         capture_output=True, text=True).stdout.strip()
    try:
        subprocess.run(["mkfs.ext4", "-q", "-F", dev], check=True)
        subprocess.run(["mount", "-o", "journal_checksum", dev, str(mnt)], check=True)
        yield dev, mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False)
        subprocess.run(["losetup", "-d", dev], check=False)


def test_journal_checksum_applied_by_ext4_is_not_warned_about(
        ext4_journal_checksum: tuple[str, Path]) -> None:
    dev, mnt = ext4_journal_checksum
    rb = readback(dev, str(mnt), "ext4")
    shown = " ".join(rb["mount_options"])
    assert "journal_checksum" not in shown  # the VFS's list leaves it out: the old trap
    assert "journal_checksum" in rb["fs_options"]  # ext4's own list has it
    config = FsConfig(label="jc", fs="ext4", mount=("journal_checksum",))
    assert mismatches(config, rb) == []


def test_an_option_ext4_did_not_apply_is_still_reported(
        ext4_journal_checksum: tuple[str, Path]) -> None:
    dev, mnt = ext4_journal_checksum
    rb = readback(dev, str(mnt), "ext4")
    config = FsConfig(label="jc", fs="ext4", mount=("journal_checksum", "data=journal"))
    assert mismatches(config, rb) == ["mount[2] data=journal: read back data=ordered"]
