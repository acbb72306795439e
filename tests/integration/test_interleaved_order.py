"""An interleaved order (issue 44, point 8): configurations run one after another, so a change
of the machine during the baseline lands on every other configuration as a "significant"
difference. With `order = "interleaved"` each configuration's repeat r runs before any repeat
r + 1 (each configuration made again for its round), the session records its order, and a
plan with an order DiskLab does not know is refused with its line and key."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.root, pytest.mark.slow]

PLAN = """\
name = "interleaved"
repeats = 2
order = "{order}"

[target]
image = {{ path = "{image}", size = "256m" }}

[[config]]
label = "ext4 a"
fs = "ext4"

[[config]]
label = "ext4 b"
fs = "ext4"
mount = ["nodelalloc"]

[[test]]
tool = "engine"
mode = "write"
block_size = "1m"
size = "8m"
direct = true
"""


def disklab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "disklab.cli.main", *args],
                          capture_output=True, text=True, timeout=600)


def test_interleaved_runs_each_configurations_round_before_the_next(tmp_path: Path) -> None:
    image = tmp_path / "scratch.img"
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(order="interleaved", image=image))
    library = tmp_path / "library.sqlite3"
    done = disklab("run", str(plan), "--library", str(library), "--json")
    assert done.returncode == 0, done.stderr + done.stdout[-3000:]
    events = [json.loads(x) for x in done.stdout.splitlines()]
    applied = [e["config"] for e in events if e["event"] == "ConfigApplied"]
    assert applied == ["ext4 a", "ext4 b", "ext4 a", "ext4 b"]
    runs = [(e["case"]["config"], e["repeat"]) for e in events if e["event"] == "CaseStarted"]
    assert runs == [("ext4 a", 1), ("ext4 b", 1), ("ext4 a", 2), ("ext4 b", 2)]
    shown = json.loads(disklab("show", "interleaved", "--library", str(library),
                               "--json").stdout)
    assert shown["session"]["host"]["order"] == "interleaved"
    means = {r["config"]: r for r in shown["results"] if r["metric"] == "write"}
    assert set(means) == {"ext4 a", "ext4 b"} and all(r["n"] == 2 for r in means.values())
    assert not image.exists()


def test_an_unknown_order_is_refused_with_its_line_and_key(tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(order="shuffled", image=tmp_path / "x.img"))
    done = disklab("plan", "validate", str(plan))
    assert done.returncode == 2
    assert "line 3" in done.stderr + done.stdout and "order" in done.stderr + done.stdout
    assert "interleaved" in done.stderr + done.stdout
