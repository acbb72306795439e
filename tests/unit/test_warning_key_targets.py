"""A warning names the key of the table it is about (issue 29, point 8): in a plan of named
targets the library-on-the-target warning is at targets.a.directory, not target.directory
(a key the plan does not have, whose field the window could not find)."""

from __future__ import annotations

from pathlib import Path

from disklab.core.run.summary import check_plan


def test_the_library_warning_names_the_named_target(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    text = (f'name = "x"\n[targets.a]\ndirectory = "{tmp_path / "a"}"\n'
            '[[test]]\ntool = "engine"\nmode = "write"\nsize = "1m"\n')
    summary = check_plan(text, str(tmp_path / "library.sqlite3"))
    keys = [p.key for p in summary.problems if "library" in p.message]
    assert keys == ["targets.a.directory"], [(p.key, p.message) for p in summary.problems]
