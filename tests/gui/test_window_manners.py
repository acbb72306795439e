"""What a person expects of the window's keys and marks (issue 49, points 4 and 6).

- Typing into a plan's field shows the unsaved mark in the title at once, not only when the
  field is left; an edit that changes nothing takes it away again.
- Enter presses the focused button, as Space does.
- File > New plan starts from a new plan's target: not the last plan's image path and size;
  its "Save changes?" question says what it comes before.
- A dd test's fields are named plainly (`mode`, not `mode (choice)`).
- The Library's sort arrow points the way its rows are ordered (newest first: ▼).

Keys go through QTest into the application's event loop, the path X input takes too
(tests/gui/test_real_input.py drives the real window with xdotool)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QPushButton


def test_typing_marks_the_title_at_once(qtbot, window, tmp_path: Path) -> None:
    window.show_page("target")
    window.target.set_directory(str(tmp_path))
    window.wb.draft.saved_text = window.wb.draft.to_text()  # as if just saved
    window.show_title()
    assert not window.isWindowModified()
    edit = window.target.dir_edit
    edit.setFocus()
    QTest.keyClicks(edit, "/x")
    assert window.isWindowModified(), "typed, and no mark until the field is left"
    # the same text back: nothing changed, no mark once the value is in the plan
    QTest.keyClick(edit, Qt.Key.Key_Backspace)
    QTest.keyClick(edit, Qt.Key.Key_Backspace)
    QTest.keyClick(edit, Qt.Key.Key_Return)
    assert edit.text() == str(tmp_path)
    assert not window.isWindowModified()


def test_typing_outside_the_plan_leaves_no_mark(qtbot, window) -> None:
    window.show_page("library")
    window.show_title()
    notes = window.library.notes  # a session's notes: the library's, not the plan's
    notes.setFocus()
    QTest.keyClicks(notes, "a note")
    assert not window.isWindowModified()


def test_enter_presses_the_focused_button(qtbot, window) -> None:
    pressed: list[bool] = []
    button = QPushButton("Press me", window.target)
    button.clicked.connect(lambda: pressed.append(True))
    button.show()
    button.setFocus()
    qtbot.waitUntil(button.hasFocus, timeout=2000)
    QTest.keyClick(button, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: bool(pressed), timeout=2000)
    QTest.keyClick(button, Qt.Key.Key_Enter, Qt.KeyboardModifier.KeypadModifier)
    qtbot.waitUntil(lambda: len(pressed) == 2, timeout=2000)


def test_a_new_plan_forgets_the_last_image(qtbot, window, tmp_path: Path) -> None:
    asked: list[str] = []
    window.ask_save = lambda doing: asked.append(doing) or "discard"
    window.show_page("target")
    window.target.set_image(str(tmp_path / "mine.img"), 9)
    window.target.set_directory(str(tmp_path))  # then a directory: the image fields keep theirs
    assert window.target.image_dir.text() == str(tmp_path / "mine.img")
    window.new_plan()
    assert asked == ["starting a new plan"]
    page = window.target
    assert page.image_dir.text() != str(tmp_path / "mine.img")
    assert page.image_size.value() == 4
    page.image_radio.setChecked(True)  # what a person sees on choosing an image now
    assert window.wb.draft.target["image"]["size"] == "4g"


def test_dd_fields_are_named_plainly(qtbot, window) -> None:
    window.show_page("matrix")
    window.matrix.add_test("dd")
    form = window.matrix.params.form
    names = [form.itemAt(i, form.ItemRole.LabelRole) for i in range(form.rowCount())]
    texts = [w.widget().text() for w in names if w is not None and w.widget() is not None]
    assert "mode" in texts and "block_size" in texts, texts
    assert not any("(choice)" in t or "(size)" in t or "(bool)" in t for t in texts), texts


def test_the_librarys_arrow_reads_as_its_order(qtbot, window) -> None:
    """Newest first under an arrow that points down: the arrow's widest row is its top."""
    window.show_page("library")
    view = window.library.view
    header = view.horizontalHeader()
    assert header.sortIndicatorOrder() == Qt.SortOrder.DescendingOrder
    qtbot.waitUntil(lambda: header.isVisible(), timeout=2000)
    image = header.grab().toImage()
    left = header.sectionPosition(0)
    width = header.sectionSize(0)
    rows = [sum(1 for x in range(left + width // 2, left + width)
                if image.pixelColor(x, y).lightness() < 100) for y in range(image.height())]
    drawn = [n for n in rows if n]
    assert len(drawn) >= 3, rows
    assert drawn[0] > drawn[-1], f"the arrow points up over a descending order: {drawn}"
