"""The Library and Compare pages on real engine sessions: a run cancelled during its last repeat
is shown but left out of the means until "include partial runs" is ticked, the heading says how
many runs were left out and why, and the Compare page colours only significant differences at
the alpha set on the page."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest
from PySide6.QtGui import QColor

from disklab.core.library import Library
from disklab.core.plan.parse import parse_plan
from disklab.core.run.runner import run_plan
from disklab.core.vocab.events import CaseStarted
from disklab.gui.pages.compare import DELTA_COLOURS
from tests.helpers import engine_plan


def _record(library: Path, plan_text: str, cancel_in_repeat: int | None = None) -> int:
    cancel = threading.Event()
    lib = Library.open(library)
    rec = lib.recorder()
    try:
        for ev in run_plan(parse_plan(plan_text).plan, cancel=cancel):
            rec.handle(ev)
            if isinstance(ev, CaseStarted) and ev.repeat == cancel_in_repeat:
                threading.Timer(0.4, cancel.set).start()
    finally:
        rec.close()
        lib.close()
    return int(rec.session_id)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, int]:
    """Two real sessions, recorded once for the module's tests: the same parameters (a
    comparison's columns), the second cancelled halfway through its last repeat's write."""
    base = tmp_path_factory.mktemp("significance-pages")
    library, target = base / "library.sqlite3", base / "target"
    target.mkdir()
    whole = _record(library, engine_plan(target, name="whole", repeats=3, runtime="0.8s"))
    cut = _record(library, engine_plan(target, name="cut", repeats=3, runtime="0.8s"),
                  cancel_in_repeat=3)
    return library, whole, cut


@pytest.fixture
def sessions(library_path: Path, recorded: tuple[Path, int, int]) -> tuple[int, int]:
    """A copy of the recorded library where the test's window opens it (ask for this before
    `window`: the copy is made before the window opens the file)."""
    library, whole, cut = recorded
    assert not library_path.exists()
    shutil.copyfile(library, library_path)
    return whole, cut


def _cells(table) -> list[list[str]]:
    return [[table.item(i, j).text() if table.item(i, j) else ""
             for j in range(table.columnCount())] for i in range(table.rowCount())]


def test_library_page_leaves_partial_runs_out_until_asked(sessions, window):
    _whole, cut = sessions
    page = window.library
    page.refresh()
    assert page.select_session(cut)
    assert "1 run excluded from the means" in page.heading.text()
    header = [page.results_table.horizontalHeaderItem(j).text()
              for j in range(page.results_table.columnCount())]
    rows = [dict(zip(header, r, strict=True)) for r in _cells(page.results_table)]
    write = next(r for r in rows if r["metric"] == "write")
    assert write["n"] == "2" and "repeat 3" in write["note"] and "not in the mean" in write["note"]
    assert write["direction"] == "higher is better"
    page.include_partial.setChecked(True)
    rows = [dict(zip(header, r, strict=True)) for r in _cells(page.results_table)]
    write = next(r for r in rows if r["metric"] == "write")
    assert write["n"] == "3" and "in the mean" in write["note"]
    assert "included in the means" in page.heading.text()


def test_compare_page_counts_excluded_runs_and_colours_only_significance(sessions, window):
    whole, cut = sessions
    page = window.compare
    page.refresh()
    page.tabs.setCurrentWidget(page.table)  # the tab against the baseline
    page.compare_ids([whole, cut], baseline=whole)
    c = page.comparison
    assert c is not None and c.alpha == 0.05
    assert "1 run excluded from the means" in page.heading.text()
    # the heading counts tests (the engine's write and read), each column is one of their
    # figures (throughput, latencies, CPU...)
    tests = {name.split(":")[0] for name in c.metrics.values()}
    assert tests == {"write", "read"} and len(c.columns) > 2
    assert f"2 configuration(s) × 2 test(s) ({len(c.columns)} figures)" in \
        page.heading.text()
    col = next(j for j, name in enumerate(c.columns) if name == "engine write")
    cell = c.cells[(c.rows[1], c.columns[col])]
    assert cell.n == 2 and cell.excluded == 1
    assert "(higher is better)" in page.table.horizontalHeaderItem(col).text().replace("\n", " ")

    def colours_follow_the_verdicts() -> None:
        comparison = page.comparison
        for i, row in enumerate(comparison.rows):
            for j, name in enumerate(comparison.columns):
                verdict = comparison.cells[(row, name)].verdict
                brush = page.table.item(i, j).background()
                want = DELTA_COLOURS.get(verdict)
                if want is None:
                    assert brush.color() != DELTA_COLOURS["better"]
                    assert brush.color() != DELTA_COLOURS["worse"]
                else:
                    assert brush.color() == QColor(want)
                assert verdict in page.table.item(i, j).text() or verdict == "baseline"

    colours_follow_the_verdicts()
    page.alpha.setValue(0.5)  # the page compares again at the new level
    assert page.comparison.alpha == 0.5
    colours_follow_the_verdicts()
    page.include_partial.setChecked(True)
    cell = page.comparison.cells[(page.comparison.rows[1], page.comparison.columns[col])]
    assert cell.n == 3 and cell.excluded == 0
    assert "included in the means" in page.heading.text()
