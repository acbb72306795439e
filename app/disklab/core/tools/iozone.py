"""Adapter of iozone (3.489 as packaged in Debian's iozone3).

iozone prints three shapes of results on stdout, all in its "kB/sec" (1 kB = 1024 bytes):

- single-process mode (no -t; with or without -a): a table, one row per file size and record
  size, the results under fixed-width columns ("kB reclen write rewrite read reread random read
  ..."); a test that did not run leaves its column blank, so values are placed by column.
- throughput mode (-t N): one block per phase ("Children see throughput for  4 initial writers
  = X kB/sec", Parent sees, Min/Max/Avg per process, Min xfer, and with -+u a CPU line).
- with -R, an "Excel" report of the same figures at the end; in single-process mode it is the
  only place where the CPU figures of -+u appear.

The main output is what DiskLab stores. The Excel report only fills in what the main output
lacks (the CPU figures of single-process mode), and where both give a figure they must agree:
a disagreement means a damaged or spliced file and is a ParseError rather than a silent choice.

Metric names follow DESIGN.md. Throughput mode: NAME is the aggregate "Children see" figure,
NAME:parent, NAME:min_proc, NAME:max_proc, NAME:avg_proc (B/s), NAME:min_xfer (B), NAME:cpu (%).
Every metric carries its own parameters (file_size and record_size in bytes, threads in
throughput mode) read from the output, so that an imported file (params={}) is complete.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from disklab.core.tools._iozone_phases import table_tests, throughput_phases
from disklab.core.tools.base import (
    MAX_FILE,
    Capabilities,
    Command,
    Measured,
    ParamSpec,
    ProgressParser,
    RunTarget,
    StreamFigures,
    ToolAdapter,
    ToolOutput,
    placement,
    placement_metrics,
    stream_directories,
)
from disklab.core.vocab.errors import ParseError, ToolError
from disklab.core.vocab.model import UNIT_OPS, UNIT_PERCENT, UNIT_THROUGHPUT, Metric, ProgressUpdate
from disklab.core.vocab.units import KiB, MiB, format_size

TOOL = "iozone"
MAX_RECORD = 16 * MiB  # iozone.c MAXBUFFERSIZE: it refuses larger records
UNIT_BYTES = "B"

# Plan test name -> iozone's -i number.
TEST_NUMBER: dict[str, int] = {
    "write": 0, "read": 1, "random": 2, "backward": 3, "record_rewrite": 4, "stride": 5,
    "fwrite": 6, "fread": 7, "mixed": 8, "pwrite": 9, "pread": 10,
}
NUMBER_TEST = {n: t for t, n in TEST_NUMBER.items()}
# The table columns each test fills in single-process mode (mixed, pwrite and pread print
# nothing there), and the blocks it prints in throughput mode (no record rewrite there).
TEST_COLUMNS: dict[str, tuple[str, ...]] = {
    "write": ("write", "rewrite"), "read": ("read", "reread"),
    "random": ("random_read", "random_write"), "backward": ("backward_read",),
    "record_rewrite": ("record_rewrite",), "stride": ("stride_read",),
    "fwrite": ("fwrite", "frewrite"), "fread": ("fread", "freread"),
    "mixed": (), "pwrite": (), "pread": (),
}
TEST_PHASES: dict[str, tuple[str, ...]] = {
    "write": ("write", "rewrite"), "read": ("read", "reread"),
    "random": ("random_read", "random_write"), "backward": ("backward_read",),
    "record_rewrite": (), "stride": ("stride_read",), "fwrite": ("fwrite",),
    "fread": ("fread",), "mixed": ("mixed",), "pwrite": ("pwrite",), "pread": ("pread",),
}
# Table headings (the two header lines joined per column) -> metric name.
COLUMNS: dict[str, str] = {
    "write": "write", "rewrite": "rewrite", "read": "read", "reread": "reread",
    "random read": "random_read", "random write": "random_write",
    "bkwd read": "backward_read", "record rewrite": "record_rewrite",
    "stride read": "stride_read", "fwrite": "fwrite", "frewrite": "frewrite",
    "fread": "fread", "freread": "freread",
}
COLUMN_ORDER = tuple(COLUMNS.values())
# "Children see throughput for N <label>" -> metric name, in the order iozone runs them.
THROUGHPUT_LABELS: dict[str, str] = {
    "initial writers": "write", "rewriters": "rewrite", "readers": "read",
    "re-readers": "reread", "reverse readers": "backward_read",
    "stride readers": "stride_read", "random readers": "random_read",
    "mixed workload": "mixed", "random writers": "random_write",
    "pwrite writers": "pwrite", "pread readers": "pread", "fwriters": "fwrite",
    "freaders": "fread",
}
PHASE_ORDER = tuple(THROUGHPUT_LABELS.values())
# -R report titles: single-process mode ("Writer report", "Writer CPU utilization report
# (Zero values should be ignored)") and throughput mode rows ("  Initial write ").
EXCEL_TABLE: dict[str, str] = {
    "writer": "write", "re-writer": "rewrite", "reader": "read", "re-reader": "reread",
    "random read": "random_read", "random write": "random_write",
    "backward read": "backward_read", "record rewrite": "record_rewrite",
    "stride read": "stride_read", "fwrite": "fwrite", "re-fwrite": "frewrite",
    "fread": "fread", "re-fread": "freread",
}
EXCEL_THROUGHPUT: dict[str, str] = {
    "initial write": "write", "rewrite": "rewrite", "read": "read", "re-read": "reread",
    "reverse read": "backward_read", "stride read": "stride_read",
    "random read": "random_read", "mixed workload": "mixed", "random write": "random_write",
    "pwrite": "pwrite", "pread": "pread", "fwrite": "fwrite", "fread": "fread",
}

_EOL = re.compile(r"\r\n|\r|\n")
_N = r"\d{1,18}"  # integers as iozone prints them (bounded: a damaged file cannot overflow)
_F = r"\d{1,18}(?:\.\d{1,9})?"
_KBS = r"(?:kB|KB|Kb|ops)/sec"  # ops/sec: -O
_BANNER = re.compile(r"Iozone: Performance Test of File I/O")
_VERSION = re.compile(r"Version \$Revision: ([\d.]+) \$")
_RECORD = re.compile(rf"^Record Size ({_N}) [kK]B$")
_FILE = re.compile(rf"^File size set to ({_N}) [kK]B$")
_PROCS = re.compile(rf"^Throughput test with ({_N}) process(?:es)?$")
_EACH = re.compile(rf"^Each (?:process|thread) writes a ({_N}) [kK]Byte file in ({_N}) "
                   r"[kK]Byte records$")
_CMDLINE = re.compile(r"^Command line used: (.*)$")
_OUTPUT_IN = re.compile(r"^Output is in (.*?)\s*$")
_TABLE_HEAD = re.compile(r"^\s*kB\s+reclen\s")
_ROW = re.compile(rf"^\s*{_N}(?:\s+{_N})*\s*$")
_CHILDREN = re.compile(rf"^Children see throughput for\s+({_N})\s+(.+?)\s*=\s*({_F})\s+{_KBS}$")
_PARENT = re.compile(rf"^Parent sees throughput for\s+({_N})\s+(.+?)\s*=\s*({_F})\s+{_KBS}$")
_PER_PROC = re.compile(rf"^(Min|Max|Avg) throughput per process\s*=\s*({_F})\s+{_KBS}$")
_XFER = re.compile(rf"^Min xfer\s*=\s*({_F})\s+(?:[kK]B|ops)$")
_OPS_CMDLINE = re.compile(r"^\s*Command line used:.*\s-O(?:\s|$)", re.MULTILINE)
_CPU = re.compile(rf"^CPU [Uu]tilization: Wall time\s+({_F})\s+CPU time\s+({_F})\s+"
                  rf"CPU utilization\s+({_F})\s*%$")
_CHILD_XFER = re.compile(r"^Child\[\d+\] xfer count")
_BLOCK_WORDS = re.compile(r"^(Children see|Parent sees|Min throughput|Max throughput|"
                          r"Avg throughput|Min xfer|CPU [Uu]tilization:)")
_QUOTED_TITLE = re.compile(r'^"([^"]*[A-Za-z][^"]*)"$')
_EXCEL_HEAD = re.compile(rf'^(?:"{_N}"\s*)+$')
_EXCEL_ROW = re.compile(rf'^"({_N})"((?:\s+{_F})*)\s*$')
_EXCEL_TP_ROW = re.compile(rf'^"([^"]*[A-Za-z][^"]*)"((?:\s+{_F})+)\s*$')
_CPU_TITLE = " CPU utilization report (Zero values should be ignored)"
# iozone's own error lines (stdout) and what it prints when it is killed (it then exits 0).
_ERROR = re.compile(r"^(invalid options?\b.*|Can not .*|Error (?:writing|reading) .*|"
                    r"iozone: interrupted.*)$")
_UPPER_HEADINGS = frozenset({"random", "bkwd", "record", "stride"})
_COMPLETE = "iozone test complete."


def sniff(text: str) -> bool:
    """Whole-file detection for `disklab import`: iozone's banner, table or throughput blocks."""
    return bool(
        _BANNER.search(text)
        or re.search(r"^\s*kB\s+reclen\s+write\s+rewrite\s+read", text, re.M)
        or re.search(r"^\s*Children see throughput for\s+\d+ ", text, re.M)
    )


