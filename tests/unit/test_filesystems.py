"""Filesystem configurations: checking, argv, and the parsers of what is read back.

Expected values are read by hand from the captured outputs in tests/fixtures (dumpe2fs,
xfs_info, btrfs, mountinfo; their READMEs give the exact commands).
"""

from __future__ import annotations

import pytest

from disklab.core import filesystems as fsys
from disklab.core.errors import ParseError
from disklab.core.filesystems import ConfigError
from disklab.core.model import FsConfig
from tests.helpers import FIXTURES


def text(rel: str) -> str:
    return (FIXTURES / rel).read_text()


def problems(table: dict, index: int = 1) -> dict[str, str]:
    config, found = fsys.config_from_toml(table, index)
    assert (config is None) == bool(found)
    return dict(found)


# --- validation ----------------------------------------------------------------------------

def test_the_issue_examples_are_valid_and_canonical() -> None:
    config, found = fsys.config_from_toml({
        "label": "ext4 data=journal, 16 MB journal", "fs": "ext4",
        "mkfs": {"journal_size": "16m", "stride": 32, "stripe_width": 320,
                 "bytes_per_inode": 32768},
        "mount": ["noatime", "data=journal", "nodelalloc", "commit=300", "journal_checksum",
                  "journal_async_commit"],
        "readahead": 4096, "scheduler": "mq-deadline"}, 1)
    assert found == []
    assert config is not None
    assert config.mkfs["journal_size"] == 16 * 1024 * 1024  # sizes become bytes
    assert config.mount[1] == "data=journal"
    xfs, found = fsys.config_from_toml({"label": "xfs su=128k sw=10", "fs": "xfs",
                                        "mkfs": {"su": "128k", "sw": 10}, "mount": ["noatime"]})
    assert found == [] and xfs is not None and xfs.mkfs["su"] == 131072


def test_keys_name_the_config_and_the_option() -> None:
    found = problems({"label": "x", "fs": "ext4", "mkfs": {"journal_size": "16q"}}, 2)
    assert list(found) == ["config[2].mkfs.journal_size"]
    assert "16q" in found["config[2].mkfs.journal_size"]


