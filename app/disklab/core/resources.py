"""The files DiskLab ships inside its package (disklab/resources), found through
importlib.resources so that they are there wherever the package is installed: a checkout, a
wheel in a venv, pipx, or a distribution package.

- presets/*.toml: the preset plans (`disklab plan show quick`, the Test matrix page's list);
- icons/disklab.svg: the window and desktop icon;
- org.disklab.DiskLab.desktop, org.disklab.DiskLab.metainfo.xml: the desktop entry and the
  AppStream metadata that `disklab install-desktop` and `make install` write out;
- polkit/: the polkit policy and the privileged helper's launcher (with @PYTHON@ to fill in);
- plan.schema.json: the JSON Schema of the plan format (`disklab plan schema` regenerates it).
"""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path

APP_ID = "org.disklab.DiskLab"  # reverse-DNS id: desktop file, metainfo, icon lookups
ICON_NAME = "disklab"


def resource(*parts: str) -> Path:
    """A shipped file as a path. Wheels and distribution packages install unpacked, so the
    package's files are real files (a zipped install is not supported)."""
    return Path(str(files("disklab").joinpath("resources", *parts)))


def preset_paths() -> list[Path]:
    """The preset plans, sorted by name."""
    directory = resource("presets")
    return sorted(directory.glob("*.toml")) if directory.is_dir() else []


def preset_names() -> list[str]:
    return [p.stem for p in preset_paths()]


def find_plan(name_or_path: str | os.PathLike[str]) -> Path:
    """A plan argument: an existing file as given, else the preset of that name ('quick' or
    'quick.toml'). A name that is neither comes back unchanged, so that loading it reports
    the missing file."""
    path = Path(name_or_path)
    if path.exists() or os.sep in str(name_or_path):
        return path
    stem = path.name.removesuffix(".toml")
    for preset in preset_paths():
        if preset.stem == stem:
            return preset
    return path


def icon_path() -> Path:
    return resource("icons", f"{ICON_NAME}.svg")
