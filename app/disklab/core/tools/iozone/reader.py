"""The state every reader of an iozone output shares (single, throughput, excel): each figure
kept once with the line it came from, so that a damaged or spliced file fails at its line.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from disklab.core.tools.iozone.params import int_param
from disklab.core.tools.iozone.tables import TOOL
from disklab.core.vocab.errors import ParseError
from disklab.core.vocab.model import Metric

Key = tuple[str, tuple[tuple[str, Any], ...]]


def metric_key(m: Metric) -> Key:
    """A figure's identity: its name and its parameters (one per table cell or block)."""
    return m.name, tuple(sorted((m.params or {}).items()))


class Reader:
    """What every shape's reader shares: the parameters, the figures read so far (`main`, each
    with its line, each once), the sizes and tests the output's header gave, and the process
    counts of the throughput blocks in order (the -R report's columns)."""

    def __init__(self, params: Mapping[str, Any], partial: bool = False):
        self.params = params
        self.partial = partial
        self.main: list[tuple[int, Metric]] = []
        self.seen: dict[Key, int] = {}
        self.file_size: int | None = None
        self.record_size: int | None = None
        self.cmd_tests: list[str] | None = None
        self.tp_threads: list[int] = []  # process counts in the order of the blocks
        self.cut_line = 0  # number of a last line without its line end (a killed run's)

    def _add(self, number: int, metric: Metric) -> None:
        """Keep one figure; a second with the same name and parameters is a spliced file."""
        if metric.value is not None and not math.isfinite(metric.value):
            raise ParseError(TOOL, number, "a finite number")
        key = metric_key(metric)
        if key in self.seen:
            raise ParseError(TOOL, number, f"each result once ({metric.name} "
                                           f"{dict(metric.params or {})} was on line "
                                           f"{self.seen[key]} already)")
        self.seen[key] = number
        self.main.append((number, metric))

    def _sizes(self) -> dict[str, int]:
        """The file and record size of the figures being read: the output's, else the plan's."""
        sizes: dict[str, int] = {}
        fs = self.file_size or int_param(self.params, "file_size")
        rs = self.record_size or int_param(self.params, "record_size")
        if fs:
            sizes["file_size"] = fs
        if rs:
            sizes["record_size"] = rs
        return sizes