def _lines(text: str) -> list[str]:
    return _EOL.split(text)


def _int_param(params: Mapping[str, Any], key: str) -> int | None:
    v = params.get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _plan_tests(params: Mapping[str, Any]) -> list[str] | None:
    """The plan's tests in iozone's -i order; None when the parameters do not say."""
    tests = params.get("tests")
    if isinstance(tests, str):
        tests = (tests,)
    if not isinstance(tests, list | tuple) or not tests:
        return None
    known = [t for t in tests if t in TEST_NUMBER]
    return sorted(set(known), key=TEST_NUMBER.__getitem__) or None


def _cmdline_tests(cmdline: str) -> list[str] | None:
    """Tests from iozone's 'Command line used:' (-i 0 -i 1, or -i0); all of them without -i."""
    words = cmdline.split()
    numbers: list[int] = []
    for i, w in enumerate(words):
        if w == "-i" and i + 1 < len(words) and words[i + 1].isdigit():
            numbers.append(int(words[i + 1]))
        elif re.fullmatch(r"-i\d+", w):
            numbers.append(int(w[2:]))
    if not numbers:
        return [t for t in TEST_NUMBER if TEST_COLUMNS[t]]  # iozone runs all of them
    return sorted({NUMBER_TEST[n] for n in numbers if n in NUMBER_TEST},
                  key=TEST_NUMBER.__getitem__)


