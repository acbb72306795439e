"""Single-process mode's table (no -t; with or without -a): one row per file size and record
size, the results under fixed-width columns ("kB reclen write rewrite read reread random read
..."). A test that did not run leaves its column blank, so values are placed by column, by the
right edge they share with their heading.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from disklab.core.tools.iozone.params import plan_tests
from disklab.core.tools.iozone.reader import Reader
from disklab.core.tools.iozone.tables import COLUMNS, TEST_COLUMNS, TOOL
from disklab.core.vocab.errors import ParseError
from disklab.core.vocab.model import UNIT_THROUGHPUT, Metric
from disklab.core.vocab.units import KiB

_UPPER_HEADINGS = frozenset({"random", "bkwd", "record", "stride"})  # first header line's words


@dataclass
class Columns:
    """The table's columns: (end position of the heading, metric name)."""

    ends: list[tuple[int, str]]


class SingleTable(Reader):
    """Single-process mode's table (auto mode's too): one row per file size and record size,
    each value placed under the heading it is printed under (a test that did not run leaves
    its column blank)."""

    def __init__(self, params: Mapping[str, Any], partial: bool = False):
        super().__init__(params, partial)
        self.columns: Columns | None = None

    def _expected_columns(self) -> list[str] | None:
        """The columns of the tests that ran, in order: the plan's, else the command line's."""
        tests = plan_tests(self.params) or self.cmd_tests
        if tests is None:
            return None
        return [c for t in tests for c in TEST_COLUMNS[t]]

    def _headings(self, number: int, first: str, second: str) -> Columns:
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
        return Columns(ends)

    def _row(self, number: int, raw: str) -> None:
        """One table row: its figures, with the row's file and record size as parameters."""
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

