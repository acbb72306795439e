"""The small things a new user saw wrong (issue 29, point 8), each as the user sees it."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QComboBox, QLineEdit

from disklab.core.plan.draft import PlanDraft


def test_one_named_target_is_one_target(window, tmp_path: Path) -> None:
    window.wb.set_draft(PlanDraft.from_text(
        f'name = "one"\n[targets.a]\ndirectory = "{tmp_path}"\n'))
    window.show_page("target")
    note = window.target.targets_note.text()
    assert note.startswith("1 target.") and "1 targets" not in note, note


def test_a_new_target_does_not_take_the_first_ones_image(window) -> None:
    page = window.target
    window.show_page("target")
    page.set_image("/var/tmp/first.img", 2)
    page.add_target()
    page.image_radio.setChecked(True)
    page._apply()
    images = [t.get("image", {}).get("path") for t in window.wb.draft.doc["targets"].values()]
    assert images[0] == "/var/tmp/first.img"
    assert images[1] and images[1] != images[0], images


def test_the_label_the_page_gave_follows_the_filesystem(qtbot, window) -> None:
    page = window.configs
    window.show_page("configs")
    page.add_config()
    fs = page.fields["fs"]
    assert isinstance(fs, QComboBox)
    label = page.fields["label"]
    assert isinstance(label, QLineEdit) and label.text() == "ext4 #1"
    fs.setCurrentText("xfs")
    qtbot.wait(50)
    assert window.wb.draft.configs[0]["label"] == "xfs #1"
    # a label the user typed stays
    label = page.fields["label"]
    label.setText("my fast one")
    label.editingFinished.emit()
    page._store()
    page.fields["fs"].setCurrentText("ext4")
    qtbot.wait(50)
    assert window.wb.draft.configs[0]["label"] == "my fast one"


def test_an_export_says_where_it_went_and_the_next_opens_there(qtbot, window, tmp_path: Path,
                                                               library_path: Path,
                                                               monkeypatch) -> None:
    from PySide6.QtWidgets import QFileDialog

    from disklab.cli.main import main
    from tests.helpers import engine_plan

    target = tmp_path / "t"
    target.mkdir()
    plan = tmp_path / "plan.toml"
    plan.write_text(engine_plan(target, name="exported", runtime="0.5s"))
    assert main(["run", str(plan), "--library", str(library_path)]) == 0
    out = tmp_path / "reports"
    out.mkdir()
    asked: list[str] = []

    def dialog(_parent, _title, start, _filter):  # the user types a path in the dialog
        asked.append(start)
        return str(out / Path(start).name), ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", dialog)
    window.show_page("library")
    window.library.refresh()
    assert window.library.select_session(1)
    window.library.ask_export("html")
    assert (out / "disklab-session-1.html").is_file()
    message = window.statusBar().currentMessage()
    assert "Exported session 1" in message and str(out) in message, message
    window.library.ask_export("csv")
    assert Path(asked[-1]).parent == out  # opened where the last export went


def test_the_start_hint_leaves_no_blank_band(qtbot, window, tmp_path: Path) -> None:
    """Once the Start-here banner goes, its room stays while the page is on screen (nothing
    jumps under the pointer) and is given back when the page is left: coming back, the form
    starts at the top, with no blank band above it (issue 49, point 6)."""
    from PySide6.QtCore import QPoint
    from PySide6.QtWidgets import QLabel

    window.resize(1280, 800)
    window.show_page("target")
    page = window.target
    page.show_start_hint(True)
    qtbot.wait(20)
    top = page.start_hint.mapTo(window, QPoint(0, 0)).y()
    intro = next(w for w in page.findChildren(QLabel)
                 if w.text().startswith("<b>Where the tests run.</b>"))
    below = intro.mapTo(window, QPoint(0, 0)).y()
    assert below > top + page.start_hint.height() - 2
    page.set_directory(str(tmp_path))
    qtbot.wait(20)
    assert intro.mapTo(window, QPoint(0, 0)).y() == below  # still put while on screen
    window.show_page("run")
    qtbot.wait(20)
    window.show_page("target")
    qtbot.wait(20)
    assert not page.start_hint.isVisible()
    assert intro.mapTo(window, QPoint(0, 0)).y() <= top + 2, "a blank band above the form"


def test_nothing_jumps(qtbot, window, tmp_path: Path, library_path: Path) -> None:
    # the Target page's form stays put when the Start-here banner goes
    from disklab.cli.main import main
    from tests.helpers import engine_plan

    window.resize(1280, 820)
    window.show_page("target")
    page = window.target
    page.show_start_hint(True)
    qtbot.wait(20)
    before = page.box.mapTo(window, page.box.rect().topLeft()).y()
    page.set_directory(str(tmp_path))
    qtbot.wait(20)
    assert not page.start_hint.isVisible()
    assert page.box.mapTo(window, page.box.rect().topLeft()).y() == before
    # the Library's tabs stay put whatever the session's heading says
    for i, name in enumerate(("short", "a much longer name " * 12)):
        target = tmp_path / f"t{i}"
        target.mkdir()
        plan = tmp_path / f"plan{i}.toml"
        plan.write_text(engine_plan(target, name=name.strip(), runtime="0.5s"))
        assert main(["run", str(plan), "--library", str(library_path)]) == 0
    window.show_page("library")
    lib = window.library
    lib.refresh()
    tops = []
    for sid in (1, 2):
        assert lib.select_session(sid)
        qtbot.wait(20)
        tops.append(lib.tabs.mapTo(window, lib.tabs.rect().topLeft()).y())
    assert tops[0] == tops[1], tops
