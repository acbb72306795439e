"""DESIGN.md rule 2: only core/proc.py starts processes (the GUI and CLI run the same commands)."""

from __future__ import annotations

import re
from pathlib import Path

APP = Path(__file__).parents[2] / "app" / "disklab"
STARTS = re.compile(r"^\s*(import subprocess|from subprocess|.*\bQProcess\b|.*os\.(system|popen|"
                    r"fork|exec\w*|spawn\w*)\()", re.M)


def test_only_proc_starts_processes() -> None:
    offenders = []
    for path in APP.rglob("*.py"):
        if path.relative_to(APP).as_posix() == "core/proc.py":
            continue
        for m in STARTS.finditer(path.read_text()):
            offenders.append(f"{path.relative_to(APP)}: {m.group(0).strip()}")
    assert offenders == []
    assert STARTS.search((APP / "core" / "proc.py").read_text())  # the pattern does match
