"""Several targets made on the Target page, placed on the Test matrix, and run.

What a user of the RAID study does by pointing and clicking: add a second target, point both
at their directories, rename one, give a test `on = a, a+lun` on the Test matrix, and run it:
the session has a row per target and the aggregate, as a plan written by hand would.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.exceptions import TimeoutError

from disklab.core.library.store import Library
from disklab.core.plan.draft import PlanDraft
from disklab.core.plan.parse import parse_plan


def _directory(qtbot, page, path: Path) -> None:
    """Type a directory into the Target page's field, as a user does (Enter ends the edit)."""
    page.dir_radio.setChecked(True)
    page.dir_edit.clear()
    qtbot.keyClicks(page.dir_edit, str(path))
    qtbot.keyClick(page.dir_edit, Qt.Key.Key_Return)


def test_targets_added_renamed_placed_and_run(qtbot, window, tmp_path: Path) -> None:
    a, b = tmp_path / "lun-a", tmp_path / "lun-b"
    a.mkdir()
    b.mkdir()
    window.show_page("target")
    page = window.target
    assert page.target_list.count() == 1 and not page.remove_button.isEnabled()
    _directory(qtbot, page, a)
    qtbot.mouseClick(page.add_button, Qt.MouseButton.LeftButton)
    # the plan's one [target] became targets.a, and the form now edits the new one
    assert window.wb.draft.target_names() == ["a", "b"]
    assert page.target_list.currentText() == "b" and page.box.title() == "Target b"
    assert window.wb.draft.target_table("a") == {"directory": str(a)}
    # the new one has no place yet (not a copy of a's: two targets on one place are refused)
    assert window.wb.draft.target_table("b") == {"directory": ""}
    assert page.dir_edit.text() == "" and page.dir_edit.hasFocus()
    _directory(qtbot, page, b)
    assert page.rename_target("Bad name") is not None  # refused, said why
    assert page.rename_target("all") is not None  # the aggregate rows' name
    assert page.rename_target("lun") is None
    assert [page.target_list.itemText(i) for i in range(page.target_list.count())] == \
        ["a", "lun"]
    # back on a: the form shows a's directory, not the last one typed
    page.target_list.setCurrentIndex(0)
    assert page.dir_edit.text() == str(a) and page.box.title() == "Target a"

    window.show_page("matrix")
    matrix = window.matrix
    matrix.add_test("engine")
    for key, value in (("mode", "write"), ("block_size", "256k"), ("size", "8m"),
                       ("runtime", "1s"), ("on", "a, a+lun")):
        matrix.set_param(key, value)
    assert "lun" in matrix.param_edits["on"].toolTip()
    qtbot.waitUntil(lambda: not matrix.summary.errors and matrix.summary.problems is not None
                    and "2 case" in matrix.summary_label.text(), timeout=20_000)
    plan = parse_plan(window.wb.draft.to_text()).plan
    assert list(plan.targets) == ["a", "lun"]
    assert window.wb.draft.tests[0]["on"] == ["a", "a+lun"]
    # renaming again follows into the test's placements
    window.show_page("target")
    page.target_list.setCurrentIndex(1)
    assert page.rename_target("b") is None
    assert window.wb.draft.tests[0]["on"] == ["a", "a+b"]

    window.show_page("run")
    window.run.start()
    try:
        qtbot.waitUntil(lambda: window.run.status in ("finished", "failed", "cancelled")
                        and not window.wb.runs.running, timeout=120_000)
    except TimeoutError:
        raise AssertionError(window.run.log.toPlainText()[-3000:]) from None
    assert window.run.status == "finished", window.run.log.toPlainText()[-3000:]
    with Library.open(window.wb.library_path) as lib:
        session = lib.list_sessions()[0]
        rows = lib.results(session["id"])
    placed = {(r["params"].get("on"), r["params"].get("target")) for r in rows
              if r["metric"] == "write"}
    assert placed >= {("a", "a"), ("a+b", "a"), ("a+b", "b"), ("a+b", "all")}, placed
    # each stream wrote into its own target's directory, and nothing is left there
    assert not list(a.iterdir()) and not list(b.iterdir())


def test_removing_a_target_keeps_the_others(qtbot, window, tmp_path: Path) -> None:
    window.wb.set_draft(PlanDraft.from_text(
        '[targets.a]\ndirectory = "/var/tmp"\n[targets.p]\nimage = { path = "%s", size = "1g" }\n'
        'partitions = 2\n[[test]]\ntool = "engine"\non = "p1+p2"\n' % (tmp_path / "p.img")))
    page = window.target
    page.target_list.setCurrentIndex(1)
    assert page.image_radio.isChecked() and page.partitions.value() == 2
    assert page.partitions.isEnabled()
    window.show_page("matrix")
    window.matrix.tests.setCurrentRow(0)
    assert "p1, p2" in window.matrix.param_edits["on"].toolTip()
    page.target_list.setCurrentIndex(0)
    assert not page.partitions.isEnabled()  # a directory is not split
    qtbot.mouseClick(page.remove_button, Qt.MouseButton.LeftButton)
    assert window.wb.draft.target_names() == ["p"]
    assert not page.remove_button.isEnabled()  # the last target stays
    assert window.wb.draft.target_table("p")["partitions"] == 2
