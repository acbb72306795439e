"""The set-up preview has one home (core.plan.setup_preview): `disklab plan show` prints its
steps, and the Configurations page shows `config_commands`' lines (tests/gui/
test_setup_commands_agree.py holds the page to the same argv)."""

from __future__ import annotations

from pathlib import Path

import pytest

from disklab.cli.main import main
from disklab.core.fs.commands import IMAGE_DEVICE, command_line, preview_mountpoint, setup_commands
from disklab.core.plan.parse import parse_plan
from disklab.core.plan.setup_preview import AS_IS_NOTE, config_commands, setup_preview
from disklab.core.vocab.model import AS_IS, RAW_SECTION

PLAN = """\
name = "preview"
[targets.a]
image = {{ path = "{d}/a.img", size = "256m" }}
partitions = 2
[targets.b]
image = {{ path = "{d}/b.img", size = "512m" }}

[[config]]
label = "ext4"
fs = "ext4"

[[config]]
label = "xfs on b"
fs = "xfs"
targets = ["b"]

[[test]]
tool = "engine"
mode = "write"
size = "1m"
on = "a1+b"
"""


def test_each_target_its_partitions_and_configurations(tmp_path: Path) -> None:
    plan = parse_plan(PLAN.format(d=tmp_path)).plan
    steps = setup_preview(plan)
    assert [s.heading for s in steps] == [
        f"target a: 2 GPT partitions of {IMAGE_DEVICE}:",
        f"configuration 'ext4' on a1 ({IMAGE_DEVICE}p1):",
        f"configuration 'ext4' on a2 ({IMAGE_DEVICE}p2):",
        f"configuration 'ext4' on b ({IMAGE_DEVICE}):",
        f"configuration 'xfs on b' on b ({IMAGE_DEVICE}):"]
    assert steps[0].commands[-1].startswith("sgdisk ")
    # each configuration's lines are the root helper's setup_commands, on its own mountpoint
    ext4_a2 = steps[2].commands
    assert ext4_a2 == tuple(command_line(c.argv) for c in setup_commands(
        plan.configs[0], f"{IMAGE_DEVICE}p2", preview_mountpoint() + "-a2"))
    assert ext4_a2[-1].endswith(f"{IMAGE_DEVICE}p2 {preview_mountpoint()}-a2")


def test_the_raw_section_comes_before_the_configurations(tmp_path: Path) -> None:
    text = (f'[target]\nimage = {{ path = "{tmp_path}/lun.img", size = "512m" }}\n'
            '[[config]]\nlabel = "ext4"\nfs = "ext4"\n'
            '[[test]]\ntool = "engine"\nraw = true\nmode = "write"\nsize = "1m"\n')
    steps = setup_preview(parse_plan(text).plan)
    assert [(s.heading, bool(s.commands)) for s in steps] == [
        (f"{RAW_SECTION} {IMAGE_DEVICE}: the raw = true tests read and write it, before any "
         "configuration is made", False),
        (f"configuration 'ext4' on {IMAGE_DEVICE}:", True)]


def test_a_configuration_that_formats_nothing_says_so_in_one_wording() -> None:
    assert config_commands(AS_IS, IMAGE_DEVICE, preview_mountpoint()) == [AS_IS_NOTE]


def test_plan_show_prints_the_preview(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "plan.toml").write_text(PLAN.format(d=tmp_path))
    assert main(["plan", "show", str(tmp_path / "plan.toml"),
                 "--library", str(tmp_path / "lib.sqlite")]) == 0
    out = capsys.readouterr().out
    for step in setup_preview(parse_plan(PLAN.format(d=tmp_path)).plan):
        block = "\n".join([step.heading, *("  setup:   " + c for c in step.commands)])
        assert f"\n{block}\n" in out
