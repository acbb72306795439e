"""The History page: opened from a session in the Library, it shows the same series, figures
and changes as `disklab history --json` (compared cell by cell), another machine's sessions
apart, and "Run again" adds a real session to the series."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from disklab.core.history.document import day
from disklab.core.library import Library
from disklab.core.results.format import format_delta, format_value
from disklab.core.vocab.model import Case, Metric
from tests.helpers import engine_plan, record_session

PLAN = engine_plan(Path("/var/tmp/disklab-history-view"), name="nightly", repeats=3)


def _host(machine: str, read_ahead: int, path: Path) -> dict[str, Any]:
    return {"hostname": f"host-{machine}", "machine_id": machine, "kernel": "6.1.0-13",
            "tools": {"engine": "disklab 1"}, "free_bytes": 10**9, "fs_size_bytes": 4 * 10**9,
            "device": {"name": "sdz", "read_ahead_kb": read_ahead},
            "target": {"kind": "directory", "path": str(path),
                       "identity": {"directory": str(path), "fstype": "ext4"}}}


def _series(library: Path, target: Path, machine: str, count: int, change_at: int) -> list[int]:
    """`count` sessions a day apart through the real recorder; from `change_at` on the read
    figure is a third and the host records read-ahead 16."""
    case_w = Case(id="w", index=0, config="as is", tool="engine", test_index=0,
                  params={"mode": "write", "block_size": 1 << 20})
    case_r = Case(id="r", index=1, config="as is", tool="engine", test_index=0,
                  params={"mode": "read", "block_size": 1 << 20})
    ids = []
    with Library.open(library) as lib:
        for i in range(count):
            after = i >= change_at
            wobble = [1.0, 1.03, 0.98]
            reads = [[Metric("read", 900e6 * w * (0.33 if after else 1), "B/s")]
                     for w in wobble]
            writes = [[Metric("write", 500e6 * w * (1 + 0.01 * i % 3), "B/s")] for w in wobble]
            ids.append(record_session(
                lib, [(case_w, writes), (case_r, reads)], name="nightly",
                host=_host(machine, 16 if after else 128, target),
                plan_text=PLAN.replace("/var/tmp/disklab-history-view", str(target)),
                start=1.79e9 + i * 86400))
    return ids


def cli_history(library: Path, ref: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "DISKLAB_LIBRARY"}
    done = subprocess.run([sys.executable, "-m", "disklab", "history", ref, "--json",
                           "--library", str(library)], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_window_shows_what_the_cli_says(window, qtbot, library_path: Path,
                                            target_dir: Path) -> None:
    mine = _series(library_path, target_dir, "here", 8, 5)
    _series(library_path, target_dir, "elsewhere", 4, 9)  # a bundle's: another machine
    window.library.refresh()
    assert window.library.select_session(mine[-1])
    window.library.buttons["history"].click()
    page = window.history
    assert window.current_page() == "history"
    doc = cli_history(library_path, str(mine[-1]))
    assert page.series_pick.count() == len(doc["series"]) == 1
    (series,) = doc["series"]
    assert [s["id"] for s in series["sessions"]] == mine
    assert page.heading.text().startswith(f"'nightly' on directory {target_dir}")
    assert "changes" in series and len(series["changes"]) == 1
    change = series["changes"][0]
    assert "read_ahead_kb 128 to 16" in change["text"]
    assert page.changes.toPlainText() == change["text"]
    shown = [page.figure_pick.itemText(i) for i in range(page.figure_pick.count())]
    assert shown[0] == f"{change['label']} (changed)"
    by_label = {f["label"]: f for f in series["figures"]}
    for i, text in enumerate(shown):
        page.figure_pick.setCurrentIndex(i)
        figure = by_label[text.removesuffix(" (changed)")]
        rows = page.shown_rows()
        assert len(rows) == len(figure["points"])
        for row, point in zip(rows, figure["points"], strict=True):
            session = next(s for s in series["sessions"] if s["id"] == point["session"])
            assert row[:3] == (day(session["started"]), str(point["session"]),
                               format_value(point["mean"], figure["unit"]))
            assert row[4] == str(point["n"])
        marked = [r[1] for r in rows if r[5]]
        expect = [str(c["between"][1]["id"]) for c in series["changes"]
                  if c["label"] == figure["label"]]
        assert marked == expect
        if expect:
            assert rows[[r[1] for r in rows].index(expect[0])][5].endswith(
                format_delta(change["pct"]))
        assert len(page.chart.spec.series[0].x) == len(figure["points"])


def test_another_machine_is_its_own_series_and_run_again_adds_a_point(
        window, qtbot, library_path: Path, target_dir: Path, tmp_path: Path) -> None:
    theirs = _series(library_path, target_dir, "elsewhere", 4, 9)
    window.wb.history_requested.emit(theirs[0])
    page = window.history
    assert page.series_pick.count() == 1 and "another machine" in page.series_pick.itemText(0)
    # a real engine plan, recorded here, then "Run again" from its history
    plan = tmp_path / "nightly.toml"
    plan.write_text(engine_plan(target_dir, name="nightly", repeats=1, runtime="0.3s"))
    env = {k: v for k, v in os.environ.items() if k != "DISKLAB_LIBRARY"}
    done = subprocess.run([sys.executable, "-m", "disklab", "run", str(plan), "--library",
                           str(library_path), "-q"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    first = max(s["id"] for s in window.wb.library().list_sessions())
    window.wb.history_requested.emit(first)
    assert [s["id"] for s in page.series.sessions] == [first]
    assert "this machine" in page.series_pick.itemText(0)
    page.buttons["rerun"].click()
    assert window.current_page() == "run"
    qtbot.waitUntil(lambda: len(window.wb.library().list_sessions()) == len(theirs) + 2
                    and not window.wb.runs.running, timeout=60_000)
    window.wb.history_requested.emit(first)
    assert len(page.series.sessions) == 2
    assert page.series.sessions[0]["id"] == first
