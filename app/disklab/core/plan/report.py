"""A plan's `[report]` table: the pivot a session opens on (rows, columns, metrics, baseline,
filters, chart) and the units its figures are written in, checked by key like the rest of the
plan, and read back from a recorded session's plan text.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from disklab.core import tools
from disklab.core.plan.keylines import Checker, KeyLines, short
from disklab.core.vocab.model import PIVOT_KEYS, Report
from disklab.core.vocab.units import check_units

REPORT_KEYS = ("rows", "columns", "metrics", "baseline", "where", "title", "chart", "x", "units")
REPORT_CHARTS = ("lines", "bars", "heatmap")
REPORT_LISTS = ("rows", "columns", "metrics")


def report_keys(tool_names: Iterable[str]) -> list[str]:
    """The pivot keys a plan's report may name: model.PIVOT_KEYS and its tools' parameters."""
    valid = [*PIVOT_KEYS]
    for name in tool_names:
        if name in tools.tool_names():
            valid += [k for k in tools.get_adapter(name).params if k not in valid]
    return valid


def read_report(raw: Any, tool_names: Iterable[str], check: Checker) -> Report | None:
    """The plan's [report] table (None when it has none). `rows` and `columns` are pivot keys
    (report_keys), `metrics` metric names ('write', 'write:iops') or suffixes ('iops',
    'lat_mean'); every error names its key."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        check.error("report", "must be a table: [report] rows = [...] columns = [...]")
        return None
    for key in raw:
        if key not in REPORT_KEYS:
            check.error(f"report.{key}", f"unknown key (known: {', '.join(REPORT_KEYS)})")
    valid = report_keys(tool_names)
    lists: dict[str, tuple[str, ...]] = {}
    for key in (*REPORT_LISTS, "where"):
        value = raw.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            check.error(f"report.{key}", f"{short(value)} is not a list of names")
            value = []
        if key in ("rows", "columns"):
            for name in value:
                if name not in valid:
                    check.error(f"report.{key}",
                                f"unknown pivot key {name!r} (valid: {', '.join(valid)})")
        lists[key] = tuple(dict.fromkeys(value))
    both = set(lists["rows"]) & set(lists["columns"])
    if both:
        check.error("report.columns", f"{', '.join(sorted(both))} in both rows and columns")
    where = tuple(p for w in lists["where"]
                  if (p := _report_pair(w, "where", valid, check)) is not None)
    baseline = raw.get("baseline")
    if baseline is not None and (not isinstance(baseline, str)
                                 or _report_pair(baseline, "baseline", valid, check) is None):
        if not isinstance(baseline, str):
            check.error("report.baseline", f"{short(baseline)} is not KEY=VALUE text")
        baseline = None
    title = raw.get("title", "")
    if not isinstance(title, str):
        check.error("report.title", f"{short(title)} is not text")
        title = ""
    chart = raw.get("chart", "")
    if chart != "" and chart not in REPORT_CHARTS:
        check.error("report.chart", f"{short(chart)} is not a chart: one of "
                    f"{', '.join(REPORT_CHARTS)}")
        chart = ""
    x = raw.get("x", "")
    if x != "" and (not isinstance(x, str) or x not in (*lists["rows"], *lists["columns"])):
        check.error("report.x", f"{short(x)} is not one of the report's rows or columns")
        x = ""
    return Report(rows=lists["rows"] or ("config",), columns=lists["columns"] or ("test",),
                  metrics=lists["metrics"], baseline=baseline, where=where, title=title,
                  chart=chart, x=x, units=_report_units(raw.get("units", ""), check))


def _report_units(value: Any, check: Checker) -> str:
    """[report] units: "si" (MB/s, GB) or "iec" (MiB/s, GiB), what `disklab show`, `compare`
    and `export` write its sessions in unless --units says otherwise; '' when not given."""
    if value == "":
        return ""
    try:
        return check_units(value)
    except ValueError as e:
        check.error("report.units", str(e))
        return ""


def _report_pair(text: str, key: str, valid: list[str], check: Checker
                 ) -> tuple[str, str] | None:
    """A report's 'KEY=VALUE' (its baseline, each of its where filters), the key a pivot key."""
    name, eq, value = text.partition("=")
    name, value = name.strip(), value.strip().strip("\"'")
    if not eq or not name or not value:
        check.error(f"report.{key}", f"{text!r}: expected KEY=VALUE (e.g. config=ext4)")
        return None
    if name not in valid:
        check.error(f"report.{key}", f"unknown pivot key {name!r} (valid: {', '.join(valid)})")
        return None
    return name, value


def _tool_names(doc: Mapping[str, Any]) -> list[str]:
    tests = doc.get("test")
    return [str(t.get("tool")) for t in tests if isinstance(t, dict)] if isinstance(
        tests, list) else []


def lays_out(report: Report | None) -> bool:
    """Whether a [report] table lays its sessions out (a pivot of its own): any key but
    `units`, which only says what the figures are written in."""
    return report is not None and (not report.units or replace(report, units="") != Report())


def session_report(plan_text: str | None) -> Report | None:
    """The [report] table of a recorded session's plan text, or None (no plan, no table, or a
    table that no longer reads: the session is then shown in the default pivot)."""
    if not plan_text:
        return None
    try:
        doc = tomllib.loads(plan_text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        return None
    check = Checker(KeyLines(plan_text))
    report = read_report(doc.get("report"), _tool_names(doc), check)
    return None if check.errors else report
