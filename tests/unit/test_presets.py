"""Every preset in resources/presets is a valid plan (what the GUI's preset menu offers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from disklab.core import proc, tools
from disklab.core.matrix import expand
from disklab.core.plan import load_plan

PRESETS = sorted((Path(__file__).parents[2] / "resources" / "presets").glob("*.toml"))


def test_there_are_presets() -> None:
    assert len(PRESETS) >= 5
    assert any(p.name == "quick.toml" for p in PRESETS)


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
        path.write_text(text.replace("/var/tmp/disklab-preset.img", str(tmp_path / "i.img")))
        checked = load_plan(path)
    cases = expand(checked.plan)
    assert cases and len({c.id for c in cases}) == len(cases)
