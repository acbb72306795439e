"""Pages hold widgets and wiring only (issue 29): no statistics, no plan-key grammar by regex,
no system calls. Each page module's imports are read from its source (ast) and checked
against what a page may import: Qt, DiskLab's core and gui modules, and a short list of the
standard library that computes nothing a user would read as a figure or a fact of the system.
"""

from __future__ import annotations

import ast
from pathlib import Path

import disklab.gui.pages as pages

ALLOWED_STDLIB = {"__future__", "collections", "typing", "pathlib", "contextlib", "copy",
                  "html", "json", "threading", "time", "functools", "dataclasses"}
# statistics, regexes and the system belong to the core: a page asks it
FORBIDDEN_STDLIB = {"statistics", "re", "os", "shutil", "subprocess", "socket", "math",
                    "sqlite3", "psutil", "glob", "numpy", "platform", "pwd", "grp", "fcntl",
                    "ctypes", "tempfile", "signal", "stat", "struct", "pyqtgraph"}
# the core's processes and raw readers: a page shows what the core's results give
FORBIDDEN_CORE = ("disklab.core.proc", "disklab.core.library.store", "disklab.core.run.monitor")
STATISTICS = "disklab.core.results.stats"  # of it a page may name constants (ALPHA) only


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


def _names_from(path: Path, module: str) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            and node.module == module for a in node.names}


def test_page_modules_import_only_what_shows() -> None:
    folder = Path(pages.__file__).parent
    modules = sorted(folder.glob("*.py"))
    assert len(modules) >= 7
    for path in modules:
        for name in _imports(path):
            top = name.split(".")[0]
            assert not name.startswith(FORBIDDEN_CORE), f"{path.name} imports {name}"
            if name == STATISTICS:  # a default (the significance level), not a computation
                assert all(n.isupper() for n in _names_from(path, name)), path.name
            if top in ("PySide6", "disklab"):
                continue
            assert top not in FORBIDDEN_STDLIB, f"{path.name} imports {name}"
            assert top in ALLOWED_STDLIB, f"{path.name} imports {name}: not on the list"
