"""Plans that passed `plan validate` and failed at run time (issue 43) are refused by the check,
each with its line and key: an image path holding a NUL, an image larger than the filesystem
under it holds in one file (ext4: 16 TiB), xfs on less than mkfs.xfs's 300 MB, a placement
spelt as one comma-separated string or as a list inside the list, and bonnie++'s `user` where
that user cannot make its files (bonnie++ -u nobody in a directory of root's: "Can't make
directory ./Bonnie.PID" mid-run)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from disklab.core.plan.parse import parse_plan
from disklab.core.system.mountinfo import mount_of
from disklab.core.vocab.errors import PlanError

IMAGE = """\
name = "image"
[target]
image = {{ path = "{path}", size = "{size}" }}{partitions}
[[config]]
label = "made"
fs = "{fs}"
[[test]]
tool = "engine"
mode = "write"
size = "64m"
"""

PLACED = """\
name = "placed"
[targets.a]
directory = "{a}"
[targets.b]
directory = "{b}"
[[test]]
tool = "engine"
mode = "write"
size = "8m"
{on}
"""

BONNIE = """\
name = "bonnie as another user"
[target]
{target}
[[config]]
label = "made"
fs = "ext4"
[[test]]
tool = "bonnie"
size = "0"
files = 1
user = "{user}"
"""


def refused(text: str) -> list[str]:
    with pytest.raises(PlanError) as e:
        parse_plan(text)
    return [str(p) for p in e.value.problems]


def image(tmp_path: Path, size: str = "1g", fs: str = "ext4", partitions: int = 0,
          path: str | None = None) -> str:
    return IMAGE.format(path=path or f"{tmp_path}/t.img", size=size, fs=fs,
                        partitions=f"\npartitions = {partitions}" if partitions else "")


def test_an_image_path_holding_a_nul_is_refused(tmp_path: Path) -> None:
    found = refused(image(tmp_path, path=f"{tmp_path}/a\\u0000b.img"))
    assert len(found) == 1 and found[0].startswith("line 3: target.image: path ")
    assert "control character" in found[0]


DIRECTORY = """\
name = "directory"
[target]
directory = "{path}"
[[test]]
tool = "engine"
mode = "write"
size = "8m"
"""


@pytest.mark.parametrize("char", ["\\u0000", "\\n", "\\u001b", "\\u007f"])
def test_a_directory_path_holding_a_control_character_is_refused(tmp_path: Path,
                                                                 char: str) -> None:
    """As an image path is: one line naming the key, the character escaped, not printed raw
    (a NUL or an escape sequence in "does not exist")."""
    found = refused(DIRECTORY.format(path=f"{tmp_path}/a{char}b"))
    assert len(found) == 1 and found[0].startswith("line 3: target.directory: path "), found
    assert "control character" in found[0] and "does not exist" not in found[0], found
    assert not any(ord(c) < 32 or c == "\x7f" for c in found[0]), found


def test_an_image_larger_than_its_filesystem_holds_in_one_file_is_refused(
        tmp_path: Path) -> None:
    fs = mount_of(str(tmp_path))
    fstype = fs.fstype if fs else "?"
    if fstype not in ("ext4", "ext3", "ext2"):
        pytest.skip(f"{tmp_path} is on {fstype}: it holds files of 100 TiB")
    found = refused(image(tmp_path, size="100t"))
    assert len(found) == 1, found
    assert found[0].startswith(f"line 3: target.image: size 100t: {fstype} under {tmp_path} "
                               "cannot hold a file that large (File too large)"), found
    assert not list(tmp_path.iterdir())  # the question left nothing behind
    parse_plan(image(tmp_path, size="8t"))  # sparse, larger than the free space: a warning


@pytest.mark.parametrize(("size", "partitions", "says"), [
    ("256m", 0, "t.img (256m) is smaller"),
    ("299m", 0, "t.img (299m) is smaller"),  # in the minimum's unit: not "(314 MB)"
    ("1g", 4, "partition target1 (255m) is smaller"),
])
def test_xfs_below_its_least_size_is_refused(tmp_path: Path, size: str, partitions: int,
                                             says: str) -> None:
    found = refused(image(tmp_path, size=size, fs="xfs", partitions=partitions))
    assert len(found) == 1, found
    line = 7 if partitions else 6
    assert found[0].startswith(f"line {line}: config[1].fs: xfs needs at least 300m") and \
        says in found[0], found
    parse_plan(image(tmp_path, size="300m", fs="xfs"))
    parse_plan(image(tmp_path, size="256m", fs="ext4"))


@pytest.mark.parametrize(("on", "says"), [
    ('on = "a, b, a+b"', "'a, b, a+b' is one string: several placements are a list (an axis),"
                         ' on = ["a", "b", "a+b"]'),
    ('on = [["a"]]', "['a'] is not a placement: a placement is a string"),
    ('on = [["a", "b"]]', "['a', 'b'] is not a placement"),
])
def test_a_placement_is_one_string_and_an_axis_a_list_of_them(tmp_path: Path, on: str,
                                                               says: str) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    text = PLACED.format(a=tmp_path / "a", b=tmp_path / "b", on=on)
    found = refused(text)
    assert len(found) == 1 and found[0].startswith("line 10: test[1].on: ") and says in \
        found[0], found
    fine = parse_plan(text.replace(on, 'on = ["a", "b", "a+b"]'))
    assert fine.plan.tests[0].params["on"] == ("a", "b", "a+b")


@pytest.mark.skipif(os.geteuid() != 0, reason="bonnie++ -u is given when it runs as root")
def test_bonnies_user_must_be_able_to_make_its_files_where_it_runs(tmp_path: Path) -> None:
    mine = tmp_path / "roots"
    mine.mkdir(mode=0o755)
    found = refused(BONNIE.format(target=f'directory = "{mine}"', user="nobody")
                    .replace('[[config]]\nlabel = "made"\nfs = "ext4"\n', ""))
    assert len(found) == 1 and found[0].startswith("line 8: test[1].user: bonnie++ -u nobody "
                                                   f"cannot make its files in {mine}"), found
    found = refused(BONNIE.format(target=f'image = {{ path = "{tmp_path}/b.img", size = "1g" }}',
                                  user="nobody"))
    assert len(found) == 1 and "the filesystem DiskLab makes" in found[0], found
    assert found[0].startswith("line 11: test[1].user: ")
    shared = Path(tempfile.mkdtemp(prefix="disklab-test-", dir="/var/tmp"))
    try:  # /var/tmp lets anyone through; the directory lets anyone write (sticky)
        shared.chmod(0o1777)
        parse_plan(BONNIE.format(target=f'directory = "{shared}"', user="nobody")
                   .replace('[[config]]\nlabel = "made"\nfs = "ext4"\n', ""))
    finally:
        shared.rmdir()
    parse_plan(BONNIE.format(target=f'directory = "{mine}"', user="root")
               .replace('[[config]]\nlabel = "made"\nfs = "ext4"\n', ""))