@pytest.mark.parametrize(("table", "key", "words"), [
    # an option of another filesystem
    ({"fs": "ext4", "mkfs": {"su": "128k"}}, "mkfs.su", "xfs, not of ext4"),
    ({"fs": "xfs", "mkfs": {"journal_size": "16m"}}, "mkfs.journal_size", "not of xfs"),
    ({"fs": "ext2", "mkfs": {"journal_size": "16m"}}, "mkfs.journal_size", "ext2 has no journal"),
    ({"fs": "btrfs", "mount": ["data=journal"]}, "mount[1]", "not of btrfs"),
    ({"fs": "ext4", "mount": ["logbsize=256k"]}, "mount[1]", "xfs, not of ext4"),
    ({"fs": "xfs", "mount": ["noatime", "compress=zstd"]}, "mount[2]", "btrfs, not of xfs"),
    # unknown options and keys
    ({"fs": "ext4", "mkfs": {"journal": "16m"}}, "mkfs.journal", "unknown mkfs option"),
    ({"fs": "ext4", "mount": ["dta=journal"]}, "mount[1]", "unknown mount option"),
    ({"fs": "ext4", "color": "red"}, "color", "unknown key"),
    ({"fs": "zfs"}, "fs", "unknown filesystem"),
    # bad values
    ({"fs": "ext4", "mkfs": {"block_size": 3000}}, "mkfs.block_size", "one of 1k, 2k, 4k"),
    ({"fs": "ext4", "mkfs": {"journal_size": "1500k"}}, "mkfs.journal_size", "multiple of 1m"),
    ({"fs": "ext4", "mkfs": {"inode_size": 300}}, "mkfs.inode_size", "power of two"),
    ({"fs": "ext4", "mkfs": {"reserved_percent": 80}}, "mkfs.reserved_percent", "maximum 50"),
    ({"fs": "ext4", "mkfs": {"stride": "32"}}, "mkfs.stride", "not a whole number"),
    ({"fs": "ext4", "mkfs": {"fast_commit": "yes"}}, "mkfs.fast_commit", "true or false"),
    ({"fs": "ext4", "mount": ["data=jornal"]}, "mount[1]", "journal, ordered, writeback"),
    ({"fs": "ext4", "mount": ["commit=soon"]}, "mount[1]", "whole number"),
    ({"fs": "ext4", "mount": ["errors=ignore"]}, "mount[1]", "remount-ro"),
    ({"fs": "ext4", "mount": ["noatime=1"]}, "mount[1]", "takes no value"),
    ({"fs": "ext4", "mount": ["data"]}, "mount[1]", "needs a value"),
    ({"fs": "xfs", "mkfs": {"su": "6k", "sw": 2}}, "mkfs.su", "multiple of 4k"),
    ({"fs": "xfs", "mkfs": {"log_size": "16m"}}, "mkfs.log_size", "minimum 64m"),
    ({"fs": "xfs", "mkfs": {"inode_size": 256}}, "mkfs.inode_size", "512, 1024 or 2048"),
    ({"fs": "xfs", "mount": ["logbsize=100k"]}, "mount[1]", "16k, 32k"),
    ({"fs": "xfs", "mount": ["logbufs=9"]}, "mount[1]", "from 2 to 8"),
    ({"fs": "btrfs", "mkfs": {"data": "raid7"}}, "mkfs.data", "single, dup"),
    ({"fs": "btrfs", "mount": ["compress=zstd:99"]}, "mount[1]", "level"),
    ({"fs": "btrfs", "mount": ["space_cache=v3"]}, "mount[1]", "v1, v2"),
    ({"fs": "ext4", "readahead": -1}, "readahead", "512-byte sectors"),
    ({"fs": "ext4", "readahead": "4096"}, "readahead", "512-byte sectors"),
    ({"fs": "ext4", "scheduler": "cfq"}, "scheduler", "unknown I/O scheduler"),
    # combinations the tools or the kernel refuse
    ({"fs": "xfs", "mkfs": {"su": "128k"}}, "mkfs.sw", "su and sw together"),
    ({"fs": "ext4", "mkfs": {"no_journal": True, "journal_size": "16m"}}, "mkfs.no_journal",
     "contradicts"),
    ({"fs": "ext4", "mount": ["journal_async_commit"]}, "mount", "data=ordered"),
    ({"fs": "ext4", "mount": ["data=journal", "delalloc"]}, "mount", "cannot be combined"),
    ({"fs": "ext4", "mkfs": {"no_journal": True}, "mount": ["data=journal"]}, "mount",
     "need a journal"),
    ({"fs": "ext4", "mkfs": {"block_size": 4096, "journal_size": "2m"}}, "mkfs.journal_size",
     "1024 to 10240000 blocks"),
    ({"fs": "ext4", "mount": ["noatime", "relatime"]}, "mount", "contradict"),
])
def test_bad_configs_are_refused_naming_the_key(table: dict, key: str, words: str) -> None:
    found = problems({"label": "bad", **table}, 3)
    full = f"config[3].{key}"
    assert full in found, found
    assert words in found[full]


def test_label_is_required_and_fs_is_needed_for_options() -> None:
    found = problems({"fs": "ext4"})
    assert "config[1].label" in found
    found = problems({"label": "as is", "mount": ["noatime"]})
    assert "mount options need fs" in found["config[1].mount"]


def test_as_is_config_is_valid_without_fs() -> None:
    config, found = fsys.config_from_toml({"label": "as is", "readahead": 256})
    assert found == [] and config is not None and config.as_is


def test_every_problem_is_reported_at_once() -> None:
    found = problems({"label": "x", "fs": "ext4", "mkfs": {"su": "128k", "stride": 0},
                      "mount": ["bogus", "noatime"]})
    assert set(found) == {"config[1].mkfs.su", "config[1].mkfs.stride", "config[1].mount[1]"}


# --- argv ----------------------------------------------------------------------------------

def test_mkfs_argv_ext4_is_forced_once_and_not_lazy() -> None:
    config = FsConfig("j16", "ext4", {"journal_size": "16m", "stride": 32, "stripe_width": 320,
                                      "bytes_per_inode": 32768, "inode_size": 256,
                                      "reserved_percent": 1, "block_size": "4k"})
    assert fsys.mkfs_argv(config, "/dev/loop3") == (
        "mke2fs", "-t", "ext4", "-F", "-b", "4096", "-i", "32768", "-I", "256", "-m", "1",
        "-J", "size=16",
        "-E", "lazy_itable_init=0,lazy_journal_init=0,stride=32,stripe_width=320", "/dev/loop3")


