"""Mount options DiskLab's table does not know go to the kernel, which checks them: ext4 with
user_xattr (the data=journal study's option) mounts and runs; an option the kernel does not
know fails its configuration with the kernel's own words; ext2 and ext3 configurations (the
RAID study's create/delete tables) are made, mounted and read back as such."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from disklab.core.library import Library

pytestmark = [pytest.mark.root]

PLAN = """\
name = "pass-through and ext2/ext3"
[target]
image = {{ path = "{image}", size = "256m" }}

[[config]]
label = "ext2"
fs = "ext2"

[[config]]
label = "ext3 ordered"
fs = "ext3"
mount = ["data=ordered"]

[[config]]
label = "ext4 user_xattr"
fs = "ext4"
mount = ["noatime", "user_xattr"]

[[config]]
label = "ext4 bogus"
fs = "ext4"
mount = ["disklab_no_such_option"]

[[test]]
tool = "tree"
dirs = 2
files_per_dir = 10
file_size = "16k"
"""


def test_passed_through_options_are_the_kernels_to_refuse_and_ext2_ext3_are_made(
        tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (loop devices, mount)")
    plan = tmp_path / "plan.toml"
    image = tmp_path / "i.img"
    plan.write_text(PLAN.format(image=image))
    library = tmp_path / "lib.sqlite3"
    valid = subprocess.run([sys.executable, "-m", "disklab.cli.main", "plan", "validate",
                            str(plan)], capture_output=True, text=True)
    assert valid.returncode == 0, valid.stdout + valid.stderr
    done = subprocess.run([sys.executable, "-m", "disklab.cli.main", "run", str(plan),
                           "--library", str(library), "--json"], capture_output=True,
                          text=True, timeout=300)
    events = [json.loads(line) for line in done.stdout.splitlines()]
    notices = [e["message"] for e in events if e["event"] == "Notice" and e["level"] == "error"]
    (refusal,) = [n for n in notices if n.startswith("ext4 bogus")]
    assert "mount[1]" in refusal and "disklab_no_such_option" in refusal
    assert "kernel refused" in refusal and "Unknown parameter" in refusal  # the kernel's words
    applied = {e["config"]: e["readback"] for e in events if e["event"] == "ConfigApplied"}
    assert set(applied) == {"ext2", "ext3 ordered", "ext4 user_xattr"}
    assert applied["ext2"]["fs"] == "ext2" and not applied["ext2"]["mismatches"]
    assert applied["ext3 ordered"]["fs"] == "ext3"
    assert not applied["ext3 ordered"]["mismatches"]
    assert not applied["ext4 user_xattr"]["mismatches"]
    finished = [e for e in events if e["event"] == "CaseFinished"]
    assert len(finished) == 3
    with Library.open(library) as lib:
        assert len(lib.list_sessions()) == 1
        rows = lib.db.execute("SELECT count(*) FROM metric WHERE name = 'delete:seconds'")
        assert rows.fetchone()[0] == 3
    assert not image.exists()
    losetup = subprocess.run(["losetup", "-j", str(image)], capture_output=True, text=True)
    assert losetup.stdout == ""
