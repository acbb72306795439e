"""The window keeps a log in the XDG state directory: what it did (pages, commands) and every
exception nobody caught, with its traceback, from a Qt slot or from another thread. Run as a
real `disklab gui` process (offscreen) whose slots raise."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from disklab.core.logfile import LOG_NAME

SCRIPT = textwrap.dedent("""
    import sys, threading
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication
    from disklab.gui.app import make_app, run_gui
    from disklab.gui.main_window import MainWindow

    def window():
        return next(w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow))

    def act():
        window().show_page("library")
        threading.Thread(target=lambda: 1 / 0, name="worker-x").start()
        raise RuntimeError("boom from a slot")

    app = make_app()
    QTimer.singleShot(400, act)
    QTimer.singleShot(1500, lambda: window().close())
    sys.exit(run_gui(sys.argv[1]))
""")


def test_the_log_records_pages_and_uncaught_exceptions(tmp_path: Path) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_STATE_HOME": str(tmp_path / "st"),
           "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "lib.sqlite3")],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    log = (tmp_path / "st" / "disklab" / LOG_NAME).read_text()
    assert "DiskLab " in log and "started" in log
    assert "page library" in log
    assert "unexpected exception in the main thread" in log
    # with its traceback: the frame, then the error (Python 3.13 prints the `-c` script's
    # source line between them, 3.11 does not)
    frame = log.index("line 14, in act\n")
    assert log.index("RuntimeError: boom from a slot", frame) - frame < 200
    assert "unexpected exception in thread worker-x" in log
    assert "ZeroDivisionError" in log
    assert "window closed" in log
    assert "boom from a slot" in done.stderr  # and still on stderr, as before
