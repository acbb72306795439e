"""What changed, for targets that are not directories (issue 48): a raw device target's session
records the device's own facts at its start, a scratch image's session the disk under the image
(`backing`), so a history names a read-ahead or scheduler change of either device. Two real
sessions each, the device's read-ahead changed between them through sysfs as a person's udev
rule or `blockdev --setra` would; the history's comparison of the two sessions' records names it.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from disklab.core.history.facts import differences
from disklab.core.library import Library
from disklab.core.system.devices import identity
from tests.helpers import IS_ROOT, Loops, sh

pytestmark = [pytest.mark.root,
              pytest.mark.skipif(not IS_ROOT, reason="loop devices need root")]

RAW = """\
name = "raw weekly"
[target]
device = "{dev}"
confirm = "{confirm}"

[[test]]
tool = "dd"
mode = "read"
block_size = "1m"
size = "8m"
direct = true
"""

IMAGE = """\
name = "image weekly"
drop_caches = false
[target]
image = {{ path = "{image}", size = "128m" }}

[[config]]
label = "ext4"
fs = "ext4"

[[test]]
tool = "dd"
mode = "write"
block_size = "1m"
size = "8m"
direct = true
"""


def _read_ahead(dev: str) -> Path:
    return Path("/sys/block") / Path(dev).name / "queue" / "read_ahead_kb"


def _two_sessions(plan: Path, library: Path, dev: str, *confirm: str
                  ) -> list[dict[str, Any]]:
    """A session at read-ahead 128 KiB, one at 4 KiB (on `dev`): the two host records.
    `confirm`: the run's confirmation of a device it writes to."""
    knob = _read_ahead(dev)
    was = knob.read_text().strip()
    try:
        for kb in ("128", "4"):
            knob.write_text(kb)
            done = subprocess.run([sys.executable, "-m", "disklab", "run", str(plan),
                                   "--library", str(library), "-q", *confirm],
                                  capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, done.stderr
    finally:
        knob.write_text(was)
    with Library.open(library) as lib:
        return [lib.session(s["id"])["host"] for s in sorted(lib.list_sessions(),
                                                             key=lambda s: s["id"])]


@pytest.fixture
def loops(tmp_path: Path) -> Iterator[Loops]:
    made = Loops(tmp_path)
    try:
        yield made
    finally:
        made.cleanup()


def test_a_raw_device_targets_read_ahead_change_is_named(tmp_path: Path, loops: Loops) -> None:
    image = tmp_path / "raw.img"
    sh("truncate", "-s", "64M", str(image))
    loops.images.append(image)
    dev = loops.attach(image)
    plan = tmp_path / "raw.toml"
    plan.write_text(RAW.format(dev=dev, confirm=identity(dev)))
    was, now = _two_sessions(plan, tmp_path / "lib.sqlite3", dev, "--yes-destroy", dev)
    assert was["target_device"]["name"] == Path(dev).name
    changed = {d["fact"]: d["text"] for d in differences(was, now)}
    assert changed.get("read_ahead_kb") == "128 to 4", changed


def test_an_image_targets_disk_read_ahead_change_is_named(tmp_path: Path, loops: Loops) -> None:
    # the image lives on an ext4 of its own loop device: that device is the disk under it
    disk = tmp_path / "disk.img"
    sh("truncate", "-s", "512M", str(disk))
    loops.images.append(disk)
    dev = loops.attach(disk)
    sh("mkfs.ext4", "-q", "-F", dev)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    sh("mount", dev, str(mnt))
    loops.mounts.append(mnt)
    plan = tmp_path / "image.toml"
    plan.write_text(IMAGE.format(image=mnt / "scratch.img"))
    was, now = _two_sessions(plan, tmp_path / "lib.sqlite3", dev)
    assert was["target_device"]["backing"]["name"] == Path(dev).name
    changed = {d["fact"]: d["text"] for d in differences(was, now)}
    assert changed.get("backing.read_ahead_kb") == "128 to 4", changed
