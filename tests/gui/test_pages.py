"""Every page driven on its own, the window's menus, shortcuts, themes and remembered state."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QApplication, QInputDialog, QListWidgetItem

from disklab.core import tools
from disklab.core.plan.draft import PlanDraft, field_text, parse_field
from disklab.core.plan.parse import parse_plan
from disklab.core.proc import which
from disklab.core.system.devices import identity
from disklab.gui.device_list import HEADERS, READY
from disklab.gui.main_window import PAGE_KEYS, MainWindow
from disklab.gui.pages.matrix import MatrixPage
from disklab.gui.state import Workbench
from tests.helpers import Loops, engine_plan


def test_sidebar_and_shortcuts_reach_every_page(qtbot, window):
    for i, key in enumerate(PAGE_KEYS):
        qtbot.keyClick(window, Qt.Key(Qt.Key.Key_1 + i), Qt.KeyboardModifier.ControlModifier)
        assert window.current_page() == key
        assert window.stack.currentWidget() is window.pages[key]
    window.sidebar.setCurrentRow(0)
    assert window.current_page() == "target"


def test_about_names_the_versions(window):
    import numpy
    import PySide6

    text = window.about_text()
    assert f"PySide6 {PySide6.__version__}" in text
    assert f"numpy {numpy.__version__}" in text
    assert str(window.wb.library_path) in text


def test_window_state_is_remembered(qtbot, library_path, tmp_path):
    def window() -> MainWindow:
        w = MainWindow(Workbench(library_path),
                       QSettings(str(tmp_path / "state.ini"), QSettings.Format.IniFormat))
        qtbot.addWidget(w)
        w.ask_save = lambda _doing: pytest.fail("asked to save a plan that has no changes")
        return w

    w = window()
    assert w.current_page() == "target"  # nothing set yet: the work starts there
    assert w.target.start_hint.isVisibleTo(w)
    w.resize(720, 540)  # within the offscreen screen (800 x 600)
    w.matrix.add_test("engine")
    w.wb.draft.save(tmp_path / "plan.toml")
    w.show_page("library")
    w.close()
    again = window()
    assert again.current_page() == "library"
    assert again.size().width() == 720
    assert again.wb.draft.path == str(tmp_path / "plan.toml")
    assert again.wb.draft.tests == [{"tool": "engine"}] and not again.wb.draft.modified
    assert not again.target.start_hint.isVisibleTo(again)
    again.show()
    again.matrix.add_test("dd")  # a change not saved: closing asks
    asked: list[str] = []
    again.ask_save = lambda _doing: asked.append("cancel") or "cancel"
    again.close()
    assert asked and again.isVisible()  # cancelled: still open, the plan still there
    again.ask_save = lambda _doing: "discard"
    again.close()
    assert not again.isVisible()
    third = window()  # discarded: the next start shows the plan as last saved in its file
    assert third.wb.draft.path == str(tmp_path / "plan.toml")
    assert third.wb.draft.tests == [{"tool": "engine"}] and not third.wb.draft.modified
    for w in (again, third):
        w.wb.close_library()


def test_target_page_directory_and_device_list(qtbot, window, tmp_path):
    page = window.target
    page.set_directory(str(tmp_path))
    assert window.wb.draft.target == {"directory": str(tmp_path)}
    assert "free" in page.dir_info.text()
    page.set_directory(str(tmp_path / "nope"))
    assert "does not exist" in page.dir_info.text()
    with qtbot.waitSignal(page.devices_loaded, timeout=20_000):
        page.refresh_devices()
    listing = page.device_list
    assert listing.note.text() == READY  # read, not an error and not still reading
    # the disk under / (lsblk's own answer) is listed, greyed, refused with its reason
    source = subprocess.run(["findmnt", "-no", "SOURCE", "/"], capture_output=True,
                            text=True).stdout.strip()
    if not source.startswith("/dev/"):
        pytest.skip(f"/ is not on a block device here ({source or 'findmnt says nothing'})")
    parent = subprocess.run(["lsblk", "-no", "PKNAME", source], capture_output=True,
                            text=True).stdout.strip()
    disk = f"/dev/{parent}" if parent else source
    t = listing.table
    rows = {t.item(r, HEADERS.index("device")).text(): r for r in range(t.rowCount())}
    assert disk in rows, sorted(rows)
    row = rows[disk]
    assert t.item(row, HEADERS.index("safety")).text() == "system"
    assert "holds /" in t.item(row, HEADERS.index("why")).text()
    assert t.item(row, 0).flags() == Qt.ItemFlag.NoItemFlags  # cannot be chosen


def test_configs_page_two_configs_with_field_errors_and_argv_preview(qtbot, window):
    page = window.configs
    page.add_config()
    assert page.list.count() == 1
    page.set_field("label", "ext4 ordered")
    page.set_field("mount.data", "ordered")
    page.set_field("mkfs.journal_size", "64m")
    assert window.wb.draft.configs[0] == {"label": "ext4 ordered", "fs": "ext4",
                                          "mkfs": {"journal_size": "64m"},
                                          "mount": ["data=ordered", "noatime"]}
    preview = page.preview.toPlainText()
    assert "mke2fs -t ext4 -F -J size=64" in preview
    # the helper's mounts put nosuid,nodev,noexec first (docs/helper-contract.md)
    assert "mount -t ext4 -o nosuid,nodev,noexec,data=ordered,noatime /dev/TARGET " in preview
    # a second configuration: duplicated, then data=journal
    page.duplicate()
    assert page.list.currentRow() == 1
    page.set_field("label", "ext4 journal")
    page.set_field("mount.data", "journal")
    assert [c["label"] for c in window.wb.draft.configs] == ["ext4 ordered", "ext4 journal"]
    assert "data=journal" in page.preview.toPlainText()
    # a bad value is marked at its field with the reason
    page.set_field("mkfs.journal_size", "3k")
    assert not page.errors["mkfs.journal_size"].isHidden()
    assert page.problems == {"mkfs.journal_size": "'3k' is not a multiple of 1m"}
    assert page.errors["mkfs.journal_size"].text() == page.problems["mkfs.journal_size"]
    page.set_field("mkfs.journal_size", "")
    assert "journal_size" not in str(page.problems)
    # xfs shows xfs options (su/sw), not ext4's
    page.set_field("fs", "xfs")
    qtbot.waitUntil(lambda: "mkfs.su" in page.fields, timeout=2000)
    assert "mkfs.journal_size" not in page.fields and "mount.nodelalloc" not in page.fields
    page.move(-1)
    assert page.list.currentRow() == 0 and window.wb.draft.configs[0]["fs"] == "xfs"
    page.remove()
    assert page.list.count() == 1 == len(window.wb.draft.configs)


def _tool_items(page: MatrixPage) -> dict[str, QListWidgetItem]:
    return {page.tools.item(i).data(Qt.ItemDataRole.UserRole): page.tools.item(i)
            for i in range(page.tools.count())}


def test_a_tool_that_is_not_installed_says_how_to_install_it(
        qtbot, window, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """iozone really missing (a PATH of every other tool's executable, iozone left out): its
    row says so, greyed, with the package to install; the others are as they were."""
    before = {name: item.text() for name, item in _tool_items(window.matrix).items()}
    assert "not installed" not in before["iozone"], "iozone is not installed here to begin with"
    shadow = tmp_path / "bin"
    shadow.mkdir()
    for name in tools.tool_names():
        executable = tools.get_adapter(name).executable
        found = which(executable) if executable and name != "iozone" else None
        if found:
            (shadow / Path(found).name).symlink_to(found)
    monkeypatch.setenv("PATH", str(shadow))
    page = MatrixPage(window.wb)
    qtbot.addWidget(page)
    items = _tool_items(page)
    assert items["iozone"].text() == "iozone — not installed"
    assert items["iozone"].toolTip() == "install it with: sudo apt install iozone3"
    assert {n: i.text() for n, i in items.items() if n != "iozone"} == {
        n: text for n, text in before.items() if n != "iozone"}


def test_matrix_page_tools_presets_and_problems(qtbot, window, target_dir):
    page = window.matrix
    names = [page.tools.item(i).data(Qt.ItemDataRole.UserRole) for i in range(page.tools.count())]
    assert "engine" in names
    assert page.preset.count() >= 2  # "(choose a preset)" and the presets
    page.load_file(page.preset.itemData(1))
    assert page.preset.currentIndex() == 1
    assert window.wb.draft.tests, "a preset has tests"
    # a bad value is reported with its key
    window.wb.set_draft(PlanDraft.from_text(engine_plan(target_dir)))
    page.tests.setCurrentRow(0)
    page.set_param("block_size", "lots")
    page.validate()  # (also runs by itself 300 ms after the last edit)
    qtbot.waitUntil(lambda: any("not a size" in e for e in page.summary.errors), timeout=10_000)
    assert any(e.startswith("line ") and "test[1].block_size" in e for e in page.summary.errors)
    assert page.problems.count() >= 1 and "problem" in page.summary_label.text()
    page.set_param("block_size", "1m, 256k")
    page.validate()
    qtbot.waitUntil(lambda: page.summary.cases == 4 and not page.summary.errors, timeout=10_000)


def test_draft_fields_round_trip():
    assert parse_field("1m, 64k") == ["1m", "64k"]
    assert parse_field("4") == 4 and parse_field("true") is True
    assert parse_field("write,read", multi=True) == ["write", "read"]
    assert parse_field("write,read | write", multi=True) == [["write", "read"], ["write"]]
    assert field_text([["write", "read"], ["write"]], multi=True) == "write,read | write"
    assert field_text(["1m", "64k"]) == "1m, 64k" and field_text(False) == "false"


def test_closing_during_a_run_asks_and_cancels(qtbot, window, target_dir):
    window.wb.set_draft(PlanDraft.from_text(engine_plan(target_dir, runtime="30s")))
    window.run.start()
    qtbot.waitUntil(lambda: window.wb.runs.running and window.run.model.progress_seen > 0,
                    timeout=20_000)
    asked: list[str] = []
    window.ask = lambda title, text: asked.append(title) or False
    window.close()
    assert asked and window.isVisible()  # said no: still open, still running
    assert window.wb.runs.running
    window.ask = lambda title, text: True
    window.close()
    assert not window.isVisible()  # off the screen at once; the run ends after (no blocking)
    qtbot.waitUntil(lambda: not window.wb.runs.running, timeout=10_000)
    assert window.run.status == "cancelled"


def test_dark_and_light_themes(qtbot):
    from PySide6.QtGui import QPalette

    from disklab.gui.app import apply_theme

    app = QApplication.instance()
    assert apply_theme(app, dark=True)
    assert app.palette().color(QPalette.ColorRole.Window).lightness() < 100
    assert not apply_theme(app, dark=False)
    assert app.palette().color(QPalette.ColorRole.Window).lightness() > 150


def test_configs_page_asks_the_journal_device_typed_back(qtbot, window, tmp_path, monkeypatch):
    """An external journal device is wiped like the target: refused devices are said at the
    field, any other is kept with its identity only once its path is typed back."""
    if os.geteuid() != 0:
        pytest.skip("needs root for loop devices")
    loops = Loops(tmp_path)
    try:
        journal, mounted = loops.device("journal"), loops.device("mounted")
        loops.mount(mounted, "mnt")
        asked: list[str] = []

        def typed_back(text: str) -> object:
            def get_text(parent, title, label, *args, **kwargs):  # as QInputDialog.getText
                asked.append(label)
                return text, True
            return staticmethod(get_text)

        page = window.configs
        page.add_config()
        page.set_field("mkfs.journal_device", mounted)
        monkeypatch.setattr(QInputDialog, "getText", typed_back(mounted))
        page.confirm_device("journal_device")
        assert not asked  # refused: nothing to confirm
        assert "class mounted" in page.problems["mkfs.journal_device"]
        assert window.wb.draft.configs[0]["mkfs"] == {"journal_device": mounted}

        page.set_field("mkfs.journal_device", journal)
        assert "press Enter" in page.problems["mkfs.journal_device"]
        monkeypatch.setattr(QInputDialog, "getText", typed_back("/dev/wrong"))
        page.confirm_device("journal_device")
        assert len(asked) == 1 and journal in asked[0] and "None" not in asked[0]
        assert window.wb.draft.configs[0]["mkfs"] == {"journal_device": journal}
        # the wrong path is said to be wrong at the field, not dropped silently
        assert "'/dev/wrong' is not" in page.problems["mkfs.journal_device"]
        monkeypatch.setattr(QInputDialog, "getText", typed_back(journal))
        page.confirm_device("journal_device")
        confirmed = {"path": journal, "confirm": identity(journal)}
        assert window.wb.draft.configs[0]["mkfs"] == {"journal_device": confirmed}
        assert "mkfs.journal_device" not in page.problems
        assert f"wipefs --all --force {journal}" in page.preview.toPlainText()
        # the saved plan carries the confirm next to the option, as the plan loader reads it
        window.wb.draft.target.clear()
        window.wb.draft.target["image"] = {"path": str(tmp_path / "t.img"), "size": "1g"}
        window.wb.draft.tests.append({"tool": "engine", "mode": "write", "size": "1m"})
        plan = parse_plan(window.wb.draft.to_text(), library=str(window.wb.library_path)).plan
        assert plan.configs[0].confirms == {"journal_device": identity(journal)}
    finally:
        loops.cleanup()
