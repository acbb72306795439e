"""Asked vs applied: the read-back (captured mountinfo, dumpe2fs, xfs_info, btrfs outputs)
compared with the configuration, one sentence per difference."""

from __future__ import annotations

from disklab.core.fs.parsers import parse_btrfs_df, parse_dumpe2fs, parse_xfs_info
from disklab.core.fs.readback import mismatches
from disklab.core.system.mountinfo import parse_mountinfo
from disklab.core.vocab.model import FsConfig
from tests.helpers import fixture_text


def _readback(dumpe2fs: str | None, mountinfo: str, fs: str, **extra: object) -> dict:
    (row,) = parse_mountinfo(fixture_text(mountinfo))
    rb: dict = {"fs": fs, "mount_options": row.option_list(), **extra}
    if dumpe2fs:
        rb.update(parse_dumpe2fs(fixture_text(dumpe2fs)))
    return rb


def test_no_mismatch_when_the_kernel_applied_everything() -> None:
    config = FsConfig(
        "ext4 data=journal, 16 MB journal", "ext4",
        {"journal_size": "16m", "stride": 32, "stripe_width": 320, "bytes_per_inode": 32768},
        ("noatime", "data=journal", "nodelalloc", "commit=300", "journal_checksum",
         "journal_async_commit"), readahead=4096, scheduler="mq-deadline")
    rb = _readback("dumpe2fs/ext4-journal16m-stride.txt", "mountinfo/ext4-data-journal.txt",
                   "ext4", readahead=4096, scheduler="mq-deadline")
    assert mismatches(config, rb) == []


def test_mismatches_name_what_differs() -> None:
    config = FsConfig("asked", "ext4", {"journal_size": "32m", "stride": 16},
                      ("data=writeback", "commit=60", "relatime", "errors=remount-ro",
                       "lazytime"),
                      readahead=256, scheduler="bfq")
    rb = _readback("dumpe2fs/ext4-journal16m-stride.txt", "mountinfo/ext4-data-journal.txt",
                   "ext4", readahead=4096, scheduler="mq-deadline")
    found = mismatches(config, rb)
    assert "mkfs.journal_size: asked 32m, read back 16m" in found
    assert "mkfs.stride: asked 16, read back 32" in found
    assert "mount[1] data=writeback: read back data=journal" in found
    assert "mount[2] commit=60: read back commit=300" in found
    assert "mount[3] relatime: read back noatime" in found
    assert "mount[4] errors=remount-ro: read back errors=continue" in found
    assert "mount[5] lazytime: not among the mount options read back" in found
    assert "readahead: asked 256, read back 4096" in found
    assert "scheduler: asked bfq, read back mq-deadline" in found
    assert len(found) == 9


def test_defaults_hidden_by_the_kernel_are_not_mismatches() -> None:
    # mountinfo omits data=ordered, commit=5, barrier and delalloc: the defaults
    config = FsConfig("defaults", "ext4", mount=("data=ordered", "commit=5", "barrier",
                                                 "delalloc"))
    rb = {"fs": "ext4", "mount_options": ["rw", "relatime", "stripe=320"]}
    assert mismatches(config, rb) == []
    rb["mount_options"] = ["rw", "relatime", "nobarrier", "nodelalloc"]
    assert mismatches(config, rb) == ["mount[3] barrier: read back nobarrier",
                                           "mount[4] delalloc: read back nodelalloc"]


def test_xfs_and_btrfs_mismatches() -> None:
    xfs = FsConfig("xfs su=128k sw=10", "xfs", {"su": "128k", "sw": 10}, ("noatime",))
    rb = _readback(None, "mountinfo/xfs-su128k-sw10.txt", "xfs",
                   **parse_xfs_info(fixture_text("xfs_info/su128k-sw10.txt")))
    assert mismatches(xfs, rb) == []
    wide = FsConfig("xfs", "xfs", {"su": "64k", "sw": 4}, ("logbsize=256k",))
    assert mismatches(wide, rb) == ["mkfs.su: asked 64k, read back 128k",
                                         "mkfs.sw: asked 4, read back 10",
                                         "mount[1] logbsize=256k: read back logbsize=128k"]
    btrfs = FsConfig("b", "btrfs", {"data": "single", "metadata": "dup"},
                     ("compress=zstd", "ssd", "space_cache=v2", "noatime"))
    rb = _readback(None, "mountinfo/btrfs-compress-zstd.txt", "btrfs",
                   **parse_btrfs_df(fixture_text("btrfs/filesystem-df-b.txt")))
    assert mismatches(btrfs, rb) == []
    other = FsConfig("b", "btrfs", {"metadata": "single"}, ("compress=lzo", "nodatacow"))
    assert mismatches(other, rb) == [
        "mkfs.metadata: asked single, read back dup",
        "mount[1] compress=lzo: read back compress=zstd:3",
        "mount[2] nodatacow: not among the mount options read back"]


def test_another_filesystem_read_back_is_one_mismatch() -> None:
    rb = {"fs": "ext4", "mount_options": ["rw"]}
    assert mismatches(FsConfig("x", "xfs"), rb) == ["fs: asked xfs, read back ext4"]
