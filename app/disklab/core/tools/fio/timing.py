"""When fio's figures were measured, from its JSON report kept in a run's transcript: what a
verdict of what limited them judges (core.results.limits), not the whole run with fio's start,
its file layout and, with a ramp_time, its warm-up.

fio stamps its report when its last job group ends (`timestamp_ms`, wall-clock milliseconds)
and gives each job the time it measured (`job_runtime`, milliseconds, without ramp_time). The
groups of a job file run one after another (stonewall), so the last group ends at the stamp,
each group lasts its longest job's runtime, and the group before ends where the next began.
fio --client's report (`client_stats`) is stamped in whole seconds by the client, not where
the jobs ran: it gives no interval (None).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from disklab.core.tools.base import Measured
from disklab.core.tools.fio.options import DIRECTIONS
from disklab.core.tools.fio.output import json_documents

Lines = Sequence[tuple[float, str, str]]
RESULT_STREAM = "result"  # the runner keeps a result file's lines under this stream
CPU_FIGURE = "cpu"  # cpu:usr and cpu:sys, measured over the job's runtime too


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def _moved(entry: dict[str, Any]) -> list[str]:
    """The directions a job moved bytes in (its figures' names)."""
    out = []
    for d in DIRECTIONS:
        part = entry.get(d)
        if isinstance(part, dict) and (_number(part.get("io_bytes")) or 0) > 0:
            out.append(d)
    return out


def job_intervals(lines: Lines) -> list[Measured] | None:
    """Each direction's (and cpu's) interval per job group, from the report's stamp back by
    the groups' runtimes; None when the transcript holds no local JSON report with a stamp."""
    text = "\n".join(line for _t, stream, line in lines if stream == RESULT_STREAM)
    if not text.strip():
        return None
    found, _last, _error = json_documents(text)
    if found is None:
        return None
    doc = found[1]
    stamp = _number(doc.get("timestamp_ms"))
    entries = doc.get("jobs")
    if stamp is None or not isinstance(entries, list):
        return None
    groups: dict[int, tuple[float, set[str]]] = {}
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        group = entry.get("groupid")
        group = group if isinstance(group, int) and not isinstance(group, bool) else 0
        runtime = _number(entry.get("job_runtime")) or 0.0
        longest, names = groups.get(group, (0.0, set()))
        moved = _moved(entry)
        names.update(moved)
        if moved:
            names.add(CPU_FIGURE)
        groups[group] = (max(longest, runtime), names)
    out: list[Measured] = []
    end = stamp / 1000.0
    for group in sorted(groups, reverse=True):
        runtime, names = groups[group]
        start = end - runtime / 1000.0
        out += [Measured(name, start, end) for name in sorted(names)]
        end = start
    return sorted(out, key=lambda m: (m.start, m.name))
