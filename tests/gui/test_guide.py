"""Pages that guide (issue 13): a problem is shown at the field that has it and a click away, an
incomplete choice stays chosen and marked, the plan survives a restart, devices that cannot be
used are not offered, and the status bar says what is happening now."""

from __future__ import annotations

import os
import threading

import pytest
from PySide6.QtCore import QSettings, Qt, QThreadPool
from PySide6.QtWidgets import QInputDialog

from disklab.core.plan.draft import PlanDraft
from disklab.core.run.summary import check_plan
from disklab.core.system.devices import Device, describe, list_devices
from disklab.gui import device_list
from disklab.gui.main_window import MainWindow
from disklab.gui.state import Workbench
from tests.helpers import Loops, engine_plan


def checked(qtbot, window) -> None:
    """Wait for the Test matrix page's check of the draft as it is now."""
    window.matrix.validate()
    qtbot.waitUntil(lambda: not window.matrix._checking and not window.matrix._timer.isActive(),
                    timeout=15_000)


def test_block_device_without_a_device_stays_chosen_and_is_marked(qtbot, window, tmp_path):
    page = window.target
    image = str(tmp_path / "scratch.img")
    page.set_image(image, 2)
    window.show_page("target")
    qtbot.mouseClick(page.device_radio, Qt.MouseButton.LeftButton)
    assert page.device_radio.isChecked()  # not switched back to Directory
    assert window.wb.draft.target == {"format": "", "confirm": ""}
    assert "no device chosen" in page.device_choice.text()
    checked(qtbot, window)
    assert "#d33" in page.device_list.table.styleSheet()  # the list to pick from is marked
    assert "target.format" in {p.key for p in window.matrix.summary.problems}
    # the scratch image choice is still there to go back to
    qtbot.mouseClick(page.image_radio, Qt.MouseButton.LeftButton)
    assert window.wb.draft.target["image"] == {"path": image, "size": "2g"}


def test_parameter_errors_at_their_field_and_a_click_away(qtbot, window, target_dir):
    text = engine_plan(target_dir).replace('block_size = "1m"', 'block_size = "3k"')
    assert 'block_size = "3k"' in text
    window.wb.set_draft(PlanDraft.from_text(text))
    window.show_page("matrix")
    page = window.matrix
    checked(qtbot, window)
    problem = next(p for p in page.summary.problems if p.key.startswith("test[1]."))
    field = problem.key.split(".", 1)[1]
    page.tests.setCurrentRow(0)
    assert page.param_errors[field].isVisibleTo(page)
    assert problem.message in page.param_errors[field].text()
    assert "#d33" in page.param_edits[field].styleSheet()
    # the listed problem goes to its field: other test shown first, then a click
    page.add_test("dd")
    assert page.tests.currentRow() == 1
    item = next(page.problems.item(i) for i in range(page.problems.count())
                if page.problems.item(i).data(Qt.ItemDataRole.UserRole) == problem.key)
    window.activateWindow()
    rect = page.problems.visualItemRect(item)
    qtbot.mouseClick(page.problems.viewport(), Qt.MouseButton.LeftButton,
                     pos=rect.center())
    assert page.tests.currentRow() == 0
    qtbot.waitUntil(lambda: page.param_edits[field].hasFocus(), timeout=3000)


def test_f5_with_problems_shows_them_on_the_page_you_are_on(qtbot, window, tmp_path):
    window.target.set_image(str(tmp_path / "scratch.img"), 1)
    window.show_page("configs")
    window.configs.add_config()
    window.configs.set_field("mount.commit", "-5")
    # `commit=-5` at its own option, not under "other options"
    assert "mount.commit" in window.configs.problems
    assert window.configs.errors["mount.commit"].isVisibleTo(window.configs)
    assert not window.configs.errors["mount"].isVisibleTo(window.configs)
    window.configs.add_config()  # another one shown: the first stays red in the list
    first = window.configs.list.item(0)
    assert first.foreground().color().red() > 150 and "commit=-5" in first.toolTip()
    assert not window.configs.list.item(1).toolTip()
    run_state = window.run.state_label.text()
    window.activateWindow()
    qtbot.keyClick(window, Qt.Key.Key_F5)
    qtbot.waitUntil(lambda: window.problems_bar.isVisible(), timeout=15_000)
    assert window.current_page() == "configs"
    assert window.run.state_label.text() == run_state  # the Run page left alone
    keys = [window.problems_bar.list.item(i).data(Qt.ItemDataRole.UserRole)
            for i in range(window.problems_bar.list.count())]
    assert "test" in keys and "config[1].mount[2]" in keys
    assert "problem" in window.statusBar().currentMessage()
    test_item = window.problems_bar.list.item(keys.index("test"))
    window.problems_bar.list.itemClicked.emit(test_item)
    assert window.current_page() == "matrix"
    window.go_to_problem("config[1].mount[2]")
    assert window.configs.list.currentRow() == 0
    assert window.current_page() == "configs"
    qtbot.waitUntil(lambda: window.configs.fields["mount.commit"].hasFocus(), timeout=3000)


