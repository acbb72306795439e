"""`disklab import`: bundles and other libraries merged by session UUID, tool outputs (files,
folders) as sessions. Exit 0 when everything given was imported, 2 when something given could
not be (each said in one line on stderr), 1 when the library could not be written."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from disklab.cli.output import is_quiet
from disklab.core.errors import LibraryError, Problem
from disklab.core.importing import read_outputs
from disklab.core.jsonformat import versioned
from disklab.core.library import Library
from disklab.core.library.bundle import is_sqlite_file, merge
from disklab.core.library.imports import ImportedRun, import_runs

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def import_cmd(args: argparse.Namespace, library: Library) -> int:
    """Bundles and libraries (SQLite files) merge; the other paths are tool outputs: with
    --session all of them one session, else one session per file (named after it)."""
    say = _Reporter(args)
    outputs = [p for p in args.files if Path(p).is_dir() or not is_sqlite_file(Path(p))]
    merged: list[dict[str, Any]] = []
    for p in args.files:
        if p not in outputs:
            merged.append(_merge_one(library, Path(p), say))
    imported, skipped = _import_outputs(args, library, outputs, say) if outputs else ([], [])
    if args.json:
        print(json.dumps(versioned("disklab.import", {
            "imported": imported, "merged": merged, "skipped": skipped,
            "problems": [str(p) for p in say.problems]}), indent=2))
    for problem in say.problems:
        print(f"disklab import: {problem}", file=sys.stderr)
    return EXIT_BAD_INPUT if say.problems else EXIT_OK


class _Reporter:
    """Lines for the user (not with --json or --quiet), the problems to say at the end, and
    the progress line on a terminal."""

    def __init__(self, args: argparse.Namespace, err: TextIO | None = None):
        self.quiet = bool(args.json or is_quiet())
        self.err = err or sys.stderr
        self.live = not self.quiet and self.err.isatty()
        self.problems: list[Problem] = []

    def line(self, text: str) -> None:
        if not self.quiet:
            print(text)

    def progress(self, done: int, total: int, name: str) -> None:
        if self.live and (done == total or done % 10 == 1):
            tail = name if len(name) <= 50 else "..." + name[-47:]
            end = "\n" if done == total else ""
            print(f"\r\x1b[Kreading {done}/{total}: {tail}", end=end, file=self.err,
                  flush=True)


def _merge_one(library: Library, path: Path, say: _Reporter) -> dict[str, Any]:
    """One bundle or library merged (a problem for one that cannot be: newer, not ours)."""
    try:
        report = merge(library, path)
    except LibraryError as e:
        say.problems.append(Problem(str(path), str(e).removeprefix(f"{path} ")))
        return {"file": str(path), "added": [], "present": [], "running": []}
    for sid, name in report.added:
        say.line(f"{path}: session {name!r} -> session {sid}")
    for name, sid in report.present:
        say.line(f"{path}: session {name!r} is already in the library (session {sid})")
    for name in report.running:
        say.line(f"{path}: session {name!r} is still being recorded there: not imported")
    if not (report.added or report.present or report.running):
        say.line(f"{path}: no sessions in it")
    return {"file": str(path), "added": [sid for sid, _n in report.added],
            "present": [sid for _n, sid in report.present], "running": report.running}


def _import_outputs(args: argparse.Namespace, library: Library, paths: list[str],
                    say: _Reporter) -> tuple[list[dict[str, Any]], list[str]]:
    """Tool outputs into sessions; (what was imported, the folders' files skipped)."""
    read = read_outputs(paths, args.tool, say.progress)
    say.problems += read.problems
    for name in read.skipped:
        say.line(f"{name}: skipped (no iozone, fio, bonnie++ or dd output)")
    if not read.runs:
        if not read.problems:  # folders with nothing to import: said, not a silent success
            say.problems += [Problem(p, "no iozone, fio, bonnie++ or dd output in it")
                             for p in paths if Path(p).is_dir()]
        return [], read.skipped
    folder = len(paths) == 1 and Path(paths[0]).is_dir()
    if args.session or folder:
        name = args.session or Path(paths[0]).resolve().name
        groups = [(name, read.runs)]
    else:
        groups = [(Path(r.source_path).name, [r]) for r in read.runs]
    imported = []
    for name, runs in groups:
        sid = _store(library, name, args.config, runs)
        cases = len({(r.tool, json.dumps(dict(r.params), sort_keys=True)) for r in runs})
        series = sum(len(r.series) for r in runs)
        say.line(_summary(name, sid, runs, cases, series))
        imported += [{"file": r.source_path, "tool": r.tool, "session": sid,
                      "metrics": len(r.metrics), "series": len(r.series)} for r in runs]
    return imported, read.skipped


def _store(library: Library, name: str, config: str, runs: list[ImportedRun]) -> int:
    sources = [r.source_path for r in runs]
    where = sources[0] if len(sources) == 1 else _common_dir(sources)
    return import_runs(library, name=name, config=config, runs=runs,
                       host={"imported_from": where}, plan_path=where)


def _common_dir(paths: list[str]) -> str:
    return os.path.commonpath([str(Path(p).parent) for p in paths])


def _summary(name: str, sid: int, runs: list[ImportedRun], cases: int, series: int) -> str:
    if len(runs) == 1:
        r = runs[0]
        extra = f", {series} series from its logs" if series else ""
        return f"{r.source_path}: {r.tool}, {len(r.metrics)} figures{extra} -> session {sid}"
    tools = ", ".join(sorted({r.tool for r in runs}))
    extra = f"; {series} series from fio logs" if series else ""
    return (f"{len(runs)} outputs ({tools}) -> session {sid} {name!r}: {cases} case(s), "
            f"{len(runs) - cases} repeat(s) of the same parameters{extra}")