def _auto_rows(params: Mapping[str, Any]) -> list[tuple[int, int]]:
    """(file size, record size) of each row iozone prints, in order.

    Auto mode doubles the record size from -y (4 KiB) up to -q (16 MiB) or the file size, for
    each file size doubled from -n (64 KiB) to -g (512 MiB). For files above 16 MiB, iozone
    starts at 64 KiB records unless -y says otherwise (seen with iozone 3.489; -s pins one file
    size and then keeps the small records). An estimate for progress, not a promise.
    """
    record = _int_param(params, "record_size")
    fixed = _int_param(params, "file_size")
    if not params.get("auto"):
        return [(fixed, record)] if fixed and record else []
    lo_rec = _int_param(params, "min_record_size")
    hi_rec = _int_param(params, "max_record_size") or 16 * MiB
    if fixed:
        files = [fixed]
    else:
        f = _int_param(params, "min_file_size") or 64 * KiB
        top = _int_param(params, "max_file_size") or 512 * MiB
        files = []
        while f <= top and f > 0 and len(files) < 64:
            files.append(f)
            f *= 2
    rows = []
    for f in files:
        r = lo_rec or 4 * KiB
        if lo_rec is None and not fixed and f > 16 * MiB:
            r = 64 * KiB
        while r <= min(hi_rec, f) and r > 0 and len(rows) < 4096:
            rows.append((f, r))
            r *= 2
    return rows


def planned_bytes(params: Mapping[str, Any]) -> int | None:
    """Bytes the whole run moves (each phase reads or writes each file once), for ETA."""
    tests = _plan_tests(params) or ["write", "read"]
    threads = _int_param(params, "threads") or 0
    if threads >= 1 and not params.get("auto"):
        size = _int_param(params, "file_size")
        if not size:
            return None
        return size * threads * sum(len(TEST_PHASES[t]) for t in tests)
    columns = sum(len(TEST_COLUMNS[t]) for t in tests)
    rows = _auto_rows(params)
    return sum(f * columns for f, _r in rows) or None


def _key(m: Metric) -> tuple[str, tuple[tuple[str, Any], ...]]:
    return m.name, tuple(sorted((m.params or {}).items()))


@dataclass
class _Block:
    """One throughput-mode phase being read: values in kB/sec (min_xfer in kB)."""

    line: int
    label: str
    name: str
    threads: int
    values: dict[str, float] = field(default_factory=dict)
    done: bool = False  # its "Min xfer" line was read


@dataclass
class _Columns:
    """The table's columns: (end position of the heading, metric name)."""

    ends: list[tuple[int, str]]


DEGENERATE = ("iozone printed min = max > avg per process: the processes ran too briefly "
              "for it to time them apart (small files); not a spread")
DEGENERATE_ZERO = ("iozone printed a process at 0 and another at the children's total: the "
                   "processes ran too briefly for it to time them apart (small files); not a "
                   "spread")


def _degenerate(values: dict[str, float]) -> str | None:
    """The note for a block whose per-process figures cannot be true: a minimum equal to the
    maximum above the average (iozone 3.x prints that for 4 MiB files), which no set of
    processes has; None for figures that can be."""
    low, high, mean = values["min_proc"], values["max_proc"], values["avg_proc"]
    if high > 0 and abs(high - low) <= 1e-9 * high and mean < high * (1 - 1e-6):
        return DEGENERATE
    total = values.get("", 0.0)
    if low == 0 and high > 0 and abs(high - total) <= 1e-9 * high:
        return DEGENERATE_ZERO  # one process did all the work in iozone's count
    return None


