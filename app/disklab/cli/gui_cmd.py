"""`disklab gui`, and the PNG branch of `disklab export`: the CLI's only way into disklab.gui.

Qt is imported lazily here, only for the window and for PNG charts (drawn offscreen when there
is no display), so `disklab compare` and the CSV, JSON, HTML, Markdown and SVG exports run on a
server without the GUI extras.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from disklab.cli.arguments import LibraryArgs, typed
from disklab.cli.output import info
from disklab.core.results.charts import ChartSpec
from disklab.core.system.directories import library_path

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2
GUI_EXTRAS = frozenset({"PySide6", "shiboken6", "pyqtgraph", "numpy"})  # the [gui] extra


def gui_missing(what: str, e: ImportError) -> str:
    """The one line said when the GUI extra is not installed: what needs it (the window, a
    PNG chart) and how to add it to this install (a checkout's venv, or pip/pipx)."""
    checkout = Path(__file__).resolve().parents[3]
    in_checkout = (checkout / "pyproject.toml").is_file() and (checkout / "Makefile").is_file()
    pipx = bool(os.environ.get("PIPX_HOME")) or "/pipx/" in sys.prefix
    how = gui_hint(checkout if in_checkout else None, pipx)
    return (f"disklab: {what} needs the GUI extra (PySide6, pyqtgraph, numpy; missing: "
            f"{e.name}): {how}")


def gui_hint(checkout: Path | None, pipx: bool) -> str:
    """How to add the GUI extra to this install: in a checkout its venv; else the extra's own
    requirements added to the environment DiskLab is in (pipx inject, pip install). Never
    'disklab[gui]' from a package index: the 'disklab' published there is not this one."""
    if checkout is not None:
        return f"in the checkout {checkout}: make run (or .venv/bin/pip install -e '.[gui]')"
    wanted = " ".join(f"'{r}'" for r in gui_requirements())
    if pipx:
        return f"pipx inject disklab {wanted}"
    return f"{sys.executable} -m pip install {wanted}"


def gui_requirements() -> list[str]:
    """The [gui] extra's requirements as this install's metadata states them."""
    from importlib import metadata

    try:
        requires = metadata.requires("disklab") or []
    except metadata.PackageNotFoundError:
        requires = []
    found = [r.split(";")[0].replace(" ", "") for r in requires
             if 'extra == "gui"' in r.replace("'", '"')]
    return found or ["PySide6-Essentials>=6.8,<6.12", "pyqtgraph>=0.14,<0.15", "numpy", "tomli-w"]


def _extras_missing(e: ImportError) -> bool:
    """True when `e` is a package of the GUI extra not being installed. Any other import error
    (a bug in disklab.gui) must surface as what it is, not as a missing feature."""
    return (e.name or "").split(".")[0] in GUI_EXTRAS


def has_display() -> bool:
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def gui(args: argparse.Namespace) -> int:
    """Open the window. Expects args.library (str | None)."""
    if not has_display() and os.environ.get("QT_QPA_PLATFORM") != "offscreen":
        print("disklab: no display (DISPLAY and WAYLAND_DISPLAY are unset): the window cannot "
              "open here. Run `disklab start` for the quick preset headless, or `disklab run "
              "PLAN.toml`.", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        from disklab.gui.app import run_gui
    except ImportError as e:
        if not _extras_missing(e):
            raise
        print(gui_missing("the desktop window", e), file=sys.stderr)
        return EXIT_BAD_INPUT
    return run_gui(library_path(typed(LibraryArgs, args).library))


def _offscreen_app() -> object:
    """A QApplication for drawing charts (gui.export.chart_app); offscreen when there is no
    display."""
    if not has_display():
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from disklab.gui.export import chart_app

    return chart_app()


def write_png_charts(specs: Sequence[ChartSpec], paths: Sequence[Path], width: int = 1000,
                     height: int = 560) -> int:
    """`disklab export --format png`: each chart's SVG (core.results.svg) rendered by Qt
    offscreen at the same size to its path (the one export that needs Qt; every other format
    is written by core.results without it)."""
    try:
        _app = _offscreen_app()
        from disklab.gui.export import write_chart
    except ImportError as e:
        if not _extras_missing(e):
            raise
        print(gui_missing("a PNG chart", e), file=sys.stderr)
        return EXIT_BAD_INPUT
    for spec, path in zip(specs, paths, strict=True):
        info(f"wrote {write_chart(spec, path, width, height)}")
    return EXIT_OK


def main() -> int:
    """The `disklab-gui` launcher: the window, or one line saying what is missing (the GUI
    extra, a display) instead of a traceback."""
    return gui(argparse.Namespace(library=None))


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """The `gui` subcommand for cli/main.py."""
    p = sub.add_parser("gui", help="open the desktop window")
    p.add_argument("--library", metavar="PATH",
                   help="session library file (default: $DISKLAB_LIBRARY or the XDG data dir)")
    p.set_defaults(func=gui)
