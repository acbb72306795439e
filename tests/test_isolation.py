"""The test session leaves the developer's own DiskLab alone (issue 34): settings
(~/.config/DiskLab/DiskLab.conf and the plan draft beside it), the default library
(~/.local/share/disklab) and the log and crash records (~/.local/state/disklab).

A `make test` had written `page=target` and a test's draft into the real settings: the next
real window opened where a test left it, and bench figure 6 waited for a page never shown.
tests/conftest.py gives the session temporary XDG directories before anything is collected,
and fails the session at its end when the user's own files changed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from disklab.core.system.directories import library_path, state_dir
from tests.helpers import ISOLATION_FAILED, inner_session


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
            "w.keeper.autosave()\n"
            "print(w.settings.fileName())\n"
            "print(w.keeper.file)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 0, done.stderr[-2000:]
    settings_file, draft = (Path(line) for line in done.stdout.split())
    assert settings_file.is_relative_to(session_xdg) and settings_file.is_file()
    assert "page=library" in settings_file.read_text()
    assert draft.parent == settings_file.parent


WRITES_THE_USERS_LIBRARY = """
import os
from pathlib import Path


def test_writes_into_the_users_library(tmp_path):
    real = Path(os.environ["HOME"]) / ".local" / "share" / "disklab"
    real.mkdir(parents=True, exist_ok=True)
    (real / "library.sqlite3").write_text(f"a session of {tmp_path}")


def test_writes_nothing():
    pass
"""


@pytest.mark.parametrize("how", [["-n", "2"], ["-p", "no:xdist"]], ids=["xdist", "alone"])
def test_the_session_fails_when_a_test_writes_the_users_directories(tmp_path: Path,
                                                                      how: list[str]) -> None:
    """The check of the user's three directories runs when every test of the session has run
    (tests/conftest.py, pytest_sessionfinish; under pytest-xdist there is no "last test" of
    the session): a session whose test writes the user's default library fails, naming the
    file, though every test passed. A session of its own, on a home of its own (no XDG
    variable set: the defaults under HOME), with this suite's conftest as its plugin."""
    inner, env = inner_session(tmp_path, "test_writes.py", WRITES_THE_USERS_LIBRARY)
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.conftest",
                           "-p", "no:cacheprovider", *how, "test_writes.py"],
                          cwd=inner, env=env, capture_output=True, text=True, timeout=300)
    written = Path(env["HOME"]) / ".local" / "share" / "disklab" / "library.sqlite3"
    assert "2 passed" in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"{ISOLATION_FAILED} {written}" in done.stdout, done.stdout[-3000:]
    assert done.returncode == pytest.ExitCode.TESTS_FAILED
