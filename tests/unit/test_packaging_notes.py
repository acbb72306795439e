"""The README's notes for packagers name every dependency pyproject.toml declares (the base
list and the gui extra), with its Debian package: a dependency added to one and not the other
(pyqtgraph was missing) fails here."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[2]


def packaging_notes() -> str:
    """The README's 'For packagers' section."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("### For packagers")
    end = text.find("\n## ", start)
    return text[start:end if end > 0 else None]


def requirement_names(requirements: list[str]) -> list[str]:
    return [re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0] for r in requirements]


def test_every_dependency_is_named_in_the_packaging_notes_with_its_debian_package() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = requirement_names(project["dependencies"]) + requirement_names(
        project["optional-dependencies"]["gui"])
    assert "pyqtgraph" in names and "psutil" in names
    notes = packaging_notes()
    flat = " ".join(notes.split())
    for name in names:
        assert name in flat, f"{name} is not named in the README's packaging notes"
        debian = "python3-pyside6.qtcore" if name == "PySide6-Essentials" else \
            f"python3-{name.lower()}"
        assert debian in flat, f"{name}: its Debian package {debian} is not named"