class _Parser:
    """Reads an iozone output line by line. Raises ParseError at the first line that looks like
    iozone's but does not read; what it read before stays in `main`, for parse_partial."""

    def __init__(self, params: Mapping[str, Any], partial: bool = False):
        self.params = params
        self.partial = partial
        self.main: list[tuple[int, Metric]] = []
        self.seen: dict[tuple[str, tuple[tuple[str, Any], ...]], int] = {}
        self.excel: list[tuple[int, Metric]] = []
        self.banner = False
        self.complete = False
        self.file_size: int | None = None
        self.record_size: int | None = None
        self.cmd_tests: list[str] | None = None
        self.columns: _Columns | None = None
        self.block: _Block | None = None
        self.tp_threads: list[int] = []  # process counts in the order of the blocks
        self.excel_mode: str | None = None  # "table" | "throughput"
        self.excel_name: str | None = None
        self.excel_cpu = False
        self.excel_records: list[int] | None = None
        self.prev = ""  # the previous non-blank line, raw (the table's first header line)
        self.cut_line = 0  # number of a last line without its line end (a killed run's)

    # --- helpers -------------------------------------------------------------------------
    def _add(self, number: int, metric: Metric) -> None:
        if metric.value is not None and not math.isfinite(metric.value):
            raise ParseError(TOOL, number, "a finite number")
        key = _key(metric)
        if key in self.seen:
            raise ParseError(TOOL, number, f"each result once ({metric.name} "
                                           f"{dict(metric.params or {})} was on line "
                                           f"{self.seen[key]} already)")
        self.seen[key] = number
        self.main.append((number, metric))

    def _sizes(self) -> dict[str, int]:
        sizes = {}
        fs = self.file_size or _int_param(self.params, "file_size")
        rs = self.record_size or _int_param(self.params, "record_size")
        if fs:
            sizes["file_size"] = fs
        if rs:
            sizes["record_size"] = rs
        return sizes

    def _expected_columns(self) -> list[str] | None:
        tests = _plan_tests(self.params) or self.cmd_tests
        if tests is None:
            return None
        return [c for t in tests for c in TEST_COLUMNS[t]]

    # --- the main loop ---------------------------------------------------------------------
    def run(self, lines: Sequence[str]) -> None:
        if lines and lines[-1].strip():
            self.cut_line = len(lines)
        for number, raw in enumerate(lines, start=1):
            s = raw.strip()
            if not s:
                continue
            self._line(number, raw, s)
            self.prev = raw

    def _line(self, number: int, raw: str, s: str) -> None:
        if s == _COMPLETE:
            self._close_block(number)
            self.complete = True
            self.columns = None
            return
        if s.startswith('"'):
            self._excel_line(number, s)
            return
        if s == "Excel output is below:":
            self.excel_mode = "table"
            return
        if _BANNER.search(s):
            self.banner = True
            return
        if _BLOCK_WORDS.match(s):
            self._block_line(number, s)
            return
        if _TABLE_HEAD.match(raw):
            self._close_block(number)
            self.columns = self._headings(number, self.prev, raw)
            return
        if self.columns is not None and _ROW.match(raw):
            self._row(number, raw)
            return
        if self.columns is not None and s[0].isdigit():
            raise ParseError(TOOL, number, "a table row: file size, record length and results, "
                                           "all whole numbers", s)
        self._header_line(number, s)

    def _header_line(self, number: int, s: str) -> None:
        if m := _RECORD.match(s):
            self.record_size = int(m[1]) * KiB
        elif m := _FILE.match(s):
            self.file_size = int(m[1]) * KiB
        elif m := _EACH.match(s):
            self.file_size, self.record_size = int(m[1]) * KiB, int(m[2]) * KiB
        elif m := _CMDLINE.match(s):
            self.cmd_tests = _cmdline_tests(m[1])
        elif (m := _OUTPUT_IN.match(s)) and m[1].lower() not in ("kbytes/sec",):
            raise ParseError(TOOL, number, "'Output is in kBytes/sec' (DiskLab reads iozone's "
                                           "kB/sec results, not those of -O or -N)", s)
        elif _PROCS.match(s) or _CHILD_XFER.match(s):
            pass
        # banner text, settings and notes ("Timer resolution is poor ...") carry no figures

    # --- single-process table ----------------------------------------------------------------
    def _headings(self, number: int, first: str, second: str) -> _Columns:
        """Column names from the two header lines: 'random' over 'read' is random_read."""
        upper = [(m.end(), m.group()) for m in re.finditer(r"\S+", first)]
        if not {w for _e, w in upper} <= _UPPER_HEADINGS:
            upper = []  # not the first header line (a damaged file): read the second alone
        ends: list[tuple[int, str]] = []
        for m in re.finditer(r"\S+", second):
            word = m.group()
            if word in ("kB", "reclen"):
                continue
            over = [w for e, w in upper if abs(e - m.end()) <= 2]
            heading = f"{over[0]} {word}" if over else word
            if heading not in COLUMNS:
                raise ParseError(TOOL, number, f"iozone's table headings ({', '.join(COLUMNS)})",
                                 heading)
            ends.append((m.end(), COLUMNS[heading]))
        return _Columns(ends)

    def _row(self, number: int, raw: str) -> None:
        assert self.columns is not None
        tokens = [(m.group(), m.end()) for m in re.finditer(r"\S+", raw)]
        if len(tokens) < 2:
            raise ParseError(TOOL, number, "a row 'file size in kB, record length in kB, "
                                           "results'", raw.strip())
        kb, reclen = int(tokens[0][0]), int(tokens[1][0])
        if kb <= 0 or reclen <= 0:
            raise ParseError(TOOL, number, "a file size and record length above 0", raw.strip())
        values = tokens[2:]
        if self.partial and number == self.cut_line:
            values = values[:-1]  # the output stops inside this row: its last number may be cut
        names = self._place(values)
        if names is None:
            names = self._in_order(number, raw, len(values))
        params = {"file_size": kb * KiB, "record_size": reclen * KiB}
        for name, (value, _end) in zip(names, values, strict=True):
            self._add(number, Metric(name, int(value) * KiB, UNIT_THROUGHPUT, params=params))

    def _place(self, values: list[tuple[str, int]]) -> list[str] | None:
        """Each value under the heading whose right edge it shares (iozone right-aligns both;
        under "read" and "random read" the values end one character further right); None when
        a value fits no column."""
        assert self.columns is not None
        names: list[str] = []
        last = -1
        for _value, end in values:
            near = [(end - e, i) for i, (e, _n) in enumerate(self.columns.ends)
                    if 0 <= end - e <= 1]
            if not near:
                return None
            _d, i = min(near)
            if i <= last:
                return None
            names.append(self.columns.ends[i][1])
            last = i
        return names

    def _in_order(self, number: int, raw: str, count: int) -> list[str]:
        """The values do not sit under the headings (a re-spaced or edited file): place them in
        the order of the tests that ran (the plan's, else the output's command line), which is
        the order of the columns."""
        expected = self._expected_columns()
        if expected is None or count > len(expected):
            raise ParseError(TOOL, number, "results under the table's column headings",
                             raw.strip())
        return expected[:count]

    # --- throughput mode ---------------------------------------------------------------------
    def _close_block(self, number: int | None) -> None:
        b = self.block
        if b is not None and not b.done and not self.partial:
            raise ParseError(TOOL, number, f"the 'Min xfer' line that ends the block of "
                                           f"{b.threads} {b.label} (line {b.line})")
        self.block = None

    def _block_line(self, number: int, s: str) -> None:
        if m := _CHILDREN.match(s):
            self._close_block(number)
            label = " ".join(m[2].split())
            name = THROUGHPUT_LABELS.get(label)
            if name is None:
                raise ParseError(TOOL, number, "a test iozone names "
                                               f"({', '.join(THROUGHPUT_LABELS)})", label)
            threads = int(m[1])
            if threads < 1:
                raise ParseError(TOOL, number, "a number of processes above 0", s)
            self.block = _Block(number, label, name, threads, {"": float(m[3])})
            if threads not in self.tp_threads:
                self.tp_threads.append(threads)
            return
        b = self.block
        if b is None:
            raise ParseError(TOOL, number, "a 'Children see throughput for N ...' line first", s)
        if m := _PARENT.match(s):
            if int(m[1]) != b.threads or " ".join(m[2].split()) != b.label:
                raise ParseError(TOOL, number, f"'Parent sees throughput for {b.threads} "
                                               f"{b.label}'", s)
            self._set(number, b, "parent", float(m[3]), s)
        elif m := _PER_PROC.match(s):
            self._set(number, b, f"{m[1].lower()}_proc", float(m[2]), s)
        elif m := _XFER.match(s):
            self._set(number, b, "min_xfer", float(m[1]), s)
            self._finish_block(number, b)
        elif m := _CPU.match(s):
            if not b.done:
                raise ParseError(TOOL, number, "the CPU line after 'Min xfer'", s)
            self._set(number, b, "cpu", float(m[3]), s)
            if self.partial and b.values[""] == 0:
                return
            self._add(number, Metric(f"{b.name}:cpu", float(m[3]), UNIT_PERCENT,
                                     params=self._tp_params(b)))
        else:
            raise ParseError(TOOL, number, "a line of iozone's throughput block "
                                           "('... = N kB/sec')", s)

    def _set(self, number: int, b: _Block, key: str, value: float, s: str) -> None:
        if key in b.values or (b.done and key != "cpu"):
            raise ParseError(TOOL, number, f"one '{key}' line per block", s)
        b.values[key] = value

    def _tp_params(self, b: _Block) -> dict[str, int]:
        return {"threads": b.threads, **self._sizes()}

    def _finish_block(self, number: int, b: _Block) -> None:
        missing = [k for k in ("parent", "min_proc", "max_proc", "avg_proc") if k not in b.values]
        if missing:
            raise ParseError(TOOL, number, f"the block's {', '.join(missing)} line(s) before "
                                           "'Min xfer'")
        b.done = True
        if self.partial and b.values[""] == 0:
            return  # every child failed (e.g. ENOSPC): 0 is not a measurement
        params = self._tp_params(b)
        note = _degenerate(b.values)
        for key, suffix in (("", ""), ("parent", ":parent"), ("min_proc", ":min_proc"),
                            ("max_proc", ":max_proc"), ("avg_proc", ":avg_proc")):
            self._add(number, Metric(b.name + suffix, b.values[key] * KiB, UNIT_THROUGHPUT,
                                     note=note if key.endswith("_proc") else None,
                                     params=params))
        self._add(number, Metric(f"{b.name}:min_xfer", b.values["min_xfer"] * KiB, UNIT_BYTES,
                                 params=params))

    # --- the -R report -----------------------------------------------------------------------
    def _excel_line(self, number: int, s: str) -> None:
        if m := _QUOTED_TITLE.match(s):
            self._excel_title(number, m[1].strip())
        elif _EXCEL_HEAD.match(s):
            if self.excel_mode != "table" or self.excel_name is None:
                raise ParseError(TOOL, number, "an Excel report title before its record sizes",
                                 s)
            self.excel_records = [int(x) * KiB for x in re.findall(r"\d+", s)]
        elif self.excel_mode == "table" and (m := _EXCEL_ROW.match(s)):
            self._excel_row(number, int(m[1]) * KiB, m[2].split(), s)
        elif self.excel_mode == "throughput" and (m := _EXCEL_TP_ROW.match(s)):
            self._excel_tp_row(number, " ".join(m[1].split()).lower(), m[2].split(), s)
        else:
            raise ParseError(TOOL, number, "a line of iozone's Excel report", s)

    def _excel_title(self, number: int, title: str) -> None:
        low = title.lower()
        if low.startswith("throughput report"):
            self.excel_mode, self.excel_cpu = "throughput", False
        elif low.startswith("cpu utilization report y-axis"):
            self.excel_mode, self.excel_cpu = "throughput", True
        elif low.startswith(("record size =", "output is in")):
            if low.startswith("output is in") and low not in ("output is in kbytes/sec",
                                                               "output is in ops/sec",
                                                               "output is in cpu%"):
                raise ParseError(TOOL, number, "'Output is in kBytes/sec'", title)
        elif self.excel_mode == "table":
            cpu = title.endswith(_CPU_TITLE)
            base = title.removesuffix(_CPU_TITLE) if cpu else title.removesuffix(" report")
            name = EXCEL_TABLE.get(base.lower())
            if name is None:
                raise ParseError(TOOL, number, "an iozone Excel report title ('Writer report', "
                                               "'Reader report', ...)", title)
            self.excel_name, self.excel_cpu, self.excel_records = name, cpu, None
        else:
            raise ParseError(TOOL, number, "'Excel output is below:' before an Excel report",
                             title)

    def _excel_row(self, number: int, file_size: int, values: list[str], s: str) -> None:
        if self.excel_name is None or self.excel_records is None:
            raise ParseError(TOOL, number, "an Excel report title and its record sizes first", s)
        if len(values) > len(self.excel_records):
            raise ParseError(TOOL, number, f"at most {len(self.excel_records)} values, one per "
                                           "record size", s)
        for record, text in zip(self.excel_records, values, strict=False):
            params = {"file_size": file_size, "record_size": record}
            value = float(text)
            if self.excel_cpu:
                metric = (Metric(f"{self.excel_name}:cpu", value, UNIT_PERCENT, params=params)
                          if value else
                          Metric(f"{self.excel_name}:cpu", None, UNIT_PERCENT,
                                 "iozone printed 0: not measured", params))
            else:
                metric = Metric(self.excel_name, value * KiB, UNIT_THROUGHPUT, params=params)
            self.excel.append((number, metric))

    def _excel_tp_row(self, number: int, label: str, values: list[str], s: str) -> None:
        name = EXCEL_THROUGHPUT.get(label)
        if name is None:
            raise ParseError(TOOL, number, "a test of iozone's throughput report "
                                           f"({', '.join(EXCEL_THROUGHPUT)})", s)
        if len(values) != len(self.tp_threads):
            return  # cannot tell which process count each value belongs to: main output rules
        sizes = self._sizes()
        for threads, text in zip(self.tp_threads, values, strict=True):
            params = {"threads": threads, **sizes}
            if self.excel_cpu:
                metric = Metric(f"{name}:cpu", float(text), UNIT_PERCENT, params=params)
            else:
                metric = Metric(name, float(text) * KiB, UNIT_THROUGHPUT, params=params)
            self.excel.append((number, metric))

    # --- the end -----------------------------------------------------------------------------
    def merged(self) -> list[Metric]:
        """Main output first; the Excel report adds what it lacks and must agree with the rest."""
        index = {_key(m): m for _n, m in self.main}
        out = [m for _n, m in self.main]
        for number, m in self.excel:
            main = index.get(_key(m))
            if main is None:
                index[_key(m)] = m
                out.append(m)
            elif main.value is not None and m.value is not None:
                scale = KiB if m.unit == UNIT_THROUGHPUT else 1
                if abs(main.value - m.value) > 0.011 * scale + 1e-9 * abs(main.value):
                    raise ParseError(TOOL, number, f"the {m.name} figure of the main output "
                                                   f"({main.value / scale:g})",
                                     f"{m.value / scale:g}")
        return out

    def finish(self) -> list[Metric]:
        self._close_block(None)
        if not self.banner and not self.main:
            raise ParseError(TOOL, None, "iozone's output: its banner 'Iozone: Performance Test "
                                         "of File I/O', a result table or 'Children see "
                                         "throughput' blocks")
        if not self.complete:
            raise ParseError(TOOL, None, f"the closing line '{_COMPLETE}' (the output is cut "
                                         "short)")
        metrics = self.merged()
        if not metrics:
            raise ParseError(TOOL, None, "results: a table row or a 'Children see throughput' "
                                         "block")
        return metrics


