"""ARCHITECTURE.md stays short and true (issue 47): every path, module and name it gives in
backticks or links exists, each package imports only the packages its row of the table names,
every package has a row, and the page has fewer than 1,500 words.

A name in a package's paragraph ("**fs**: `options`, `Scratch` ...") is looked up in that
package (a module, a subpackage or a top-level name of any of its modules); anywhere else in
the whole of disklab. A dotted name is a module, then at most a top-level name and one member.
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import re
import tomllib
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app"
DOC = ROOT / "ARCHITECTURE.md"
MAX_WORDS = 1500

SPAN = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\]\(([^)\s]+)\)")
PATH = re.compile(r"[\w.*-]+(?:/[\w.*-]*)+")  # a word with a slash
DOTTED = re.compile(r"(?<![\w/])(?:disklab|core)(?:\.\w+)+")
CONTRACT = re.compile(r"[a-z]+(?:-[a-z]+)+")
IDENT = re.compile(r"[A-Za-z_]\w*\*?")
ROW = re.compile(r"^\| `(disklab[\w.]*)` \| [^|]+ \| ([^|]+) \|$")
BOLD = re.compile(r"\*\*([^*]+)\*\*")
PROGRAMS = {"engine", "treeload", "cli", "gui"}  # packages beside disklab.core


def doc() -> str:
    return DOC.read_text(encoding="utf-8")


def module_file(name: str) -> Path | None:
    """The source file of module `name` (dotted), or None."""
    path = APP.joinpath(*name.split("."))
    if (path / "__init__.py").is_file():
        return path / "__init__.py"
    return path.with_suffix(".py") if path.with_suffix(".py").is_file() else None


def _bound(node: ast.stmt) -> list[str]:
    """The names a statement binds at its level (defs, classes, assignments, imports)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    if isinstance(node, ast.Import | ast.ImportFrom):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    return []


@functools.cache
def defined(file: Path) -> dict[str, frozenset[str]]:
    """A module's top-level names, each with its members (a class's)."""
    names: dict[str, frozenset[str]] = {}
    for node in ast.parse(file.read_text(encoding="utf-8")).body:
        members = (frozenset(n for s in node.body for n in _bound(s))
                   if isinstance(node, ast.ClassDef) else frozenset())
        names.update(dict.fromkeys(_bound(node), members))
    return names


def dotted_exists(name: str) -> bool:
    """`disklab.core.tools.base.Capabilities`, `core.run`: a module, then at most a name and
    one of its members."""
    parts = name.split(".")
    if parts[0] == "core":
        parts = ["disklab", *parts]
    for i in range(len(parts), 0, -1):
        file = module_file(".".join(parts[:i]))
        if file is not None:
            break
    else:
        return False
    rest, names = parts[i:], defined(file)
    if len(rest) > 2:
        return False
    return not rest or (rest[0] in names and (len(rest) == 1 or rest[1] in names[rest[0]]))


@functools.cache
def names_in(package: str) -> frozenset[str]:
    """Every module, subpackage and top-level name of a package, at any depth."""
    root = APP.joinpath(*package.split("."))
    files = [p for p in root.rglob("*.py") if "__pycache__" not in p.parts]
    names = {p.name for p in root.rglob("*") if p.is_dir() and p.name != "__pycache__"}
    for file in files:
        names.add(file.parent.name if file.name == "__init__.py" else file.stem)
        names.update(defined(file))
    return frozenset(names)


def path_exists(path: str) -> bool:
    """A path of the checkout, of app/, of the package or of core (`tools/base.py`)."""
    path = path.rstrip(".,")
    for base in (ROOT, APP, APP / "disklab", APP / "disklab" / "core"):
        if any(base.glob(path)) if "*" in path else (base / path).exists():
            return True
    return False


def paragraph_package(bold: str) -> str:
    """The package a paragraph is about: **fs** is disklab.core.fs, **gui** disklab.gui,
    **core's top-level modules** disklab.core."""
    word = bold.split()[0]
    if word in PROGRAMS:
        return f"disklab.{word}"
    return "disklab.core" if word.startswith("core") else f"disklab.core.{word}"


