"""pyproject.toml gives compatible ranges, constraints.txt the exact versions the tests ran
with (`make` installs with -c constraints.txt): every pin must lie inside its range, every
dependency must be pinned, and the Qt binding's range is the one the GUI tests ran on, oldest
and newest (6.8, Debian 13's, to 6.11; 6.12 aborted Python 3.11 within ~100 repaints)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

import disklab

ROOT = Path(__file__).resolve().parents[2]


def _requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    listed = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        listed += extra
    return [Requirement(r) for r in listed]


def _pins() -> dict[str, Version]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[canonicalize_name(name)] = Version(version)
    return pins


def test_every_dependency_is_a_range_with_its_pin_inside() -> None:
    pins = _pins()
    for req in _requirements():
        assert not any(s.operator == "==" for s in req.specifier), f"{req}: a range, not a pin"
        pin = pins.get(canonicalize_name(req.name))
        assert pin is not None, f"{req.name} has no pin in constraints.txt"
        assert req.specifier.contains(pin), f"{req.name} {pin} is outside {req.specifier}"


def test_pyside6_range_is_the_tested_one() -> None:
    (qt,) = [r for r in _requirements() if r.name == "PySide6-Essentials"]
    for tested in ("6.8.0.2", "6.10.2", "6.10.3", "6.11.3"):  # README, "Packaging"
        assert qt.specifier.contains(tested), tested
    assert not qt.specifier.contains("6.7.3") and not qt.specifier.contains("6.12.0")


def test_one_version_string() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    attr = project["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    assert attr == "disklab.__version__"
    metainfo = (ROOT / "app/disklab/resources/org.disklab.DiskLab.metainfo.xml").read_text()
    assert f'<release version="{disklab.__version__}"' in metainfo


def test_license_file_matches_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "GPL-3.0-or-later"  # SPDX, so no License classifier
    assert project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert "GNU GENERAL PUBLIC LICENSE" in text and "Version 3, 29 June 2007" in text
