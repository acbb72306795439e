"""The real window (`open_window`, what `disklab gui` runs) with a run going gets SIGTERM or
SIGHUP, as from `kill`, a logout or a shutdown: it cancels and tears the run down, keeps the
session as cancelled and quits within seconds, leaving no tool and no file behind."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from disklab.core.fs.apply import STATE_PREFIX, StateFile
from disklab.core.library import Library
from disklab.core.plan.draft import PlanDraft
from disklab.core.system.directories import state_dir
from tests.helpers import engine_plan

WINDOW = """
import sys
from PySide6.QtCore import QEvent, QObject, QTimer
from disklab.gui.app import open_window
from disklab.core.plan.draft import PlanDraft

app, window = open_window(sys.argv[1])
window.ask = lambda title, text: sys.exit(f"asked: {title}")  # a signal must not ask
window.wb.set_draft(PlanDraft.from_text(open(sys.argv[2]).read()))

def seen(ev):
    if type(ev).__name__ == "CaseStarted":
        print("case started", flush=True)

window.wb.runs.event.connect(seen)


class Hidden(QObject):
    def eventFilter(self, obj, event):
        if obj is window and event.type() == QEvent.Type.Hide:
            worker = window.wb.runs.worker
            ended = worker is None or worker.ended.is_set()
            print(f"hidden, run ended: {ended}", flush=True)
        return False


hidden = Hidden()
window.installEventFilter(hidden)
QTimer.singleShot(0, window.run.start)
sys.exit(app.exec())
"""


def tools_running(under: Path) -> list[psutil.Process]:
    """Processes working on files under `under` (the engine names its files on its argv)."""
    found = []
    for p in psutil.process_iter(["cmdline"]):
        if str(under) in " ".join(p.info["cmdline"] or ()) and p.pid != os.getpid():
            found.append(p)
    return found


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_cancels_the_run_and_quits_within_seconds(tmp_path: Path, sig: int) -> None:
    target = tmp_path / "target"
    target.mkdir()
    library = tmp_path / "lib" / "library.sqlite3"
    library.parent.mkdir()
    plan = tmp_path / "plan.toml"
    plan.write_text(engine_plan(target, name="killed window", runtime="60s"))
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen",
           "XDG_CONFIG_HOME": str(tmp_path / "config")}  # the window's QSettings
    window = subprocess.Popen([sys.executable, "-c", WINDOW, str(library), str(plan)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert window.stdout is not None
        ready, _, _ = select.select([window.stdout], [], [], 60)
        assert ready, "the window started no case within 60 s"
        assert window.stdout.readline().strip() == "case started", window.stderr.read()
        deadline = time.monotonic() + 20
        while not [p for p in target.iterdir() if p.name.startswith("disklab-")]:
            assert time.monotonic() < deadline, "the engine made no file"
            time.sleep(0.1)
        assert tools_running(target)
        os.kill(window.pid, sig)
        sent = time.monotonic()
        # the window leaves the screen at once, before the teardown (issue 29, point 10)
        ready, _, _ = select.select([window.stdout], [], [], 10)
        assert ready, "the window was not hidden within 10 s"
        # before the run has ended: the teardown goes on without a window
        assert window.stdout.readline().strip() == "hidden, run ended: False"
        gone = time.monotonic() - sent
        code = window.wait(timeout=10)
        took = time.monotonic() - sent
    finally:
        if window.poll() is None:
            window.kill()
            window.wait()
    stderr = window.stderr.read() if window.stderr else ""
    assert code == 0, stderr
    assert "asked:" not in stderr and "Traceback" not in stderr, stderr
    assert took < 10
    assert gone < 2.0, gone  # hidden first: the teardown goes on without a window
    assert list(target.iterdir()) == []  # the case's files were removed
    assert tools_running(target) == []
    assert not list(library.parent.glob("setup-state-*"))
    with Library.open(library) as lib:
        (row,) = lib.list_sessions()
        assert lib.session(row["id"])["status"] == "cancelled"


def test_the_windows_start_removes_what_a_killed_run_left_and_says_so(qtbot, window,
                                                                       target_dir, tmp_path,
                                                                       monkeypatch):
    """A record a killed session left in the state directory (its case's file, by hand: a dead
    pid's state file): the window's next run removes the file and says so in its log."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    record = StateFile(state_dir() / f"{STATE_PREFIX}{dead.pid}.json")
    record.data["pid"] = dead.pid
    left = target_dir / "disklab-abcdef-r1-0"
    record.record_files(str(target_dir), [str(left)])
    left.write_bytes(b"\0" * 4096)
    window.wb.set_draft(PlanDraft.from_text(engine_plan(target_dir, runtime="0.2s")))
    with qtbot.waitSignal(window.run.finished, timeout=60_000) as blocker:
        window.run.start()
    window.run.flush()
    assert blocker.args[1] == "finished"
    assert (f"cleaned up after an earlier run: removed {left} (left by DiskLab pid "
            f"{dead.pid})") in window.run.log.toPlainText()
    assert list(target_dir.iterdir()) == [] and not record.path.exists()
