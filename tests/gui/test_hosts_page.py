"""The Hosts page on its own: add (with the plan's checks), the warning on an unauthenticated
server, the hosts axis on the fio tests, a connection test against a real fio server on
127.0.0.26, and ssh's questions asked from another thread as the run's worker asks them."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from PySide6.QtCore import Qt, QThreadPool

from disklab.core.hosts.ssh import listening
from disklab.core.hosts.ssh_settings import chosen_ssh_config
from disklab.core.plan.draft import PlanDraft
from disklab.gui.pages import hosts as hosts_page
from disklab.gui.pages.hosts import HostsPage
from disklab.gui.pages.matrix import MatrixPage
from disklab.gui.state import Workbench
from tests.helpers import SSH_ADDRESSES, free_port, loopback, own_sshd

ADDRESS = loopback(26)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Path]:
    directory = tmp_path / "remote"
    directory.mkdir()
    popen = subprocess.Popen(["fio", f"--server={ADDRESS},8765"], cwd=directory,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while not listening(ADDRESS, 8765):
            assert time.monotonic() < deadline and popen.poll() is None
            time.sleep(0.05)
        yield directory
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(popen.pid, signal.SIGKILL)
        popen.wait(10)


@pytest.fixture
def page(qtbot, library_path: Path) -> HostsPage:
    wb = Workbench(library_path)
    wb.set_draft(PlanDraft.from_text('name = "p"\n[target]\ndirectory = "/tmp"\n[[test]]\n'
                                     'tool = "fio"\nrw = "write"\nsize = "8m"\n'))
    p = HostsPage(wb)
    qtbot.addWidget(p)
    return p


def test_the_ssh_config_is_kept_in_the_users_settings_never_in_the_plan(
        page: HostsPage, tmp_path: Path) -> None:
    """The page's "SSH configuration" field: a file others can write is refused with its
    reason and nothing is kept; the user's own file is kept in DiskLab's settings (what `disklab
    run` reads too), the plan stays without it; emptied, ssh reads ~/.ssh/config again."""
    loose = tmp_path / "loose_config"
    loose.write_text("Host *\n")
    loose.chmod(0o666)
    page.ssh_config_edit.setText(str(loose))
    page.ssh_config_button.click()
    assert "writable by its group or others" in page.ssh_config_message.text()
    assert chosen_ssh_config() is None
    mine = tmp_path / "my_config"
    mine.write_text("Host *\n")
    mine.chmod(0o600)
    page.ssh_config_edit.setText(str(mine))
    page.ssh_config_button.click()
    try:
        assert chosen_ssh_config() == str(mine)
        assert page.ssh_config_message.text() == f"ssh reads {mine}"
        assert page.add("h1", {"address": "node1"}) is None
        assert "ssh_config" not in page.wb.draft.to_text()
        assert "ssh_config" in (page.add("h2", {"address": "node2", "ssh_config": str(mine)})
                                or "")
    finally:
        page.ssh_config_edit.setText("")
        page.ssh_config_button.click()
    assert chosen_ssh_config() is None and "~/.ssh/config" in page.ssh_config_message.text()


def test_add_checks_like_the_plan_and_warns_on_a_plain_server(page: HostsPage) -> None:
    assert page.add("h1", {"address": "-oProxyCommand=x", "start": "ssh"}).startswith(
        "hosts.h1.address")
    assert page.table.rowCount() == 0
    assert page.add("h1", {"address": "node1", "start": "ssh"}) is None
    assert page.warning.text() == ""  # ssh: nothing open on the network
    assert page.add("h2", {"address": "10.0.0.7", "start": "running"}) is None
    assert "h2 (10.0.0.7:8765, open to anyone who can reach it)" in page.warning.text()
    assert page.add("h2", {"address": "node2"}) == "hosts.h2: there is a host of that name"
    page.use_as_axis()
    assert page.wb.draft.tests[0]["hosts"] == [["h1"], ["h1", "h2"]]
    assert "[hosts.h2]" in page.wb.draft.to_text()
    page.table.selectRow(0)
    page.remove_selected()
    assert list(page.wb.draft.doc["hosts"]) == ["h2"]


def test_test_connection_shows_the_servers_fio_version(qtbot, page: HostsPage,
                                                      server: Path) -> None:
    assert page.add("h1", {"address": ADDRESS, "start": "running",
                           "directory": str(server)}) is None
    with qtbot.waitSignal(page.tested, timeout=30000):
        page.test_host("h1")
    status = page.table.item(0, 5).text()
    assert status.startswith("fio-3.33") and "Linux" in status, status
    assert list(server.iterdir()) == []  # the probe's file was removed by fio


def test_a_host_that_does_not_answer_is_shown_as_such(qtbot, page: HostsPage) -> None:
    assert page.add("h9", {"address": loopback(27), "start": "running"}) is None
    with qtbot.waitSignal(page.tested, timeout=30000):
        page.test_host("h9")
    assert f"host h9: nothing listens at {loopback(27)},8765" in page.table.item(0, 5).text()


def test_an_older_test_that_answers_last_does_not_replace_the_newer_answer(
        qtbot, page: HostsPage, server: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A host tested at a wrong address, then corrected and tested again: the first test's
    answer ("nothing listens"), held here until the second has been shown (as a timeout to an
    unreachable address ends after a quick answer), must not replace the second's."""
    answered, let_go, made = threading.Event(), threading.Event(), []

    class FirstHeld(hosts_page.Servers):
        def start(self) -> list[str]:
            made.append(self)
            try:
                return super().start()
            finally:
                if len(made) == 1:
                    answered.set()
                    assert let_go.wait(30), "the test never let the first test go"

    monkeypatch.setattr(hosts_page, "Servers", FirstHeld)
    assert page.add("h1", {"address": loopback(27), "start": "running"}) is None
    try:
        page.test_host("h1")
        assert answered.wait(30)
        page.hosts_doc()["h1"]["address"] = ADDRESS
        page.hosts_doc()["h1"]["directory"] = str(server)
        with qtbot.waitSignal(page.tested, timeout=30000):
            page.test_host("h1")
        assert page.table.item(0, 5).text().startswith("fio-3.33")
        let_go.set()
        assert QThreadPool.globalInstance().waitForDone(30_000)
        qtbot.wait(300)  # what the first test queued for the GUI thread, delivered
        status = page.table.item(0, 5).text()
        assert status.startswith("fio-3.33"), f"the older answer came back: {status}"
    finally:
        let_go.set()


