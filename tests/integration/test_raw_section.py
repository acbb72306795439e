"""The SAN study in one plan and one session: `raw = true` tests read and write the image's
loop device itself (the LUN), then each configuration is made on it and the filesystem tests
run; the raw section's rows stand beside the configurations' in one library session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from disklab.core.library import Library
from disklab.core.vocab.model import RAW_SECTION

pytestmark = [pytest.mark.root]

PLAN = """\
name = "LUN, then filesystem"
[target]
image = {{ path = "{image}", size = "1g" }}

[[config]]
label = "xfs su=64k sw=5"
fs = "xfs"
mkfs = {{ su = "64k", sw = 5 }}

[[test]]
tool = "engine"
raw = true
mode = ["write", "read"]
block_size = "320k"
size = "32000k"
queue_depth = [1, 4]
direct = true

[[test]]
tool = "dd"
raw = true
mode = ["write", "read"]
block_size = "320k"
size = "32000k"
direct = true

[[test]]
tool = "engine"
mode = ["write", "read"]
block_size = "1m"
size = "16m"
streams = 2
direct = true
"""


def test_a_raw_section_and_a_filesystem_section_run_into_one_session(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (loop devices, mkfs, mount)")
    image = tmp_path / "lun.img"
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(image=image))
    library = tmp_path / "lib.sqlite3"
    done = subprocess.run([sys.executable, "-m", "disklab.cli.main", "run", str(plan),
                           "--library", str(library), "--json"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    applied = [e for e in events if e["event"] == "ConfigApplied"]
    assert [e["config"] for e in applied] == [RAW_SECTION, "xfs su=64k sw=5"]
    device = applied[0]["readback"]["device"]
    assert device.startswith("/dev/loop") and applied[0]["readback"]["identity"].startswith(
        device + " ")
    assert applied[1]["readback"]["fs"] == "xfs"
    # the raw cases ran on the loop device itself, the others on files of the filesystem
    started = {e["case"]["id"]: e for e in events if e["event"] == "CaseStarted"}
    raw = [e for e in started.values() if e["case"]["config"] == RAW_SECTION]
    assert len(raw) == 6
    for e in raw:
        argv = " ".join(e["argv"])
        assert f"--file {device} " in argv or f"of={device} " in argv or f"if={device} " in argv
    for e in started.values():
        if e["case"]["config"] != RAW_SECTION:
            assert device not in " ".join(e["argv"])
    # nothing of the image is left attached
    left = subprocess.run(["losetup", "-j", str(image)], capture_output=True, text=True).stdout
    assert left == ""

    lib = Library.open(library)
    try:
        (session,) = lib.list_sessions()
        assert session["status"] == "finished"
        rows = {(r["config"], r["tool"], r["metric"]) for r in lib.results(session["id"])
                if r["mean"] and r["mean"] > 0}
        for tool in ("engine", "dd"):
            for metric in ("write", "read"):
                assert (RAW_SECTION, tool, metric) in rows
        assert {("xfs su=64k sw=5", "engine", "write"), ("xfs su=64k sw=5", "engine", "read")
                } <= rows
    finally:
        lib.close()
