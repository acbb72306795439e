"""Comparisons: configurations (sessions, or the configurations inside them) x tests, each cell
mean ± stddev with its delta against a baseline; and which configuration values differ.

Both the Compare page and `disklab compare` build their comparison here (`comparison_for`), so
the window and the files it writes hold the same rows, columns and deltas.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from disklab.core.results.format import figure_label, format_fact
from disklab.core.results.rows import constant_params, is_headline, row_stats

# A delta smaller than this (per cent) is noise, not better or worse.
DELTA_THRESHOLD = 2.0


class ResultsSource(Protocol):
    """What a comparison reads from the library (core.library.Library has it)."""

    def session(self, session_id: int) -> dict[str, Any]: ...
    def results(self, session_id: int) -> list[dict[str, Any]]: ...
    def events(self, session_id: int) -> list[dict[str, Any]]: ...


@dataclass(frozen=True)
class Cell:
    mean: float | None
    stddev: float | None
    n: int
    unit: str
    delta: float | None = None  # mean - baseline mean, canonical unit
    delta_pct: float | None = None


@dataclass(frozen=True)
class Comparison:
    """Rows: configurations (session / config); columns: tests; cells: mean ± stddev."""

    rows: tuple[str, ...]
    columns: tuple[str, ...]
    cells: Mapping[tuple[str, str], Cell]
    baseline: str | None
    units: Mapping[str, str] = field(default_factory=dict)  # column -> canonical unit
    higher_is_better: Mapping[str, bool] = field(default_factory=dict)
    common: Mapping[str, Any] = field(default_factory=dict)  # parameters equal in every column
    metrics: Mapping[str, str] = field(default_factory=dict)  # column -> metric name


def better_is_higher(metric: str, unit: str) -> bool:
    """Throughput and IOPS are better higher; latencies better lower."""
    return not (unit == "ns" or "lat" in metric)


def delta_pct(value: float | None, base: float | None) -> float | None:
    """Per cent change of `value` against `base`; None when either is missing or base is 0."""
    if value is None or not base:
        return None
    return 100.0 * (value - base) / base


def row_name(label: str, config: str, several: bool) -> str:
    """A comparison row: the session's label, with ' / config' when it has several."""
    return f"{label} / {config}" if several else label


def labelled_rows(sessions: Sequence[tuple[str, Sequence[Mapping[str, Any]]]]
                  ) -> list[dict[str, Any]]:
    """Every results row of the sessions with its `config` replaced by its comparison row name
    (so charts of several sessions name their lines and bars as the comparison's rows)."""
    out = []
    for label, results in sessions:
        several = len({str(r.get("config") or "") for r in results}) > 1
        out += [{**r, "config": row_name(label, str(r.get("config") or ""), several)}
                for r in results]
    return out


def compare_results(sessions: Sequence[tuple[str, Sequence[Mapping[str, Any]]]],
                    baseline: str | None = None, all_metrics: bool = True) -> Comparison:
    """Build the comparison from (session label, library.results rows) pairs.

    A session with one configuration is one row named after the session; with several, each
    configuration is a row 'session / config'. `baseline` names a row or a session (its first
    row); None takes the first row. Parameters equal in every row are left out of the column
    names (`Comparison.common` has them); `all_metrics=False` keeps the headline figures only
    (rows.is_headline).
    """
    every = [r for r in labelled_rows(sessions) if all_metrics or is_headline(r)]
    common = constant_params(every)
    cells: dict[tuple[str, str], Cell] = {}
    rows: list[str] = []
    columns: list[str] = []
    units: dict[str, str] = {}
    better: dict[str, bool] = {}
    metrics: dict[str, str] = {}
    for r in every:
        row = str(r["config"])
        if row not in rows:
            rows.append(row)
        col = figure_label(r, skip=common)
        if col not in columns:
            columns.append(col)
        mean, std, n = row_stats(r)
        unit = str(r.get("unit", ""))
        units[col] = unit
        metrics[col] = str(r.get("metric", ""))
        better[col] = better_is_higher(str(r.get("metric", "")), unit)
        cells[(row, col)] = Cell(mean, std, n, unit)
    base = None
    if rows:
        if baseline in rows:
            base = baseline
        else:
            base = next((r for r in rows if baseline and r.startswith(f"{baseline} / ")), rows[0])
    for (row, col), cell in list(cells.items()):
        ref = cells.get((base, col)) if base else None
        if ref is None or ref.mean is None or cell.mean is None:
            continue
        cells[(row, col)] = Cell(cell.mean, cell.stddev, cell.n, cell.unit,
                                 cell.mean - ref.mean, delta_pct(cell.mean, ref.mean))
    return Comparison(tuple(rows), tuple(columns), cells, base, units, better, common, metrics)


