"""Each study's smoke preset runs for real (scratch image, loop device, the study's tools) and
its results carry the study's table: the keys its [report] pivot names are in every row it
pivots, and the row and column labels are the study's (its configurations, data shapes, record
sizes...): read from the rows' parameters, and as the pivot lays them out
(`disklab.core.results.pivot` with the preset's [report], and `disklab compare S --format json`,
which opens on the same table)."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from disklab.core import tools
from disklab.core.library import Library
from disklab.core.resources import resource
from disklab.core.results.limits import KINDS
from disklab.core.results.partial import session_results
from disklab.core.results.pivot import build_pivot, label_part
from disklab.core.vocab.units import KiB, MiB

pytestmark = [pytest.mark.root, pytest.mark.slow]

FIELDS = ("config", "tool")


def run_smoke(name: str, tmp_path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Run the smoke preset `name` with its image in tmp_path: its [report] and result rows."""
    if os.geteuid() != 0:
        pytest.skip("needs root (loop devices, mkfs, mount)")
    text = resource("presets", f"{name}.toml").read_text()
    plan = tmp_path / f"{name}.toml"
    # every scratch image (one per target) moved into tmp_path under its own name
    images = [tmp_path / m for m in re.findall(r'/var/tmp/disklab-([\w.-]+\.img)', text)]
    assert images
    plan.write_text(re.sub(r'/var/tmp/disklab-([\w.-]+\.img)', lambda m: str(tmp_path / m[1]),
                           text))
    library = tmp_path / "lib.sqlite3"
    done = subprocess.run([sys.executable, "-m", "disklab.cli.main", "run", str(plan),
                           "--library", str(library)], capture_output=True, text=True,
                          timeout=180)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert not [i for i in images if i.exists()]  # gone with their loop devices
    with Library.open(library) as lib:
        (session,) = lib.list_sessions()
        rows = lib.results(session["id"])
    assert_every_row_judged(library)
    return tomllib.loads(text)["report"], rows


def assert_every_row_judged(library: Path) -> None:
    """Every result row of the smoke session says what limited it (issue 33): a verdict of
    core.results.limits with its words, never "not known" (the runs were DiskLab's own, their
    samples recorded), in `show --json` and in the study's table (compare's note)."""
    shown = subprocess.run([sys.executable, "-m", "disklab.cli.main", "show", "1", "--json",
                            "--library", str(library)], capture_output=True, text=True,
                           timeout=60, check=True)
    results = json.loads(shown.stdout)["results"]
    assert results
    for r in results:
        assert r["limited_by"], r["metric"]
        for verdict in r["limited_by"]:
            assert verdict["kind"] in KINDS and verdict["kind"] != "unknown", verdict
            assert verdict["words"], verdict
    table = subprocess.run([sys.executable, "-m", "disklab.cli.main", "compare", "1",
                            "--format", "text", "--library", str(library)],
                           capture_output=True, text=True, timeout=60, check=True)
    assert "limited by " in table.stdout


def label(row: dict[str, Any], key: str) -> Any:
    """A row's label under a pivot key: the row's own fields, the metric name for "test",
    else its parameter (None when its tool has no such parameter: a blank cell)."""
    if key in FIELDS:
        return row[key]
    if key == "test":
        return row["metric"].split(":")[0]
    if key == "figure":
        return row["metric"].partition(":")[2] or "throughput"
    if key == "metric":
        return row["metric"]
    return row["params"].get(key)