def test_mkfs_argv_ext4_features_and_lazy_init() -> None:
    config = FsConfig("nj", "ext4", {"no_journal": True, "lazy_init": True})
    assert fsys.mkfs_argv(config, "/dev/sdz") == (
        "mke2fs", "-t", "ext4", "-F", "-O", "^has_journal", "-E", "lazy_itable_init=1",
        "/dev/sdz")
    fc = FsConfig("fc", "ext4", {"fast_commit": True})
    assert fsys.mkfs_argv(fc, "/dev/sdz")[4:6] == ("-O", "fast_commit")


def test_external_journal_argv() -> None:
    config = FsConfig("ext", "ext4", {"journal_device": "/dev/loop7"})
    assert fsys.journal_dev_argv(config, "/dev/loop7") == (
        "mke2fs", "-t", "ext4", "-F", "-O", "journal_dev", "-b", "4096", "/dev/loop7")
    assert fsys.mkfs_argv(config, "/dev/loop6")[4:8] == ("-b", "4096", "-J", "device=/dev/loop7")
    with pytest.raises(ConfigError):
        fsys.journal_dev_argv(FsConfig("x", "ext4"), "/dev/loop7")


def test_mkfs_argv_xfs_and_btrfs() -> None:
    xfs = FsConfig("xfs", "xfs", {"su": "128k", "sw": 10, "log_size": "64m",
                                  "inode_size": 1024})
    assert fsys.mkfs_argv(xfs, "/dev/loop2") == (
        "mkfs.xfs", "-f", "-d", "su=131072,sw=10", "-l", "size=67108864", "-i", "size=1024",
        "/dev/loop2")
    logdev = FsConfig("xl", "xfs", {"log_device": "/dev/loop5"}, ("noatime",))
    assert fsys.mkfs_argv(logdev, "/dev/loop2") == (
        "mkfs.xfs", "-f", "-l", "logdev=/dev/loop5", "/dev/loop2")
    assert fsys.mount_argv(logdev, "/dev/loop2", "/mnt/x") == (
        "mount", "-t", "xfs", "-o", "noatime,logdev=/dev/loop5", "/dev/loop2", "/mnt/x")
    btrfs = FsConfig("b", "btrfs", {"data": "single", "metadata": "dup"})
    assert fsys.mkfs_argv(btrfs, "/dev/loop2") == (
        "mkfs.btrfs", "-f", "-d", "single", "-m", "dup", "/dev/loop2")


def test_mount_and_small_argv() -> None:
    config = FsConfig("dj", "ext4", mount=("noatime", "data=journal"))
    assert fsys.mount_argv(config, "/dev/loop1", "/mnt/a") == (
        "mount", "-t", "ext4", "-o", "noatime,data=journal", "/dev/loop1", "/mnt/a")
    assert fsys.mount_argv(FsConfig("d", "ext4"), "/dev/loop1", "/mnt/a") == (
        "mount", "-t", "ext4", "/dev/loop1", "/mnt/a")
    assert fsys.wipefs_argv("/dev/loop1") == ("wipefs", "--all", "--force", "/dev/loop1")
    assert fsys.setra_argv("/dev/loop1", 4096) == ("blockdev", "--setra", "4096", "/dev/loop1")
    assert fsys.umount_argv("/mnt/a", lazy=True) == ("umount", "-l", "/mnt/a")
    with pytest.raises(ConfigError):
        fsys.setra_argv("/dev/loop1", -5)


def test_argv_builders_refuse_invalid_configs() -> None:
    with pytest.raises(ConfigError) as e:
        fsys.mkfs_argv(FsConfig("bad", "ext4", {"su": "128k"}), "/dev/loop1")
    assert e.value.problems == [("mkfs.su", "'su' is an mkfs option of xfs, not of ext4")]
    with pytest.raises(ConfigError):
        fsys.mkfs_argv(FsConfig("as is"), "/dev/loop1")


# --- parsers on real outputs -----------------------------------------------------------------