def test_plan_kept_across_a_restart_and_a_signal(qtbot, library_path, tmp_path, target_dir):
    def window() -> MainWindow:
        w = MainWindow(Workbench(library_path),
                       QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
        qtbot.addWidget(w)
        w.ask_save = lambda _doing: pytest.fail("a signal or a saved plan must not ask")
        return w

    w = window()
    w.wb.set_draft(PlanDraft.from_text(engine_plan(target_dir, name="kept")))
    w.show_page("matrix")
    w.matrix.set_param("runtime", "2s")
    w.quitting = "SIGTERM"  # a logout: no question, the plan is kept as it was
    w.close()
    again = window()
    assert again.wb.draft.get("name") == "kept"
    assert again.wb.draft.tests[0]["runtime"] == "2s"
    assert again.wb.draft.modified  # still not saved in a file: closing will ask
    assert again.current_page() == "matrix"
    again.wb.draft.save(tmp_path / "kept.toml")
    again.close()
    third = window()
    assert third.wb.draft.path == str(tmp_path / "kept.toml") and not third.wb.draft.modified
    for x in (again, third):
        x.wb.close_library()


def test_devices_that_cannot_be_used_are_not_offered(qtbot, window):
    page = window.target
    with qtbot.waitSignal(page.devices_loaded, timeout=20_000):
        page.refresh_devices()
    for row, dev in enumerate(page.devices):
        enabled = bool(page.device_list.table.item(row, 0).flags() & Qt.ItemFlag.ItemIsEnabled)
        assert enabled == (dev.unusable is None), dev
        if dev.size == 0:
            assert "size 0" in page.device_list.table.item(row, 7).text()
    empty = [d for d in list_devices() if d.size == 0]
    if not empty:
        pytest.skip("no 0-byte block device (zram0 not set up) on this machine")
    assert all(d.unusable and "size 0" in d.unusable for d in empty)


def test_confirmation_names_the_device_without_none():
    bare = Device(path="/dev/zram0", name="zram0", size=0)
    assert describe(bare) == "/dev/zram0 (0 B)"
    disk = Device(path="/dev/sdb", name="sdb", model="WDC WD40", serial="WX1", size=4 * 2**40)
    assert describe(disk) == "/dev/sdb (WDC WD40, serial WX1, 4.4 TB)"  # 4 TiB


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root for a loop device")
def test_a_wrong_path_typed_back_is_said_to_be_wrong(qtbot, window, tmp_path, monkeypatch):
    loops = Loops(tmp_path)
    try:
        device = loops.device("victim")
        page = window.target
        # the list of this reading, made after the loop device: only the last reading asked
        # for is shown (and signalled), whichever ends first
        with qtbot.waitSignal(page.devices_loaded, timeout=20_000):
            page.refresh_devices()
        row = next(i for i, d in enumerate(page.devices) if d.path == device)
        asked: list[str] = []

        def typed(text: str):
            def get_text(parent, title, label, *args, **kwargs):
                asked.append(label)
                return text, True
            return staticmethod(get_text)

        monkeypatch.setattr(QInputDialog, "getText", typed("/dev/wrong"))
        page.device_list.table.selectRow(row)
        assert asked and device in asked[0] and "None" not in asked[0]
        assert "'/dev/wrong' is not" in page.device_choice.text()
        assert "format" not in window.wb.draft.target
        monkeypatch.setattr(QInputDialog, "getText", typed(device))
        page.device_list.table.clearSelection()
        page.device_list.table.selectRow(row)
        assert window.wb.draft.target["format"] == device
        assert page.device_radio.isChecked() and "confirmed" in page.device_choice.text()
    finally:
        loops.cleanup()


def test_the_status_bar_follows_the_run(qtbot, window, target_dir):
    bar = window.statusBar()
    window.wb.set_draft(PlanDraft.from_text(engine_plan(target_dir, runtime="1s")))
    with qtbot.waitSignal(window.run.finished, timeout=60_000):
        window.start_run()
    assert "finished" in bar.currentMessage()
    seen: list[str] = []
    window.wb.runs.event.connect(lambda _ev: seen.append(bar.currentMessage()))
    with qtbot.waitSignal(window.run.finished, timeout=60_000):
        window.start_run()
    during = seen[:-1]
    assert any(m.startswith("Running run 1 of 2") for m in during), during
    assert not any("finished" in m for m in during), during  # nothing of the last run
    assert "finished" in bar.currentMessage()


def test_plan_warnings_name_the_right_key_and_only_real_page_cache_reads(tmp_path):
    lib = tmp_path / "lib.sqlite3"
    base = "name = 'w'\n[target]\n{target}\n[[test]]\ntool = 'engine'\nmode = '{mode}'\n" \
           "size = '16m'\n"
    image = f"image = {{ path = '{tmp_path / 'x.img'}', size = '1g' }}"
    summary = check_plan(base.format(target=image, mode="write"), str(lib))
    assert not summary.errors, summary.errors
    keys = {p.key for p in summary.problems}
    assert "target.image" in keys and "target.directory" not in keys
    assert not any("page cache" in w for w in summary.warnings)  # write-only: nothing read
    directory = f"directory = '{tmp_path}'"
    reads = check_plan(base.format(target=directory, mode="read"), str(lib))
    assert any("page cache" in w for w in reads.warnings)
    assert "target.directory" in {p.key for p in reads.problems}



def test_problem_keys_find_their_page():
    from disklab.gui.main_window import PAGE_KEYS, page_of_problem

    assert page_of_problem("target.directory") == "target"
    assert page_of_problem("targets.a.image") == "target"
    assert page_of_problem("config[2].mkfs.journal_size") == "configs"
    assert page_of_problem("test[1].block_size") == "matrix"
    assert page_of_problem("repeats") == "matrix"
    # a key named like a page goes to that page once one is registered (a Hosts page)
    assert page_of_problem("hosts.h1.address") == ("hosts" if "hosts" in PAGE_KEYS else "matrix")


def test_a_time_bound_plan_promises_no_bytes(tmp_path):
    from disklab.core.run.summary import summary_text

    plan = ("name = 't'\n[target]\ndirectory = '{d}'\n[[test]]\ntool = 'engine'\n"
            "mode = ['write', 'read']\nsize = '64m'\nruntime = '{rt}'\n")
    timed = check_plan(plan.format(d=tmp_path, rt="3s"), None)
    assert "moved" not in summary_text(timed) and "2 time-based run(s)" in summary_text(timed)
    sized = check_plan(plan.format(d=tmp_path, rt="0"), None)
    assert "about 134 MB moved" in summary_text(sized)  # 128 MiB


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root for a loop device")
def test_another_programs_loop_device_is_listed_with_its_backing_file(qtbot, window,
                                                                      tmp_path):
    """A loop device some other program attached is someone's image: the Block devices list
    says which file it shows (issue 29: it was listed as `free` with nothing more)."""
    loops = Loops(tmp_path)
    try:
        image = loops.image("s8-window-other")
        device = loops.attach(image)
        page = window.target
        with qtbot.waitSignal(page.devices_loaded, timeout=20_000):
            page.refresh_devices()
        row = next(i for i, d in enumerate(page.devices) if d.path == device)
        why = page.device_list.table.item(row, 7).text()
        assert f"loop device of {image}" in why
    finally:
        loops.cleanup()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root for a loop device")
def test_a_reading_that_ends_after_a_later_one_does_not_put_its_older_list_back(
        qtbot, window, tmp_path, monkeypatch):
    """Device readings run in parallel in the pool. One that ends after a reading asked for
    later must not replace that later list: in issue 26's GUI rounds beside a soak, the
    window's first reading ended last and the page listed a loop device with the image the
    soak had attached to that number before. Here the first reading is held after it has read
    (the real list), a loop device is attached and a second reading shows it; then the first
    is let go, and the page must still list the device with its image."""
    read, let_go, calls = threading.Event(), threading.Event(), []

    def first_held(library: str) -> list[Device]:
        calls.append(threading.get_ident())
        devices = list_devices(library)
        if len(calls) == 1:
            read.set()
            assert let_go.wait(30), "the test never let the first reading go"
        return devices

    monkeypatch.setattr(device_list, "list_devices", first_held)
    loops = Loops(tmp_path)
    page = window.target
    try:
        page.refresh_devices()
        assert read.wait(30)
        image = loops.image("s10-older-list")
        device = loops.attach(image)
        with qtbot.waitSignal(page.devices_loaded, timeout=20_000):
            page.refresh_devices()
        assert any(d.path == device for d in page.devices)
        let_go.set()
        assert QThreadPool.globalInstance().waitForDone(30_000)
        qtbot.wait(300)  # what the first reading queued for the GUI thread, delivered
        row = next((i for i, d in enumerate(page.devices) if d.path == device), None)
        assert row is not None, f"{device} is gone: the list from before it came back"
        assert f"loop device of {image}" in page.device_list.table.item(row, 7).text()
    finally:
        let_go.set()
        loops.cleanup()