def delta_class(comparison: Comparison, row: str, col: str,
                threshold: float = DELTA_THRESHOLD) -> str:
    """'better', 'worse' or 'same' against the baseline, for colour coding."""
    cell = comparison.cells.get((row, col))
    if cell is None or cell.delta_pct is None or row == comparison.baseline:
        return "same"
    if abs(cell.delta_pct) < threshold:
        return "same"
    good = (cell.delta_pct > 0) == comparison.higher_is_better.get(col, True)
    return "better" if good else "worse"


def session_label(session: Mapping[str, Any]) -> str:
    """A session as a comparison names it: 'id name'."""
    return f"{session['id']} {session['name']}"


def comparison_for(lib: ResultsSource, session_ids: Sequence[int],
                   baseline: int | str | None, all_metrics: bool = True
                   ) -> tuple[Comparison, list[dict[str, Any]]]:
    """The comparison of library sessions, and the sessions. `baseline` is a session id (its
    first row) or a row's label; None: the first row."""
    sessions = [lib.session(sid) for sid in session_ids]
    base_label = baseline if isinstance(baseline, str) else None
    labelled = []
    for s in sessions:
        if s["id"] == baseline:
            base_label = session_label(s)
        labelled.append((session_label(s), lib.results(s["id"])))
    return compare_results(labelled, base_label, all_metrics), sessions


def applied_configs(lib: ResultsSource, session_id: int) -> dict[str, dict[str, Any]]:
    """ConfigApplied events' read-back per configuration label."""
    out = {}
    for e in lib.events(session_id):
        if e.get("kind") in ("config_applied", "ConfigApplied") and e.get("config"):
            out[str(e["config"])] = dict(e.get("readback") or {})
    return out


def config_facts(lib: ResultsSource, sessions: Sequence[Mapping[str, Any]], c: Comparison
                 ) -> dict[str, dict[str, Any]]:
    """Per comparison row: the filesystem facts (as read back) and the plan's settings."""
    out: dict[str, dict[str, Any]] = {}
    for s in sessions:
        label = session_label(s)
        host = s.get("host") or {}
        base = {}
        for key in ("filesystem", "device"):
            if isinstance(host.get(key), dict):
                base.update(flatten(host[key], f"{key}."))
        applied = applied_configs(lib, s["id"])
        for row in c.rows:
            if row == label or row.startswith(label + " / "):
                config = row.split(" / ", 1)[1] if " / " in row else None
                facts = dict(base)
                if config and config in applied:
                    facts.update(flatten(applied[config], "readback."))
                elif len(applied) == 1:
                    facts.update(flatten(next(iter(applied.values())), "readback."))
                out[row] = facts
    return out


def config_diff(configs: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, dict[str, str]]]:
    """Which configuration values differ: [(key, {row: value})] for keys not equal everywhere.

    `configs` maps a row to its flattened facts (mkfs options, mount options, read-ahead, the
    filesystem as read back)."""
    keys: list[str] = []
    for facts in configs.values():
        for k in facts:
            if k not in keys:
                keys.append(k)
    out = []
    for k in keys:
        values = {row: format_fact(facts.get(k)) for row, facts in configs.items()}
        if len(set(values.values())) > 1:
            out.append((k, values))
    return out


def flatten(facts: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested facts -> 'a.b' keys, for the config diff."""
    out: dict[str, Any] = {}
    for k, v in facts.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(flatten(v, key + "."))
        else:
            out[key] = v
    return out