def test_parse_dumpe2fs_ext4_with_16m_journal() -> None:
    facts = fsys.parse_dumpe2fs(text("dumpe2fs/ext4-journal16m-stride.txt"))
    assert facts["block_size"] == 4096  # "Block size:               4096"
    assert facts["block_count"] == 262144  # "Block count:              262144"
    assert facts["inode_count"] == 32768  # "Inode count:              32768"
    assert facts["inode_size"] == 256  # "Inode size:\t          256"
    assert facts["journal_size"] == 16 * 1024 * 1024  # "Total journal blocks:     4096" x 4096
    assert facts["stride"] == 32  # "RAID stride:              32"
    assert facts["stripe_width"] == 320  # "RAID stripe width:        320"
    assert facts["has_journal"] and not facts["fast_commit"]
    # "Journal features:         journal_64bit journal_async_commit journal_checksum_v3"
    assert facts["journal_features"] == ["journal_64bit", "journal_async_commit",
                                         "journal_checksum_v3"]
    assert facts["bytes_per_inode"] == 32768  # 262144 x 4096 / 32768
    assert facts["reserved_percent"] == 5.0  # "Reserved block count:     13107" of 262144
    assert facts["errors_behavior"] == "continue"  # "Errors behavior:          Continue"


def test_parse_dumpe2fs_external_journal() -> None:
    main = fsys.parse_dumpe2fs(text("dumpe2fs/ext4-external-journal.txt"))
    assert main["journal_devno"] == "7:2"  # "Journal device:\t          0x0702"
    assert "journal_size" not in main
    jdev = fsys.parse_dumpe2fs(text("dumpe2fs/journal-dev.txt"))
    assert jdev["journal_dev"]  # "Filesystem features:      journal_dev metadata_csum"
    assert jdev["journal_size"] == 64 * 1024 * 1024  # "Total journal blocks:     16384" x 4096
    assert jdev["journal_features"] == []  # "Journal features:         (none)"


def test_parse_dumpe2fs_refuses_other_text() -> None:
    with pytest.raises(ParseError) as e:
        fsys.parse_dumpe2fs("dumpe2fs: Bad magic number in super-block while trying to open\n")
    assert e.value.tool == "dumpe2fs"
    with pytest.raises(ParseError) as e:
        fsys.parse_dumpe2fs("Filesystem features: has_journal\nBlock size: four\n")
    assert e.value.line == 2


def test_parse_xfs_info_su_sw() -> None:
    facts = fsys.parse_xfs_info(text("xfs_info/su128k-sw10.txt"))
    # "data     =                       bsize=4096   blocks=262144, imaxpct=25"
    # "         =                       sunit=32     swidth=320 blks"
    assert facts["sunit"] == 32 * 4096 == 128 * 1024
    assert facts["swidth"] == 320 * 4096
    assert facts["sw"] == 10
    assert facts["inode_size"] == 512  # "meta-data=/dev/loop1             isize=512"
    assert facts["log_size"] == 16384 * 4096  # "log      =internal log  bsize=4096   blocks=16384"
    assert facts["log_device"] == "internal"
    assert fsys.parse_xfs_info(text("xfs_info/mkfs-su128k-sw10.txt"))["sw"] == 10


def test_parse_xfs_info_external_log() -> None:
    facts = fsys.parse_xfs_info(text("xfs_info/logdev-isize1024.txt"))
    assert facts["log_device"] == "/dev/loop2"  # "log      =/dev/loop2             bsize=4096"
    assert facts["inode_size"] == 1024  # "meta-data=/dev/loop1             isize=1024"
    assert facts["sunit"] == 0 and facts["sw"] == 0  # "sunit=0      swidth=0 blks"
    with pytest.raises(ParseError):
        fsys.parse_xfs_info("xfs_info: /mnt is not a mounted XFS filesystem\n")


def test_parse_btrfs() -> None:
    df = fsys.parse_btrfs_df(text("btrfs/filesystem-df-b.txt"))
    assert df["data_profile"] == "single"  # "Data, single: total=8388608, used=0"
    assert df["metadata_profile"] == "dup"  # "Metadata, DUP: total=53673984, used=131072"
    assert df["metadata_total"] == 53673984
    human = fsys.parse_btrfs_df(text("btrfs/filesystem-df.txt"))
    assert human["system_used"] == 16 * 1024  # "System, DUP: total=8.00MiB, used=16.00KiB"
    show = fsys.parse_btrfs_show(text("btrfs/filesystem-show.txt"))
    # "Label: none  uuid: 1330559f-c4b5-4df1-882d-5698e574af61"
    assert show["uuid"] == "1330559f-c4b5-4df1-882d-5698e574af61"
    assert show["devices"] == ["/dev/loop1"]  # "devid    1 size 1.00GiB used ... path /dev/loop1"
    assert show["label"] is None
    with pytest.raises(ParseError):
        fsys.parse_btrfs_df("ERROR: not a btrfs filesystem: /mnt\n")


