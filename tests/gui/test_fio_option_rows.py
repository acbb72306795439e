"""fio's own options in the Test matrix (issue 50): rows of name and value typed with the
keyboard, fio's option names offered as one types (from the installed fio), a value with '|'
an axis, the table written to the plan as [test.fio_options], and a mistyped option refused
by the window's check with fio's suggestion at its row."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from disklab.core.plan.draft import PlanDraft
from disklab.core.plan.matrix import expand
from disklab.core.run.summary import check_plan
from tests.helpers import engine_plan


def _fio_test(qtbot, window, target_dir: Path) -> tuple[Any, int, Any]:
    """The Test matrix with a fio test added and chosen: (the page, its row, its panel)."""
    window.wb.set_draft(PlanDraft.from_text(engine_plan(target_dir)))
    window.show()
    qtbot.waitExposed(window)
    window.show_page("matrix")
    page = window.matrix
    page.add_test("fio")
    row = page.tests.currentRow()
    page.set_param("rw", "randwrite")
    page.set_param("size", "4m")
    return page, row, page.params


def test_option_rows_typed_offered_checked_and_written(qtbot, window, target_dir: Path) -> None:
    page, row, panel = _fio_test(qtbot, window, target_dir)
    assert len(panel.option_rows) == 1  # the empty row to add one

    name, value = panel.option_rows[0]
    completer = name.completer()
    qtbot.waitUntil(lambda: completer.model().rowCount() > 100, timeout=15_000)  # fio's list
    name.setFocus()
    qtbot.keyClicks(name, "buffer_compress_perc")
    completer.setCompletionPrefix("buffer_compress_perc")
    offered = [completer.completionModel().index(i, 0).data()
               for i in range(completer.completionCount())]
    assert offered == ["buffer_compress_percentage"]
    name.clear()
    qtbot.keyClicks(name, "buffer_compress_percentage")
    qtbot.keyClick(name, Qt.Key.Key_Tab)
    assert len(panel.option_rows) == 2  # the next empty row came
    qtbot.keyClicks(value, "0 | 50")
    name2, value2 = panel.option_rows[1]
    qtbot.keyClicks(name2, "io_sise")
    qtbot.keyClick(name2, Qt.Key.Key_Tab)
    qtbot.keyClicks(value2, "8m")

    test = window.wb.draft.tests[row]
    assert test["fio_options"] == {"buffer_compress_percentage": [0, 50], "io_sise": "8m"}
    assert "[test.fio_options]" in window.wb.draft.to_text()

    page.validate()
    qtbot.waitUntil(lambda: not page._checking and not page._timer.isActive(), timeout=15_000)
    key = f"test[{row + 1}].fio_options.io_sise"
    (problem,) = [p for p in page.summary.problems if p.key == key]
    assert "Did you mean io_size?" in problem.message
    assert "#d33" in name2.styleSheet()  # the row is marked red
    said = panel.errors["fio_options"]
    assert said.isVisible() and "io_sise: fio refuses it" in said.text()

    name2.selectAll()
    qtbot.keyClicks(name2, "io_size")
    qtbot.keyClick(name2, Qt.Key.Key_Tab)
    assert window.wb.draft.tests[row]["fio_options"]["io_size"] == "8m"
    page.validate()
    qtbot.waitUntil(lambda: not page._checking and not page._timer.isActive(), timeout=15_000)
    assert not [p for p in page.summary.problems if p.severity == "error"], \
        [str(p) for p in page.summary.problems]
    alone = check_plan(engine_plan(target_dir), None).cases  # the plan's engine test
    assert page.summary.cases == alone + 2  # the axis: two fio cases


def test_an_empty_value_sets_a_switch_and_asks_for_a_value_elsewhere(
        qtbot, window, target_dir: Path) -> None:
    """A row left without a value: a switch is set (norandommap = true, spelt 1 as fio writes
    it); any other option is asked for a value at its row (fio would fail parsing `NAME=`)."""
    page, row, panel = _fio_test(qtbot, window, target_dir)
    name, _value = panel.option_rows[0]
    qtbot.keyClicks(name, "norandommap")
    qtbot.keyClick(name, Qt.Key.Key_Tab)
    assert window.wb.draft.tests[row]["fio_options"] == {"norandommap": True}
    page.validate()
    qtbot.waitUntil(lambda: not page._checking and not page._timer.isActive(), timeout=15_000)
    assert not [p for p in page.summary.problems if p.severity == "error"], \
        [str(p) for p in page.summary.problems]
    (case,) = [c for c in expand(page.summary.plan) if c.tool == "fio"]
    assert case.params["norandommap"] == 1

    name2, _value2 = panel.option_rows[1]
    qtbot.keyClicks(name2, "buffer_compress_percentage")
    qtbot.keyClick(name2, Qt.Key.Key_Tab)
    page.validate()
    qtbot.waitUntil(lambda: not page._checking and not page._timer.isActive(), timeout=15_000)
    key = f"test[{row + 1}].fio_options.buffer_compress_percentage"
    (problem,) = [p for p in page.summary.problems if p.key == key]
    assert problem.message.startswith("give a value:")
    assert "#d33" in name2.styleSheet()  # the row is marked red
