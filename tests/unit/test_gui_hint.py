"""The GUI-extra hint outside a checkout (issue 46): it named `pip install 'disklab[gui]'`,
which fetches the public index's 'disklab', not this project. It now adds the extra's own
requirements to this install (pip, or pipx inject)."""

from __future__ import annotations

import sys
from pathlib import Path

from disklab.cli.gui_cmd import gui_hint, gui_requirements


def test_outside_a_checkout_the_hint_installs_the_extras_packages_not_disklab() -> None:
    wanted = gui_requirements()
    assert any(r.startswith("PySide6-Essentials") for r in wanted), wanted
    for pipx in (False, True):
        hint = gui_hint(None, pipx)
        assert "disklab[gui]" not in hint
        assert "'PySide6-Essentials" in hint and "numpy" in hint
    assert gui_hint(None, True).startswith("pipx inject disklab ")
    # the interpreter DiskLab runs in, by its full path: 'python3 -m pip' on the PATH may be
    # another one (a venv's bare name was given)
    assert gui_hint(None, False).startswith(f"{sys.executable} -m pip install ")
    assert Path(sys.executable).is_absolute()


def test_in_a_checkout_the_hint_is_make_run() -> None:
    assert gui_hint(Path("/src/disklab"), False).startswith(
        "in the checkout /src/disklab: make run")
