"""Adapter of iozone (3.489 as packaged in Debian's iozone3): its parameters and checks, its
argv, and its output read by the modules of this package.

iozone prints three shapes of results on stdout, all in its "kB/sec" (1 kB = 1024 bytes), each
read by a module of its own: single-process mode's table (`single`, auto mode's too),
throughput mode's blocks (`throughput`, with a placed case's per-child lines) and the -R
report (`excel`), one line at a time by `output`'s Parser. `tables` holds iozone's names and
numbers, `params` what a case's parameters say about the run, `progress` the live progress,
`phases` when each figure was measured (for the verdict of what limited it).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from disklab.core.tools.base import (
    MAX_FILE,
    Capabilities,
    Command,
    Measured,
    ParamSpec,
    ProgressParser,
    RunTarget,
    ToolAdapter,
    ToolOutput,
    placement,
    stream_directories,
)
from disklab.core.tools.iozone.output import Parser, as_ops, flag_partial, run_failure
from disklab.core.tools.iozone.params import int_param, plan_tests, planned_bytes
from disklab.core.tools.iozone.phases import table_tests, throughput_phases
from disklab.core.tools.iozone.progress import IozoneProgress
from disklab.core.tools.iozone.tables import (
    COLUMN_ORDER,
    MAX_RECORD,
    PHASE_ORDER,
    TEST_COLUMNS,
    TEST_NUMBER,
    THROUGHPUT_LABELS,
    TOOL,
    sniff,
    split_lines,
)
from disklab.core.tools.iozone.throughput import placed_metrics
from disklab.core.vocab.errors import ParseError, ToolError
from disklab.core.vocab.model import Metric
from disklab.core.vocab.units import KiB, MiB, format_size

__all__ = ["ADAPTER", "IozoneAdapter", "planned_bytes", "sniff"]

_VERSION = re.compile(r"Version \$Revision: ([\d.]+) \$")


class IozoneAdapter(ToolAdapter):
    """iozone's facts, argv and parsers, for the registry (tool 'iozone')."""

    name = "iozone"
    title = "IOzone filesystem benchmark"
    executable = "iozone"
    package = "iozone3"
    capabilities = Capabilities(live_progress=False, direct_io=True,
                                tests=tuple(dict.fromkeys(COLUMN_ORDER + PHASE_ORDER)),
                                placeable=True, importable=True)
    rank = 2
    params: Mapping[str, ParamSpec] = {
        "tests": ParamSpec("choice", ("write", "read"), choices=tuple(TEST_NUMBER), multi=True,
                           help="-i: write (write+rewrite), read (read+reread), random, "
                                "backward, record_rewrite, stride, fwrite, fread, mixed, "
                                "pwrite, pread"),
        "record_size": ParamSpec("size", 4 * MiB, minimum=KiB, maximum=MAX_RECORD,
                                 help="-r (not with auto: use min/max_record_size)"),
        "file_size": ParamSpec("size", None, minimum=KiB, maximum=MAX_FILE,
                               help="-s, per process; needed unless auto"),
        "threads": ParamSpec("int", 1, minimum=0, maximum=256,
                             help="-t N -F (one file per process); 0: one process, no -t"),
        "sync": ParamSpec("bool", False, help="-o: O_SYNC writes"),
        "fsync": ParamSpec("bool", False, help="-e: fsync/fflush inside the timing"),
        "direct": ParamSpec("bool", False, help="-I: O_DIRECT"),
        "excel": ParamSpec("bool", True, help="-R: the Excel-style report at the end"),
        "ops": ParamSpec("bool", False, help="-O: operations per second instead of kB/s "
                                             "(metrics NAME:iops, NAME:min_proc_iops, ...)"),
        "cpu": ParamSpec("bool", False, help="-+u: CPU utilisation"),
        "include_close": ParamSpec("bool", False, help="-c: close() inside the timing"),
        "keep_files": ParamSpec("bool", False, help="-w: iozone does not unlink its files"),
        "auto": ParamSpec("bool", False, help="-a: every file size x record size"),
        "min_file_size": ParamSpec("size", None, minimum=KiB, maximum=MAX_FILE,
                                   help="-n (auto)"),
        "max_file_size": ParamSpec("size", None, minimum=KiB, maximum=MAX_FILE,
                                   help="-g (auto)"),
        "max_record_size": ParamSpec("size", None, minimum=KiB, maximum=MAX_RECORD,
                                     help="-q (auto)"),
        "min_record_size": ParamSpec("size", None, minimum=KiB, maximum=MAX_RECORD,
                                     help="-y (auto)"),
    }

    def measured(self, lines: Sequence[tuple[float, str, str]], params: Mapping[str, Any]
                 ) -> list[Measured] | None:
        """Each test's interval (phases): throughput mode's phases, single-process
        mode's tests walked back from their row by their own times."""
        if int_param(params, "threads") and not params.get("auto"):
            return throughput_phases(lines, THROUGHPUT_LABELS, int_param(params, "file_size"))
        return table_tests(lines, COLUMN_ORDER, lambda out: self.parse_partial(out, params))

    def version_argv(self) -> tuple[str, ...]:
        return ("iozone", "-v")

    def parse_version(self, text: str) -> str | None:
        m = _VERSION.search(text)
        return m[1] if m else super().parse_version(text)

    def reads(self, params: Mapping[str, Any]) -> bool:
        tests = params.get("tests") or ("write", "read")
        return any(t != "write" for t in ((tests,) if isinstance(tests, str) else tests))

    def file_size(self, params: Mapping[str, Any]) -> int | None:
        return int_param(params, "file_size") or int_param(params, "max_file_size")

    def space_bytes(self, params: Mapping[str, Any]) -> int | None:
        """One file per process with threads (-t N -F), else one file."""
        size = self.file_size(params)
        return size * max(int_param(params, "threads") or 1, 1) if size else None

    def buffer_bytes(self, params: Mapping[str, Any]) -> int | None:
        record = int_param(params, "record_size") or int_param(params, "max_record_size")
        return record * max(int_param(params, "threads") or 1, 1) if record else None

    def check(self, params: Mapping[str, Any]) -> list[tuple[str, str]]:
        problems: list[tuple[str, str]] = []
        auto = bool(params.get("auto"))
        threads = int_param(params, "threads") or 0
        tests = plan_tests(params) or []
        file_size = int_param(params, "file_size")
        record = int_param(params, "record_size")
        for key in ("record_size", "file_size", "min_file_size", "max_file_size",
                    "min_record_size", "max_record_size"):
            v = int_param(params, key)
            if v is not None and v % KiB:
                problems.append((key, f"{v} is not a whole number of KiB (iozone takes kB)"))
        if not auto and file_size is None:
            problems.append(("file_size", "missing: iozone needs file_size (-s) unless "
                                          "auto = true"))
        if not auto and file_size and record and record > file_size:
            problems.append(("record_size", f"{format_size(record)} is above file_size "
                                            f"{format_size(file_size)}"))
        if auto and threads:
            problems.append(("threads", "auto mode runs one process (iozone: 'Can not mix "
                                        "throughput mode and auto-mode flags'): set threads = 0"))
        ranges = [k for k in ("min_file_size", "max_file_size", "min_record_size",
                              "max_record_size") if params.get(k) is not None]
        if ranges and not auto:
            problems.append((ranges[0], "applies to auto mode only (auto = true)"))
        if auto and file_size and any(k in ranges for k in ("min_file_size", "max_file_size")):
            problems.append(("file_size", "give file_size or min/max_file_size, not both"))
        for lo, hi in (("min_file_size", "max_file_size"), ("min_record_size",
                                                            "max_record_size")):
            a, b = int_param(params, lo), int_param(params, hi)
            if a and b and a > b:
                problems.append((lo, f"{format_size(a)} is above {hi} {format_size(b)}"))
        needs_file = [t for t in tests if t not in ("write", "fwrite")]
        if needs_file and "write" not in tests:
            problems.append(("tests", f"{needs_file[0]} reads the file that 'write' (-i 0) "
                                      "lays out: add 'write'"))
        if threads == 0 or auto:
            only_tp = [t for t in tests if not TEST_COLUMNS[t]]
            if only_tp:
                problems.append(("tests", f"{', '.join(only_tp)} give figures only in "
                                          "throughput mode (threads >= 1)"))
        elif "record_rewrite" in tests:
            problems.append(("tests", "record_rewrite gives figures only with threads = 0 "
                                      "(iozone has no throughput-mode record rewrite)"))
        return problems

    def placed_params(self, params: Mapping[str, Any]) -> Mapping[str, Any]:
        """Placed: one process per stream of `on` (build_command's -t), so threads is that."""
        streams = placement(params)
        if not streams or params.get("auto"):
            return params
        return {**params, "threads": len(streams)}

    def build_command(self, params: Mapping[str, Any], target: RunTarget) -> Command:
        def kb(n: int) -> str:
            return f"{n // KiB}k"

        threads = int_param(params, "threads") or 0
        auto = bool(params.get("auto"))
        argv = ["iozone"]
        if auto:
            argv.append("-a")
            for key, flag in (("file_size", "-s"), ("min_file_size", "-n"),
                              ("max_file_size", "-g"), ("min_record_size", "-y"),
                              ("max_record_size", "-q")):
                if (v := int_param(params, key)) is not None:
                    argv += [flag, kb(v)]
        else:
            argv += ["-r", kb(int(params["record_size"])), "-s", kb(int(params["file_size"]))]
        for test in plan_tests(params) or ["write", "read"]:
            argv += ["-i", str(TEST_NUMBER[test])]
        for key, flag in (("sync", "-o"), ("fsync", "-e"), ("direct", "-I"),
                          ("include_close", "-c"), ("cpu", "-+u"), ("keep_files", "-w"),
                          ("excel", "-R"), ("ops", "-O")):
            if params.get(key, self.params[key].default):
                argv.append(flag)
        base = target.file()
        placed = stream_directories(params, target)
        if placed and not auto:
            # several targets: one process per name of `on`, its file on that target's
            # filesystem (the RAID study's -F spread); -C prints each child's bytes and rate
            # (the per-target figures), -x lets every child finish its file (no stonewall),
            # so that the aggregate is every byte over the wall time
            files = tuple(target.file(f"-{i}.ioz", directory)
                          for i, (_name, directory) in enumerate(placed))
            argv += ["-C", "-x", "-t", str(len(files)), "-F", *files]
            return Command(tuple(argv), cwd=target.directory, files=files,
                           planned_bytes=planned_bytes({**params, "threads": len(files)}))
        if threads >= 1 and not auto:
            files = tuple(f"{base}-{i}.ioz" for i in range(threads))
            argv += ["-t", str(threads), "-F", *files]  # -F takes every word after it: last
        else:
            files = (f"{base}.ioz",)
            argv += ["-f", files[0]]
        return Command(tuple(argv), cwd=target.directory, files=files,
                       planned_bytes=planned_bytes(params))

    @staticmethod
    def _parse(output: ToolOutput, params: Mapping[str, Any], partial: bool) -> Parser:
        parser = Parser(params, partial=partial)
        try:
            parser.run(split_lines(output.stdout))
        except (ValueError, OverflowError, ArithmeticError) as e:  # a damaged number
            raise ParseError(TOOL, None, "numbers as iozone prints them", str(e)) from e
        return parser

    def parse_result(self, output: ToolOutput, params: Mapping[str, Any]) -> list[Metric]:
        failure = run_failure(output)
        if failure is not None:
            raise ToolError(failure if failure.startswith("iozone") else f"iozone: {failure}")
        metrics = as_ops(self._parse(output, params, partial=False).finish(), params, output)
        return placed_metrics(metrics, output.stdout, params) if placement(params) else metrics

    def parse_partial(self, output: ToolOutput, params: Mapping[str, Any]) -> list[Metric]:
        """Every complete result printed before iozone died, flagged partial; never raises."""
        try:
            parser = Parser(params, partial=True)
            # keep what was read before the line that did not fit
            with contextlib.suppress(ParseError, ValueError, OverflowError, ArithmeticError):
                parser.run(split_lines(output.stdout))
            return as_ops([flag_partial(m) for _n, m in parser.main], params, output)
        except Exception:
            return []

    def progress_parser(self, params: Mapping[str, Any]) -> ProgressParser:
        return IozoneProgress(params)

    def sniff(self, text: str) -> bool:
        return sniff(text)

ADAPTER = IozoneAdapter  # what the registry loads as tool 'iozone'