def compare_json(tmp_path: Path, *args: str) -> dict[str, Any]:
    """`disklab compare 1 ARGS --format json` on the smoke run's library."""
    done = subprocess.run([sys.executable, "-m", "disklab.cli.main", "compare", "1", *args,
                           "--format", "json", "--library", str(tmp_path / "lib.sqlite3")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(done.stdout)


def pivoted(report: dict[str, Any], tmp_path: Path) -> tuple[list[str], list[str]]:
    """The row and column labels of the study's table as the pivot builds it from the
    session (the preset's [report]); `disklab compare` opens on the same table."""
    with Library.open(tmp_path / "lib.sqlite3") as lib:
        rows = session_results(lib, 1).rows
    p = build_pivot(rows, report["rows"], report["columns"], report.get("metrics") or (),
                    plan_order=True)
    assert p.added == (), f"a dimension still varies inside a cell: {p.added}"
    doc = compare_json(tmp_path)
    assert (doc["row_keys"], doc["column_keys"]) == (report["rows"], report["columns"])
    assert (doc["rows"], doc["columns"]) == (list(p.rows), list(p.columns))
    assert all(any(c is not None for c in line) for line in doc["cells"])  # no empty row
    # in the plan's order, the first key major (the study's tests 1-6, 4k before 64k)
    first = list(dict.fromkeys(v[0] for v in p.row_values))
    key = report["rows"][0]
    planned = list(dict.fromkeys(value for r in rows if (value := label(r, key)) in first))
    assert first == planned, (key, first, planned)
    return list(p.rows), list(p.columns)


def texts(labels: set[tuple[Any, ...]], keys: list[str]) -> set[str]:
    """Label tuples as the pivot writes them ('file_size=10k / files_per_dir=50 / dirs=2')."""
    return {" / ".join(label_part(k, v) for k, v in zip(keys, lab, strict=True))
            for lab in labels}


def assert_pivot(report: dict[str, Any], tmp_path: Path, row_labels: set[tuple[Any, ...]],
                 columns: set[tuple[Any, ...]]) -> None:
    """The pivot's table has exactly the study's rows and columns, each once."""
    prow, pcol = pivoted(report, tmp_path)
    assert len(prow) == len(set(prow)) and len(pcol) == len(set(pcol))
    assert set(prow) == texts(row_labels, report["rows"])
    assert set(pcol) == texts(columns, report["columns"])


def table(report: dict[str, Any], rows: list[dict[str, Any]]
          ) -> tuple[set[tuple[Any, ...]], set[tuple[Any, ...]]]:
    """The row labels and column labels of the pivot's rows; every key the pivot names is
    carried by every row whose tool has that parameter."""
    metrics = set(report.get("metrics") or ())
    pivoted = [r for r in rows if not metrics or r["metric"] in metrics]
    assert pivoted, "no result row is in the study's table"
    for r in pivoted:
        known = tools.get_adapter(r["tool"]).params
        for key in (*report["rows"], *report["columns"]):
            if key not in (*FIELDS, "test", "metric") and key in known:
                assert key in r["params"], (key, r["metric"], r["params"])
    return ({tuple(label(r, k) for k in report["rows"]) for r in pivoted},
            {tuple(label(r, k) for k in report["columns"]) for r in pivoted})


def assert_like_with_like(report: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    """The preset's table as `disklab compare` prints it: every compared cell is compared with
    the cell of the report's baseline configuration that has every other key the same (so the
    same test and metric), and nothing else is compared."""
    doc = compare_json(tmp_path)
    base = report["baseline"].partition("=")[2]
    assert doc["compared_along"] == "config" and doc["baseline"] == base
    in_columns = "config" in doc["column_keys"]
    keys = doc["column_keys"] if in_columns else doc["row_keys"]
    at = keys.index("config")
    compared = 0
    for i, line in enumerate(doc["cells"]):
        for j, cell in enumerate(line):
            if cell is None or cell["verdict"] == "baseline":
                continue
            compared += 1
            row, col = doc["rows"][i], doc["columns"][j]
            mine = (col if in_columns else row).split(" / ")
            theirs = [*mine[:at], base, *mine[at + 1:]]
            other = (row, " / ".join(theirs)) if in_columns else (" / ".join(theirs), col)
            assert cell["compared_with"] == " / ".join(other), (row, col, cell["compared_with"])
    assert compared > 0
    return doc


def grouped(labels: list[str], key_at: int) -> list[str]:
    """The values of one key of a pivot's labels ('a / b / c'), each run of equal values once:
    how the table groups its rows."""
    out: list[str] = []
    for label in labels:
        value = label.split(" / ")[key_at]
        if not out or out[-1] != value:
            out.append(value)
    return out


def test_journaling_cost_smoke_gives_the_per_filesystem_command_table(tmp_path: Path) -> None:
    report, rows = run_smoke("study-journaling-cost-sync-vs-buffered-smoke", tmp_path)
    row_labels, columns = table(report, rows)
    configs = ("ext4 no journal (UFS soft updates)", "ext4 ordered (UFS SU+J)",
               "ext4 data=journal (gjournal)")
    commands = {(64 * MiB, True, 0), (64 * MiB, False, 0), (8 * MiB, True, 0),
                (8 * MiB, False, 0)}
    phases = ("write", "rewrite", "read", "reread")
    assert row_labels == {(*cmd, t) for cmd in commands for t in phases} | {
        (8 * MiB, False, 2, "write"), (8 * MiB, False, 2, "rewrite")}
    assert columns == {(c,) for c in configs}
    assert_pivot(report, tmp_path, row_labels, columns)
    doc = assert_like_with_like(report, tmp_path)
    assert doc["columns"] == list(configs)  # the study's filesystems, in its order
    # one block of rows per iozone command (each once, together), its phases in the study's
    # order inside it
    commands_shown = [r.rsplit(" / ", 1)[0] for r in doc["rows"]]
    blocks = list(dict.fromkeys(commands_shown))
    assert len(doc["rows"]) == 18 and len(blocks) == 5
    assert blocks[0].startswith("file_size=64m / sync=True")  # the plan's test 1 first
    assert commands_shown == [c for c in blocks for _ in range(commands_shown.count(c))]
    for command in blocks:
        block = [r.rsplit(" / ", 1)[1] for r in doc["rows"] if r.startswith(command + " / ")]
        assert block == [p for p in phases if p in block], (command, block)


def test_journal_size_smoke_gives_the_record_size_by_journal_tables(tmp_path: Path) -> None:
    report, rows = run_smoke("study-ext4-journal-size-smoke", tmp_path)
    row_labels, columns = table(report, rows)
    journals = ("journal 4m", "journal 8m", "journal 16m", "journal 32m")
    assert row_labels == {(r, j) for r in (MiB, 4 * MiB) for j in journals}
    assert columns == {(m,) for m in report["metrics"]} and len(columns) == 13
    assert_pivot(report, tmp_path, row_labels, columns)
    doc = assert_like_with_like(report, tmp_path)
    # the study's tables: one per record size, each journal size in it in the study's order
    assert grouped(doc["rows"], 0) == ["record_size=1m", "record_size=4m"]
    assert [r.split(" / ")[1] for r in doc["rows"]] == [*journals, *journals]
    assert doc["columns"] == report["metrics"]  # the write group, then the read group


def test_san_smoke_gives_the_block_size_by_read_write_table(tmp_path: Path) -> None:
    report, rows = run_smoke("study-san-stream-qd-blocksize-smoke", tmp_path)
    row_labels, columns = table(report, rows)
    xfs = "xfs su=64k sw=5 (StorNext stripe breadth 320k)"
    sweep = {(xfs, "engine", bs * KiB, 5, 1) for bs in (64, 128, 256, 512, 1024)}
    raw = "raw device"  # section 1 on the image's loop device itself, before the mkfs
    assert row_labels == {(raw, "engine", 320 * KiB, 1, 1), (raw, "engine", 320 * KiB, 1, 4),
                          (raw, "dd", 320 * KiB, None, None), (xfs, "engine", 512 * KiB, 4, 1),
                          *sweep}
    assert columns == {("write",), ("read",)}
    assert_pivot(report, tmp_path, row_labels, columns)
    doc = compare_json(tmp_path)
    assert grouped(doc["rows"], 0) == [raw, xfs]  # the device, then the filesystem
    assert all(c is None or (c["verdict"] != "baseline" and c["compared_with"] is None)
               for line in doc["cells"] for c in line)  # the study compares nothing: values
    # section 4's streams, each with its own rate (Mio's stream[N] lines)
    streams = [r for r in rows if r["metric"] == "write:stream"
               and r["params"].get("streams") == 4]
    assert sorted(r["params"]["stream"] for r in streams) == [0, 1, 2, 3]


def test_raid_smoke_gives_the_data_shape_by_filesystem_tables(tmp_path: Path) -> None:
    report, rows = run_smoke("study-raid-readahead-tree-placement-smoke", tmp_path)
    # the HTML report, as the study wrote its own: the mkfs lines as run and the read-back
    page = tmp_path / "report.html"
    done = subprocess.run([sys.executable, "-m", "disklab.cli.main", "export", "1", "--format",
                           "html", "-o", str(page), "--library", str(tmp_path / "lib.sqlite3")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    text = html.unescape(page.read_text())
    assert "Configuration: ext2 ra=4096" in text and "Configuration: xfs ra=4096" in text
    assert "mke2fs -t ext2 -F -i 32768 -m 1 -E lazy_itable_init=0,stride=32,stripe_width=320" in (
        text)
    assert "mkfs.xfs -f -d su=131072,sw=10" in text and "blockdev --setra 256" in text
    assert "fs: ext2" in text and "has_journal: False" in text
    row_labels, columns = table(report, rows)
    assert row_labels == {(*shape, m) for shape in ((10 * KiB, 50, 2), (MiB, 4, 1))
                          for m in report["metrics"]}
    configs = ("ext2 ra=4096", "ext3o ra=4096", "ext4o ra=256", "ext4o,nodelalloc ra=4096",
               "xfs ra=4096")
    assert columns == {(c,) for c in configs}
    assert_pivot(report, tmp_path, row_labels, columns)
    doc = assert_like_with_like(report, tmp_path)  # never a delete time against a create time
    assert [r.split(" / ")[3] for r in doc["rows"]] == [*report["metrics"]] * 2
    # the placement table: two streams on one LUN against one on each of two, in the
    # configuration made on both LUNs only (the others skip placements they lack a target of)
    placed = compare_json(tmp_path, "--rows", "on,target", "--columns", "test", "--metric",
                          "write,rewrite,read,reread")
    want = ["on=b+b / target=b", "on=b+b / target=all", "on=a+b / target=a",
            "on=a+b / target=b", "on=a+b / target=all"]
    assert sorted(r for r in placed["rows"] if not r.startswith("on=–")) == sorted(want)
    for label in want:  # its four iozone figures, in the placement configuration's columns
        line = placed["cells"][placed["rows"].index(label)]
        filled = [placed["columns"][j] for j, c in enumerate(line) if c is not None]
        assert len(filled) == 4, (label, filled)
        assert all("ext4o,nodelalloc ra=4096" in c and "iozone" in c for c in filled)
    targets = {(r["params"]["on"], r["params"]["target"]) for r in rows
               if r["metric"] == "write" and "on" in r["params"]}
    assert targets == {("b+b", "b"), ("b+b", "all"), ("a+b", "a"), ("a+b", "b"),
                       ("a+b", "all")}
    # the bonnie++ table of the same session: each rate has its %CPU beside it
    names = {r["metric"] for r in rows if r["tool"] == "bonnie"}
    assert {"block_write", "block_write:cpu", "block_read", "block_read:cpu"} <= names


def test_data_journal_smoke_gives_per_thread_min_max_avg_per_mode(tmp_path: Path) -> None:
    report, rows = run_smoke("study-ext4-data-journal-vs-ordered-smoke", tmp_path)
    row_labels, columns = table(report, rows)
    modes = ("data=ordered, 16m journal", "data=journal, 16m journal")
    figures = ("min_proc", "max_proc", "avg_proc")
    assert row_labels == {(m, f) for m in modes for f in figures}
    tests = ["write", "rewrite"]  # the smoke's `iozone -i 0`
    assert columns == {(t,) for t in tests}
    prow, _pcol = pivoted(report, tmp_path)
    assert set(prow) == texts(row_labels, report["rows"])
    doc = assert_like_with_like(report, tmp_path)
    # the study's table per mode: min, max, avg per process down, its tests across in order
    assert doc["rows"] == [f"{m} / {f}" for m in modes for f in figures]
    assert doc["columns"] == tests
