"""iozone's progress, from what it has printed: it has no progress of its own and prints each
result when a test (pair) ends, with long silences in between, so the phase it is in and the
bytes done are read from the blocks and rows as they come.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from disklab.core.tools.base import ProgressParser
from disklab.core.tools.iozone.params import auto_rows, int_param, plan_tests, planned_bytes
from disklab.core.tools.iozone.tables import (
    CHILDREN,
    COMPLETE,
    ERROR,
    EXCEL_BELOW,
    PHASE_ORDER,
    PROCS,
    ROW,
    TABLE_HEAD,
    TEST_PHASES,
    THROUGHPUT_LABELS,
)
from disklab.core.vocab.model import ProgressUpdate
from disklab.core.vocab.units import KiB, format_size


class IozoneProgress(ProgressParser):
    """Which phase iozone is in, from what it has printed: it has no progress of its own and
    prints each result when a test (pair) ends, with long silences in between."""

    def __init__(self, params: Mapping[str, Any]):
        tests = plan_tests(params) or ["write", "read"]
        self.threads = int_param(params, "threads") or 0
        self.throughput = self.threads >= 1 and not params.get("auto")
        self.phases = [p for p in PHASE_ORDER if any(p in TEST_PHASES[t] for t in tests)]
        self.file_size = int_param(params, "file_size")
        self.rows = auto_rows(params)
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
        if stream == "stderr" or ERROR.match(s):
            return ProgressUpdate(phase="error", message=s)
        if s == COMPLETE:
            self.done = self.total or self.done
            return self._update("done", s)
        if s == EXCEL_BELOW or s.startswith('"Throughput report'):
            return self._update("report", s)
        if PROCS.match(s):
            return self._update(self.phases[0] if self.phases else None, s)
        if m := CHILDREN.match(s):
            name = THROUGHPUT_LABELS.get(" ".join(m[2].split()))
            if self.file_size:
                self.done += int(m[1]) * self.file_size
            after = self.phases.index(name) + 1 if name in self.phases else len(self.phases)
            phase = self.phases[after] if after < len(self.phases) else "report"
            return self._update(phase, s, float(m[3]) * KiB, known=bool(self.file_size))
        if TABLE_HEAD.match(line):
            return self._update(self._row_phase(0), s)
        if ROW.match(line):
            tokens = s.split()
            if len(tokens) < 3:
                return None  # the row's start; its results come when the tests end
            self.done += int(tokens[0]) * KiB * (len(tokens) - 2)
            self.row_index += 1
            return self._update(self._row_phase(self.row_index) or "finishing",
                                " ".join(tokens))
        return None
