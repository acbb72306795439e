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

import pytest

from disklab.core.hosts.ssh import listening
from disklab.gui.draft import PlanDraft
from disklab.gui.pages.hosts import HostsPage
from disklab.gui.pages.matrix import MatrixPage
from disklab.gui.state import Workbench

ADDRESS = "127.0.0.26"


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
    assert page.add("h9", {"address": "127.0.0.27", "start": "running"}) is None
    with qtbot.waitSignal(page.tested, timeout=30000):
        page.test_host("h9")
    assert "host h9: nothing listens at 127.0.0.27,8765" in page.table.item(0, 5).text()


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
