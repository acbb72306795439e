"""The Compare page's pivot: it opens as the session's plan [report] table asks, the combo
boxes rebuild it, and it holds the figures `disklab compare` writes for the same keys (a session
recorded through the real recorder into the window's library)."""

from __future__ import annotations

import json

import pytest

from disklab.cli.main import main
from disklab.core.library import Library
from disklab.core.results.tables import cell_lines
from tests.helpers import PIVOT_FIGURES, REPORT_PLAN, record_two_configs


def test_pivot_opens_with_the_report_and_follows_the_combos(qtbot, window, library_path,
                                                            capsys: pytest.CaptureFixture[str]
                                                            ) -> None:
    with Library.open(library_path) as lib:
        sid = record_two_configs(lib, REPORT_PLAN)
    window.compare.refresh()
    window.compare.compare_ids([sid])
    page = window.compare
    assert (page.rows_key.currentText(), page.cols_key.currentText()) == ("test", "config")
    t = page.pivot_view
    assert [t.verticalHeaderItem(i).text() for i in range(t.rowCount())] == ["write", "read"]
    assert [t.horizontalHeaderItem(j).text() for j in range(t.columnCount())] == ["a", "b"]
    # the page's baseline (configuration a) compares b's write with a's write only
    # (150 ± 2 MiB/s and 100 ± 4 MiB/s in MB/s, the comparison on a line of its own)
    assert t.item(0, 1).text() == "157 ± 2.10 (CV 1.3 %)\n+50.0 % ▲"
    assert t.item(0, 0).text() == "105 ± 4.19 (CV 4.0 %)\n◆"
    assert "◆ baseline 1 two configs / a" not in page.pivot_note.text()
    assert "◆ baseline a: each cell is compared with the cell of a" in page.pivot_note.text()
    # the significant difference is coloured, along the configurations
    assert t.item(0, 1).background().color().green() > t.item(0, 1).background().color().red()

    # rows = config, columns = mode, metric = iops: the same cells as the CLI's JSON
    page.rows_key.setCurrentIndex(page.rows_key.findText("config"))
    page.cols_key.setCurrentIndex(page.cols_key.findText("mode"))
    page.metric_pick.setCurrentIndex(page.metric_pick.findText("iops"))
    page.show_pivot()
    capsys.readouterr()
    assert main(["compare", str(sid), "--rows", "config", "--columns", "mode", "--metric",
                 "iops", "--baseline", page.baseline.currentText(), "--format", "json",
                 "--library", str(library_path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["rows"] == ["a", "b"] and doc["columns"] == ["mode=write", "mode=read"]
    gui = [[t.item(i, j).text() for j in range(t.columnCount())] for i in range(t.rowCount())]
    assert gui == [[cell_lines(c["shown"]) for c in r] for r in doc["cells"]]
    assert doc["cells"][1][0]["mean"] == pytest.approx(sum(PIVOT_FIGURES[("b", "write")]) / 3)
    assert page.charts[0].y_label == "op/s"  # the chart follows the pivot
