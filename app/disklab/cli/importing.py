"""`disklab import`: bundles and other libraries merged by session UUID, tool outputs (files,
folders) as sessions (core.importing.import_paths). Exit 0 when everything given was imported,
2 when something given could not be (each said in one line on stderr), 1 when the library could
not be written."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from disklab.cli.output import is_quiet
from disklab.core.importing import import_paths
from disklab.core.library import Library
from disklab.core.vocab.jsonformat import versioned

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def import_cmd(args: argparse.Namespace, library: Callable[[], Library]) -> int:
    """What import_paths did, as lines (not with --json or --quiet) or JSON; a progress line
    on a terminal while the files are read; each problem in one line on stderr."""
    quiet = bool(args.json or is_quiet())
    live = not quiet and sys.stderr.isatty()
    report = import_paths(library, args.files, tool=args.tool, session=args.session,
                          config=args.config, progress=_progress if live else None)
    if not quiet:
        for line in report.lines:
            print(line)
    if args.json:
        print(json.dumps(versioned("disklab.import", {
            "imported": report.imported, "present": report.present, "merged": report.merged,
            "skipped": report.skipped,
            "problems": [str(p) for p in report.problems]}), indent=2))
    for problem in report.problems:
        print(f"disklab import: {problem}", file=sys.stderr)
    return EXIT_BAD_INPUT if report.problems else EXIT_OK


def _progress(done: int, total: int, name: str) -> None:
    """The progress line on a terminal: every tenth file and the last."""
    if done == total or done % 10 == 1:
        tail = name if len(name) <= 50 else "..." + name[-47:]
        end = "\n" if done == total else ""
        print(f"\r\x1b[Kreading {done}/{total}: {tail}", end=end, file=sys.stderr, flush=True)
