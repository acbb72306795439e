"""Results for people and for files: tables, comparisons with deltas, CSV and JSON exports.

Qt-free, so the CLI and the GUI export the very same numbers.
"""

from __future__ import annotations

import csv
import json
from typing import Any, TextIO

from disklab.core.charts import format_params
from disklab.core.library import Library
from disklab.core.units import format_size, human_rate


def format_value(value: float | None, unit: str) -> str:
    """A figure in the unit people read: MiB/s for B/s, µs/ms for ns."""
    if value is None:
        return "-"
    if unit == "B/s":
        return human_rate(value)
    if unit == "ns":
        if value >= 1e6:
            return f"{value / 1e6:.2f} ms"
        return f"{value / 1e3:.1f} µs"
    if unit == "op/s":
        return f"{value:,.0f} op/s"
    if unit == "%":
        return f"{value:.1f} %"
    if unit == "B":
        return format_size(int(value))
    return f"{value:g} {unit}"


def mean_pm(row: dict[str, Any]) -> str:
    text = format_value(row["mean"], row["unit"])
    if row.get("stddev") is not None:
        text += f" ± {format_value(row['stddev'], row['unit'])}"
    return text


def results_table(results: list[dict[str, Any]], baseline_config: str | None = None,
                  all_metrics: bool = False) -> list[list[str]]:
    """Rows for the terminal, header first: config, tool, parameters, metric, mean ± stddev, n,
    notes, and with a baseline configuration the delta of each mean against that
    configuration's mean for the same tool, parameters and metric. By default the headline
    figures only (throughput, IOPS, mean latency, iozone's parent and min_proc)."""
    header = ["config", "tool", "parameters", "metric", "mean ± stddev", "n", "note"]
    if baseline_config is not None:
        header.insert(6, f"Δ vs {baseline_config}")
    table = [header]
    same = _constant_params(results)
    base = {_point(r): r["mean"] for r in results if r["config"] == baseline_config}
    for r in results:
        suffix = r["metric"].partition(":")[2]
        if not all_metrics and suffix not in ("", "iops", "lat_mean", "parent", "min_proc"):
            continue
        row = [r["config"], r["tool"], format_params(r["params"], same[r["tool"]]),
               r["metric"], mean_pm(r), str(r["n"]), "; ".join(r.get("notes") or [])]
        if baseline_config is not None:
            row.insert(6, "" if r["config"] == baseline_config
                       else format_delta(delta_pct(r["mean"], base.get(_point(r)))))
        table.append(row)
    return table


def _point(r: dict[str, Any]) -> tuple[str, str, str]:
    """What makes two results comparable: the same tool, parameters and metric."""
    return r["tool"], json.dumps(r["params"], sort_keys=True, default=str), r["metric"]


def delta_pct(value: float | None, base: float | None) -> float | None:
    """Per cent change of `value` against `base`; None when either is missing or base is 0."""
    if value is None or not base:
        return None
    return 100.0 * (value - base) / base


def format_delta(pct: float | None) -> str:
    return "-" if pct is None else f"{pct:+.1f} %"


def _constant_params(results: list[dict[str, Any]]) -> dict[str, set[str]]:
    """Per tool, the parameters with one value in every row (a table shows what varies);
    none when the tool has a single case, whose parameters are then all shown."""
    values: dict[str, dict[str, set[str]]] = {}
    cases: dict[str, set[str]] = {}
    for r in results:
        cases.setdefault(r["tool"], set()).add(r.get("case_id", ""))
        per_key = values.setdefault(r["tool"], {})
        for k, v in r["params"].items():
            per_key.setdefault(k, set()).add(json.dumps(v, sort_keys=True, default=list))
    return {tool: {k for k, vs in per_key.items() if len(vs) == 1} if len(cases[tool]) > 1
            else set() for tool, per_key in values.items()}


def session_json(lib: Library, session_id: int, samples: bool = True) -> dict[str, Any]:
    """A whole session as one document: facts, results, runs, events, and the samples."""
    doc: dict[str, Any] = {
        "session": lib.session(session_id),
        "results": lib.results(session_id),
        "runs": lib.runs(session_id),
        "events": lib.events(session_id),
    }
    if samples:
        doc["samples"] = lib.samples(session_id)
    return doc


def write_csv(lib: Library, session_id: int, fp: TextIO) -> None:
    """One row per result: config, tool, test, parameters (JSON), metric, unit, n, mean,
    stddev, and the per-repeat values separated by ';'."""
    w = csv.writer(fp)
    w.writerow(["session", "config", "tool", "test", "params", "metric", "unit", "n", "mean",
                "stddev", "values", "notes"])
    for r in lib.results(session_id):
        w.writerow([session_id, r["config"], r["tool"], r["test"],
                    json.dumps(r["params"], sort_keys=True), r["metric"], r["unit"], r["n"],
                    r["mean"], r["stddev"],
                    ";".join("" if v is None else repr(v) for v in r["values"]),
                    "; ".join(r.get("notes") or [])])


def compare(lib: Library, session_ids: list[int], baseline: int) -> list[dict[str, Any]]:
    """The same tool, test parameters and metric across sessions (and their configs): one row
    per point with a cell per session and config holding mean, stddev, n, and the delta of the
    mean against the baseline session's (absolute and in per cent; None where missing)."""
    if baseline not in session_ids:
        session_ids = [baseline, *session_ids]
    rows: dict[tuple[str, str, str], dict[str, Any]] = {}
    for sid in session_ids:
        for r in lib.results(sid):
            row = rows.setdefault(_point(r), {
                "tool": r["tool"], "test": r["test"], "params": r["params"],
                "metric": r["metric"], "unit": r["unit"], "cells": {}})
            row["cells"][f"{sid}:{r['config']}"] = {
                "session": sid, "config": r["config"], "mean": r["mean"],
                "stddev": r["stddev"], "n": r["n"]}
    out = []
    for row in rows.values():
        base = next((c for c in row["cells"].values() if c["session"] == baseline), None)
        base_mean = base["mean"] if base else None
        for cell in row["cells"].values():
            cell["delta_pct"] = delta_pct(cell["mean"], base_mean)
            cell["delta"] = (None if cell["delta_pct"] is None
                             else cell["mean"] - base_mean)  # type: ignore[operator]
        out.append(row)
    return out
