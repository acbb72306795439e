"""When each of iozone's figures was measured, from a run's transcript: what a verdict of
what limited a figure judges (core.results.limits), not the whole run.

iozone times each test itself and prints its rate; the transcript stamps each line when it
was read. Throughput mode (-t N) prints a block per phase when the phase ends ("Children see
throughput for N initial writers = X kB/sec") after sleeping seconds before it: the phase is
the N x file_size bytes at X before that line. Single-process mode prints a table row when
the row's tests have all run, one after another with nothing between them: walking back from
the row's line by each test's own time (file size over its rate) gives each test's interval.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from disklab.core.tools.base import Measured, ToolOutput
from disklab.core.tools.iozone.tables import EXCEL_BELOW
from disklab.core.vocab.model import UNIT_THROUGHPUT, Metric
from disklab.core.vocab.units import KiB

_N = r"\d{1,18}"
_F = r"\d{1,18}(?:\.\d{1,9})?"
_CHILDREN = re.compile(rf"^Children see throughput for\s+({_N})\s+(.+?)\s*=\s*({_F})\s+"
                       r"(?:kB|KB|Kb)/sec$")
_ROW = re.compile(rf"^\s*({_N})\s+({_N})(?:\s+{_N})+\s*$")

Lines = Sequence[tuple[float, str, str]]


def throughput_phases(lines: Lines, labels: Mapping[str, str], file_size: int | None
                      ) -> list[Measured]:
    """Throughput mode's phases: each ends at its 'Children see' line and lasts the bytes of
    its N processes at their aggregate rate (from the previous phase's end when the file size
    is not known)."""
    out: list[Measured] = []
    last = lines[0][0] if lines else 0.0
    for t, stream, text in lines:
        m = _CHILDREN.match(text.strip()) if stream == "stdout" else None
        name = labels.get(" ".join(m[2].split())) if m else None
        if m is None or name is None:
            continue
        rate = float(m[3]) * KiB
        start, moved = last, int(m[1]) * file_size if file_size else None
        if moved and rate > 0:
            start = max(last, t - moved / rate)
        out.append(Measured(name, start, t, moved))
        last = t
    return out


def table_tests(lines: Lines, order: Sequence[str],
                parse: Callable[[ToolOutput], list[Metric]]) -> list[Measured]:
    """Single-process mode's tests: each row's tests back to back, ending at the row's line,
    each lasting the file size over its own rate (in the table's column order, iozone's)."""
    stdout = [(t, text) for t, stream, text in lines if stream == "stdout"]
    rows: list[tuple[float, int, int]] = []
    for t, text in stdout:
        if text.strip() == EXCEL_BELOW:
            break
        if m := _ROW.match(text):
            rows.append((t, int(m[1]) * KiB, int(m[2]) * KiB))
    metrics = parse(ToolOutput(stdout="\n".join(text for _t, text in stdout)))
    out: list[Measured] = []
    for t, size, record in rows:
        point: dict[str, float] = {}
        for metric in metrics:
            params: Mapping[str, Any] = metric.params or {}
            if (metric.name in order and metric.unit == UNIT_THROUGHPUT and metric.value
                    and params.get("file_size") == size and params.get("record_size") == record):
                point[metric.name] = float(metric.value)
        end = t
        for name in reversed([n for n in order if n in point]):
            start = end - size / point[name]
            out.append(Measured(name, start, end, float(size)))
            end = start
    return sorted(out, key=lambda m: m.start)
