"""The argv of applying a configuration: each builder, and setup_commands in the order they run."""

from __future__ import annotations

import pytest

from disklab.core.fs import commands as fsc
from disklab.core.vocab.errors import ConfigError
from disklab.core.vocab.model import FsConfig


def test_mkfs_argv_ext4_is_forced_once_and_not_lazy() -> None:
    config = FsConfig("j16", "ext4", {"journal_size": "16m", "stride": 32, "stripe_width": 320,
                                      "bytes_per_inode": 32768, "inode_size": 256,
                                      "reserved_percent": 1, "block_size": "4k"})
    assert fsc.mkfs_argv(config, "/dev/loop3") == (
        "mke2fs", "-t", "ext4", "-F", "-b", "4096", "-i", "32768", "-I", "256", "-m", "1",
        "-J", "size=16",
        "-E", "lazy_itable_init=0,lazy_journal_init=0,stride=32,stripe_width=320", "/dev/loop3")


def test_mkfs_argv_ext4_features_and_lazy_init() -> None:
    config = FsConfig("nj", "ext4", {"no_journal": True, "lazy_init": True})
    assert fsc.mkfs_argv(config, "/dev/sdz") == (
        "mke2fs", "-t", "ext4", "-F", "-O", "^has_journal", "-E", "lazy_itable_init=1",
        "/dev/sdz")
    fc = FsConfig("fc", "ext4", {"fast_commit": True})
    assert fsc.mkfs_argv(fc, "/dev/sdz")[4:6] == ("-O", "fast_commit")


def test_external_journal_argv() -> None:
    config = FsConfig("ext", "ext4", {"journal_device": "/dev/loop7"})
    assert fsc.journal_dev_argv(config, "/dev/loop7") == (
        "mke2fs", "-t", "ext4", "-F", "-O", "journal_dev", "-b", "4096", "/dev/loop7")
    assert fsc.mkfs_argv(config, "/dev/loop6")[4:8] == ("-b", "4096", "-J", "device=/dev/loop7")
    with pytest.raises(ConfigError):
        fsc.journal_dev_argv(FsConfig("x", "ext4"), "/dev/loop7")


def test_mkfs_argv_xfs_and_btrfs() -> None:
    xfs = FsConfig("xfs", "xfs", {"su": "128k", "sw": 10, "log_size": "64m",
                                  "inode_size": 1024})
    assert fsc.mkfs_argv(xfs, "/dev/loop2") == (
        "mkfs.xfs", "-f", "-d", "su=131072,sw=10", "-l", "size=67108864", "-i", "size=1024",
        "/dev/loop2")
    logdev = FsConfig("xl", "xfs", {"log_device": "/dev/loop5"}, ("noatime",))
    assert fsc.mkfs_argv(logdev, "/dev/loop2") == (
        "mkfs.xfs", "-f", "-l", "logdev=/dev/loop5", "/dev/loop2")
    assert fsc.mount_argv(logdev, "/dev/loop2", "/mnt/x") == (
        "mount", "-t", "xfs", "-o", "nosuid,nodev,noexec,noatime,logdev=/dev/loop5",
        "/dev/loop2", "/mnt/x")
    btrfs = FsConfig("b", "btrfs", {"data": "single", "metadata": "dup"})
    assert fsc.mkfs_argv(btrfs, "/dev/loop2") == (
        "mkfs.btrfs", "-f", "-d", "single", "-m", "dup", "/dev/loop2")


def test_mount_and_small_argv() -> None:
    config = FsConfig("dj", "ext4", mount=("noatime", "data=journal"))
    assert fsc.mount_argv(config, "/dev/loop1", "/mnt/a") == (
        "mount", "-t", "ext4", "-o", "nosuid,nodev,noexec,noatime,data=journal",
        "/dev/loop1", "/mnt/a")
    assert fsc.mount_argv(FsConfig("d", "ext4"), "/dev/loop1", "/mnt/a") == (
        "mount", "-t", "ext4", "-o", "nosuid,nodev,noexec", "/dev/loop1", "/mnt/a")
    assert fsc.wipefs_argv("/dev/loop1") == ("wipefs", "--all", "--force", "/dev/loop1")
    assert fsc.setra_argv("/dev/loop1", 4096) == ("blockdev", "--setra", "4096", "/dev/loop1")
    assert fsc.umount_argv("/mnt/a", lazy=True) == ("umount", "-l", "/mnt/a")
    with pytest.raises(ConfigError):
        fsc.setra_argv("/dev/loop1", -5)


def test_argv_builders_refuse_invalid_configs() -> None:
    with pytest.raises(ConfigError) as e:
        fsc.mkfs_argv(FsConfig("bad", "ext4", {"su": "128k"}), "/dev/loop1")
    assert e.value.problems == [("mkfs.su", "'su' is an mkfs option of xfs, not of ext4")]
    with pytest.raises(ConfigError):
        fsc.mkfs_argv(FsConfig("as is"), "/dev/loop1")


def test_setup_commands_in_the_order_they_run() -> None:
    config = FsConfig("ext", "ext4", {"journal_device": "/dev/loop7", "block_size": "4k"},
                      ("noatime",), readahead=256, scheduler="none")
    steps = fsc.setup_commands(config, "/dev/loop6", "/tmp/m")
    assert [(s.request, s.argv[0]) for s in steps] == [
        ("mkfs", "wipefs"), ("mkfs", "wipefs"), ("mkfs", "mke2fs"), ("mkfs", "mke2fs"),
        ("mount", "mount"), ("setra", "blockdev"), ("scheduler", "write")]
    assert steps[1].argv == fsc.wipefs_argv("/dev/loop7")
    assert steps[2].argv == fsc.journal_dev_argv(config, "/dev/loop7")
    assert steps[3].argv == fsc.mkfs_argv(config, "/dev/loop6")
    assert steps[4].argv == fsc.mount_argv(config, "/dev/loop6", "/tmp/m")
    assert steps[6].argv[1].endswith("/queue/scheduler") and steps[6].argv[2] == "none"
    # without a mountpoint: formatting only (the helper's mkfs request)
    assert [s.argv for s in fsc.setup_commands(config, "/dev/loop6", None)] == [
        s.argv for s in steps if s.request != "mount"]


def test_setup_commands_refuse_what_formats_nothing_or_is_invalid() -> None:
    with pytest.raises(ConfigError):
        fsc.setup_commands(FsConfig("as is"), "/dev/loop1", "/tmp/m")
    with pytest.raises(ConfigError):
        fsc.setup_commands(FsConfig("bad", "ext4", {"su": "128k"}), "/dev/loop1", "/tmp/m")


def test_previews_name_the_device_and_the_mountpoint_pattern() -> None:
    assert fsc.preview_device("format", "/dev/sdz") == "/dev/sdz"
    assert fsc.preview_device("image", "/var/tmp/x.img") == fsc.IMAGE_DEVICE
    assert fsc.preview_device("directory", "/mnt") == fsc.UNKNOWN_DEVICE
    assert fsc.MOUNT_PREFIX in fsc.preview_mountpoint()
    assert fsc.command_line(("mount", "-o", "a b", "/dev/x")) == "mount -o 'a b' /dev/x"
