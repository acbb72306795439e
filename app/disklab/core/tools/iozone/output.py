"""Reading an iozone output whole: each line to the reader of its shape (single-process table,
throughput blocks, -R report), iozone's own error lines, and -O's operations per second.

Every metric carries its own parameters (file_size and record_size in bytes, threads in
throughput mode) read from the output, so that an imported file (params={}) is complete.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from disklab.core.tools.base import ToolOutput
from disklab.core.tools.iozone.excel import ExcelReport
from disklab.core.tools.iozone.params import cmdline_tests
from disklab.core.tools.iozone.single import SingleTable
from disklab.core.tools.iozone.tables import (
    BANNER,
    COMPLETE,
    ERROR,
    EXCEL_BELOW,
    PROCS,
    ROW,
    TABLE_HEAD,
    TOOL,
    UNIT_BYTES,
    N,
    split_lines,
)
from disklab.core.tools.iozone.throughput import BLOCK_WORDS, ThroughputBlocks
from disklab.core.vocab.errors import ParseError
from disklab.core.vocab.model import UNIT_OPS, UNIT_THROUGHPUT, Metric
from disklab.core.vocab.units import KiB

_RECORD = re.compile(rf"^Record Size ({N}) [kK]B$")
_FILE = re.compile(rf"^File size set to ({N}) [kK]B$")
_EACH = re.compile(rf"^Each (?:process|thread) writes a ({N}) [kK]Byte file in ({N}) "
                   r"[kK]Byte records$")
_CMDLINE = re.compile(r"^Command line used: (.*)$")
_OUTPUT_IN = re.compile(r"^Output is in (.*?)\s*$")
_OPS_CMDLINE = re.compile(r"^\s*Command line used:.*\s-O(?:\s|$)", re.MULTILINE)
_CHILD_XFER = re.compile(r"^Child\[\d+\] xfer count")


class Parser(SingleTable, ThroughputBlocks, ExcelReport):
    """Reads an iozone output line by line, each line to the reader of its shape. Raises
    ParseError at the first line that looks like iozone's but does not read; what it read
    before stays in `main`, for parse_partial."""

    def __init__(self, params: Mapping[str, Any], partial: bool = False):
        super().__init__(params, partial)
        self.banner = False
        self.complete = False
        self.prev = ""  # the previous non-blank line, raw (the table's first header line)

    def run(self, lines: Sequence[str]) -> None:
        """Read every line (a last one without its line end is a killed run's, maybe cut)."""
        if lines and lines[-1].strip():
            self.cut_line = len(lines)
        for number, raw in enumerate(lines, start=1):
            s = raw.strip()
            if not s:
                continue
            self._line(number, raw, s)
            self.prev = raw

    def _line(self, number: int, raw: str, s: str) -> None:
        """One non-blank line, sent to the reader of its shape."""
        if s == COMPLETE:
            self._close_block(number)
            self.complete = True
            self.columns = None
            return
        if s.startswith('"'):
            self._excel_line(number, s)
            return
        if s == EXCEL_BELOW:
            self.excel_mode = "table"
            return
        if BANNER.search(s):
            self.banner = True
            return
        if BLOCK_WORDS.match(s):
            self._block_line(number, s)
            return
        if TABLE_HEAD.match(raw):
            self._close_block(number)
            self.columns = self._headings(number, self.prev, raw)
            return
        if self.columns is not None and ROW.match(raw):
            self._row(number, raw)
            return
        if self.columns is not None and s[0].isdigit():
            raise ParseError(TOOL, number, "a table row: file size, record length and results, "
                                           "all whole numbers", s)
        self._header_line(number, s)

    def _header_line(self, number: int, s: str) -> None:
        """A line outside the results: the sizes and tests it gives, or nothing."""
        if m := _RECORD.match(s):
            self.record_size = int(m[1]) * KiB
        elif m := _FILE.match(s):
            self.file_size = int(m[1]) * KiB
        elif m := _EACH.match(s):
            self.file_size, self.record_size = int(m[1]) * KiB, int(m[2]) * KiB
        elif m := _CMDLINE.match(s):
            self.cmd_tests = cmdline_tests(m[1])
        elif (m := _OUTPUT_IN.match(s)) and m[1].lower() not in ("kbytes/sec",):
            raise ParseError(TOOL, number, "'Output is in kBytes/sec' (DiskLab reads iozone's "
                                           "kB/sec results, not those of -O or -N)", s)
        elif PROCS.match(s) or _CHILD_XFER.match(s):
            pass
        # banner text, settings and notes ("Timer resolution is poor ...") carry no figures

    def finish(self) -> list[Metric]:
        """The figures of a whole output; ParseError for one cut short or without results."""
        self._close_block(None)
        if not self.banner and not self.main:
            raise ParseError(TOOL, None, "iozone's output: its banner 'Iozone: Performance Test "
                                         "of File I/O', a result table or 'Children see "
                                         "throughput' blocks")
        if not self.complete:
            raise ParseError(TOOL, None, f"the closing line '{COMPLETE}' (the output is cut "
                                         "short)")
        metrics = self.merged()
        if not metrics:
            raise ParseError(TOOL, None, "results: a table row or a 'Children see throughput' "
                                         "block")
        return metrics


def run_failure(output: ToolOutput) -> str | None:
    """iozone's own error message if the run failed, else None. iozone prints its errors on
    stdout (perror's half on stderr) and exits 0 when killed, saying 'iozone: interrupted'."""
    lines = [s.strip() for s in split_lines(output.stdout)]
    errors = [s for s in lines if ERROR.match(s)]
    errors += [s.strip() for s in split_lines(output.stderr) if s.strip()]
    failed = bool(errors and any(ERROR.match(s) for s in lines)) or output.exit_status not in (
        0, None)
    if not failed:
        return None
    unique = list(dict.fromkeys(errors))[:4]
    if not unique:
        return f"iozone exited with status {output.exit_status}"
    return "; ".join(unique)


def as_ops(metrics: list[Metric], params: Mapping[str, Any], output: ToolOutput
           ) -> list[Metric]:
    """Metrics of an -O run (asked for, or read from an imported file's command line): iozone
    printed operations per second where it prints kB/s, so each figure is renamed NAME:iops
    (NAME:parent_iops, NAME:min_proc_iops, ...) in op/s, and min_xfer counts operations."""
    if not (params.get("ops") or _OPS_CMDLINE.search(output.stdout or "")):
        return metrics
    out: list[Metric] = []
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


def flag_partial(m: Metric) -> Metric:
    """A figure of a run that did not end, noted "partial" (its own note kept after)."""
    return Metric(m.name, m.value, m.unit, "partial" if not m.note else f"partial: {m.note}",
                  m.params)

