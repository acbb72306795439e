"""An external journal device is destroyed like the target, so it is confirmed like the target.

Real loop devices (the Loops helper, detached by their own images' names): a plan naming a
journal device without its confirm is refused by `plan validate` and `run` with the TOML key and
line, and the device keeps its data; with the confirm copied from `disklab devices --json` and
every device named by a --yes-destroy, ext4 is made on one loop device with its journal on the
other (dumpe2fs reads it back); a journal device that is mounted or holds the library is refused
whatever the confirm says; the privileged helper refuses to wipe one without the confirm.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from disklab.core.helper_client import Privileged
from disklab.core.system import devices
from disklab.core.vocab.errors import SafetyError
from tests.helpers import Loops, ask

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root for loop devices and mkfs"),
]
MARKER = b"DISKLAB-JOURNAL-MARKER\n" * 2048  # 46 KiB at the start of the journal device
PLAN = """\
name = "external journal"

[target]
format = "{target}"
confirm = "{target_confirm}"

[[config]]
label = "ext4 external journal"
fs = "ext4"
mount = ["noatime"]
mkfs = {{ journal_device = {journal} }}

[[test]]
tool = "dd"
mode = "write"
block_size = "1m"
size = "8m"
direct = true
"""
JOURNAL_LINE = 11  # the line of mkfs = { journal_device = ... } in PLAN


@pytest.fixture
def loops(tmp_path: Path) -> Iterator[Loops]:
    box = Loops(tmp_path)
    try:
        yield box
    finally:
        box.cleanup()


def disklab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "disklab.cli.main", *args],
                          capture_output=True, text=True, timeout=600)


def plan_file(tmp_path: Path, target: str, journal_toml: str) -> Path:
    path = tmp_path / "journal.toml"
    path.write_text(PLAN.format(target=target, target_confirm=devices.identity(target),
                                journal=journal_toml))
    assert path.read_text().splitlines()[JOURNAL_LINE - 1].startswith("mkfs = ")
    return path


def table(path: str, confirm: str) -> str:
    return f'{{ path = "{path}", confirm = "{confirm}" }}'


def marked(loops: Loops, name: str) -> str:
    """A loop device whose first bytes are MARKER: whether it was wiped is read back."""
    image = loops.image(name, "64M")
    with image.open("r+b") as f:
        f.write(MARKER)
    return loops.attach(image)


def head(device: str) -> bytes:
    with open(device, "rb") as f:
        return f.read(len(MARKER))


def test_a_journal_device_without_confirm_is_refused_and_keeps_its_data(
        loops: Loops, tmp_path: Path) -> None:
    target, journal = loops.device("target", "256M"), marked(loops, "journal")
    library = str(tmp_path / "lib.sqlite3")
    plan = plan_file(tmp_path, target, f'"{journal}"')

    done = disklab("plan", "validate", str(plan), "--library", library)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"line {JOURNAL_LINE}: config[1].mkfs.journal_device:" in done.stderr
    assert "disklab devices" in done.stderr and "Traceback" not in done.stderr
    ran = disklab("run", str(plan), "--library", library, "--yes-destroy", target,
                  "--yes-destroy", journal)
    assert ran.returncode == 2 and "config[1].mkfs.journal_device" in ran.stderr

    # a confirm that names another device (the target's) is refused too
    plan = plan_file(tmp_path, target, table(journal, devices.identity(target)))
    done = disklab("plan", "validate", str(plan), "--library", library)
    assert done.returncode == 2
    assert f"line {JOURNAL_LINE}: config[1].mkfs.journal_device:" in done.stderr
    assert "does not match" in done.stderr
    assert head(journal) == MARKER  # nothing was wiped
    assert not Path(library).exists() or "external journal" not in disklab(
        "sessions", "--library", library).stdout


def test_a_confirmed_journal_device_is_formatted_and_read_back(
        loops: Loops, tmp_path: Path) -> None:
    target, journal = loops.device("target", "256M"), marked(loops, "journal")
    library = str(tmp_path / "lib.sqlite3")
    listed = disklab("devices", "--json", "--library", library)
    assert listed.returncode == 0, listed.stderr
    confirm = {row["path"]: row["confirm"] for row in json.loads(listed.stdout)["devices"]}[journal]
    plan = plan_file(tmp_path, target, table(journal, confirm))

    done = disklab("plan", "validate", str(plan), "--library", library)
    assert done.returncode == 0, done.stderr
    show = disklab("plan", "show", str(plan), "--library", library)
    assert f"setup:   wipefs --all --force {journal}" in show.stdout
    assert f"setup:   mke2fs -t ext4 -F -O journal_dev -b 4096 {journal}" in show.stdout

    # the target alone is not enough: the journal device must be named too
    partly = disklab("run", str(plan), "--library", library, "--yes-destroy", target)
    assert partly.returncode == 2
    assert f"line {JOURNAL_LINE}: config[1].mkfs.journal_device:" in partly.stderr
    assert f"--yes-destroy {journal}" in partly.stderr
    assert head(journal) == MARKER

    ran = disklab("run", str(plan), "--library", library, "--json",
                  "--yes-destroy", target, "--yes-destroy", journal)
    assert ran.returncode == 0, ran.stderr[-3000:] + ran.stdout[-3000:]
    events = [json.loads(line) for line in ran.stdout.splitlines()]
    (applied,) = [e for e in events if e["event"] == "ConfigApplied"]
    assert applied["mismatches"] == []
    assert head(journal) != MARKER  # wiped and formatted as the journal
    fs = subprocess.run(["dumpe2fs", "-h", target], capture_output=True, text=True).stdout
    jdev = subprocess.run(["dumpe2fs", "-h", journal], capture_output=True, text=True).stdout
    assert "Journal device:" in fs and "has_journal" in fs
    assert "journal_dev" in jdev
    journal_uuid = next(line.split(":", 1)[1].strip() for line in fs.splitlines()
                        if line.startswith("Journal UUID:"))
    assert journal_uuid == next(line.split(":", 1)[1].strip() for line in jdev.splitlines()
                                if line.startswith("Filesystem UUID:"))


def test_a_mounted_journal_device_is_refused_whatever_the_confirm(
        loops: Loops, tmp_path: Path) -> None:
    target, journal = loops.device("target", "256M"), loops.device("journal")
    mnt = loops.mount(journal, "mnt")
    (mnt / "keep").write_text("mine")
    plan = plan_file(tmp_path, target, table(journal, devices.identity(journal)))
    done = disklab("plan", "validate", str(plan), "--library", str(tmp_path / "lib.sqlite3"))
    assert done.returncode == 2
    assert f"line {JOURNAL_LINE}: config[1].mkfs.journal_device:" in done.stderr
    assert "class mounted" in done.stderr
    assert os.path.ismount(mnt) and (mnt / "keep").read_text() == "mine"


def test_a_journal_device_holding_the_library_is_refused_whatever_the_confirm(
        loops: Loops, tmp_path: Path) -> None:
    target, journal = loops.device("target", "256M"), loops.device("journal")
    mnt = loops.mount(journal, "lib")
    library = str(mnt / "library.sqlite3")
    plan = plan_file(tmp_path, target, table(journal, devices.identity(journal)))
    done = disklab("plan", "validate", str(plan), "--library", library)
    assert done.returncode == 2
    assert f"line {JOURNAL_LINE}: config[1].mkfs.journal_device:" in done.stderr
    assert "DiskLab's library" in done.stderr and "class system" in done.stderr


def test_the_helper_refuses_to_wipe_a_journal_device_without_its_confirm(
        loops: Loops) -> None:
    target, journal = loops.device("target", "256M"), marked(loops, "journal")
    config = {"label": "x", "fs": "ext4", "mkfs": {"journal_device": journal}}
    with Privileged() as helper:
        with pytest.raises(SafetyError, match="needs the plan's confirm") as e:
            ask(helper, "mkfs", device=target, confirm=devices.identity(target),
                           config=config)
        assert e.value.ran == []  # type: ignore[attr-defined] - nothing ran
        with pytest.raises(SafetyError, match="does not match"):
            ask(helper, "mkfs", device=target, confirm=devices.identity(target),
                           config=config, journal_confirm=devices.identity(target))
        with pytest.raises(SafetyError, match="is the target itself"):
            ask(helper, "mkfs", device=target, confirm=devices.identity(target),
                           config={**config, "mkfs": {"journal_device": target}},
                           journal_confirm=devices.identity(target))
    assert head(journal) == MARKER
