"""The test session leaves the developer's own DiskLab alone (issue 34): settings
(~/.config/DiskLab/DiskLab.conf and the plan draft beside it), the default library
(~/.local/share/disklab) and the log and crash records (~/.local/state/disklab).

A `make test` had written `page=target` and a test's draft into the real settings: the next
real window opened where a test left it, and bench figure 6 waited for a page never shown.
tests/conftest.py gives the session temporary XDG directories before anything is collected.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from disklab.core.system.directories import library_path, state_dir
from tests.helpers import snapshot


def test_the_session_puts_settings_library_and_state_in_temporary_directories(
        session_xdg: Path, real_settings: tuple[dict[str, Path], dict]) -> None:
    real, _before = real_settings
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        assert Path(os.environ[var]).is_relative_to(session_xdg), var
    assert "DISKLAB_LIBRARY" not in os.environ
    assert library_path(None).is_relative_to(session_xdg)
    assert state_dir().is_relative_to(session_xdg)
    assert not any(p.is_relative_to(session_xdg) for p in real.values())


def test_a_window_started_by_a_test_keeps_its_settings_in_the_sessions_directory(
        session_xdg: Path, tmp_path: Path) -> None:
    """The window's default QSettings and draft, in a process of its own as `disklab gui` is
    started: written under the session's directory, never the user's."""
    code = ("from PySide6.QtCore import QSettings\n"
            "from disklab.gui.app import make_app\n"
            "from disklab.gui.main_window import MainWindow\n"
            "from disklab.gui.state import Workbench\n"
            "app = make_app()\n"
            "w = MainWindow(Workbench(None))\n"
            "w.show_page('library')\n"
            "w.save_state()\n"
            "w.autosave()\n"
            "print(w.settings.fileName())\n"
            "print(w.draft_file)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 0, done.stderr[-2000:]
    settings_file, draft = (Path(line) for line in done.stdout.split())
    assert settings_file.is_relative_to(session_xdg) and settings_file.is_file()
    assert "page=library" in settings_file.read_text()
    assert draft.parent == settings_file.parent


def changes_of(session_paths: tuple[str, ...], real: dict[str, Path], before: dict
               ) -> tuple[list[str], list[str]]:
    """The files of the user's directories added, changed or removed since `before`: those that
    name one of `session_paths` (this session wrote them), and the others (this machine's other
    DiskLab processes: on a shared machine, other checkouts' tests and windows)."""
    now = snapshot(real)
    ours, others = [], []
    for top, files in now.items():
        old = before.get(top, {})
        for name in sorted(set(files) | set(old)):
            if files.get(name) == old.get(name):
                continue
            path = Path(top) / name
            text = path.read_bytes().decode(errors="replace") if path.is_file() else ""
            (ours if any(p in text for p in session_paths) else others).append(str(path))
    return ours, others


@pytest.mark.after_everything
def test_the_suite_left_the_real_settings_library_and_state_as_they_were(
        real_settings: tuple[dict[str, Path], dict], session_xdg: Path,
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """Run last (tests/conftest.py): no file of the user's three DiskLab directories was
    written by this session. On a machine of its own, any change is this session's. Where
    other DiskLab processes use the same account meanwhile (a shared machine: other checkouts'
    tests and windows; they leave their start in the real log and their crash records in the
    real state directory), a change counts as this session's when it names one of its
    temporary paths (a test's plan, library, target or command line does), and the others are
    reported."""
    real, before = real_settings
    ours, others = changes_of((f"{tmp_path_factory.getbasetemp()}/", f"{session_xdg}/"), real,
                              before)
    shared = any(Path(p).is_relative_to(real["XDG_STATE_HOME"]) for p in others)
    if shared:
        warnings.warn(f"changed meanwhile by other DiskLab processes of this machine: {others}",
                      stacklevel=1)
    else:
        ours += others
    assert ours == []
