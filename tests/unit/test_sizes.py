"""Code a newcomer can read (the team's guide): no function in core, in the programs of
their own that left it (the engine, the file-tree tool) or in the window (gui) longer than 80
lines and no class longer than 400, measured with `ast` from the `def`/`class` line to the last
line of the body. The exceptions are listed here, each with its reason; one that is fixed must
leave the list (the test says so)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).parents[2] / "app" / "disklab"
MEASURED = ("core", "engine", "treeload", "gui")  # the CLI: its own issue
MAX_FUNCTION = 80
MAX_CLASS = 400

# "path under app/disklab:qualified name" -> why it is longer, for now. Empty: the window's
# pages and the window itself were split last (issue 29 and the round after it); a new entry
# needs its reason here.
EXCEPTIONS: dict[str, str] = {}


def definitions(node: ast.AST, prefix: str = "") -> Iterator[tuple[str, ast.AST]]:
    """(qualified name, node) of every function and class under `node`, nested ones too."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield prefix + child.name, child
            yield from definitions(child, f"{prefix}{child.name}.")


def too_long() -> dict[str, int]:
    """'path:name' -> lines, for every function and class measured beyond its limit."""
    out = {}
    for path in sorted(p for top in MEASURED for p in (PACKAGE / top).rglob("*.py")):
        for name, node in definitions(ast.parse(path.read_text(), str(path))):
            lines = node.end_lineno - node.lineno + 1  # type: ignore[attr-defined]
            limit = MAX_CLASS if isinstance(node, ast.ClassDef) else MAX_FUNCTION
            if lines > limit:
                out[f"{path.relative_to(PACKAGE).as_posix()}:{name}"] = lines
    return out


def test_no_function_or_class_is_too_long() -> None:
    found = too_long()
    new = {k: v for k, v in found.items() if k not in EXCEPTIONS}
    assert new == {}, "too long (functions <= 80 lines, classes <= 400): " + ", ".join(
        f"{k} ({v} lines)" for k, v in sorted(new.items()))
    fixed = sorted(set(EXCEPTIONS) - set(found))
    assert fixed == [], f"no longer too long, remove from EXCEPTIONS: {fixed}"


def test_the_measure_sees_nested_definitions() -> None:
    tree = ast.parse("class A:\n    def f(self):\n        def g():\n            pass\n")
    assert [name for name, _ in definitions(tree)] == ["A", "A.f", "A.f.g"]


def test_core_top_level_is_packages_and_at_most_eight_modules() -> None:
    """core's top floor stays uncrowded (issue 31): its subjects are packages, and only a few
    modules that sit above or beside them stand alone (ARCHITECTURE.md names them)."""
    core = PACKAGE / "core"
    modules = sorted(p.stem for p in core.glob("*.py") if p.name != "__init__.py")
    assert len(modules) <= 8, f"core's top level has {len(modules)} modules: {modules}"
    # (a folder left with only __pycache__ by a module that moved away is no package)
    folders = [p for p in core.iterdir() if p.is_dir() and any(p.glob("*.py"))]
    assert all((p / "__init__.py").is_file() for p in folders), folders
