"""House rules that import-linter's contracts (pyproject.toml, run by `make test`) cannot say,
because they are about calls or about where in a module an import stands, not about which module
imports which.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

APP = Path(__file__).parents[2] / "app" / "disklab"

# Only core/proc/ starts processes (DESIGN.md rule 2). Importing subprocess, multiprocessing
# or pty anywhere else is the processes-start-in-proc contract; these are the ways in that are
# calls, not imports.
STARTS = re.compile(r"^\s*(.*\bQProcess\b|.*os\.(system|popen|fork|exec\w*|spawn\w*|posix_spawn\w*)"
                    r"\()", re.M)

# Process starts outside core/proc/ that are there on purpose, each with its reason.
# path (under app/disklab) -> the calls allowed there
STARTS_ALLOWED: dict[str, set[str]] = {
    # the built-in engine is a tool of its own (run by proc like fio), not DiskLab's process: it
    # forks its queue slots' worker processes as fio forks its jobs, to get past the GIL (issue
    # 17, bench figure 4); they never exec anything, and die with the engine (PR_SET_PDEATHSIG)
    "engine/worker.py": {"pid = os.fork("},
}

# In-function imports of disklab modules that are there on purpose, each with its reason.
# module (path under app/disklab) -> imported modules
LAZY_ALLOWED: dict[str, set[str]] = {
    # the CLI loads Qt only for the window and for PNG charts, so that `disklab run` works on a
    # server without the gui extra: disklab.gui is imported when one of those is asked for
    "cli/gui_cmd.py": {"disklab.gui.app", "disklab.gui.export"},
    # the engine's C loop is an optional extension (setup.py): without a compiler at install
    # the Python loop runs, and every run's summary says so ("loop": "Python")
    "engine/native.py": {"disklab.engine._native"},
}

# try/except ImportError around a project module, allowed where the ImportError is an optional
# package's rather than the project's: path -> modules imported in the try
GUARD_ALLOWED: dict[str, set[str]] = {
    # without the gui extra (PySide6, pyqtgraph), importing disklab.gui fails: say how to
    # install it instead of a traceback
    "cli/gui_cmd.py": {"disklab.gui.app", "disklab.gui.export"},
    # the engine's C loop is an optional extension (setup.py): without a compiler at install
    # the Python loop runs, and every run's summary says so ("loop": "Python")
    "engine/native.py": {"disklab.engine._native"},
}


def modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(APP.rglob("*.py")):
        yield path.relative_to(APP).as_posix(), ast.parse(path.read_text(), str(path))


def disklab_imports(node: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, module) of every `import disklab...` / `from disklab... import` under `node`."""
    for n in ast.walk(node):
        if isinstance(n, ast.ImportFrom) and n.level == 0 and (n.module or "").startswith(
                "disklab"):
            yield n.lineno, str(n.module)
        elif isinstance(n, ast.ImportFrom) and n.level > 0:
            yield n.lineno, "." * n.level + (n.module or "")
        elif isinstance(n, ast.Import):
            for alias in n.names:
                if alias.name.split(".")[0] == "disklab":
                    yield n.lineno, alias.name


def imports_qt(tree: ast.Module) -> bool:
    for n in ast.walk(tree):
        names = ([a.name for a in n.names] if isinstance(n, ast.Import)
                 else [n.module or ""] if isinstance(n, ast.ImportFrom) else [])
        if any(name.split(".")[0] in ("PySide6", "pyqtgraph", "shiboken6") for name in names):
            return True
    return False


def catches_import_error(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return handler.type is None or any(
        isinstance(k, ast.Name) and k.id in ("ImportError", "ModuleNotFoundError", "Exception",
                                             "BaseException") for k in kinds)


def test_only_proc_starts_processes() -> None:
    offenders = []
    for path in APP.rglob("*.py"):
        if path.relative_to(APP).as_posix().startswith("core/proc/"):
            continue
        allowed = STARTS_ALLOWED.get(path.relative_to(APP).as_posix(), set())
        for m in STARTS.finditer(path.read_text()):
            if m.group(0).strip() not in allowed:
                offenders.append(f"{path.relative_to(APP)}: {m.group(0).strip()}")
    assert offenders == []
    assert STARTS.search("    os.execvp(argv[0], argv)\n")  # the pattern does match


def test_no_import_error_guards_around_the_projects_own_modules() -> None:
    """A project module always exists: a guard turns a real import error into a missing
    feature that nobody is told about."""
    offenders = []
    for path, tree in modules():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Try) or not any(
                    catches_import_error(h) for h in node.handlers):
                continue
            guarded = {module for stmt in node.body for _line, module in disklab_imports(stmt)}
            guarded -= GUARD_ALLOWED.get(path, set())
            if guarded:
                offenders.append(f"{path}:{node.lineno}: {', '.join(sorted(guarded))}")
    assert offenders == [], "\n".join(offenders)


def test_disklab_imports_stand_at_the_top_of_modules() -> None:
    """An import inside a function hides a dependency from a reader of the module's head (the
    graph tools see it). Lazy imports are for Qt: modules of disklab.gui that import Qt may
    defer what they load; elsewhere only LAZY_ALLOWED."""
    offenders = []
    for path, tree in modules():
        if path.startswith("gui/") and imports_qt(tree):
            continue
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for line, module in disklab_imports(fn):
                if module not in LAZY_ALLOWED.get(path, set()):
                    offenders.append(f"{path}:{line}: {module}")
    assert sorted(set(offenders)) == [], "\n".join(sorted(set(offenders)))


def test_the_ast_checks_see_what_they_look_for() -> None:
    guard = ast.parse("try:\n    from disklab.core import plan\nexcept ImportError:\n    pass\n")
    (node,) = [n for n in ast.walk(guard) if isinstance(n, ast.Try)]
    assert catches_import_error(node.handlers[0])
    assert [m for stmt in node.body for _l, m in disklab_imports(stmt)] == ["disklab.core"]
    lazy = ast.parse("def f():\n    import disklab.core.vocab.units\n    from . import x\n")
    assert [m for _l, m in disklab_imports(lazy)] == ["disklab.core.vocab.units", "."]
    assert imports_qt(ast.parse("def f():\n    from PySide6.QtCore import Qt\n"))
