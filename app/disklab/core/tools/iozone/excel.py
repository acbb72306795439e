"""iozone's -R report ("Excel output is below:"): the same figures again at the end of the
output; in single-process mode it is the only place where the CPU figures of -+u appear.

The main output is what DiskLab stores. The report only fills in what the main output lacks,
and where both give a figure they must agree: a disagreement means a damaged or spliced file
and is a ParseError rather than a silent choice.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from disklab.core.tools.iozone.reader import Reader, metric_key
from disklab.core.tools.iozone.tables import EXCEL_TABLE, EXCEL_THROUGHPUT, TOOL, F, N
from disklab.core.vocab.errors import ParseError
from disklab.core.vocab.model import UNIT_PERCENT, UNIT_THROUGHPUT, Metric
from disklab.core.vocab.units import KiB

_QUOTED_TITLE = re.compile(r'^"([^"]*[A-Za-z][^"]*)"$')
_EXCEL_HEAD = re.compile(rf'^(?:"{N}"\s*)+$')
_EXCEL_ROW = re.compile(rf'^"({N})"((?:\s+{F})*)\s*$')
_EXCEL_TP_ROW = re.compile(rf'^"([^"]*[A-Za-z][^"]*)"((?:\s+{F})+)\s*$')
_CPU_TITLE = " CPU utilization report (Zero values should be ignored)"


class ExcelReport(Reader):
    """The -R report at the end: its figures are kept apart (`excel`) and merged last."""

    def __init__(self, params: Mapping[str, Any], partial: bool = False):
        super().__init__(params, partial)
        self.excel: list[tuple[int, Metric]] = []
        self.excel_mode: str | None = None  # "table" | "throughput"
        self.excel_name: str | None = None
        self.excel_cpu = False
        self.excel_records: list[int] | None = None

    def _excel_line(self, number: int, s: str) -> None:
        """A quoted line: a report's title, its record sizes, or one of its rows."""
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

    def merged(self) -> list[Metric]:
        """Main output first; the Excel report adds what it lacks and must agree with the rest."""
        index = {metric_key(m): m for _n, m in self.main}
        out = [m for _n, m in self.main]
        for number, m in self.excel:
            main = index.get(metric_key(m))
            if main is None:
                index[metric_key(m)] = m
                out.append(m)
            elif main.value is not None and m.value is not None:
                scale = KiB if m.unit == UNIT_THROUGHPUT else 1
                if abs(main.value - m.value) > 0.011 * scale + 1e-9 * abs(main.value):
                    raise ParseError(TOOL, number, f"the {m.name} figure of the main output "
                                                   f"({main.value / scale:g})",
                                     f"{m.value / scale:g}")
        return out

