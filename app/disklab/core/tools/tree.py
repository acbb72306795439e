"""Adapter of the file-tree workload (disklab.treeload): the RAID study's dd/rm tables.

Parameters in, argv out; JSON lines in, metrics and progress out. Pure, like every adapter:
the workload itself is the process (`python -m disklab.treeload`).

Metrics, per phase P (create, delete): P (bytes/s over the phase), P:seconds (real),
P:user and P:sys (the tool's CPU seconds, as `time` printed them in the study), and
P:files_per_s. Live progress is files done over files planned, in the phase that runs.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from disklab.core.tools.base import (
    MAX_BLOCK,
    MAX_FILE,
    Capabilities,
    Command,
    ParamSpec,
    ProgressParser,
    RunTarget,
    ToolAdapter,
    ToolOutput,
    json_lines,
)
from disklab.core.vocab.errors import ParseError, ToolError
from disklab.core.vocab.model import UNIT_OPS, UNIT_THROUGHPUT, Metric, ProgressUpdate

TOOL = "tree"
PHASES = ("create", "delete")
UNIT_SECONDS = "s"
MAX_DIRS = 1_000_000
MAX_FILES_PER_DIR = 10_000_000
MAX_FILES = 100_000_000  # files of one tree (the tool refuses more, too)


def _number(value: Any) -> float:
    """A finite JSON number (not a bool); ValueError for anything else."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{value!r} is not a number")
    f = float(value)
    if not math.isfinite(f) or f < 0:
        raise ValueError(f"{value!r} is not a finite figure >= 0")
    return f


def _phases(params: Mapping[str, Any]) -> tuple[str, ...]:
    value = params.get("phases") or PHASES
    return tuple(value) if isinstance(value, tuple | list) else (str(value),)


class _TreeProgress(ProgressParser):
    """Progress lines -> files done over files planned, the phase, and the byte rate. The
    runner's bar and ETA count bytes, so the share is given as files x file size (every file
    has that size): files done over files planned either way, and the overall bar of a
    session adds up with the other cases' bytes. An empty-file tree counts files."""

    def __init__(self, file_size: int) -> None:
        self.file_size = file_size
        self.last: tuple[str, float, int] | None = None

    def feed(self, stream: str, line: str) -> ProgressUpdate | None:
        if stream != "stdout" or not line.startswith("{") or '"progress"' not in line:
            return None
        try:
            doc = json.loads(line)
            if not isinstance(doc, dict) or doc.get("type") != "progress":
                return None
            phase = str(doc["phase"])
            files, planned = int(_number(doc["files"])), int(_number(doc["planned"]))
            done, elapsed = int(_number(doc["bytes"])), _number(doc["elapsed"])
        except (ValueError, KeyError, TypeError, RecursionError, OverflowError):
            return None
        rate = None
        if self.last is not None and self.last[0] == phase and elapsed > self.last[1]:
            rate = (done - self.last[2]) / (elapsed - self.last[1])
        elif elapsed > 0:
            rate = done / elapsed
        self.last = (phase, elapsed, done)
        unit = self.file_size or 1
        return ProgressUpdate(done_bytes=files * unit, total_bytes=planned * unit, phase=phase,
                              message=f"{phase}: {files} of {planned} files", rate=rate)


