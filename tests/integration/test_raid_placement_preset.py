"""The raid-lun-placement preset at small scale (the study's table in shape: one row per
placement, write/rewrite/read/reread, per target and in aggregate), on scratch images that
DiskLab makes, partitions and removes itself. iozone's throughput mode takes some 12 s per run
whatever the size (its own pauses between phases), so three of the fourteen placements run:
four LUNs, two streams on one, four partitions of one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from disklab.core import proc
from disklab.core.resources import resource

pytestmark = [pytest.mark.root, pytest.mark.slow]


LUNS = ["a", "a+b", "a+b+c", "a+b+c+d", "a+a", "a+a+a", "a+a+a+a"]
PARTS = ["p1", "p1+p2", "p1+p2+p3", "p1+p2+p3+p4", "p1+p1", "p1+p1+p1", "p1+p1+p1+p1"]
RUN = {json.dumps(LUNS): ["a+b+c+d", "a+a"], json.dumps(PARTS): ["p1+p2+p3+p4"]}


def small(text: str, tmp: Path) -> str:
    """The preset with its images in `tmp`, small sizes, one repeat, no cache drops, and
    three of its placements."""
    for placements, run in RUN.items():
        assert f"on = {placements}" in text  # the study's rows, in its order
        text = text.replace(f"on = {placements}", f"on = {json.dumps(run)}")
    for name in "abcdp":
        text = text.replace(f"/var/tmp/disklab-lun-{name}.img", str(tmp / f"lun-{name}.img"))
    return (text.replace('size = "2g"', 'size = "128m"').replace('size = "8g"', 'size = "512m"')
            .replace('file_size = "512m"', 'file_size = "8m"')
            .replace("repeats = 2", "repeats = 1").replace("drop_caches = true",
                                                             "drop_caches = false"))


def test_the_preset_gives_the_placement_table(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (loop devices, mkfs, mount)")
    missing = [t for t in ("iozone", "sgdisk", "partx") if proc.which(t) is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")
    plan = tmp_path / "raid.toml"
    plan.write_text(small(resource("presets", "raid-lun-placement.toml").read_text(), tmp_path))
    library = tmp_path / "library.sqlite3"
    run = subprocess.run([sys.executable, "-m", "disklab.cli.main", "run", str(plan),
                          "--library", str(library)], capture_output=True, text=True,
                         timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    shown = subprocess.run([sys.executable, "-m", "disklab.cli.main", "show", "1", "--json",
                            "--library", str(library)], capture_output=True, text=True)
    table: dict[str, dict[str, float]] = {}
    for r in json.loads(shown.stdout)["results"]:
        p = r["params"]
        if p.get("target") == "all" and r["metric"] in ("write", "rewrite", "read", "reread"):
            table.setdefault(p["on"], {})[r["metric"]] = r["mean"]
    assert list(table) == [p for run in RUN.values() for p in run]
    for on, row in table.items():
        assert set(row) == {"write", "rewrite", "read", "reread"}, on
        assert all(v > 0 for v in row.values()), (on, row)
    assert not list(tmp_path.glob("lun-*.img"))  # every image DiskLab made is gone
    losetup = subprocess.run(["losetup", "-a"], capture_output=True, text=True).stdout
    assert str(tmp_path) not in losetup
