"""The Test matrix's parameters (issue 29): a choice is a drop-down of its valid values, each
parameter has its plain name with the tool's own beside it (queue depth / iodepth), and a queue
depth fio ignores (a synchronous engine) is warned of at its field's key, as the CLI's check
says it."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QComboBox, QFormLayout, QLabel

from disklab.core.plan.draft import PlanDraft
from disklab.core.tools.fio.options import ENGINES
from tests.helpers import engine_plan


def _label_of(page, key: str) -> str:
    form = page.params_form
    field = page.param_edits[key]
    for row in range(form.rowCount()):
        item = form.itemAt(row, QFormLayout.ItemRole.FieldRole)
        widget = item.widget() if item is not None else None
        if widget is field or (widget is not None and widget.isAncestorOf(field)):
            label = form.itemAt(row, QFormLayout.ItemRole.LabelRole).widget()
            assert isinstance(label, QLabel)
            return label.text()
    raise AssertionError(f"no row for {key}")


def test_choices_drop_down_names_plain_and_queue_depth_warning(qtbot, window,
                                                               target_dir: Path) -> None:
    window.wb.set_draft(PlanDraft.from_text(engine_plan(target_dir)))
    page = window.matrix
    window.show_page("matrix")
    page.add_test("fio")
    row = page.tests.currentRow()
    assert _label_of(page, "iodepth") == "queue depth (iodepth)"
    assert _label_of(page, "bs") == "block size (bs)"
    combo = page.param_edits["ioengine"].parent()
    assert isinstance(combo, QComboBox)
    assert [combo.itemText(i) for i in range(combo.count())] == ["", *ENGINES]
    assert isinstance(page.param_edits["direct"].parent(), QComboBox)  # yes/no: a choice too
    assert not isinstance(page.param_edits["iodepth"].parent(), QComboBox)
    combo.textActivated.emit("psync")  # picked from the list
    assert window.wb.draft.tests[row]["ioengine"] == "psync"
    page.set_param("rw", "randread")
    page.set_param("size", "16m")
    page.set_param("iodepth", "1, 32")  # an axis: typed as before
    assert window.wb.draft.tests[row]["iodepth"] == [1, 32]
    page.validate()
    qtbot.waitUntil(lambda: not page._checking and not page._timer.isActive(),
                    timeout=15_000)
    key = f"test[{row + 1}].iodepth"
    (warning,) = [p for p in page.summary.problems if p.key == key]
    assert warning.severity == "warning" and "fio ignores it" in warning.message
    listed = [page.problems.item(i).text() for i in range(page.problems.count())]
    assert any("fio ignores it" in text for text in listed)


def test_every_parameter_fits_the_panel_at_the_default_size(qtbot, window,
                                                            target_dir: Path) -> None:
    """At the window's default 1280x820 the Parameters panel shows each row whole: nothing
    scrolls sideways (the raw-device box and the drop-downs once pushed the fields past its
    right edge, cut off). A row too wide puts its field under its label instead."""
    window.resize(1280, 820)
    window.show()
    qtbot.waitExposed(window)
    window.wb.set_draft(PlanDraft.from_text(engine_plan(target_dir)))
    window.show_page("matrix")
    page = window.matrix
    for tool in ("engine", "fio", "iozone"):
        page.add_test(tool)
        qtbot.wait(50)  # the form's layout settles in the event loop
        scroll = page.params_scroll
        assert scroll.horizontalScrollBar().maximum() == 0, (
            f"{tool}: the parameters are {page.params_host.minimumSizeHint().width()} px wide "
            f"in a {scroll.viewport().width()} px panel")