def _failure(output: ToolOutput) -> str | None:
    """iozone's own error message if the run failed, else None. iozone prints its errors on
    stdout (perror's half on stderr) and exits 0 when killed, saying 'iozone: interrupted'."""
    lines = [s.strip() for s in _lines(output.stdout)]
    errors = [s for s in lines if _ERROR.match(s)]
    errors += [s.strip() for s in _lines(output.stderr) if s.strip()]
    failed = bool(errors and any(_ERROR.match(s) for s in lines)) or output.exit_status not in (
        0, None)
    if not failed:
        return None
    unique = list(dict.fromkeys(errors))[:4]
    if not unique:
        return f"iozone exited with status {output.exit_status}"
    return "; ".join(unique)


class _IozoneProgress(ProgressParser):
    """Which phase iozone is in, from what it has printed: it has no progress of its own and
    prints each result when a test (pair) ends, with long silences in between."""

    def __init__(self, params: Mapping[str, Any]):
        tests = _plan_tests(params) or ["write", "read"]
        self.threads = _int_param(params, "threads") or 0
        self.throughput = self.threads >= 1 and not params.get("auto")
        self.phases = [p for p in PHASE_ORDER if any(p in TEST_PHASES[t] for t in tests)]
        self.file_size = _int_param(params, "file_size")
        self.rows = _auto_rows(params)
        self.total = planned_bytes(params)
        self.done = 0
        self.row_index = 0

    def _row_phase(self, index: int) -> str | None:
        if index < len(self.rows):
            f, r = self.rows[index]
            return f"file {format_size(f)}, record {format_size(r)}"
        return None

    def _update(self, phase: str | None, message: str, rate: float | None = None,
                known: bool = True) -> ProgressUpdate:
        return ProgressUpdate(done_bytes=self.done if known else None, total_bytes=self.total,
                              phase=phase, message=message, rate=rate)

    def feed(self, stream: str, line: str) -> ProgressUpdate | None:
        s = line.strip()
        if not s:
            return None
        if stream == "stderr" or _ERROR.match(s):
            return ProgressUpdate(phase="error", message=s)
        if s == _COMPLETE:
            self.done = self.total or self.done
            return self._update("done", s)
        if s == "Excel output is below:" or s.startswith('"Throughput report'):
            return self._update("report", s)
        if _PROCS.match(s):
            return self._update(self.phases[0] if self.phases else None, s)
        if m := _CHILDREN.match(s):
            name = THROUGHPUT_LABELS.get(" ".join(m[2].split()))
            if self.file_size:
                self.done += int(m[1]) * self.file_size
            after = self.phases.index(name) + 1 if name in self.phases else len(self.phases)
            phase = self.phases[after] if after < len(self.phases) else "report"
            return self._update(phase, s, float(m[3]) * KiB, known=bool(self.file_size))
        if _TABLE_HEAD.match(line):
            return self._update(self._row_phase(0), s)
        if _ROW.match(line):
            tokens = s.split()
            if len(tokens) < 3:
                return None  # the row's start; its results come when the tests end
            self.done += int(tokens[0]) * KiB * (len(tokens) - 2)
            self.row_index += 1
            return self._update(self._row_phase(self.row_index) or "finishing",
                                " ".join(tokens))
        return None


