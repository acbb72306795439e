"""Pages and windows closed while their background calls run (issue 26: a segfault of the GUI
tests on a loaded machine, where a pool thread emitted on an object freed with its page).

A gate holds the real call (the plan check, the device list) in the pool until the page or
window is gone; then it is let go, and what a user would see is checked: nothing starts after
the window closed, no callback reaches a deleted page, no thread waits for ever for a dialog
that cannot come, and every widget is destroyed in the GUI thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import shiboken6
from PySide6.QtCore import QSettings, QThreadPool
from PySide6.QtWidgets import QWidget

import disklab.gui.device_list as device_list
import disklab.gui.main_window as main_window
from disklab.core.plan.draft import PlanDraft
from disklab.gui.main_window import MainWindow
from disklab.gui.pages.hosts import HostsPage
from disklab.gui.pages.target import TargetPage
from disklab.gui.state import Workbench
from disklab.gui.threads import pending_calls, run_in_background
from tests.helpers import engine_plan


class Gate:
    """Wraps a real function: the call waits in its thread until `open()`."""

    def __init__(self, fn: Callable[..., Any]):
        self.fn = fn
        self.entered = threading.Event()
        self.opened = threading.Event()
        self.threads: list[int] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.threads.append(threading.get_ident())
        self.entered.set()
        assert self.opened.wait(30), "the test never let the call go"
        return self.fn(*args, **kwargs)

    def open(self) -> None:
        self.opened.set()


def _settle(qtbot) -> None:
    """Every pool call ended and what it queued for the GUI thread delivered."""
    assert QThreadPool.globalInstance().waitForDone(30_000)
    qtbot.wait(300)


def _destroyed_in(widget: QWidget) -> list[int]:
    """The threads `widget` was destroyed in (filled by its destructor)."""
    where: list[int] = []
    widget.destroyed.connect(lambda *_a: where.append(threading.get_ident()))
    return where


def test_closing_the_window_while_f5_checks_the_plan_starts_no_run(
        qtbot, window, target_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """F5 from the Test matrix, then the window closed before the check answered: the check's
    verdict must not start a run in a window the user has closed."""
    gate = Gate(main_window.check_plan)
    monkeypatch.setattr(main_window, "check_plan", gate)
    window.wb.set_draft(PlanDraft.from_text(engine_plan(target_dir, name="closed")))
    started: list[bool] = []
    window.run.started.connect(lambda *_a: started.append(True))
    window.show_page("matrix")
    window.start_run()
    assert gate.entered.wait(10)
    window.close()
    gate.open()
    _settle(qtbot)
    qtbot.wait(2000)  # a run the old code started here was checked and launched by now
    assert not window.wb.runs.running and started == []
    assert gate.threads and threading.get_ident() not in gate.threads  # it did run in the pool


def test_a_page_closed_while_its_device_list_runs_hears_nothing(
        qtbot, library_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gate = Gate(device_list.list_devices)
    monkeypatch.setattr(device_list, "list_devices", gate)
    page = TargetPage(Workbench(library_path))
    loaded: list[bool] = []
    page.devices_loaded.connect(lambda: loaded.append(True))
    gone = _destroyed_in(page)
    page.show()
    page.refresh_devices()  # the page's own start asked once too: both are held
    assert gate.entered.wait(10)
    shiboken6.delete(page)  # as a closed page with WA_DeleteOnClose, at once
    gate.open()
    _settle(qtbot)
    assert loaded == []
    assert gone == [threading.get_ident()]


def test_an_ssh_question_waiting_when_the_window_closes_is_declined(qtbot, window) -> None:
    """A run's worker (or a connection test) waits for the person's answer to ssh's question
    when the window is closed: the question is declined, the dialog never shown, the thread
    goes on."""
    shown: list[str] = []
    window.hosts.questions.dialog = lambda host, question, secret: shown.append(host) or "yes"
    answers: list[str | None] = []
    asking = threading.Thread(target=lambda: answers.append(window.wb.runs.ask(
        "h1", "continue connecting (yes/no)?", False)), daemon=True)
    asking.start()
    time.sleep(0.3)  # asked; no event processed yet: the question is still queued
    window.close()
    asking.join(10)
    _settle(qtbot)
    assert not asking.is_alive() and answers == [None] and shown == []
    later = threading.Thread(target=lambda: answers.append(window.wb.runs.ask(
        "h2", "password:", True)), daemon=True)
    later.start()
    later.join(10)
    _settle(qtbot)
    assert answers == [None, None] and shown == []


def test_an_ssh_question_of_a_deleted_hosts_page_does_not_wait_for_ever(
        qtbot, library_path: Path) -> None:
    page = HostsPage(Workbench(library_path))
    page.questions.dialog = lambda host, question, secret: "yes"
    answers: list[str | None] = []
    asking = threading.Thread(target=lambda: answers.append(page.questions.ask(
        "h1", "continue connecting (yes/no)?", False)), daemon=True)
    asking.start()
    time.sleep(0.3)  # asked, and queued for this thread, which processes no event meanwhile
    shiboken6.delete(page)
    qtbot.waitUntil(lambda: not asking.is_alive(), timeout=10_000)
    assert answers == [None]


def test_windows_closed_and_dropped_while_their_calls_run(
        qtbot, library_path: Path, target_dir: Path, tmp_path: Path) -> None:
    """Eight windows, each closed and let go at once while its device list, its plan check and
    an F5 check are still in the pool: no crash, no callback into a dead window, every window
    destroyed in the GUI thread."""
    gui = threading.get_ident()
    destroyed: list[list[int]] = []
    for i in range(8):
        settings = QSettings(str(tmp_path / f"settings{i}.ini"), QSettings.Format.IniFormat)
        w = MainWindow(Workbench(library_path), settings)
        w.ask_save = lambda _doing: "discard"
        w.wb.set_draft(PlanDraft.from_text(engine_plan(target_dir, name=f"w{i}")))
        w.show()
        w.target.refresh_devices()
        w.matrix.validate()
        w.show_page("matrix")
        w.start_run()
        destroyed.append(_destroyed_in(w))
        w.close()
        w.deleteLater()
        del w
        qtbot.wait(i * 20)  # close at a different point of the calls each time
    _settle(qtbot)
    assert destroyed == [[gui]] * 8


@pytest.mark.parametrize("rounds", [pytest.param(2000, id="2000"),
                                    pytest.param(30_000, id="30000", marks=pytest.mark.long)])
def test_widgets_let_go_while_their_calls_report(qtbot, rounds: int) -> None:
    """The crash itself, as often as it can be made: widgets dropped (and so deleted) while
    eight calls each still run or report in the pool. Before the fix, 1 run in 4 of 20,000
    rounds ended in a segfault in the pool thread's emit under two busy loops."""
    from PySide6.QtWidgets import QApplication

    reported: list[int] = []
    for _round in range(rounds):
        w = QWidget()
        for k in range(8):
            run_in_background(lambda k=k: sum(range(3000 * (k + 1))),
                              lambda r, e: reported.append(1), w)
        QApplication.processEvents()
        del w
    _settle(qtbot)
    assert pending_calls() == 0 and 0 < len(reported) <= rounds * 8


