"""The Test matrix's "raw device" box: a raw-capable test put on the target's block device (the
plan's raw-device section, run before the filesystems), and refused at that box for a directory
target with the plan check's own words."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from disklab.core.plan.draft import PlanDraft
from disklab.core.plan.parse import parse_plan
from disklab.core.vocab.model import RAW_SECTION

PLAN = """\
name = "LUN, then filesystem"
[target]
{target}

[[test]]
tool = "dd"
mode = "write"
block_size = "1m"
size = "8m"
direct = true
"""


def checked(qtbot, window) -> None:
    window.matrix.validate()
    qtbot.waitUntil(lambda: not window.matrix._checking and not window.matrix._timer.isActive(),
                    timeout=15_000)


def test_the_raw_box_puts_a_test_in_the_raw_device_section(qtbot, window, tmp_path: Path
                                                           ) -> None:
    image = tmp_path / "lun.img"
    text = PLAN.format(target=f'image = {{ path = "{image}", size = "256m" }}')
    window.wb.set_draft(PlanDraft.from_text(text + '\n[[config]]\nlabel = "ext4"\nfs = "ext4"\n'))
    window.show_page("matrix")
    page = window.matrix
    page.tests.setCurrentRow(0)
    assert page.raw_box is not None and not page.raw_box.isChecked()
    qtbot.mouseClick(page.raw_box, Qt.MouseButton.LeftButton)
    assert window.wb.draft.tests[0]["raw"] is True
    checked(qtbot, window)
    assert not [p for p in page.summary.problems if p.severity == "error"]
    plan = parse_plan(window.wb.draft.to_text()).plan
    assert plan.sections() == (RAW_SECTION, "ext4")
    qtbot.mouseClick(page.raw_box, Qt.MouseButton.LeftButton)
    assert "raw" not in window.wb.draft.tests[0]


def test_a_directory_target_refuses_the_raw_box_at_the_box(qtbot, window, tmp_path: Path
                                                          ) -> None:
    window.wb.set_draft(PlanDraft.from_text(PLAN.format(target=f'directory = "{tmp_path}"')))
    window.show_page("matrix")
    page = window.matrix
    page.tests.setCurrentRow(0)
    assert page.raw_box is not None
    qtbot.mouseClick(page.raw_box, Qt.MouseButton.LeftButton)
    checked(qtbot, window)
    page.tests.setCurrentRow(0)
    page._mark_fields()
    assert "#d33" in page.raw_box.styleSheet()
    assert "a directory target has no device of its own" in page.raw_box.toolTip()