class IozoneAdapter(ToolAdapter):
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
        """Each test's interval (_iozone_phases): throughput mode's phases, single-process
        mode's tests walked back from their row by their own times."""
        if _int_param(params, "threads") and not params.get("auto"):
            return throughput_phases(lines, THROUGHPUT_LABELS, _int_param(params, "file_size"))
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
        return _int_param(params, "file_size") or _int_param(params, "max_file_size")

    def space_bytes(self, params: Mapping[str, Any]) -> int | None:
        """One file per process with threads (-t N -F), else one file."""
        size = self.file_size(params)
        return size * max(_int_param(params, "threads") or 1, 1) if size else None

    def buffer_bytes(self, params: Mapping[str, Any]) -> int | None:
        record = _int_param(params, "record_size") or _int_param(params, "max_record_size")
        return record * max(_int_param(params, "threads") or 1, 1) if record else None

    def check(self, params: Mapping[str, Any]) -> list[tuple[str, str]]:
        problems: list[tuple[str, str]] = []
        auto = bool(params.get("auto"))
        threads = _int_param(params, "threads") or 0
        tests = _plan_tests(params) or []
        file_size = _int_param(params, "file_size")
        record = _int_param(params, "record_size")
        for key in ("record_size", "file_size", "min_file_size", "max_file_size",
                    "min_record_size", "max_record_size"):
            v = _int_param(params, key)
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
            a, b = _int_param(params, lo), _int_param(params, hi)
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

        threads = _int_param(params, "threads") or 0
        auto = bool(params.get("auto"))
        argv = ["iozone"]
        if auto:
            argv.append("-a")
            for key, flag in (("file_size", "-s"), ("min_file_size", "-n"),
                              ("max_file_size", "-g"), ("min_record_size", "-y"),
                              ("max_record_size", "-q")):
                if (v := _int_param(params, key)) is not None:
                    argv += [flag, kb(v)]
        else:
            argv += ["-r", kb(int(params["record_size"])), "-s", kb(int(params["file_size"]))]
        for test in _plan_tests(params) or ["write", "read"]:
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
    def _parse(output: ToolOutput, params: Mapping[str, Any], partial: bool) -> _Parser:
        parser = _Parser(params, partial=partial)
        try:
            parser.run(_lines(output.stdout))
        except (ValueError, OverflowError, ArithmeticError) as e:  # a damaged number
            raise ParseError(TOOL, None, "numbers as iozone prints them", str(e)) from e
        return parser

    def parse_result(self, output: ToolOutput, params: Mapping[str, Any]) -> list[Metric]:
        failure = _failure(output)
        if failure is not None:
            raise ToolError(failure if failure.startswith("iozone") else f"iozone: {failure}")
        metrics = _as_ops(self._parse(output, params, partial=False).finish(), params, output)
        return placed_metrics(metrics, output.stdout, params) if placement(params) else metrics

    def parse_partial(self, output: ToolOutput, params: Mapping[str, Any]) -> list[Metric]:
        """Every complete result printed before iozone died, flagged partial; never raises."""
        try:
            parser = _Parser(params, partial=True)
            # keep what was read before the line that did not fit
            with contextlib.suppress(ParseError, ValueError, OverflowError, ArithmeticError):
                parser.run(_lines(output.stdout))
            return _as_ops([_flag(m) for _n, m in parser.main], params, output)
        except Exception:
            return []

    def progress_parser(self, params: Mapping[str, Any]) -> ProgressParser:
        return _IozoneProgress(params)

    def sniff(self, text: str) -> bool:
        return sniff(text)


