"""The file-tree tool's command line: argparse in, JSON lines out (see disklab.treeload).

Exit status: 0 done; 1 an I/O error (an error line says what); 2 bad arguments; 128 + signal
number when SIGTERM or SIGINT stopped it (the tree is removed first, and a summary flagged
"partial": true says what was done until then).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from types import FrameType
from typing import Any

from disklab.treeload.flush import flush
from disklab.treeload.tree import (
    Counters,
    Shape,
    Tick,
    Timing,
    create,
    delete,
    remove_quietly,
    timed,
)

PHASES = ("create", "delete")
EXIT_ERROR = 1
EXIT_USAGE = 2
MAX_FILES = 100_000_000  # files of one tree: beyond any study, far below what a run could hold


def emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m disklab.treeload",
                                description="DiskLab's file-tree create/delete workload")
    p.add_argument("--root", required=True, help="the tree's top directory (must not exist)")
    p.add_argument("--dirs", type=int, required=True, help="directories")
    p.add_argument("--files-per-dir", type=int, required=True, help="files in each directory")
    p.add_argument("--file-size", type=int, required=True, help="bytes of each file")
    p.add_argument("--block-size", type=int, required=True, help="bytes per write call")
    p.add_argument("--phase", action="append", choices=PHASES, required=True,
                   help="create, delete; in this order")
    p.add_argument("--no-sync", action="store_true",
                   help="no syncfs at the end of each phase (the timing ends at the last call)")
    p.add_argument("--interval", type=float, default=0.5, help="seconds between progress lines")
    return p.parse_args(argv)


def _usage_problem(args: argparse.Namespace) -> str | None:
    if min(args.dirs, args.files_per_dir) < 1:
        return "dirs and files per dir must be at least 1"
    if args.file_size < 0 or args.block_size < 1:
        return "file size must be >= 0 and block size >= 1"
    if args.dirs * args.files_per_dir > MAX_FILES:
        return f"{args.dirs * args.files_per_dir} files: more than {MAX_FILES}"
    if len(set(args.phase)) != len(args.phase):
        return "a phase is named twice"
    return None


class _Signals:
    """SIGTERM/SIGINT set the halt flag the phases read between files."""

    def __init__(self, counters: Counters) -> None:
        self.counters = counters
        self.signum: int | None = None

    def install(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._handle)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.signum = self.signum or signum
        self.counters.halt[0] = True


def main(argv: list[str] | None = None, early_signals: list[int] | None = None) -> int:
    """Run the phases; `early_signals` are those caught while the module was being imported."""
    counters = Counters()
    signals = _Signals(counters)
    signals.install()
    if early_signals:
        signals.signum = early_signals[0]
        counters.halt[0] = True
    args = parse_args(argv)
    problem = _usage_problem(args)
    if problem:
        emit({"type": "error", "message": problem})
        return EXIT_USAGE
    shape = Shape(args.root, args.dirs, args.files_per_dir, args.file_size, args.block_size)
    timings: list[Timing] = []
    last = [0.0]

    def tick() -> None:
        now = time.perf_counter()
        if now - last[0] >= args.interval:
            last[0] = now
            emit({"type": "progress", "phase": counters.phase, "files": counters.files,
                  "planned": shape.planned_files, "bytes": counters.bytes,
                  "elapsed": round(now - counters.started, 6)})

    if os.path.lexists(shape.root):  # never claim (and later remove) what was there before
        emit({"type": "error", "message": f"{shape.root} exists: the tree's root must be new"})
        return EXIT_ERROR
    try:
        status = _phases(args, shape, counters, tick, timings)
    except OSError as e:
        emit({"type": "error", "message": f"{e.filename or args.root}: {e.strerror or e}"})
        status = EXIT_ERROR
    finally:
        remove_quietly(args.root)  # nothing is left behind, whatever happened
    partial = counters.halt[0] or status != 0
    emit({"type": "summary", "phases": [t.as_dict() for t in timings], "partial": partial,
          "planned_files": shape.planned_files, "file_size": shape.file_size,
          "block_size": shape.block_size})
    if signals.signum is not None:
        return 128 + signals.signum
    return status


def _phases(args: argparse.Namespace, shape: Shape, counters: Counters, tick: Tick,
            timings: list[Timing]) -> int:
    sync = not args.no_sync
    created = False
    for phase in args.phase:
        if counters.halt[0]:
            break
        if phase == "create":
            timing = timed("create", counters, lambda c, t: create(shape, c, t, sync), tick)
            created = True
        else:
            if not created:  # delete needs a tree: lay it out untimed first
                create(shape, Counters(halt=counters.halt), lambda: None, True)
                created = True
            done, skipped = flush(shape.root)
            emit({"type": "flush", "done": done, "skipped": skipped})
            timing = timed("delete", counters, lambda c, t: delete(shape, c, t, sync), tick)
        emit({"type": "progress", "phase": phase, "files": counters.files,
              "planned": shape.planned_files, "bytes": counters.bytes,
              "elapsed": round(timing.seconds, 6)})
        emit(timing.as_dict())
        timings.append(timing)
    return 0
