"""system.mountinfo: the one parser (octal escapes undone) and its lookups.

The captured lines in tests/fixtures/mountinfo are read by hand; the README there says how each
was made. A real mount at a path with a space is found in tests/integration/test_mountinfo_real.py.
"""

from __future__ import annotations

from disklab.core.system.mountinfo import (
    MountEntry,
    mount_at,
    mount_of,
    mounts,
    parse_mountinfo,
    unescape,
)
from tests.helpers import fixture_text


def test_a_captured_line() -> None:
    (row,) = parse_mountinfo(fixture_text("mountinfo/ext4-data-journal.txt"))
    assert row == MountEntry(
        devno="7:1", root="/", mountpoint="/tmp/cap/m", options="rw,noatime", fstype="ext4",
        source="/dev/loop1", super_options="rw,nodioread_nolock,nodelalloc,journal_async_commit,"
                                           "commit=300,stripe=320,data=journal")
    options = row.option_list()
    assert options[:2] == ["rw", "noatime"] and options.count("rw") == 1
    assert "data=journal" in options and "commit=300" in options


def test_escaped_paths_are_unescaped() -> None:
    rows = parse_mountinfo(fixture_text("mountinfo/escaped-paths.txt"))
    assert [r.mountpoint for r in rows] == ["/tmp/cap/a b", "/tmp/cap/tab\there",
                                            "/tmp/cap/new\nline", "/tmp/cap/back\\slash",
                                            "/tmp/cap/back\\040slash"]
    assert unescape("a\\134040b") == "a\\040b"  # an escaped backslash starts no escape
    assert unescape("plain") == "plain"


def test_lines_that_do_not_read_are_skipped() -> None:
    assert parse_mountinfo("garbage\n44 27 7:1 / /m rw\n\n") == []


def test_mount_at_finds_the_visible_entry() -> None:
    twice = ("44 27 7:1 / /mnt rw - ext4 /dev/loop1 rw\n"
             "45 44 7:2 / /mnt rw,noatime - xfs /dev/loop2 rw\n")
    found = mount_at("/mnt", twice)
    assert found is not None and found.fstype == "xfs"
    assert mount_at("/elsewhere", twice) is None


def test_this_process_sees_root_and_proc() -> None:
    assert any(m.mountpoint == "/" for m in mounts())
    proc = mount_of("/proc/self")
    assert proc is not None and proc.fstype == "proc" and proc.mountpoint == "/proc"
