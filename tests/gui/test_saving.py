"""Saving a plan as a person expects (issue 29, point 9).

- "Save" when closing a plan that has a file writes that file: no file dialog, no "Replace?";
- "Discard" gives the next start the plan as last saved in its file, not a blank plan;
- the title bar names the file and marks unsaved changes;
- File ▸ New plan starts a blank plan on the Target page.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QFileDialog

from disklab.core.plan.draft import PlanDraft
from disklab.gui.main_window import MainWindow
from disklab.gui.state import Workbench
from tests.helpers import engine_plan


@pytest.fixture
def make_window(qtbot, library_path: Path, tmp_path: Path) -> Iterator:
    made: list[MainWindow] = []

    def make(answer: str = "discard") -> MainWindow:
        settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
        w = MainWindow(Workbench(library_path), settings)
        w.ask = lambda title, text: True
        w.ask_save = lambda _doing: answer
        qtbot.addWidget(w)
        w.show()
        made.append(w)
        return w

    yield make
    for w in made:
        w.wb.close_library()


@pytest.fixture
def plan_file(tmp_path: Path) -> Path:
    target = tmp_path / "target"
    target.mkdir()
    path = tmp_path / "mine.toml"
    path.write_text(engine_plan(target, name="mine"))
    return path


def _no_dialog(*_args: object, **_kw: object) -> tuple[str, str]:
    raise AssertionError("a file dialog was opened for a plan that has its file")


def test_save_on_close_writes_the_plans_own_file(make_window, plan_file: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    w = make_window(answer="save")
    w.matrix.load_file(str(plan_file))
    w.wb.draft.set("name", "mine, changed")
    w.wb.touch()
    monkeypatch.setattr(QFileDialog, "getSaveFileName", _no_dialog)
    w.close()
    assert not w.isVisible()
    assert 'name = "mine, changed"' in plan_file.read_text()


def test_discard_gives_the_next_start_the_saved_file(make_window, plan_file: Path) -> None:
    w = make_window(answer="discard")
    w.matrix.load_file(str(plan_file))
    w.wb.draft.set("name", "changed and thrown away")
    w.wb.touch()
    w.close()
    again = make_window()
    assert again.wb.draft.path == str(plan_file)
    assert again.wb.draft.get("name") == "mine"
    assert not again.wb.draft.modified
    assert again.current_page() != "target" or not again.wb.draft.is_blank


def test_the_title_names_the_file_and_marks_changes(make_window, plan_file: Path) -> None:
    w = make_window()
    assert w.windowTitle().startswith("new plan")
    w.matrix.load_file(str(plan_file))
    assert "mine.toml" in w.windowTitle() and not w.isWindowModified()
    w.wb.draft.set("name", "changed")
    w.wb.touch()
    assert w.isWindowModified()
    assert w.matrix._save()  # its own file: no dialog
    assert not w.isWindowModified()
    assert PlanDraft.load(plan_file).get("name") == "changed"


def test_file_new_plan(make_window, plan_file: Path) -> None:
    w = make_window()
    w.matrix.load_file(str(plan_file))
    new = next(a for a in w.actions() if a.text().replace("&", "") == "New plan")
    new.trigger()
    assert w.wb.draft.is_blank and w.wb.draft.path is None
    assert w.current_page() == "target"
    assert w.windowTitle().startswith("new plan")
