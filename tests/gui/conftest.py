"""GUI tests: offscreen Qt, a library per test, window state in a temporary QSettings file."""

from __future__ import annotations

import gc
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("PySide6")


@pytest.fixture(scope="package", autouse=True)
def _gc_in_gui_thread(qapp) -> Iterator[None]:
    """As in the application (gui.app.make_app, gui.threads): Python's cycle collector runs in
    the GUI thread only, so no pool or run thread destroys a test's widgets; the tests after
    these get Python's own collector back."""
    from PySide6.QtCore import QThreadPool

    from disklab.gui.threads import keep_gc_in_gui_thread, restore_gc

    keep_gc_in_gui_thread()
    yield
    QThreadPool.globalInstance().waitForDone(30_000)
    restore_gc()


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
    w.ask_save = lambda _doing: "discard"  # closing with a changed plan: no dialog in tests
    qtbot.addWidget(w)
    w.show()
    yield w
    if w.wb.runs.running:
        w.wb.runs.cancel()
        w.wb.runs.wait(60000)
    w.wb.close_library()
    # the window's short background calls (plan checks, device lists) end with its test, so
    # that one test's calls do not run into the next (the application itself is safe either
    # way: gui.threads, and tests/gui/test_close_while_busy.py)
    QThreadPool.globalInstance().waitForDone(30_000)
    gc.collect()  # its cycles of Qt objects, in this thread