def _as_ops(metrics: list[Metric], params: Mapping[str, Any], output: ToolOutput
            ) -> list[Metric]:
    """Metrics of an -O run (asked for, or read from an imported file's command line): iozone
    printed operations per second where it prints kB/s, so each figure is renamed NAME:iops
    (NAME:parent_iops, NAME:min_proc_iops, ...) in op/s, and min_xfer counts operations."""
    if not (params.get("ops") or _OPS_CMDLINE.search(output.stdout or "")):
        return metrics
    out = []
    for m in metrics:
        base, _, suffix = m.name.partition(":")
        value = None if m.value is None else m.value / KiB
        if m.unit == UNIT_THROUGHPUT:
            name = f"{base}:{suffix + '_' if suffix else ''}iops"
            out.append(Metric(name, value, UNIT_OPS, m.note, m.params))
        elif m.unit == UNIT_BYTES and suffix == "min_xfer":
            out.append(Metric(f"{base}:min_xfer_ops", value, "op", m.note, m.params))
        else:
            out.append(m)
    return out


def _flag(m: Metric) -> Metric:
    return Metric(m.name, m.value, m.unit, "partial" if not m.note else f"partial: {m.note}",
                  m.params)



_CHILD = re.compile(rf"^Child\[({_N})\] xfer count\s*=\s*({_F})\s+[kK]B,\s*"
                    rf"Throughput\s*=\s*({_F})\s+{_KBS}")


