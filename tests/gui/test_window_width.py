"""The window never grows past the width it was given (issue 29, point 5).

A real session whose every case shares many parameters (a long "every case: ..." line) and
has a long name, opened on the Library page of a 1280 x 820 window: the window stays 1280 px
wide, its minimum width stays under 1280, and the geometry kept for the next start is the
same width."""

from __future__ import annotations

from pathlib import Path

from disklab.cli.main import main

PLAN = """\
name = "{name}"

[target]
directory = "{target}"

[[test]]
tool = "engine"
mode = "write"
block_size = "64k"
size = "4m"
direct = true
sync = true
fsync = false
streams = 2
queue_depth = 2
stream_block_sizes = "64k 128k"
"""


def test_a_long_session_line_never_widens_the_window(qtbot, window, tmp_path: Path,
                                                      library_path: Path) -> None:
    target = tmp_path / "t"
    target.mkdir()
    plan = tmp_path / "plan.toml"
    name = "a session whose name says a lot about what it was for " * 4
    plan.write_text(PLAN.format(name=name.strip(), target=target))
    assert main(["run", str(plan), "--library", str(library_path)]) == 0
    window.resize(1280, 820)
    qtbot.wait(50)
    window.show_page("library")
    window.library.refresh()
    assert window.library.select_session(1)
    qtbot.wait(200)
    heading = window.library.heading.text()
    assert "every case" in heading
    assert window.width() <= 1280, window.width()
    assert window.minimumSizeHint().width() <= 1280, window.minimumSizeHint().width()
    for page in ("target", "configs", "matrix", "run", "compare", "hosts"):
        window.show_page(page)
        qtbot.wait(20)
        assert window.width() <= 1280, (page, window.width())
    window.save_state()
    window.restoreGeometry(window.settings.value("window/geometry"))
    assert window.width() <= 1280
