"""One setup_commands for every surface: what the Configurations page previews, what
`disklab plan show` prints and what the privileged helper runs (core.fs.commands.setup_commands,
which its mkfs and mount requests call) are the same argv, at the same device and mountpoint."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from disklab.cli.main import main
from disklab.core.fs.commands import IMAGE_DEVICE, preview_mountpoint, setup_commands
from disklab.core.fs.options import config_from_toml
from disklab.core.plan.draft import PlanDraft

PLAN = """\
name = "setup commands"

[target]
image = {{ path = "{image}", size = "1g" }}

[[config]]
label = "ext4 journal"
fs = "ext4"
mkfs = {{ journal_size = "64m", stride = 32, stripe_width = 320 }}
mount = ["noatime", "data=journal", "commit=30", "journal_checksum", "journal_async_commit"]
readahead = 4096

[[config]]
label = "xfs su sw"
fs = "xfs"
mkfs = {{ su = "128k", sw = 10 }}
mount = ["noatime", "logbsize=256k"]

[[config]]
label = "btrfs zstd"
fs = "btrfs"
mkfs = {{ data = "single", metadata = "dup" }}
mount = ["compress=zstd:3", "noatime"]
scheduler = "mq-deadline"

[[test]]
tool = "engine"
mode = "write"
block_size = "1m"
size = "16m"
"""
LABELS = ("ext4 journal", "xfs su sw", "btrfs zstd")


def _plan_show(plan: Path, library: Path, capsys: pytest.CaptureFixture[str]
               ) -> dict[str, list[list[str]]]:
    """label -> the argv `disklab plan show` prints under that configuration."""
    assert main(["plan", "show", str(plan), "--library", str(library)]) == 0
    shown: dict[str, list[list[str]]] = {}
    label = None
    for line in capsys.readouterr().out.splitlines():
        if line.startswith("configuration "):
            head = line.removeprefix("configuration ")
            label = shlex.split(head.rsplit(" on ", 1)[0])[0]
            assert head.endswith(f" on {IMAGE_DEVICE}:")
            shown[label] = []
        elif line.startswith("  setup:   ") and label is not None:
            shown[label].append(shlex.split(line.removeprefix("  setup:   ")))
        else:
            label = None
    return shown


def _previews(window, text: str) -> dict[str, list[list[str]]]:
    """label -> the argv the Configurations page previews for it."""
    window.wb.set_draft(PlanDraft.from_text(text))
    page = window.configs
    out = {}
    for row, table in enumerate(window.wb.draft.configs):
        page.list.setCurrentRow(row)
        assert page.problems == {}
        out[table["label"]] = [shlex.split(line) for line in
                               page.preview.toPlainText().splitlines()]
    return out


def test_preview_plan_show_and_helper_run_the_same_argv(window, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    text = PLAN.format(image=tmp_path / "scratch.img")
    plan = tmp_path / "plan.toml"
    plan.write_text(text)
    shown = _plan_show(plan, tmp_path / "library.sqlite3", capsys)
    previewed = _previews(window, text)
    assert list(shown) == list(previewed) == list(LABELS)
    for index, table in enumerate(PlanDraft.from_text(text).configs, start=1):
        config, problems = config_from_toml(table, index)
        assert config is not None, problems
        helper = [list(c.argv) for c in setup_commands(config, IMAGE_DEVICE,
                                                       preview_mountpoint())]
        assert previewed[config.label] == shown[config.label] == helper
    ext4, xfs, btrfs = (shown[label] for label in LABELS)
    assert ext4[0] == ["wipefs", "--all", "--force", IMAGE_DEVICE]
    assert ext4[1][:4] == ["mke2fs", "-t", "ext4", "-F"] and "size=64" in ext4[1]
    assert ["mount", "-t", "ext4", "-o",
            "nosuid,nodev,noexec,noatime,data=journal,commit=30,journal_checksum,"
            "journal_async_commit",
            IMAGE_DEVICE, preview_mountpoint()] in ext4
    assert ["blockdev", "--setra", "4096", IMAGE_DEVICE] in ext4
    assert ["mkfs.xfs", "-f", "-d", "su=131072,sw=10", IMAGE_DEVICE] in xfs
    assert ["mkfs.btrfs", "-f", "-d", "single", "-m", "dup", IMAGE_DEVICE] in btrfs
    assert btrfs[-1][0] == "write" and btrfs[-1][-1] == "mq-deadline"
