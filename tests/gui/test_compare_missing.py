"""Issue 44 point 7 in the window: the Compare page's pivot names a configuration whose every run
failed (the words `disklab compare` prints under its table), and marks a cell whose baseline
was limited by something else ('≠', uncoloured) instead of colouring it. Real sessions recorded
by `disklab run` on image targets, then the page used as a person does: the session ticked in
the list, the Compare button clicked, the Pivot tab read."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton

from disklab.core import proc
from disklab.gui.pages.compare import DELTA_COLOURS

pytestmark = [pytest.mark.root, pytest.mark.slow]

FAILS = """\
name = "one configuration fails"
repeats = 2
[target]
image = {{ path = "{image}", size = "256m" }}

[[config]]
label = "roomy"
fs = "ext4"

[[config]]
label = "few inodes"
fs = "ext4"
mkfs = {{ bytes_per_inode = "4m" }}

[[test]]
tool = "tree"
phases = ["create"]
dirs = 2
files_per_dir = 200
file_size = "4k"
block_size = "4k"
"""

JOURNAL = """\
name = "direct under data=journal"
repeats = 2
[target]
image = {{ path = "{image}", size = "384m" }}

[[config]]
label = "ordered"
fs = "ext4"
mount = ["data=ordered"]

[[config]]
label = "journal"
fs = "ext4"
mount = ["data=journal"]

[[test]]
tool = "fio"
rw = "randwrite"
bs = "4k"
size = "64m"
iodepth = 8
ioengine = "libaio"
direct = true
runtime = "2s"
"""


def _run(tmp_path: Path, library: Path, name: str, text: str) -> None:
    plan = tmp_path / f"{name}.toml"
    plan.write_text(text.format(image=tmp_path / f"{name}.img"))
    subprocess.run([sys.executable, "-m", "disklab.cli.main", "run", str(plan), "--library",
                    str(library)], capture_output=True, text=True, timeout=600)


def _compare(qtbot, page, session_id: int) -> None:  # type: ignore[no-untyped-def]
    """Tick only this session in the list and click Compare, as a person does."""
    page.refresh()
    for i in range(page.list.count()):
        item = page.list.item(i)
        on = item.data(Qt.ItemDataRole.UserRole) == session_id
        item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
    button = next(b for b in page.findChildren(QPushButton) if b.text() == "Compare")
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    page.tabs.setCurrentIndex(page.tabs.indexOf(page.pivot_view.parentWidget()))


def test_the_pivot_names_a_failed_configuration_and_marks_an_unlike_baseline(
        qtbot, window, library_path: Path, tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (loop devices, mkfs, mount)")
    missing = [t for t in ("fio", "mkfs.ext4", "losetup") if proc.which(t) is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")
    _run(tmp_path, library_path, "fails", FAILS)  # exits non-zero: runs failed
    _run(tmp_path, library_path, "journal", JOURNAL)
    page = window.compare
    _compare(qtbot, page, 1)
    note = page.pivot_note.text()
    said = "no figure of: 1 one configuration fails / few inodes: 2 runs failed"
    assert said in note, note
    shown = subprocess.run([sys.executable, "-m", "disklab.cli.main", "compare", "1",
                            "--library", str(library_path)], capture_output=True, text=True)
    assert said in shown.stdout  # the same words as the command line's
    _compare(qtbot, page, 2)
    t = page.pivot_view
    rows = [t.verticalHeaderItem(i).text() for i in range(t.rowCount())]
    assert rows == ["ordered", "journal"], rows
    journal = [t.item(rows.index("journal"), j) for j in range(t.columnCount())]
    assert journal and all("≠" in cell.text() for cell in journal), [c.text() for c in journal]
    colours = {c.name() for c in DELTA_COLOURS.values()}
    assert not {cell.background().color().name() for cell in journal} & colours
    assert "limited by something else than the baseline" in page.pivot_note.text()
