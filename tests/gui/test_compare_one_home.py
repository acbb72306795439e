"""The Compare page and `disklab compare` of the same two sessions come from one function
(core.results.sessions_compared.compare_sessions): the page's pivot rows are its rows, and the
page's cells are the ones the command prints for the same keys and baseline."""

from __future__ import annotations

import json

import pytest

from disklab.cli.main import main
from disklab.core.library import Library
from disklab.core.results.sessions_compared import compare_sessions, find_sessions
from disklab.core.results.tables import cell_lines
from tests.helpers import record_two_configs


def test_the_page_and_the_command_show_the_same_cells(qtbot, window, library_path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    with Library.open(library_path) as lib:
        first, second = record_two_configs(lib), record_two_configs(lib)
        asked = compare_sessions(lib, find_sessions(lib, [first, second]))
    page = window.compare
    page.refresh()
    page.compare_ids([first, second])
    assert page.pivot_rows == asked.rows
    baseline = page.baseline.currentText()  # the page's baseline, a configuration's row
    capsys.readouterr()
    assert main(["compare", str(first), str(second), "--rows", "config", "--columns", "test",
                 "--baseline", baseline, "--format", "json",
                 "--library", str(library_path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert page.pivot is not None and list(page.pivot.rows) == doc["rows"]
    assert doc["rows"] == [f"{sid} two configs / {c}" for sid in (first, second) for c in "ab"]
    assert baseline in doc["rows"]
    t = page.pivot_view
    shown = [[t.item(i, j).text() for j in range(t.columnCount())] for i in range(t.rowCount())]
    assert shown == [[cell_lines(c["shown"]) for c in r] for r in doc["cells"]]
    assert "+50.0 % ▲" in shown[1][0]  # b's writes against a's: compared, not only values
