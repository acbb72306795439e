"""Every preset shipped in the package is a valid plan (what the GUI's preset menu offers), and
names one by its name as well as by its path."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import disklab
from disklab.core import proc, tools
from disklab.core.plan.matrix import expand
from disklab.core.plan.parse import load_plan
from disklab.core.resources import find_plan, preset_names, preset_paths, resource
from disklab.core.vocab.model import PIVOT_KEYS

PRESETS = preset_paths()


def test_there_are_presets_inside_the_package() -> None:
    assert len(PRESETS) >= 5
    assert "quick" in preset_names()
    package = Path(disklab.__file__).parent
    assert all(p.is_relative_to(package) for p in PRESETS)


def test_a_preset_is_found_by_name_and_a_file_by_path(tmp_path: Path) -> None:
    assert find_plan("quick") == resource("presets", "quick.toml")
    assert find_plan("quick.toml") == resource("presets", "quick.toml")
    mine = tmp_path / "quick.toml"
    mine.write_text("")
    assert find_plan(str(mine)) == mine
    assert find_plan("no-such-plan") == Path("no-such-plan")


def test_no_preset_names_a_machine_specific_directory() -> None:
    for preset in PRESETS:
        text = preset.read_text()
        assert "/mnt/" not in text, preset.name


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.name)
def test_preset_validates(preset: Path, tmp_path: Path) -> None:
    text = preset.read_text()
    needed = {t for t in ("iozone", "fio", "bonnie") if f'tool = "{t}"' in text}
    missing = [t for t in needed if t not in tools.tool_names() or proc.which(
        tools.get_adapter(t).executable) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not available here")
    if "[target]\ndirectory" in text:
        checked = load_plan(preset, target_dir=str(tmp_path))
    else:  # image targets: point the image into tmp
        path = tmp_path / "preset.toml"
        for image in ("/var/tmp/disklab-preset.img", "/var/tmp/disklab-scratch.img"):
            text = text.replace(image, str(tmp_path / "i.img"))
        path.write_text(text)
        checked = load_plan(path)
    cases = expand(checked.plan)
    assert cases and len({c.id for c in cases}) == len(cases)


# ---------------------------------------------------------------------------------------------
# the studies' presets (app/disklab/resources/presets): one per study, each with a smoke sibling

STUDIES = ("study-journaling-cost-sync-vs-buffered", "study-ext4-journal-size",
           "study-san-stream-qd-blocksize", "study-raid-readahead-tree-placement",
           "study-ext4-data-journal-vs-ordered")
PIVOT_FIELDS = PIVOT_KEYS  # the pivot's own keys (metric: a column per metric name)


def study_plan_in(tmp_path: Path, name: str) -> Path:
    """The preset with its scratch images moved into tmp_path (what a user's --target or
    image path does), each under its own name, written there."""
    text = re.sub(r'/var/tmp/disklab-([\w.-]+\.img)', lambda m: str(tmp_path / m[1]),
                  resource("presets", f"{name}.toml").read_text())
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("name", [s + suffix for s in STUDIES for suffix in ("", "-smoke")])
def test_a_study_preset_validates_and_declares_its_studys_table(name: str, tmp_path: Path
                                                                ) -> None:
    text = resource("presets", f"{name}.toml").read_text()
    for said in ("# Study:", "It asks:", "The original:", "DiskLab's version"):
        assert said in text, f"{name}: the header says what the original did ({said!r})"
    if name.endswith("-smoke"):
        assert "SMOKE SIBLING" in text
    done = subprocess.run([sys.executable, "-m", "disklab.cli.main", "plan", "validate",
                           str(study_plan_in(tmp_path, name)), "--library",
                           str(tmp_path / "lib.sqlite3")], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    doc = tomllib.loads(text)
    report = doc["report"]
    assert report["rows"] and report["columns"]
    params = {k for t in doc["test"] for k in tools.get_adapter(t["tool"]).params}
    for key in (*report["rows"], *report["columns"]):
        assert key in PIVOT_FIELDS or key in params, f"{name}: pivot key {key!r}"


def test_every_study_has_its_preset_and_a_smoke_sibling() -> None:
    names = set(preset_names())
    assert {n for n in names if n.startswith("study-")} == {
        *STUDIES, *(f"{s}-smoke" for s in STUDIES)}
