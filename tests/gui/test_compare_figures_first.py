"""The Compare page puts the figures first (issue 49, point 1): with "all metrics" on, three
real sessions' comparison at 1280x800 still shows at least ten rows of its pivot, because the
headline and the legend are one line each, a cell's verdicts are marks in it (explained by the
legend, their words and evidence in its tooltip) and the notes are folded under the tables;
the tab bar does not move whatever the notes say. Before, the "limited by" prose above the
tabs pushed the tab bar to y = 327 and left the pivot 91 px (five rows). At 1024x768 the
session picker stays narrow and the pivot's three filesystems are all in sight (the picker took
about 280 px and left one column)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QTableWidget

from disklab.core.results.legend import LIMIT_MARKS, LIMIT_WORDS, limit_marks
from disklab.gui.cell_marks import MARK_ROLE

pytestmark = [pytest.mark.slow]

# three filesystems' worth of sessions: each a write and a read at five block sizes, twice,
# the [report] laying the cases down the rows (ten rows) and the sessions across
PLAN = """\
name = "{name}"
repeats = 2
[target]
directory = "{directory}"
[[test]]
tool = "engine"
mode = ["write", "read"]
block_size = ["4k", "16k", "64k", "256k", "1m"]
size = "8m"
runtime = "1s"
direct = false
[report]
rows = ["mode", "block_size"]
columns = ["config"]
"""


@pytest.fixture
def three(library_path: Path, tmp_path: Path) -> Iterator[list[int]]:
    """Three real sessions run by `disklab run` into the window's library."""
    for name in ("ext2", "ext4", "xfs"):
        d = tmp_path / name
        d.mkdir()
        plan = tmp_path / f"{name}.toml"
        plan.write_text(PLAN.format(name=name, directory=d))
        done = subprocess.run([sys.executable, "-m", "disklab", "run", "--library",
                               str(library_path), str(plan)],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    yield [1, 2, 3]


def _rows_in_sight(t: QTableWidget) -> int:
    height = t.viewport().height()
    return sum(1 for i in range(t.rowCount())
               if t.rowViewportPosition(i) >= 0 and
               t.rowViewportPosition(i) + t.rowHeight(i) <= height)


def _columns_in_sight(t: QTableWidget) -> int:
    width = t.viewport().width()
    return sum(1 for j in range(t.columnCount())
               if t.columnViewportPosition(j) >= 0 and
               t.columnViewportPosition(j) + t.columnWidth(j) <= width)


def test_the_pivot_keeps_ten_rows_in_sight_with_all_metrics(qtbot, three, window) -> None:
    window.resize(1280, 800)
    qtbot.wait(50)
    page = window.compare
    page.refresh()
    page.compare_ids(three)
    assert window.current_page() == "compare"
    qtbot.wait(50)

    def tab_bar_y() -> int:
        return page.tabs.tabBar().mapTo(window, QPoint(0, 0)).y()

    before = tab_bar_y()
    page.all_metrics.setChecked(True)  # the page compares again, every figure a column
    qtbot.wait(50)
    c = page.comparison
    assert c is not None and len(c.columns) > 2 * len({m.split(":")[0]
                                                      for m in c.metrics.values()})
    assert tab_bar_y() == before
    t = page.pivot_view
    assert t.rowCount() == 10
    assert _rows_in_sight(t) >= 10, (t.viewport().height(), tab_bar_y())

    # one line of headline, one of legend
    line = page.heading.fontMetrics().height()
    assert page.heading.height() < 2 * line and page.legend.height() < 2 * line
    assert "3 configuration(s) × 2 test(s)" in page.heading.text()

    # the notes are folded, with the prose in them: the test, what limited each cell
    assert not page.notes_fold.is_open()
    assert "limited by" in page.notes.text() and "Welch" in page.notes.text()
    assert "limited by" in page.pivot_note.text()
    page.notes_fold.button.click()
    qtbot.wait(50)
    assert page.notes_fold.is_open() and page.notes.isVisible()
    assert tab_bar_y() == before  # the notes open under the tables
    page.notes_fold.button.click()
    qtbot.wait(50)
    assert not page.notes_fold.is_open()

    # a cell's verdicts of what limited it: letters in the cell, each said in the legend,
    # the words and evidence in its tooltip
    p = page.pivot
    assert p is not None
    marked = 0
    for i in range(t.rowCount()):
        for j in range(t.columnCount()):
            marks = t.item(i, j).data(MARK_ROLE)
            assert marks == limit_marks(p.cell_limits.get((i, j)))
            for letter in marks:
                kind = next(k for k, m in LIMIT_MARKS.items() if m == letter)
                assert f"{letter} {LIMIT_WORDS[kind]}" in page.legend.text()
                assert "limited by:" in t.item(i, j).toolTip()
            marked += bool(marks)
    assert marked  # engine runs of 8 MiB in the page cache: limited by something

    window.resize(1024, 768)
    qtbot.wait(50)
    assert (window.width(), window.height()) == (1024, 768)
    assert tab_bar_y() == before
    assert _rows_in_sight(t) >= 10
    # the three filesystems side by side at 1024 px: the picker narrow (its long texts cut,
    # whole in their tooltips), the pivot's side taking the width (it showed one column)
    assert t.columnCount() == 3 and _columns_in_sight(t) == 3, (
        page.split.sizes(), [t.columnWidth(j) for j in range(3)], t.viewport().width())
    picker = page.split.widget(0)
    assert picker.width() <= 200, page.split.sizes()
    items = [page.list.item(i) for i in range(page.list.count())]
    assert items and all(it.toolTip() == it.text() for it in items)
    assert page.all_metrics.toolTip() and page.include_partial.toolTip()
    shots = os.environ.get("DISKLAB_SCREENSHOTS")
    if shots:
        assert window.grab().save(str(Path(shots) / "compare-1024x768.png"))
