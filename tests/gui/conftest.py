"""GUI tests: offscreen Qt, a library per test, window state in a temporary QSettings file."""

from __future__ import annotations

import gc
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")

@pytest.fixture
def library_path(tmp_path: Path) -> Path:
    # not on the target's directory: a separate dir (same filesystem is only a warning)
    d = tmp_path / "lib"
    d.mkdir()
    return d / "library.sqlite3"


@pytest.fixture
def target_dir(tmp_path: Path) -> Path:
    d = tmp_path / "target"
    d.mkdir()
    return d


@pytest.fixture
def window(qtbot, library_path: Path, tmp_path: Path) -> Iterator:
    from PySide6.QtCore import QSettings, QThreadPool
    from PySide6.QtWidgets import QApplication

    from disklab.gui.app import apply_theme
    from disklab.gui.main_window import MainWindow
    from disklab.gui.state import Workbench

    apply_theme(QApplication.instance(), dark=False)
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    w = MainWindow(Workbench(library_path), settings)
    w.ask = lambda title, text: True
    w.ask_save = lambda: "discard"  # closing with a changed plan: no dialog in tests
    qtbot.addWidget(w)
    w.show()
    yield w
    if w.wb.runs.running:
        w.wb.runs.cancel()
        w.wb.runs.wait(60000)
    w.library.close_library()
    w.compare.close_library()
    # the window's short background calls (plan checks, device lists) end with its test: one
    # still running in the pool while the next test builds its window and Python collects the
    # last one's objects crashed the interpreter (seen once, in a CI run on a loaded machine)
    QThreadPool.globalInstance().waitForDone(30_000)
    gc.collect()  # its cycles of Qt objects, in this thread, not in the next run's worker
