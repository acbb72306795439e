"""`disklab gui`, `disklab export SESSION --format html|png|svg` and `disklab compare ...`.

Functions of parsed argparse Namespaces returning an exit code, wired into cli/main.py. Qt is
imported only inside disklab.gui, and only for the window and for PNG/SVG charts (drawn offscreen
when there is no display); HTML, Markdown, CSV and JSON need no Qt.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from disklab.core import report
from disklab.core.library import Library
from disklab.core.session import library_path

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2
GUI_MISSING = ("disklab: the desktop window needs the GUI extras: "
               "pip install -e '.[gui]' (make run does this)")


def has_display() -> bool:
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _library(args: argparse.Namespace) -> Library:
    return Library.open(library_path(getattr(args, "library", None)))


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
        print(f"{GUI_MISSING} ({e})", file=sys.stderr)
        return EXIT_BAD_INPUT
    return run_gui(library_path(getattr(args, "library", None)))


def _offscreen_app() -> object:
    """A QApplication for drawing charts; offscreen when there is no display."""
    if not has_display():
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from disklab.gui.app import apply_theme, make_app

    app = make_app()
    apply_theme(app, dark=False)  # exported charts are always on white
    return app


def export_chart(args: argparse.Namespace) -> int:
    """`disklab export SESSION --format html|png|svg|csv|json -o PATH`.

    Expects args.session (id or name), args.format, args.output (a file; for png/svg with
    several charts a directory, one file per chart), args.library (str | None).
    html: one self-contained file (facts, results, inline SVG charts, plan, warnings).
    csv/json: as `disklab export` always did (core.report).
    """
    fmt = args.format
    out = Path(args.output)
    lib = _library(args)
    try:
        session = lib.find_session(args.session)
        sid = session["id"]
        if fmt == "html":
            from disklab.gui.export import write_session_html

            write_session_html(lib, sid, out)
            written = [out]
        elif fmt in ("png", "svg"):
            from disklab.gui.export import session_charts

            specs = session_charts(lib, sid)
            if not specs:
                print(f"disklab: session {sid} has no results to chart", file=sys.stderr)
                return EXIT_FAILED
            try:
                _app = _offscreen_app()
                from disklab.gui.export import write_charts
            except ImportError as e:
                print(f"{GUI_MISSING} ({e})", file=sys.stderr)
                return EXIT_BAD_INPUT
            written = write_charts(specs, out, fmt)
        elif fmt == "csv":
            from disklab.gui.export import write_session_csv

            write_session_csv(lib, sid, out)
            written = [out]
        elif fmt == "json":
            out.write_text(json.dumps(report.session_json(lib, sid, samples=True), indent=1,
                                      default=str))
            written = [out]
        else:
            print(f"disklab: unknown format {fmt!r}", file=sys.stderr)
            return EXIT_BAD_INPUT
    finally:
        lib.close()
    for p in written:
        print(f"wrote {p}")
    return EXIT_OK


def compare(args: argparse.Namespace) -> int:
    """`disklab compare S1 S2 ... [--baseline S1] [--format md|csv|json|html] [-o FILE]`.

    Expects args.sessions (list of ids or names, at least two), args.baseline (id, name or
    None: the first), args.format (default md), args.output (None: stdout), args.library.
    """
    from disklab.gui.export import write_comparison

    refs = list(args.sessions)
    if len(refs) < 2:
        print("disklab compare: give at least two sessions", file=sys.stderr)
        return EXIT_BAD_INPUT
    fmt = getattr(args, "format", None) or "md"
    lib = _library(args)
    try:
        ids = [int(lib.find_session(r)["id"]) for r in refs]
        baseline = int(lib.find_session(args.baseline)["id"]) if getattr(
            args, "baseline", None) else ids[0]
        if baseline not in ids:
            ids.insert(0, baseline)
        output = getattr(args, "output", None)
        if output:
            write_comparison(lib, ids, baseline, output, fmt)
            print(f"wrote {output}")
        else:
            import tempfile

            with tempfile.TemporaryDirectory() as tmp:
                path = write_comparison(lib, ids, baseline, Path(tmp) / f"c.{fmt}", fmt)
                sys.stdout.write(path.read_text())
    finally:
        lib.close()
    return EXIT_OK


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Optional helper for cli/main.py: the three subcommands with the arguments above."""
    p = sub.add_parser("gui", help="open the desktop window")
    p.add_argument("--library", metavar="PATH")
    p.set_defaults(func=gui)
    p = sub.add_parser("compare", help="compare sessions: mean ± stddev and deltas")
    p.add_argument("sessions", nargs="+", metavar="SESSION")
    p.add_argument("--baseline", metavar="SESSION")
    p.add_argument("--format", choices=("md", "csv", "json", "html"), default="md")
    p.add_argument("-o", "--output", metavar="FILE")
    p.add_argument("--library", metavar="PATH")
    p.set_defaults(func=compare)
