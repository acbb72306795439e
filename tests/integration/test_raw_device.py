"""A raw device target: engine, dd and fio write and read the device itself, after the plan's
confirm matched the device as read now; a wrong confirm and filesystem-only tools are refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from disklab.core.system.devices import identity

pytestmark = [pytest.mark.root]

PLAN = """\
name = "raw"
[target]
device = "{dev}"
confirm = "{confirm}"

[[test]]
tool = "engine"
mode = ["write", "read"]
block_size = "1m"
size = "32m"
direct = true

[[test]]
tool = "dd"
mode = ["write", "read"]
block_size = "1m"
size = "32m"
direct = true

[[test]]
tool = "fio"
rw = "randread"
bs = "4k"
size = "32m"
direct = true
ioengine = "psync"
"""


def disklab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "disklab.cli.main", *args],
                          capture_output=True, text=True, timeout=300)


@pytest.fixture
def loop_device(tmp_path: Path):
    image = tmp_path / "raw.img"
    subprocess.run(["truncate", "-s", "256M", str(image)], check=True)
    dev = subprocess.run(["losetup", "--find", "--show", "--direct-io=on", str(image)],
                         check=True, capture_output=True, text=True).stdout.strip()
    try:
        yield dev
    finally:
        subprocess.run(["losetup", "-d", dev], check=False)


def test_raw_tools_run_on_a_confirmed_device(loop_device: str, tmp_path: Path) -> None:
    plan = tmp_path / "raw.toml"
    plan.write_text(PLAN.format(dev=loop_device, confirm=identity(loop_device)))
    library = tmp_path / "l.sqlite3"
    done = disklab("run", str(plan), "--library", str(library), "--json",
                   "--yes-destroy", loop_device)
    assert done.returncode == 0, done.stderr + done.stdout[-2000:]
    argvs = [e["argv"] for e in map(json.loads, done.stdout.splitlines())
             if e["event"] == "CaseStarted"]
    assert all(any(loop_device in a for a in argv) for argv in argvs)
    shown = json.loads(disklab("show", "raw", "--library", str(library), "--json").stdout)
    main = {(r["tool"], r["metric"]) for r in shown["results"] if r["mean"]}
    assert {("engine", "write"), ("engine", "read"), ("dd", "write"), ("dd", "read"),
            ("fio", "read")} <= main
    # the data is on the device itself: dd wrote zeros over its first 32 MiB
    with open(loop_device, "rb") as f:
        assert f.read(1 << 20) == bytes(1 << 20)


def test_wrong_confirm_and_filesystem_tools_are_refused(loop_device: str, tmp_path: Path
                                                        ) -> None:
    plan = tmp_path / "raw.toml"
    text = PLAN.format(dev=loop_device, confirm=f"{loop_device} someone-else 1")
    plan.write_text(text + '\n[[test]]\ntool = "bonnie"\nsize = "64m"\n')
    done = disklab("plan", "validate", str(plan), "--library", str(tmp_path / "l.sqlite3"))
    assert done.returncode == 2
    assert "target.format" in done.stderr or "target.device" in done.stderr
    assert "does not match" in done.stderr
    assert "bonnie needs a filesystem" in done.stderr


def test_a_device_swapped_between_two_raw_cases_stops_the_run(loop_device: str,
                                                               tmp_path: Path) -> None:
    """The identity is checked again before every raw case: another image attached on the same
    loop number after the first case is refused, and nothing is written to it."""
    from disklab.core.plan.parse import parse_plan
    from disklab.core.run.runner import run_plan
    from disklab.core.vocab.events import CaseFinished, CaseStarted, Notice, SessionFinished

    text = f"""\
name = "swapped"
[target]
device = "{loop_device}"
confirm = "{identity(loop_device)}"
[[test]]
tool = "dd"
mode = ["write", "read"]
block_size = "1m"
size = "8m"
direct = true
"""
    other = tmp_path / "other.img"
    other.write_bytes(b"\xab" * (8 << 20))
    os.truncate(other, 256 << 20)
    started, errors, status = [], [], None
    events = run_plan(parse_plan(text).plan, library_path=str(tmp_path / "l.sqlite3"))
    try:
        for event in events:
            if isinstance(event, CaseStarted):
                started.append(event)
            if isinstance(event, CaseFinished) and len(started) == 1:
                subprocess.run(["losetup", "-d", loop_device], check=True)
                subprocess.run(["losetup", "--direct-io=on", loop_device, str(other)],
                               check=True)
            if isinstance(event, Notice) and event.level == "error":
                errors.append(event.message)
            if isinstance(event, SessionFinished):
                status = event.status
    finally:
        events.close()
    assert len(started) == 1  # the second case never started
    assert status == "failed"
    (error,) = errors
    assert "refused before a raw case" in error and "does not match" in error
    with open(other, "rb") as f:
        assert f.read(8 << 20) == b"\xab" * (8 << 20)