def test_parse_scheduler_and_mountinfo() -> None:
    assert fsys.parse_scheduler("none [mq-deadline] kyber bfq \n") == "mq-deadline"
    (row,) = fsys.parse_mountinfo(text("mountinfo/ext4-data-journal.txt"))
    assert row["mountpoint"] == "/tmp/cap/m" and row["fstype"] == "ext4"
    options = fsys.entry_options(row)
    assert "noatime" in options and "data=journal" in options and "commit=300" in options


# --- asked vs applied ------------------------------------------------------------------------

def _readback(dumpe2fs: str | None, mountinfo: str, fs: str, **extra: object) -> dict:
    (row,) = fsys.parse_mountinfo(text(mountinfo))
    rb: dict = {"fs": fs, "mount_options": fsys.entry_options(row), **extra}
    if dumpe2fs:
        rb.update(fsys.parse_dumpe2fs(text(dumpe2fs)))
    return rb


def test_no_mismatch_when_the_kernel_applied_everything() -> None:
    config = FsConfig(
        "ext4 data=journal, 16 MB journal", "ext4",
        {"journal_size": "16m", "stride": 32, "stripe_width": 320, "bytes_per_inode": 32768},
        ("noatime", "data=journal", "nodelalloc", "commit=300", "journal_checksum",
         "journal_async_commit"), readahead=4096, scheduler="mq-deadline")
    rb = _readback("dumpe2fs/ext4-journal16m-stride.txt", "mountinfo/ext4-data-journal.txt",
                   "ext4", readahead=4096, scheduler="mq-deadline")
    assert fsys.mismatches(config, rb) == []


def test_mismatches_name_what_differs() -> None:
    config = FsConfig("asked", "ext4", {"journal_size": "32m", "stride": 16},
                      ("data=writeback", "commit=60", "relatime", "errors=remount-ro",
                       "lazytime"),
                      readahead=256, scheduler="bfq")
    rb = _readback("dumpe2fs/ext4-journal16m-stride.txt", "mountinfo/ext4-data-journal.txt",
                   "ext4", readahead=4096, scheduler="mq-deadline")
    found = fsys.mismatches(config, rb)
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
    assert fsys.mismatches(config, rb) == []
    rb["mount_options"] = ["rw", "relatime", "nobarrier", "nodelalloc"]
    assert fsys.mismatches(config, rb) == ["mount[3] barrier: read back nobarrier",
                                           "mount[4] delalloc: read back nodelalloc"]


def test_xfs_and_btrfs_mismatches() -> None:
    xfs = FsConfig("xfs su=128k sw=10", "xfs", {"su": "128k", "sw": 10}, ("noatime",))
    rb = _readback(None, "mountinfo/xfs-su128k-sw10.txt", "xfs",
                   **fsys.parse_xfs_info(text("xfs_info/su128k-sw10.txt")))
    assert fsys.mismatches(xfs, rb) == []
    wide = FsConfig("xfs", "xfs", {"su": "64k", "sw": 4}, ("logbsize=256k",))
    assert fsys.mismatches(wide, rb) == ["mkfs.su: asked 64k, read back 128k",
                                         "mkfs.sw: asked 4, read back 10",
                                         "mount[1] logbsize=256k: read back logbsize=128k"]
    btrfs = FsConfig("b", "btrfs", {"data": "single", "metadata": "dup"},
                     ("compress=zstd", "ssd", "space_cache=v2", "noatime"))
    rb = _readback(None, "mountinfo/btrfs-compress-zstd.txt", "btrfs",
                   **fsys.parse_btrfs_df(text("btrfs/filesystem-df-b.txt")))
    assert fsys.mismatches(btrfs, rb) == []
    other = FsConfig("b", "btrfs", {"metadata": "single"}, ("compress=lzo", "nodatacow"))
    assert fsys.mismatches(other, rb) == [
        "mkfs.metadata: asked single, read back dup",
        "mount[1] compress=lzo: read back compress=zstd:3",
        "mount[2] nodatacow: not among the mount options read back"]


def test_another_filesystem_read_back_is_one_mismatch() -> None:
    rb = {"fs": "ext4", "mount_options": ["rw"]}
    assert fsys.mismatches(FsConfig("x", "xfs"), rb) == ["fs: asked xfs, read back ext4"]