class TreeAdapter(ToolAdapter):
    name = TOOL
    title = "File tree create/delete"
    executable = ""
    package = ""
    capabilities = Capabilities(live_progress=True, tests=PHASES)
    rank = 5
    params: Mapping[str, ParamSpec] = {
        "dirs": ParamSpec("int", 10, minimum=1, maximum=MAX_DIRS, help="directories"),
        "files_per_dir": ParamSpec("int", 1000, minimum=1, maximum=MAX_FILES_PER_DIR,
                                   help="files in each directory"),
        "file_size": ParamSpec("size", 1 << 20, minimum=0, maximum=MAX_FILE,
                               help="bytes of each file"),
        "block_size": ParamSpec("size", 131072, minimum=1, maximum=MAX_BLOCK,
                                help="bytes per write call (the study's dd bs=131072)"),
        "phases": ParamSpec("choice", PHASES, choices=PHASES, multi=True,
                            help="create, then flush caches, then delete (rm -Rf)"),
        "sync": ParamSpec("bool", True, help="syncfs at the end of each phase, inside its "
                                             "timing, so a small tree measures the disk"),
    }

    def reads(self, params: Mapping[str, Any]) -> bool:
        """No: the tree's files are written and removed, never read back; the process's own
        reads (the interpreter's modules at its start) are no figure's."""
        return False

    def file_size(self, params: Mapping[str, Any]) -> int | None:
        return None  # many small files: the 2 x RAM rule of one big file does not apply

    def space_bytes(self, params: Mapping[str, Any]) -> int | None:
        return _int(params.get("dirs")) * _int(params.get("files_per_dir")) * _int(
            params.get("file_size"))

    def buffer_bytes(self, params: Mapping[str, Any]) -> int | None:
        return _int(params.get("block_size"))

    def check(self, params: Mapping[str, Any]) -> list[tuple[str, str]]:
        problems = []
        files = _int(params.get("dirs")) * _int(params.get("files_per_dir"))
        if files > MAX_FILES:
            problems.append(("files_per_dir", f"dirs x files_per_dir is {files} files, more "
                                              f"than the {MAX_FILES} one tree may hold"))
        phases = _phases(params)
        if len(set(phases)) != len(phases):
            problems.append(("phases", "a phase is named twice"))
        elif list(phases) != [p for p in PHASES if p in phases]:
            problems.append(("phases", "create comes before delete"))
        return problems

    def build_command(self, params: Mapping[str, Any], target: RunTarget) -> Command:
        root = target.file("-tree")
        argv = [target.python, "-m", "disklab.treeload", "--root", root,
                "--dirs", str(int(params.get("dirs", 10))),
                "--files-per-dir", str(int(params.get("files_per_dir", 1000))),
                "--file-size", str(int(params.get("file_size", 1 << 20))),
                "--block-size", str(int(params.get("block_size", 131072)))]
        for phase in _phases(params):
            argv += ["--phase", phase]
        if not params.get("sync", True):
            argv.append("--no-sync")
        return Command(argv=tuple(argv), cwd=target.directory, files=(root,),
                       planned_bytes=self.space_bytes(params) or None)

    def parse_result(self, output: ToolOutput, params: Mapping[str, Any]) -> list[Metric]:
        """Metrics of every timed phase of the summary line; ToolError with the tool's own
        words on an error line. A stopped run's phases are flagged 'partial'."""
        docs = json_lines(TOOL, output.stdout)
        errors = [str(d.get("message")) for _, d in docs if d["type"] == "error"]
        if errors:
            raise ToolError("; ".join(errors))
        summaries = [(n, d) for n, d in docs if d["type"] == "summary"]
        if not summaries:
            raise ParseError(TOOL, None, 'a {"type": "summary"} line')
        number, s = summaries[-1]
        try:
            phases = s["phases"]
            if not isinstance(phases, list):
                raise TypeError("phases is not a list")
            metrics: list[Metric] = []
            for p in phases:
                note = "partial" if s.get("partial") or not p.get("complete", True) else None
                metrics += _phase_metrics(p, note)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise ParseError(TOOL, number, f"a summary with {e}", json.dumps(s)) from e
        if not metrics:
            raise ParseError(TOOL, number, "a summary with at least one phase", json.dumps(s))
        return metrics

    def progress_parser(self, params: Mapping[str, Any]) -> ProgressParser:
        return _TreeProgress(_int(params.get("file_size")))


def _phase_metrics(p: Mapping[str, Any], note: str | None) -> list[Metric]:
    name = str(p["phase"])
    if name not in PHASES:
        raise ValueError(f"unknown phase {name!r}")
    seconds = _number(p["seconds"])
    files, moved = _number(p["files"]), _number(p["bytes"])
    span = max(seconds, 1e-9)
    return [Metric(name, moved / span, UNIT_THROUGHPUT, note),
            Metric(f"{name}:seconds", seconds, UNIT_SECONDS, note),
            Metric(f"{name}:user", _number(p["user"]), UNIT_SECONDS, note),
            Metric(f"{name}:sys", _number(p["sys"]), UNIT_SECONDS, note),
            Metric(f"{name}:files_per_s", files / span, UNIT_OPS, note)]


def _int(value: Any) -> int:
    """A checked plan's integer parameter (0 when absent or not an integer)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


ADAPTER = TreeAdapter  # what the registry loads as tool 'tree'
