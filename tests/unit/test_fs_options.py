"""Filesystem configuration options: every problem found at once, keyed as the plan names it."""

from __future__ import annotations

import pytest

from disklab.core.fs.options import (
    config_from_toml,
    config_to_dict,
    device_options,
    mount_refusal,
)
from disklab.core.vocab.model import FsConfig


def problems(table: dict, index: int = 1) -> dict[str, str]:
    config, found = config_from_toml(table, index)
    assert (config is None) == bool(found)
    return dict(found)


def test_the_issue_examples_are_valid_and_canonical() -> None:
    config, found = config_from_toml({
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
    xfs, found = config_from_toml({"label": "xfs su=128k sw=10", "fs": "xfs",
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
    config, found = config_from_toml({"label": "as is", "readahead": 256})
    assert found == [] and config is not None and config.as_is


def test_every_problem_is_reported_at_once() -> None:
    found = problems({"label": "x", "fs": "ext4", "mkfs": {"su": "128k", "stride": 0},
                      "mount": ["bogus,opt", "noatime"]})
    assert set(found) == {"config[1].mkfs.su", "config[1].mkfs.stride", "config[1].mount[1]"}


def test_a_device_option_takes_its_confirm_next_to_it() -> None:
    """journal_device = { path, confirm }: the path is the option's value (what mke2fs gets),
    the confirm is kept by option name and written back in the same table form."""
    confirm = "/dev/sdc1 WD-1234#sdc1 1073741824"
    table = {"label": "j", "fs": "ext4",
             "mkfs": {"journal_device": {"path": "/dev/sdc1", "confirm": confirm}}}
    config, problems = config_from_toml(table)
    assert problems == [] and config is not None
    assert config.mkfs == {"journal_device": "/dev/sdc1"}
    assert config.confirms == {"journal_device": confirm}
    assert device_options(config) == {"journal_device": "/dev/sdc1"}
    assert config_to_dict(config)["mkfs"] == table["mkfs"]
    bare, _ = config_from_toml({"label": "j", "fs": "ext4", "mkfs": {"journal_device": "/dev/x"}})
    assert bare is not None and bare.confirms == {}
    xfs, _ = config_from_toml({"label": "x", "fs": "xfs",
                               "mkfs": {"log_device": {"path": "/dev/sdd", "confirm": confirm}}})
    assert xfs is not None and device_options(xfs) == {"log_device": "/dev/sdd"}
    _, bad = config_from_toml({"label": "j", "fs": "ext4",
                               "mkfs": {"journal_device": {"confirm": confirm, "size": 1}}})
    assert ("config[1].mkfs.journal_device", "unknown key 'size' (known: path, confirm)") in bad
    assert any(k == "config[1].mkfs.journal_device" and "needs path" in m for k, m in bad)


@pytest.mark.parametrize(("option", "refused"), [
    ("user_xattr", None),
    ("nouser_xattr", None),
    ("inode_readahead_blks=64", None),
    ("acl", None),
    ("bind", "option of mount(8) itself"),
    ("x-systemd.automount", "option of mount(8) itself"),
    ("journal_path=/dev/sda", "names a device or file"),
    ("foo,bar", "not a plain mount option"),
    ("foo=$(reboot)", "not a plain mount option"),
    ("foo=a b", "not a plain mount option"),
    ("dta=journal", "did you mean 'data'"),
])
def test_an_option_the_table_does_not_know_is_passed_through_when_it_is_a_plain_token(
        option: str, refused: str | None) -> None:
    found = problems({"label": "x", "fs": "ext4", "mount": [option]})
    if refused is None:
        assert found == {}
    else:
        assert refused in found["config[1].mount[1]"]


def test_the_kernels_refusal_of_a_passed_through_option_is_a_config_error_naming_it() -> None:
    config = FsConfig("x", "ext4", mount=("noatime", "bogusopt"))
    error = mount_refusal(config, "mount: wrong fs type, bad option",
                          ['[ 12.3] EXT4-fs (loop3): Unrecognized mount option "bogusopt" or '
                           "missing value"])
    assert error is not None and error.problems[0][0] == "mount[2]"
    assert "bogusopt" in error.problems[0][1] and "Unrecognized mount option" in str(error)
    assert mount_refusal(FsConfig("y", "ext4", mount=("noatime",)), "failed", []) is None
