"""The results rows of the library (`Library.results`): parameters, statistics, headline filter.

A row is a dict: config, tool, test, metric ('write', 'write:iops', 'write:lat_p99'), unit
(canonical: B/s, op/s, ns, B, %), params, n, mean, stddev, values, notes, case_id. Everything
that reads rows asks this module rather than reading the keys itself, so a comparison, a table
and a chart agree on what a row says.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Mapping
from typing import Any

# Metric suffixes that are headline figures: throughput (no suffix), IOPS, mean latency,
# iozone's parent-measured throughput, and the slowest, fastest and mean process or stream
# (iozone -t, the engine's streams): the spread a multi-stream test exists to show; and a phase's
# seconds (the tree tool's real/user/sys, as `time` gave the RAID study's tables). Percentiles,
# CPU, each stream's own row and the rest are there for whoever asks for all metrics.
HEADLINE_SUFFIXES = frozenset({"", "iops", "lat_mean", "parent", "min_proc", "max_proc",
                               "avg_proc", "seconds"})
TIME_SUFFIXES = frozenset({"user", "sys"})  # headline in seconds only (fio's cpu:sys is a %)


def row_params(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row's parameters as a dict (imported rows may hold them as JSON text)."""
    params = row.get("params") or {}
    if isinstance(params, str):
        try:
            params = json.loads(params)
        except ValueError:
            params = {"params": params}
    return dict(params)


def row_stats(row: Mapping[str, Any]) -> tuple[float | None, float | None, int]:
    """(mean, stddev, n) of a row; computed from its values when the row lacks them."""
    mean = row.get("mean")
    std = row.get("stddev")
    n = int(row.get("n") or 0)
    if mean is not None and std is not None:  # nothing to compute: no values list to make
        return float(mean), float(std), n
    values = [v for v in (row.get("values") or []) if v is not None]
    if mean is None and values:
        mean = statistics.fmean(values)
        n = len(values)
    if std is None and len(values) >= 2:
        std = statistics.stdev(values)
    return (None if mean is None else float(mean)), (None if std is None else float(std)), n


def is_headline(row: Mapping[str, Any]) -> bool:
    """Whether a row is a headline figure (what `show`, a comparison and the charts show unless
    asked for all metrics)."""
    suffix = str(row.get("metric", "")).partition(":")[2]
    return suffix in HEADLINE_SUFFIXES or (suffix in TIME_SUFFIXES and row.get("unit") == "s")


def headline(rows: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The headline rows, in order."""
    return [r for r in rows if is_headline(r)]


def constant_params(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Parameters with one value in every row: a table or chart says them once above itself
    and shows in its rows only what varies."""
    rows = list(rows)
    if not rows:
        return {}
    others = [row_params(r) for r in rows[1:]]
    return {k: v for k, v in row_params(rows[0]).items()
            if all(k in p and p[k] == v for p in others)}


def point(row: Mapping[str, Any]) -> tuple[str, str, str]:
    """What makes two rows comparable: the same tool, parameters and metric."""
    return (str(row.get("tool", "")), json.dumps(row_params(row), sort_keys=True, default=str),
            str(row.get("metric", "")))
