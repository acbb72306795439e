"""Parsers of the filesystem tools' reports, on real outputs.

Expected values are read by hand from the captured outputs in tests/fixtures (dumpe2fs,
xfs_info, btrfs; their READMEs give the exact commands).
"""

from __future__ import annotations

import pytest

from disklab.core.fs import parsers as fsp
from disklab.core.vocab.errors import ParseError
from tests.helpers import fixture_text


def test_parse_dumpe2fs_ext4_with_16m_journal() -> None:
    facts = fsp.parse_dumpe2fs(fixture_text("dumpe2fs/ext4-journal16m-stride.txt"))
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
    main = fsp.parse_dumpe2fs(fixture_text("dumpe2fs/ext4-external-journal.txt"))
    assert main["journal_devno"] == "7:2"  # "Journal device:\t          0x0702"
    assert "journal_size" not in main
    jdev = fsp.parse_dumpe2fs(fixture_text("dumpe2fs/journal-dev.txt"))
    assert jdev["journal_dev"]  # "Filesystem features:      journal_dev metadata_csum"
    assert jdev["journal_size"] == 64 * 1024 * 1024  # "Total journal blocks:     16384" x 4096
    assert jdev["journal_features"] == []  # "Journal features:         (none)"


def test_parse_dumpe2fs_refuses_other_text() -> None:
    with pytest.raises(ParseError) as e:
        fsp.parse_dumpe2fs("dumpe2fs: Bad magic number in super-block while trying to open\n")
    assert e.value.tool == "dumpe2fs"
    with pytest.raises(ParseError) as e:
        fsp.parse_dumpe2fs("Filesystem features: has_journal\nBlock size: four\n")
    assert e.value.line == 2


def test_parse_xfs_info_su_sw() -> None:
    facts = fsp.parse_xfs_info(fixture_text("xfs_info/su128k-sw10.txt"))
    # "data     =                       bsize=4096   blocks=262144, imaxpct=25"
    # "         =                       sunit=32     swidth=320 blks"
    assert facts["sunit"] == 32 * 4096 == 128 * 1024
    assert facts["swidth"] == 320 * 4096
    assert facts["sw"] == 10
    assert facts["inode_size"] == 512  # "meta-data=/dev/loop1             isize=512"
    assert facts["log_size"] == 16384 * 4096  # "log      =internal log  bsize=4096   blocks=16384"
    assert facts["log_device"] == "internal"
    assert fsp.parse_xfs_info(fixture_text("xfs_info/mkfs-su128k-sw10.txt"))["sw"] == 10


def test_parse_xfs_info_external_log() -> None:
    facts = fsp.parse_xfs_info(fixture_text("xfs_info/logdev-isize1024.txt"))
    assert facts["log_device"] == "/dev/loop2"  # "log      =/dev/loop2             bsize=4096"
    assert facts["inode_size"] == 1024  # "meta-data=/dev/loop1             isize=1024"
    assert facts["sunit"] == 0 and facts["sw"] == 0  # "sunit=0      swidth=0 blks"
    with pytest.raises(ParseError):
        fsp.parse_xfs_info("xfs_info: /mnt is not a mounted XFS filesystem\n")


def test_parse_btrfs() -> None:
    df = fsp.parse_btrfs_df(fixture_text("btrfs/filesystem-df-b.txt"))
    assert df["data_profile"] == "single"  # "Data, single: total=8388608, used=0"
    assert df["metadata_profile"] == "dup"  # "Metadata, DUP: total=53673984, used=131072"
    assert df["metadata_total"] == 53673984
    human = fsp.parse_btrfs_df(fixture_text("btrfs/filesystem-df.txt"))
    assert human["system_used"] == 16 * 1024  # "System, DUP: total=8.00MiB, used=16.00KiB"
    show = fsp.parse_btrfs_show(fixture_text("btrfs/filesystem-show.txt"))
    # "Label: none  uuid: 1330559f-c4b5-4df1-882d-5698e574af61"
    assert show["uuid"] == "1330559f-c4b5-4df1-882d-5698e574af61"
    assert show["devices"] == ["/dev/loop1"]  # "devid    1 size 1.00GiB used ... path /dev/loop1"
    assert show["label"] is None
    with pytest.raises(ParseError):
        fsp.parse_btrfs_df("ERROR: not a btrfs filesystem: /mnt\n")
