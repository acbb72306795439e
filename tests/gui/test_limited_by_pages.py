"""What limited each result, in the window (issue 33): the Run table says it as soon as a
case's run ends, judged from the run's own samples, in the words `disklab show --json` gives
for the stored session, its evidence in the cell's tooltip; the Library page's results have
the same column and tooltips; the Compare page's pivot and comparison say it in their notes
and each cell's tooltip (the real fio-plot sweep, whose disk_util shows its device busy)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from pytestqt.exceptions import TimeoutError

from disklab.core.importing import import_paths
from disklab.core.library import Library
from disklab.core.plan.draft import PlanDraft
from disklab.gui.case_table import COLS, LIMITED
from tests.helpers import FIXTURES

PLAN = """\
name = "limits in the window"
repeats = 1
[target]
directory = "{directory}"

[[test]]
tool = "engine"
mode = "write"
block_size = "1m"
size = "8m"
direct = false

[[test]]
tool = "engine"
mode = "read"
block_size = "64k"
size = "32m"
runtime = "2s"
direct = false
"""
SWEEP = FIXTURES / "fio-plot-sweep"


def _show_json(library: Path, session: int) -> dict:
    out = subprocess.run([sys.executable, "-m", "disklab", "show", str(session), "--json",
                          "--library", str(library)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_the_run_table_and_the_library_say_what_limited_each_case(
        qtbot, window, target_dir: Path, library_path: Path) -> None:
    page = window.run
    seen: dict[str, str] = {}  # the cell as the case's run ended
    page.case_done.connect(lambda case_id: seen.__setitem__(
        case_id, page.table.item(page.rows[case_id], LIMITED).text()))
    window.wb.set_draft(PlanDraft.from_text(PLAN.format(directory=target_dir)))
    page.start()
    try:
        qtbot.waitUntil(lambda: page.session_id is not None and not window.wb.runs.running,
                        timeout=120_000)
    except TimeoutError:
        raise AssertionError(page.log.toPlainText()[-3000:]) from None
    assert page.status == "finished", page.log.toPlainText()[-2000:]
    assert COLS[LIMITED] == "limited by"
    shown = _show_json(library_path, page.session_id)
    words = {r["case_id"]: "; ".join(x["words"] for x in r["limited_by"])
             for r in shown["results"]}
    assert len(words) == 2 and set(seen) == set(words)
    for case_id, text in words.items():
        assert seen[case_id] == text  # as soon as the run ended, what the library says
        tip = page.table.item(page.rows[case_id], LIMITED).toolTip()
        assert tip.startswith("limited by:") and text.split("; ")[0] in tip
    short = next(r for r in shown["results"] if r["params"].get("mode") == "write")
    assert short["limited_by"][0]["kind"] == "too_short"  # 8 MiB: well under a second
    tip = page.table.item(page.rows[short["case_id"]], LIMITED).toolTip()
    assert "seconds" in tip and "samples" in tip  # the evidence's figures

    library = window.library
    library.refresh()
    assert library.select_session(page.session_id)
    t = library.results_table
    header = [t.horizontalHeaderItem(j).text() for j in range(t.columnCount())]
    column = header.index("limited by")
    cases = {r["metric"]: r["case_id"] for r in shown["results"]}
    for i in range(t.rowCount()):
        metric = t.item(i, header.index("metric")).text()
        case_id = next(r["case_id"] for r in shown["results"] if r["metric"] == metric
                       and r["case_id"] in cases.values())
        assert t.item(i, column).text() == words[case_id]
        assert "limited by:" in t.item(i, column).toolTip()


def test_compare_says_what_limited_the_pivot_and_the_comparison(window, library_path: Path
                                                                ) -> None:
    with Library.open(library_path) as lib:
        report = import_paths(lib, [str(SWEEP)])
        assert not report.problems
        sid = int(lib.find_session("1")["id"])
    page = window.compare
    page.refresh()
    page.compare_ids([sid])
    page.rows_key.setCurrentIndex(page.rows_key.findText("numjobs"))
    page.cols_key.setCurrentIndex(page.cols_key.findText("iodepth"))
    page.show_pivot()
    note = " ".join(page.pivot_note.text().replace("<br>", " ").split())
    assert "limited by device (busy 97–100 %" in note
    t = page.pivot_view
    rows = [t.verticalHeaderItem(i).text() for i in range(t.rowCount())]
    cols = [t.horizontalHeaderItem(j).text() for j in range(t.columnCount())]
    deep = t.item(rows.index("numjobs=64"), next(j for j, c in enumerate(cols)
                                                 if c.startswith("iodepth=64")))
    assert "device busy 100 %" in deep.toolTip() and "of 4096 requests in flight" in \
        deep.toolTip()
    page.tabs.setCurrentWidget(page.table)  # the comparison against the baseline
    c = page.table
    tips = [c.item(i, j).toolTip() for i in range(c.rowCount())
            for j in range(c.columnCount()) if c.item(i, j)]
    assert any("device busy" in tip and "(fio's disk_util)" in tip for tip in tips)
    assert "limited by device" in page.notes.text()  # the notes, folded under the tables
    assert "D device" in page.legend.text()  # the cells' mark, in the one-line legend


def test_the_run_tables_limited_by_column_is_in_sight(qtbot, window) -> None:
    """At 1280x820 the Run table's "limited by" column is within its pane, before the
    result (a result with throughput and IOPS is wider than the pane: after it, the verdict
    was out of sight)."""
    window.resize(1280, 820)
    window.show()
    qtbot.waitExposed(window)
    window.show_page("run")
    table = window.run.table
    header = table.horizontalHeader()
    from PySide6.QtWidgets import QTableWidgetItem

    from disklab.gui.case_table import CASE, CONFIG, LIMITED, RESULT, STATUS
    # a row as a finished case fills it: long texts in every column
    table.setRowCount(1)
    for col, text in ((0, "12"), (STATUS, "finished (2 of 2)"), (CONFIG, "xfs-logbsize-256k"),
                      (CASE, "fio randwrite bs=4k iodepth=32 numjobs=4 on=a+b"),
                      (LIMITED, "device busy 99 %, 31.2 of 32 requests in flight"),
                      (RESULT, "1623 MiB/s ± 12.3 · 415,488 IOPS ± 3,150 · lat 77 µs")):
        table.setItem(0, col, QTableWidgetItem(text))
    qtbot.wait(50)  # the columns sized to their contents
    assert header.visualIndex(LIMITED) < header.visualIndex(RESULT)
    # which test a row is, and what limited it, in sight without the scroll bar
    for col in (CONFIG, CASE, LIMITED):
        assert header.sectionViewportPosition(col) + header.sectionSize(col) \
            <= table.viewport().width(), COLS[col]