def test_ssh_questions_from_the_run_thread_are_asked_in_the_gui(qtbot, page: HostsPage) -> None:
    shown: list[tuple[str, str, bool, bool]] = []

    def dialog(host: str, question: str, secret: bool) -> str | None:
        shown.append((host, question, secret, threading.current_thread() is
                      threading.main_thread()))
        return "yes"

    page.questions.dialog = dialog  # the dialog itself is Qt's; what reaches it is tested
    answers: list[str | None] = []
    worker = threading.Thread(target=lambda: answers.append(
        page.wb.runs.ask("h1", "fingerprint SHA256:x. continue connecting (yes/no)?", False)))
    worker.start()
    qtbot.waitUntil(lambda: bool(answers), timeout=5000)
    worker.join()
    assert answers == ["yes"]
    assert shown == [("h1", "fingerprint SHA256:x. continue connecting (yes/no)?", False, True)]


def test_hosts_are_an_axis_in_the_matrix(qtbot, page: HostsPage) -> None:
    matrix = MatrixPage(page.wb)
    qtbot.addWidget(matrix)
    matrix.load_draft()
    matrix.tests.setCurrentRow(0)
    matrix.set_param("hosts", "h1 | h1,h2")
    assert page.wb.draft.tests[0]["hosts"] == [["h1"], ["h1", "h2"]]
    matrix.set_param("hosts", "h1,h2")
    assert page.wb.draft.tests[0]["hosts"] == ["h1", "h2"]


@pytest.mark.root
def test_the_windows_run_asks_the_unknown_host_keys_in_dialogs(qtbot, window, tmp_path: Path):
    """A plan with two hosts started over SSH (the tests' own sshd, keys unknown) run from the
    window: ssh runs under a pty on the run's thread, its host-key questions reach the GUI
    thread's dialog once per host, and both servers are stopped at the end."""
    shown: list[tuple[str, bool]] = []

    def dialog(host: str, question: str, secret: bool) -> str | None:
        shown.append((host, threading.current_thread() is threading.main_thread()))
        assert "SHA256:" in question
        return "yes"

    window.hosts.questions.dialog = dialog
    with own_sshd(tmp_path) as sshd:
        text = f'name = "ssh from the window"\n[target]\ndirectory = "{tmp_path}"\n'
        for i, address in enumerate(SSH_ADDRESSES, start=1):
            remote = tmp_path / f"remote{i}"
            remote.mkdir()
            text += (f'[hosts.s{i}]\naddress = "{address}"\nport = {free_port()}\n'
                     f'directory = "{remote}"\n')
        text += ('[[test]]\ntool = "fio"\nrw = "write"\nbs = "64k"\nsize = "4m"\n'
                 'hosts = ["s1", "s2"]\n')
        window.wb.set_draft(PlanDraft.from_text(text))
        with qtbot.waitSignal(window.run.finished, timeout=120_000) as blocker:
            qtbot.mouseClick(window.run.start_btn, Qt.MouseButton.LeftButton)
        window.run.flush()
        assert blocker.args[1] == "finished", window.run.log.toPlainText()[-2000:]
        assert shown == [("s1", True), ("s2", True)]
        commands = [" ".join(p.info["cmdline"] or []) for p in psutil.process_iter(["cmdline"])]
        assert [c for c in commands if str(sshd.config) in c] == []  # the ssh sessions ended