def test_only_the_newest_call_of_a_name_reports_whichever_ends_first(qtbot) -> None:
    """Calls made with `latest` (a page's device list, a host's test): the first is held in
    the pool until the second has reported, then let go; it must report nothing. A call of
    another name, or of the same name for another owner, still reports."""
    page, other = QWidget(), QWidget()
    first = Gate(lambda: "older")
    heard: list[tuple[str, str]] = []
    run_in_background(first, lambda r, e: heard.append(("devices", r)), page, latest="devices")
    assert first.entered.wait(10)
    run_in_background(lambda: "newer", lambda r, e: heard.append(("devices", r)), page,
                      latest="devices")
    run_in_background(lambda: "host", lambda r, e: heard.append(("test h1", r)), page,
                      latest="test h1")
    run_in_background(lambda: "mine", lambda r, e: heard.append(("other", r)), other,
                      latest="devices")
    qtbot.waitUntil(lambda: len(heard) == 3, timeout=10_000)
    first.open()
    _settle(qtbot)
    assert sorted(heard) == [("devices", "newer"), ("other", "mine"), ("test h1", "host")]
    assert pending_calls() == 0


def test_closing_with_a_run_going_does_not_block_the_event_loop(qtbot, window,
                                                                target_dir: Path) -> None:
    """Close with a run going (the user said yes to "Cancel the run and close"): the window is
    off the screen when close() returns, while the run is still being torn down (the close
    used to wait for the run's thread inside closeEvent, with processEvents to get the hide
    painted); the window closes when the run's thread has ended, the session cancelled."""
    window.wb.set_draft(PlanDraft.from_text(engine_plan(target_dir, name="closing",
                                                        runtime="30s")))
    with qtbot.waitSignal(window.wb.runs.event, timeout=60_000,
                          check_params_cb=lambda ev: type(ev).__name__ == "CaseStarted"):
        window.run.start()
    worker = window.wb.runs.worker
    window.close()
    assert not window.isVisible()
    assert not worker.ended.is_set()  # close() returned before the run's end
    qtbot.waitUntil(lambda: not window.wb.runs.running, timeout=30_000)
    qtbot.waitUntil(lambda: not window._closing_after_run, timeout=5_000)
    assert window.run.status == "cancelled"
    assert list(target_dir.iterdir()) == []