def _children(stdout: str, names: list[str]) -> list[tuple[str, dict[str, Any], list[
        StreamFigures]]]:
    """(metric name, block parameters, each child's figures) of every throughput block with
    -C's Child[i] lines: child i ran on the target named i-th in `on` (its -F file)."""
    blocks: list[tuple[str, dict[str, Any], list[StreamFigures]]] = []
    for number, raw in enumerate(_lines(stdout), start=1):
        s = raw.strip()
        if m := _CHILDREN.match(s):
            name = THROUGHPUT_LABELS.get(" ".join(m[2].split()))
            if name is None:
                raise ParseError(TOOL, number, "a test iozone names", m[2])
            blocks.append((name, {"threads": int(m[1])}, []))
        elif (m := _CHILD.match(s)) and blocks:
            index = int(m[1])
            if index >= len(names):
                raise ParseError(TOOL, number, f"a child below {len(names)} (one per target "
                                               "placed)", s)
            xfer, rate = float(m[2]) * KiB, float(m[3]) * KiB
            blocks[-1][2].append(StreamFigures(names[index], xfer, 0.0,
                                               xfer / rate if rate > 0 else 0.0))
    return blocks


def placed_metrics(metrics: list[Metric], stdout: str, params: Mapping[str, Any]
                   ) -> list[Metric]:
    """A placed case (several targets): each phase's per-target rows and its "all" row (every
    byte over the slowest child's time: iozone's children start together behind its own
    barrier), and iozone's own figures as the aggregate's (its "Children see" sum as
    NAME:children). ParseError when a block lacks its Child lines."""
    names = placement(params)
    out: list[Metric] = []
    by_phase = {}
    for name, block, streams in _children(stdout, names):
        if len(streams) != len(names):
            raise ParseError(TOOL, None, f"{len(names)} 'Child[i] xfer count' lines after the "
                                         f"{name} block (iozone -C)", str(len(streams)))
        by_phase[name] = (block, streams)
    for m in metrics:
        extra = dict(m.params or {})
        if m.name in by_phase:
            _block, streams = by_phase[m.name]
            out += placement_metrics(m.name, streams, UNIT_THROUGHPUT, m.note, extra)
            out.append(Metric(f"{m.name}:children", m.value, m.unit, m.note,
                              {**extra, "target": "all"}))
        else:
            out.append(Metric(m.name, m.value, m.unit, m.note, {**extra, "target": "all"}))
    return out


ADAPTER = IozoneAdapter  # what the registry loads as tool 'iozone'
