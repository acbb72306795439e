"""Comparisons are between like cells only, on real sessions:

- the file tree tool on ext2 and ext4 (a scratch image, two repeats), laid out as the RAID
  study lays it out (`columns = ["config", "metric"]`): nothing is tested unless asked; asked
  to compare with ext2, every ext4 delete time is tested against ext2's delete time of the
  same tree, never against a create time, and says so; a test or metric as baseline exits 2;
- the 49-run fio iodepth x numjobs sweep of fio-plot's public data: a 7 x 7 table of values in
  number order, under 120 characters at `--metric read:iops`, `--where` keeping what is asked.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from disklab.cli.main import main
from tests.helpers import FIXTURES, IS_ROOT

SWEEP = FIXTURES / "fio-plot-sweep"

TREE = """\
name = "trees"
repeats = 2

[target]
image = {{ path = "{image}", size = "128m" }}

[[config]]
label = "ext2"
fs = "ext2"

[[config]]
label = "ext4"
fs = "ext4"

[[test]]
tool = "tree"
dirs = [2, 1]
files_per_dir = [20, 4]
file_size = ["4k", "64k"]
zip = [["dirs", "files_per_dir", "file_size"]]

[report]
rows = ["file_size", "files_per_dir", "dirs"]
columns = ["config", "metric"]
metrics = ["create:seconds", "delete:seconds"]
"""


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    capsys.readouterr()
    assert main([*argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.slow
@pytest.mark.skipif(not IS_ROOT, reason="makes a loop device and filesystems (root)")
def test_a_delete_time_is_never_judged_against_a_create_time(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(TREE.format(image=tmp_path / "scratch.img"))
    library = tmp_path / "library.sqlite3"
    assert main(["run", str(plan), "--library", str(library)]) == 0
    lib = ("--library", str(library))
    doc = _json(capsys, "compare", "1", *lib)  # the plan's [report] layout
    assert doc["columns"] == ["ext2 / create:seconds", "ext2 / delete:seconds",
                              "ext4 / create:seconds", "ext4 / delete:seconds"]
    assert doc["rows"] == ["file_size=4k / files_per_dir=20 / dirs=2",
                           "file_size=64k / files_per_dir=4 / dirs=1"]  # by size, not text
    cells = [c for line in doc["cells"] for c in line if c]
    assert len(cells) == 8 and all(c["verdict"] == "" for c in cells)  # values unless asked

    doc = _json(capsys, "compare", "1", "--baseline", "config=ext2", *lib)
    assert doc["compared_along"] == "config"
    for i, row in enumerate(doc["rows"]):
        for j, column in enumerate(doc["columns"]):
            cell = doc["cells"][i][j]
            metric = column.split(" / ")[1]
            if column.startswith("ext2"):
                assert cell["verdict"] == "baseline" and cell["compared_with"] is None
                continue
            # ext4's delete time against ext2's delete time of the same tree, nothing else
            assert cell["compared_with"] == f"{row} / ext2 / {metric}"
            assert cell["verdict"] in ("better", "worse", "no significant difference")
            base = doc["cells"][i][doc["columns"].index(f"ext2 / {metric}")]
            assert cell["delta"] == pytest.approx(cell["mean"] - base["mean"])

    for bad in ("metric=create:seconds", "test=create"):
        capsys.readouterr()
        assert main(["compare", "1", "--baseline", bad, *lib]) == 2
        err = capsys.readouterr().err
        assert "never compared" in err and "Traceback" not in err


def test_the_fio_plot_sweep_is_a_seven_by_seven_table_in_number_order(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = sorted(str(p) for p in SWEEP.glob("randread-*-*.json"))
    assert len(files) == 49
    lib = ("--library", str(tmp_path / "library.sqlite3"))
    assert main(["import", *files, *lib]) == 0
    ids = [str(i) for i in range(1, 50)]
    capsys.readouterr()
    assert main(["compare", *ids, "--rows", "iodepth", "--columns", "numjobs", "--metric",
                 "read:iops", "--format", "text", *lib]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert max(len(line) for line in lines) < 120
    head = next(line for line in lines if line.startswith("iodepth \\ numjobs"))
    assert head.split()[3:] == [f"numjobs={n}" for n in (1, 2, 4, 8, 16, 32, 64)]
    rows = [line.split() for line in lines if line.startswith("iodepth=")]
    assert [r[0] for r in rows] == [f"iodepth={n}" for n in (1, 2, 4, 8, 16, 32, 64)]
    assert all(len(r) == 8 and all(v.isdigit() for v in r[1:]) for r in rows)  # values only
    assert rows[0][1] == "6389" and rows[4][5] == "40688"  # fio's own figures, iodepth 16
    assert "no test possible" not in text and "%" not in "".join(lines[-7:])

    doc = _json(capsys, "compare", *ids, "--rows", "iodepth", "--columns", "numjobs",
                "--metric", "read:iops", "--where", "numjobs=16", "--baseline", "iodepth=1",
                *lib)
    assert doc["columns"] == ["numjobs=16"] and len(doc["rows"]) == 7
    cell = doc["cells"][4][0]
    assert cell["verdict"] == "one run: no test possible"
    assert cell["compared_with"] == "iodepth=1 / numjobs=16"
    assert cell["delta_pct"] == pytest.approx(100 * (40688.0 - 45394.0) / 45394.0, abs=0.05)
    capsys.readouterr()
    assert main(["compare", *ids, "--rows", "iodepth", "--columns", "numjobs", "--metric",
                 "read:iops", "--baseline", "iodepth=1", "--format", "text", *lib]) == 0
    text = capsys.readouterr().out
    assert text.count("one run: no test possible") == 1  # said once, under the table
