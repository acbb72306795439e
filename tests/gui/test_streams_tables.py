"""The slowest, fastest and mean stream in the window's tables: two real engine runs of a slow
(4 KiB calls) and a fast (1 MiB calls) stream, recorded by `disklab run`, then shown on the
Library page and compared on the Compare page without asking for all metrics."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PLAN = """\
name = "{name}"
repeats = 1

[target]
directory = "{dir}"

[[test]]
tool = "engine"
mode = "write"
size = "8m"
streams = 2
stream_block_sizes = "4k 1m"
"""

SPREAD = ("write:min_proc", "write:max_proc", "write:avg_proc")


def _record(name: str, target: Path, library: Path, tmp_path: Path) -> None:
    plan = tmp_path / f"{name}.toml"
    plan.write_text(PLAN.format(name=name, dir=target))
    done = subprocess.run([sys.executable, "-m", "disklab.cli.main", "run", str(plan),
                           "--library", str(library)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def test_library_and_compare_tables_show_the_spread_of_streams(qtbot, window, target_dir,
                                                               library_path, tmp_path):
    for name in ("first", "second"):
        _record(name, target_dir, library_path, tmp_path)
    window.library.refresh()
    lib = window.wb.open_library()
    try:
        ids = [int(lib.find_session(n)["id"]) for n in ("first", "second")]
    finally:
        lib.close()

    window.library.open_session(ids[0])
    t = window.library.results_table
    metric_col = [t.horizontalHeaderItem(j).text() for j in range(t.columnCount())].index(
        "metric")
    shown = [t.item(i, metric_col).text() for i in range(t.rowCount())]
    assert set(SPREAD) <= set(shown)

    window.compare.refresh()
    window.compare.tabs.setCurrentWidget(window.compare.table)  # the tab against the baseline
    window.compare.compare_ids(ids, baseline=ids[0])
    assert not window.compare.all_metrics.isChecked()  # the headline figures only
    c = window.compare.comparison
    assert [m for m in c.metrics.values() if m in SPREAD] == list(SPREAD)
    headers = [window.compare.table.horizontalHeaderItem(j).text().replace("\n", " ")
               for j in range(window.compare.table.columnCount())]
    for metric in SPREAD:
        (j,) = [j for j, h in enumerate(headers) if h.split()[1] == metric]
        assert "MB/s" in window.compare.table.item(0, j).text()