def scoped_spans(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """(span, the packages its names are looked up in) for every backticked span of the page:
    a paragraph that begins "**helper_client** and **root_helper**:" looks in both."""
    out: list[tuple[str, tuple[str, ...]]] = []
    for block in re.split(r"\n\s*\n", text.strip()):
        head = block.split(":", 1)[0] if block.startswith("**") else ""
        scope = tuple(paragraph_package(b) for b in BOLD.findall(head)) or ("disklab",)
        out.extend((span, scope) for span in SPAN.findall(block))
    return out


def problems(text: str) -> list[str]:
    """Every path or name of the page that does not exist, one line each."""
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    contracts = {c["id"] for c in tomllib.loads(pyproject)["tool"]["importlinter"]["contracts"]}
    found: list[str] = []
    for target in LINK.findall(text):
        if not target.startswith(("http:", "https:", "#")) and not (ROOT / target).exists():
            found.append(f"link {target}: no such file")
    for span, scope in scoped_spans(text):
        if span.startswith("[tool."):
            if span not in pyproject:
                found.append(f"{span}: not a table of pyproject.toml")
            continue
        if CONTRACT.fullmatch(span):
            if span not in contracts:
                found.append(f"{span}: no import contract of that id")
            continue
        paths = PATH.findall(span)
        found.extend(f"{p}: no such path" for p in paths if not path_exists(p))
        dotted = DOTTED.findall(span)
        found.extend(f"{d}: no such module or name" for d in dotted if not dotted_exists(d))
        if not paths and not dotted and IDENT.fullmatch(span):
            known = frozenset().union(*(names_in(p) for p in scope))
            if not (fnmatch.filter(known, span) if "*" in span else span in known):
                found.append(f"{span}: no module or name of that name in {', '.join(scope)}")
    packages = {p for _span, scope in scoped_spans(text) for p in scope}
    found.extend(f"{p}: no such package" for p in sorted(packages) if module_file(p) is None)
    return found


def allowed(cell: str) -> set[str]:
    """A row's "imports" cell as packages: 'fs, proc', 'nothing', 'any of core, gui'."""
    cell = re.sub(r"\([^)]*\)", "", cell).strip()
    if cell == "nothing":
        return set()
    out = set()
    for item in (i.strip() for i in cell.split(",")):
        if item == "any of core":
            out.add("disklab.core.*")
        else:
            out.add(f"disklab.{item}" if item in PROGRAMS else f"disklab.core.{item}")
    return out


def unit(module: str) -> str:
    """The table's unit a module belongs to: a package or module of core, or of disklab."""
    parts = module.split(".")
    return ".".join(parts[:3] if len(parts) >= 3 and parts[1] == "core" else parts[:2])


def import_problems(text: str, graph: grimp.ImportGraph) -> list[str]:
    """Packages without a row, and imports a row does not allow, one line each."""
    rows = {m[1]: allowed(m[2]) for line in text.splitlines() if (m := ROW.match(line.strip()))}
    imports: dict[str, set[str]] = {}
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            a, b = unit(module), unit(imported)
            if a != b and b not in ("disklab", "disklab.core"):
                imports.setdefault(a, set()).add(b)
    units = {unit(m) for m in graph.modules} - {"disklab", "disklab.core"}
    found = [f"{u}: no row in the table" for u in sorted(units - set(rows))]
    for package, allows in sorted(rows.items()):
        for imported in sorted(imports.get(package, set())):
            if imported not in allows and not ("disklab.core.*" in allows
                                               and imported.startswith("disklab.core.")):
                found.append(f"{package} imports {imported}, which its row does not name")
    return found


def test_every_path_and_name_exists() -> None:
    assert problems(doc()) == []


def test_each_package_imports_only_what_its_row_says() -> None:
    assert import_problems(doc(), grimp.build_graph("disklab", cache_dir=None)) == []


def test_the_page_is_short() -> None:
    words = len(doc().split())
    assert words < MAX_WORDS, f"ARCHITECTURE.md has {words} words (fewer than {MAX_WORDS})"


def test_a_stale_path_or_name_and_a_missing_row_are_found() -> None:
    """The checks fail on what the page used to get wrong: a module that moved away, a name
    that is gone, a contract renamed, an import the table does not allow."""
    stale = ("A `core/session.py` and `tools/_iozone_phases.py`, `disklab.core.engine.loop`, "
             "`plan-has-no-such-contract`, [x](docs/none.md).\n\n"
             "**fs**: `options`, `RAW_TOOLS`.\n\n"
             "**helper_client** and **root_helper**: `trust`.\n\n"
             "**plumbing**: `pipe`.\n")
    assert problems(stale) == [
        "link docs/none.md: no such file",
        "core/session.py: no such path",
        "tools/_iozone_phases.py: no such path",
        "disklab.core.engine.loop: no such module or name",
        "plan-has-no-such-contract: no import contract of that id",
        "RAW_TOOLS: no module or name of that name in disklab.core.fs",
        "pipe: no module or name of that name in disklab.core.plumbing",
        "disklab.core.plumbing: no such package",
    ]
    graph = grimp.ImportGraph()
    for module in ("disklab", "disklab.core", "disklab.core.vocab", "disklab.core.proc"):
        graph.add_module(module)
    graph.add_import(importer="disklab.core.vocab", imported="disklab.core.proc")
    table = ("| `disklab.core.vocab` | words | nothing |\n"
             "| `disklab.cli` | the command | any of core, gui |\n")
    assert import_problems(table, graph) == [
        "disklab.core.proc: no row in the table",
        "disklab.core.vocab imports disklab.core.proc, which its row does not name",
    ]
