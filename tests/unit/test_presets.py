"""Every preset shipped in the package is a valid plan (what the GUI's preset menu offers), and
names one by its name as well as by its path."""

from __future__ import annotations

from pathlib import Path

import pytest

import disklab
from disklab.core import proc, tools
from disklab.core.matrix import expand
from disklab.core.plan import load_plan
from disklab.core.resources import find_plan, preset_names, preset_paths, resource

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
