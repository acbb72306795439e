"""Chart specs shared by the GUI and the exports, and the Qt-free renderings of them.

A ChartSpec is plain data (what to draw, already in display units), so the very same chart is
drawn by pyqtgraph in the window, by `to_svg` in an HTML report written from a headless server,
and compared in tests. This module also holds the comparison table (configurations x tests,
mean ± stddev, deltas against a baseline) because both the Compare page and `disklab compare`
show it, and the table renderers (Markdown, CSV, JSON, HTML).
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
import statistics
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from disklab.core.model import SIZE_KEYS
from disklab.core.units import MiB, format_size

# Parameter keys that are matrix axes worth a line chart (x axis), in order of preference.
SWEEP_KEYS = ("record_size", "block_size", "bs", "file_size", "size", "threads", "streams",
              "processes", "numjobs", "queue_depth", "iodepth")
SIZE_PARAMS = SIZE_KEYS  # parameters whose values are byte sizes

# Colours that read on light and dark backgrounds (Okabe-Ito, colour-blind safe).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442",
           "#000000")


@dataclass(frozen=True)
class Series:
    """One line or one set of bars. For a bar chart x holds category indexes."""

    name: str
    x: tuple[float, ...]
    y: tuple[float, ...]
    err: tuple[float, ...] | None = None


@dataclass(frozen=True)
class ChartSpec:
    """What to draw, in display units (the builders scale B/s to MiB/s)."""

    title: str
    kind: str  # "line" | "bar"
    x_label: str
    y_label: str
    series: tuple[Series, ...]
    categories: tuple[str, ...] = ()  # bar charts: label of each x index
    markers: tuple[tuple[float, str], ...] = ()  # vertical lines: (x, label), e.g. phases
    note: str = ""  # shown under the chart: tool versions, units
    log_x: bool = False

    def slug(self) -> str:
        """A file-name-safe name for exports."""
        keep = "".join(c if c.isalnum() else "-" for c in self.title.lower())
        return "-".join(p for p in keep.split("-") if p)[:60] or "chart"


# ---- display units ---------------------------------------------------------------------------

def display_unit(unit: str) -> tuple[str, float]:
    """Canonical unit -> (display unit, divisor): B/s shows as MiB/s, ns as µs."""
    if unit == "B/s":
        return "MiB/s", float(MiB)
    if unit == "ns":
        return "µs", 1000.0
    if unit == "B":
        return "MiB", float(MiB)
    return unit, 1.0


def format_value(value: float | None, unit: str) -> str:
    """One figure for a table, in its display unit."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    shown, div = display_unit(unit)
    return f"{number(value / div)} {shown}"


def number(v: float) -> str:
    """A figure without scientific notation for the sizes tables show: 11403, 255.0, 86.5."""
    if abs(v) >= 1000:
        return f"{v:.0f}"
    if abs(v) >= 100:
        return f"{v:.1f}"
    return f"{v:.3g}"


def constant_params(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Parameters with one value in every row: said once above a table, not in each column."""
    rows = list(rows)
    if not rows:
        return {}
    first = row_params(rows[0])
    same = {k: v for k, v in first.items()
            if all(k in row_params(r) and row_params(r)[k] == v for r in rows[1:])}
    return same


def format_params(params: Mapping[str, Any] | None, skip: Iterable[str] = ()) -> str:
    """Parameters as people read them: 'mode=write block_size=1m'."""
    if not params:
        return ""
    skip = set(skip)
    parts = []
    for key, value in params.items():
        if key in skip or value is None:
            continue
        if isinstance(value, int) and not isinstance(value, bool) and key in SIZE_PARAMS:
            value = format_size(value)
        elif isinstance(value, list | tuple):
            value = ",".join(map(str, value))
        parts.append(f"{key}={value}")
    return " ".join(parts)


# ---- results rows (library.results dicts) ----------------------------------------------------

def row_params(row: Mapping[str, Any]) -> dict[str, Any]:
    params = row.get("params") or {}
    if isinstance(params, str):
        try:
            params = json.loads(params)
        except ValueError:
            params = {"params": params}
    return dict(params)


def test_label(row: Mapping[str, Any], skip: Iterable[str] = ()) -> str:
    """A column of a results or comparison table: tool, test/metric and its parameters."""
    metric = str(row.get("metric", ""))
    tool = str(row.get("tool", ""))
    test = metric.split(":")[0]
    # 'engine write mode=write' says write twice
    params = format_params(row_params(row),
                           {*skip, *(k for k, v in row_params(row).items() if v == test)})
    return " ".join(p for p in (tool, metric, params) if p)


def _mean_std(row: Mapping[str, Any]) -> tuple[float | None, float | None, int]:
    mean = row.get("mean")
    std = row.get("stddev")
    n = int(row.get("n") or 0)
    values = [v for v in (row.get("values") or []) if v is not None]
    if mean is None and values:
        mean = statistics.fmean(values)
        n = len(values)
    if std is None and len(values) >= 2:
        std = statistics.stdev(values)
    return (None if mean is None else float(mean)), (None if std is None else float(std)), n


def _plottable(rows: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Rows worth a chart: throughput or op/s, not the per-process sub-figures."""
    return [r for r in rows if r.get("unit") in ("B/s", "op/s") and ":" not in str(r["metric"])
            and r.get("mean") is not None]


def results_charts(rows: Sequence[Mapping[str, Any]], title: str = "",
                   series_key: str = "config") -> list[ChartSpec]:
    """Grouped bar charts of a session's (or several sessions') results: one chart per tool and
    unit; bars grouped by test and parameters, one bar colour per configuration."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for r in _plottable(rows):
        groups.setdefault((str(r.get("tool", "")), str(r["unit"])), []).append(r)
    charts = []
    for (tool, unit), members in groups.items():
        shown, div = display_unit(unit)
        common = constant_params(members)

        def category(r: Mapping[str, Any], common: Mapping[str, Any] = common) -> str:
            return test_label(r, skip=common).removeprefix(f"{r.get('tool', '')} ")

        categories: list[str] = []
        names: list[str] = []
        for r in members:
            cat = category(r)
            if cat not in categories:
                categories.append(cat)
            name = str(r.get(series_key) or "")
            if name not in names:
                names.append(name)
        series = []
        for name in names:
            xs, ys, es = [], [], []
            for r in members:
                if str(r.get(series_key) or "") != name:
                    continue
                mean, std, _n = _mean_std(r)
                xs.append(float(categories.index(category(r))))
                ys.append((mean or 0.0) / div)
                es.append((std or 0.0) / div)
            series.append(Series(name or "results", tuple(xs), tuple(ys), tuple(es)))
        head = f"{title}: " if title else ""
        charts.append(ChartSpec(
            title=f"{head}{tool} ({shown})", kind="bar", x_label="test", y_label=shown,
            series=tuple(series), categories=tuple(categories),
            note="mean over repeats, whiskers ± 1 stddev" + (
                f"; every bar: {format_params(common)}" if common else ""),
        ))
    return charts


def sweep_key(rows: Sequence[Mapping[str, Any]]) -> str | None:
    """The parameter that varies most across rows, among the ones worth an x axis."""
    best, best_n = None, 1
    for key in SWEEP_KEYS:
        values = {row_params(r).get(key) for r in rows if key in row_params(r)}
        values.discard(None)
        if len(values) > best_n and all(isinstance(v, int | float) for v in values):
            best, best_n = key, len(values)
    return best


def sweep_charts(rows: Sequence[Mapping[str, Any]], key: str | None = None,
                 series_key: str = "config") -> list[ChartSpec]:
    """Line charts of throughput over a swept parameter (record size, file size, threads):
    one chart per tool and unit, one line per configuration x test x other parameters."""
    rows = _plottable(rows)
    key = key or sweep_key(rows)
    if key is None:
        return []
    common = constant_params(rows)
    groups: dict[tuple[str, str], dict[str, list[tuple[float, float, float]]]] = {}
    for r in rows:
        params = row_params(r)
        x = params.get(key)
        if not isinstance(x, int | float) or isinstance(x, bool):
            continue
        mean, std, _n = _mean_std(r)
        rest = format_params(params, skip=(key, *common,
                                           *(k for k, v in params.items() if v == r["metric"])))
        name = " ".join(p for p in (str(r.get(series_key) or ""), str(r["metric"]), rest) if p)
        lines = groups.setdefault((str(r.get("tool", "")), str(r["unit"])), {})
        lines.setdefault(name, []).append((float(x), mean or 0.0, std or 0.0))
    charts = []
    size_axis = key in SIZE_PARAMS
    for (tool, unit), lines in groups.items():
        shown, div = display_unit(unit)
        series = []
        for name, points in lines.items():
            points.sort()
            xs = tuple((p[0] / 1024 if size_axis else p[0]) for p in points)
            series.append(Series(name, xs, tuple(p[1] / div for p in points),
                                 tuple(p[2] / div for p in points)))
        charts.append(ChartSpec(
            title=f"{tool}: {shown} over {key}", kind="line",
            x_label=f"{key} (KiB)" if size_axis else key, y_label=shown,
            series=tuple(series), log_x=size_axis,
        ))
    return charts


def timeseries_chart(title: str, series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
                     unit: str, markers: Sequence[tuple[float, str]] = (),
                     t0: float | None = None) -> ChartSpec:
    """Live series as a line chart over seconds since t0 (the first sample by default)."""
    shown, div = display_unit(unit)
    if t0 is None:
        starts = [ts[0] for ts, _vs in series.values() if len(ts)]
        t0 = min(starts) if starts else 0.0
    out = tuple(
        Series(name, tuple(float(t) - t0 for t in ts), tuple(float(v) / div for v in vs))
        for name, (ts, vs) in series.items()
    )
    return ChartSpec(title=title, kind="line", x_label="time (s)", y_label=shown, series=out,
                     markers=tuple((t - t0, label) for t, label in markers))


# ---- comparison ------------------------------------------------------------------------------

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


def _better_high(metric: str, unit: str) -> bool:
    return not (unit == "ns" or "lat" in metric)


def compare_results(sessions: Sequence[tuple[str, Sequence[Mapping[str, Any]]]],
                    baseline: str | None = None, all_metrics: bool = True) -> Comparison:
    """Build the comparison from (session label, library.results rows) pairs.

    A session with one configuration is one row named after the session; with several, each
    configuration is a row 'session / config'. `baseline` names a row or a session (its first
    row); None takes the first row. Parameters equal in every row are left out of the column
    names (`Comparison.common` has them); `all_metrics=False` keeps only the main figures
    (no latency percentiles, IOPS or per-process sub-figures).
    """
    every = [r for _label, results in sessions for r in results
             if all_metrics or ":" not in str(r.get("metric", ""))]
    common = constant_params(every)
    cells: dict[tuple[str, str], Cell] = {}
    rows: list[str] = []
    columns: list[str] = []
    units: dict[str, str] = {}
    better: dict[str, bool] = {}
    for label, results in sessions:
        configs = list(dict.fromkeys(str(r.get("config") or "") for r in results))
        for r in results:
            if not all_metrics and ":" in str(r.get("metric", "")):
                continue
            config = str(r.get("config") or "")
            row = label if len(configs) <= 1 else f"{label} / {config}"
            if row not in rows:
                rows.append(row)
            col = test_label(r, skip=common)
            if col not in columns:
                columns.append(col)
            mean, std, n = _mean_std(r)
            unit = str(r.get("unit", ""))
            units[col] = unit
            better[col] = _better_high(str(r.get("metric", "")), unit)
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
        delta = cell.mean - ref.mean
        pct = (delta / ref.mean * 100.0) if ref.mean else None
        cells[(row, col)] = Cell(cell.mean, cell.stddev, cell.n, cell.unit, delta, pct)
    return Comparison(tuple(rows), tuple(columns), cells, base, units, better, common)


def cell_text(cell: Cell | None, with_delta: bool = True) -> str:
    """'512 MiB/s ± 3.1 (+4.2 %)'."""
    if cell is None or cell.mean is None:
        return "–"
    _shown, div = display_unit(cell.unit)
    text = format_value(cell.mean, cell.unit)
    if cell.stddev is not None and cell.n >= 2:
        text += f" ± {number(cell.stddev / div)}"
    if with_delta and cell.delta_pct is not None:
        text += f" ({cell.delta_pct:+.1f} %)"
    return text


def delta_class(comparison: Comparison, row: str, col: str, threshold: float = 2.0) -> str:
    """'better', 'worse' or 'same' against the baseline, for colour coding."""
    cell = comparison.cells.get((row, col))
    if cell is None or cell.delta_pct is None or row == comparison.baseline:
        return "same"
    if abs(cell.delta_pct) < threshold:
        return "same"
    good = (cell.delta_pct > 0) == comparison.higher_is_better.get(col, True)
    return "better" if good else "worse"


def comparison_markdown(c: Comparison) -> str:
    head = ["configuration", *c.columns]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in c.rows:
        name = f"{row} (baseline)" if row == c.baseline else row
        cells = [cell_text(c.cells.get((row, col)), row != c.baseline) for col in c.columns]
        lines.append("| " + " | ".join([name, *cells]) + " |")
    return "\n".join(lines) + "\n"


def comparison_csv(c: Comparison) -> str:
    """Long form, one line per row x column, in canonical units (for spreadsheets)."""
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["configuration", "test", "unit", "n", "mean", "stddev", "delta", "delta_pct",
                "baseline"])
    for row in c.rows:
        for col in c.columns:
            cell = c.cells.get((row, col))
            if cell is None:
                continue
            w.writerow([row, col, cell.unit, cell.n, _num(cell.mean), _num(cell.stddev),
                        _num(cell.delta), _num(cell.delta_pct), c.baseline or ""])
    return out.getvalue()


def _num(v: float | None) -> str:
    return "" if v is None else repr(float(v))


def comparison_json(c: Comparison) -> dict[str, Any]:
    return {
        "baseline": c.baseline,
        "rows": list(c.rows),
        "columns": [{"test": col, "unit": c.units.get(col, "")} for col in c.columns],
        "cells": [
            {"configuration": row, "test": col, "n": cell.n, "mean": cell.mean,
             "stddev": cell.stddev, "unit": cell.unit, "delta": cell.delta,
             "delta_pct": cell.delta_pct}
            for (row, col), cell in c.cells.items()
        ],
    }


def comparison_charts(c: Comparison) -> list[ChartSpec]:
    """One grouped bar chart per unit: categories are tests, one bar per configuration."""
    charts = []
    by_unit: dict[str, list[str]] = {}
    for col in c.columns:
        unit = c.units.get(col, "")
        metric = col.split(" ")[1] if " " in col else col
        if unit in ("B/s", "op/s") and ":" not in metric:
            by_unit.setdefault(unit, []).append(col)
    for unit, cols in by_unit.items():
        shown, div = display_unit(unit)
        series = []
        for row in c.rows:
            xs, ys, es = [], [], []
            for i, col in enumerate(cols):
                cell = c.cells.get((row, col))
                if cell is None or cell.mean is None:
                    continue
                xs.append(float(i))
                ys.append(cell.mean / div)
                es.append((cell.stddev or 0.0) / div)
            series.append(Series(row, tuple(xs), tuple(ys), tuple(es)))
        common = format_params(c.common)
        charts.append(ChartSpec(title=f"comparison ({shown})", kind="bar", x_label="test",
                                y_label=shown, series=tuple(series), categories=tuple(cols),
                                note=f"baseline: {c.baseline}" + (f"; all: {common}"
                                                                   if common else "")))
    return charts


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
        values = {row: _flat(facts.get(k)) for row, facts in configs.items()}
        if len(set(values.values())) > 1:
            out.append((k, values))
    return out


def _flat(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, list | tuple):
        return ",".join(map(str, v))
    if isinstance(v, dict):
        return json.dumps(v, sort_keys=True)
    return str(v)


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


# ---- SVG (Qt-free) ---------------------------------------------------------------------------

def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values covering lo..hi (1, 2, 5 x 10^n steps)."""
    if not math.isfinite(lo) or not math.isfinite(hi):
        return [0.0, 1.0]
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / max(count, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    v = math.floor(lo / step) * step
    ticks = [round(v, 12)]
    while ticks[-1] < hi:  # the last tick is at or above hi, so nothing is drawn off the axis
        v += step
        ticks.append(round(v, 12))
    return ticks


def _tick_text(v: float) -> str:
    if v == int(v) and abs(v) < 1e7:
        return str(int(v))
    return f"{v:.3g}"


def to_svg(spec: ChartSpec, width: int = 720, height: int = 380) -> str:
    """The chart as a standalone SVG document (for HTML reports written without Qt)."""
    left, right, top, bottom = 70, 20, 36, 70
    legend_rows = (len(spec.series) + 2) // 3
    bottom += 16 * legend_rows
    pw, ph = width - left - right, height - top - bottom
    esc = html.escape
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="14" '
        f'font-weight="bold">{esc(spec.title)}</text>',
    ]
    ys = [y + (s.err[i] if s.err else 0.0) for s in spec.series for i, y in enumerate(s.y)]
    ymax = max([*ys, 0.0]) or 1.0
    yt = nice_ticks(0.0, ymax)
    ytop = yt[-1] or 1.0

    def sy(v: float) -> float:
        return top + ph - (v / ytop) * ph

    if spec.kind == "bar":
        ncat = max(len(spec.categories), 1)
        xmin, xmax = -0.5, ncat - 0.5

        def sx(v: float) -> float:
            return left + (v - xmin) / (xmax - xmin) * pw
    else:
        xs_all = [x for s in spec.series for x in s.x] or [0.0, 1.0]
        if spec.log_x:
            xs_all = [math.log2(x) for x in xs_all if x > 0] or [0.0, 1.0]
        xmin, xmax = min(xs_all), max(xs_all)
        if xmax <= xmin:
            xmax = xmin + 1.0

        def sx(v: float) -> float:
            if spec.log_x:
                v = math.log2(v) if v > 0 else xmin
            return left + (v - xmin) / (xmax - xmin) * pw

    # grid and y axis
    for t in yt:
        y = sy(t)
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" '
                     'stroke="#ddd"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">'
                     f'{_tick_text(t)}</text>')
    parts.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" stroke="#333"/>')
    parts.append(f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" '
                 'stroke="#333"/>')
    parts.append(f'<text transform="translate(16,{top + ph / 2}) rotate(-90)" '
                 f'text-anchor="middle">{esc(spec.y_label)}</text>')
    parts.append(f'<text x="{left + pw / 2}" y="{top + ph + 44}" text-anchor="middle">'
                 f'{esc(spec.x_label)}</text>')

    if spec.kind == "bar":
        nser = max(len(spec.series), 1)
        slot = pw / max(len(spec.categories), 1)
        bw = slot * 0.8 / nser
        for i, cat in enumerate(spec.categories):
            cx = sx(float(i))
            label = cat if len(cat) <= 28 else cat[:27] + "…"
            parts.append(f'<text x="{cx:.1f}" y="{top + ph + 14}" text-anchor="middle" '
                         f'font-size="9">{esc(label)}</text>')
        for k, s in enumerate(spec.series):
            colour = PALETTE[k % len(PALETTE)]
            for i, (x, y) in enumerate(zip(s.x, s.y, strict=True)):
                x0 = sx(x) - slot * 0.4 + k * bw
                parts.append(f'<rect x="{x0:.1f}" y="{sy(y):.1f}" width="{bw:.1f}" '
                             f'height="{max(sy(0) - sy(y), 0):.1f}" fill="{colour}">'
                             f'<title>{esc(s.name)}: {y:.4g}</title></rect>')
                if s.err and s.err[i]:
                    mx = x0 + bw / 2
                    parts.append(f'<line x1="{mx:.1f}" y1="{sy(y + s.err[i]):.1f}" x2="{mx:.1f}" '
                                 f'y2="{sy(max(y - s.err[i], 0)):.1f}" stroke="#222"/>')
    else:
        xt = sorted({x for s in spec.series for x in s.x})
        if not spec.log_x:
            xt = nice_ticks(xmin, xmax)
        if len(xt) > 12:
            xt = xt[:: math.ceil(len(xt) / 12)]
        for t in xt:
            if spec.log_x or xmin <= t <= xmax:
                parts.append(f'<text x="{sx(t):.1f}" y="{top + ph + 14}" text-anchor="middle">'
                             f'{_tick_text(t)}</text>')
        for x, label in spec.markers:
            mx = sx(x)
            parts.append(f'<line x1="{mx:.1f}" y1="{top}" x2="{mx:.1f}" y2="{top + ph}" '
                         'stroke="#888" stroke-dasharray="4 3"/>')
            parts.append(f'<text x="{mx + 3:.1f}" y="{top + 10}" fill="#555">{esc(label)}</text>')
        for k, s in enumerate(spec.series):
            colour = PALETTE[k % len(PALETTE)]
            if not s.x:
                continue
            d = " ".join(f"{'M' if i == 0 else 'L'}{sx(x):.1f},{sy(y):.1f}"
                         for i, (x, y) in enumerate(zip(s.x, s.y, strict=True)))
            parts.append(f'<path d="{d}" fill="none" stroke="{colour}" stroke-width="1.5">'
                         f'<title>{esc(s.name)}</title></path>')
            if len(s.x) <= 40:
                for x, y in zip(s.x, s.y, strict=True):
                    parts.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="2.5" '
                                 f'fill="{colour}"/>')
    # legend
    ly = top + ph + 58
    for k, s in enumerate(spec.series):
        col, row = k % 3, k // 3
        lx = left + col * (pw / 3)
        colour = PALETTE[k % len(PALETTE)]
        name = s.name if len(s.name) <= 40 else s.name[:39] + "…"
        parts.append(f'<rect x="{lx:.1f}" y="{ly + row * 16 - 9}" width="10" height="10" '
                     f'fill="{colour}"/>')
        parts.append(f'<text x="{lx + 14:.1f}" y="{ly + row * 16}">{esc(name)}</text>')
    if spec.note:
        parts.append(f'<text x="{width - 6}" y="{height - 4}" text-anchor="end" font-size="9" '
                     f'fill="#666">{esc(spec.note)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


# ---- HTML (one self-contained file) ----------------------------------------------------------

_CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}
h1{font-size:1.6em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5em 0;font-size:.9em}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f2f2f2}td.num{text-align:right;font-variant-numeric:tabular-nums}
td.better{background:#d8f0d8}td.worse{background:#f6d5d5}
pre{background:#f6f6f6;padding:.6em;overflow:auto;font-size:.85em}
.note{color:#666;font-size:.85em}figure{margin:1em 0}
"""


@dataclass(frozen=True)
class HtmlTable:
    caption: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    classes: tuple[tuple[str, ...], ...] = ()  # per-cell CSS class (same shape as rows)


def html_report(title: str, facts: Sequence[tuple[str, str]], tables: Sequence[HtmlTable],
                charts: Sequence[ChartSpec], sections: Sequence[tuple[str, str]] = (),
                generator: str = "DiskLab") -> str:
    """One self-contained HTML page: facts, tables, inline SVG charts, preformatted sections."""
    e = html.escape
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{e(title)}</title><style>{_CSS}</style></head><body>",
           f"<h1>{e(title)}</h1>"]
    if facts:
        out.append("<table>")
        for k, v in facts:
            out.append(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>")
        out.append("</table>")
    for t in tables:
        out.append(f"<h2>{e(t.caption)}</h2><table><tr>")
        out.extend(f"<th>{e(h)}</th>" for h in t.header)
        out.append("</tr>")
        for i, row in enumerate(t.rows):
            out.append("<tr>")
            for j, cell in enumerate(row):
                cls = t.classes[i][j] if t.classes and i < len(t.classes) else ""
                attr = f' class="{e(cls)}"' if cls else ""
                out.append(f"<td{attr}>{e(cell)}</td>")
            out.append("</tr>")
        out.append("</table>")
    if charts:
        out.append("<h2>Charts</h2>")
        for spec in charts:
            out.append(f"<figure>{to_svg(spec)}</figure>")
    for heading, text in sections:
        out.append(f"<h2>{e(heading)}</h2><pre>{e(text)}</pre>")
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    out.append(f'<p class="note">Written by {e(generator)} on {stamp}.</p></body></html>')
    return "\n".join(out)


def comparison_html_table(c: Comparison) -> HtmlTable:
    rows, classes = [], []
    for row in c.rows:
        name = f"{row} (baseline)" if row == c.baseline else row
        rows.append((name, *(cell_text(c.cells.get((row, col)), row != c.baseline)
                             for col in c.columns)))
        classes.append(("", *(f"num {delta_class(c, row, col)}" for col in c.columns)))
    return HtmlTable("Comparison (mean ± stddev, delta against the baseline)",
                     ("configuration", *c.columns), tuple(rows), tuple(classes))


def table_markdown(table: HtmlTable) -> str:
    """Any HtmlTable as a Markdown table (for the README of an experiment, a mail, a ticket)."""
    def cell(text: str) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(map(cell, table.header)) + " |",
             "|" + "---|" * len(table.header)]
    lines += ["| " + " | ".join(map(cell, row)) + " |" for row in table.rows]
    return "\n".join(lines) + "\n"


def results_html_table(rows: Sequence[Mapping[str, Any]]) -> HtmlTable:
    out = []
    for r in rows:
        mean, std, n = _mean_std(r)
        unit = str(r.get("unit", ""))
        shown, div = display_unit(unit)
        out.append((str(r.get("config") or ""), str(r.get("tool", "")), str(r.get("metric", "")),
                    format_params(row_params(r)), format_value(mean, unit),
                    "" if std is None else f"{number(std / div)} {shown}", str(n)))
    return HtmlTable("Results (mean ± stddev over repeats)",
                     ("config", "tool", "metric", "parameters", "mean", "stddev", "n"),
                     tuple(out))


# ---- whole documents -------------------------------------------------------------------------

THROUGHPUT_SERIES = ("app_write_bps", "app_read_bps", "device_write_bps", "device_read_bps")
SERIES_LABELS = {"app_write_bps": "application write", "app_read_bps": "application read",
                 "device_write_bps": "device write", "device_read_bps": "device read",
                 "dirty_bytes": "Dirty", "writeback_bytes": "Writeback", "cpu_pct": "CPU"}


def samples_chart(samples: Sequence[Mapping[str, Any]], title: str = "Throughput over time",
                  names: Sequence[str] = THROUGHPUT_SERIES, unit: str = "B/s") -> ChartSpec | None:
    """A time-series chart from library.samples rows (t, case_id, repeat, series, value)."""
    series: dict[str, tuple[list[float], list[float]]] = {}
    for s in samples:
        if s["series"] in names:
            ts, vs = series.setdefault(str(s["series"]), ([], []))
            ts.append(float(s["t"]))
            vs.append(float(s["value"]))
    if not series:
        return None
    ordered = {SERIES_LABELS.get(n, n): (tuple(series[n][0]), tuple(series[n][1]))
               for n in names if n in series}
    return timeseries_chart(title, ordered, unit)


def session_charts(results: Sequence[Mapping[str, Any]],
                   samples: Sequence[Mapping[str, Any]] = ()) -> list[ChartSpec]:
    charts = results_charts(results) + sweep_charts(results)
    ts = samples_chart(samples)
    if ts is not None:
        charts.append(ts)
    return charts


def _when(t: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t)) if t else ""


def session_facts(session: Mapping[str, Any]) -> list[tuple[str, str]]:
    host = session.get("host") or {}
    facts = [("session", f"{session.get('id')}: {session.get('name', '')}"),
             ("status", str(session.get("status", ""))),
             ("started", _when(session.get("started"))),
             ("finished", _when(session.get("finished"))),
             ("repeats", str(session.get("repeats", "")))]
    for key, value in flatten(host).items():
        facts.append((f"host.{key}", _flat(value)))
    if session.get("tags"):
        facts.append(("tags", ", ".join(session["tags"])))
    if session.get("notes"):
        facts.append(("notes", str(session["notes"])))
    return facts


def session_html(session: Mapping[str, Any], results: Sequence[Mapping[str, Any]],
                 samples: Sequence[Mapping[str, Any]] = ()) -> str:
    """A session as one self-contained HTML file: facts, results, charts, plan, warnings."""
    sections = []
    if session.get("warnings"):
        sections.append(("Warnings", "\n".join(map(str, session["warnings"]))))
    if session.get("plan_text"):
        sections.append(("Plan", str(session["plan_text"])))
    return html_report(f"DiskLab session {session.get('id')}: {session.get('name', '')}",
                       session_facts(session), [results_html_table(results)],
                       session_charts(results, samples), sections)


def comparison_html(c: Comparison, sessions: Sequence[Mapping[str, Any]] = (),
                    diff: Sequence[tuple[str, Mapping[str, str]]] = ()) -> str:
    """A comparison as one HTML file: the table with coloured deltas, charts, config diff."""
    facts = [(f"session {s.get('id')}", f"{s.get('name', '')} ({s.get('status', '')}, "
              f"{_when(s.get('started'))})") for s in sessions]
    facts.append(("baseline", str(c.baseline)))
    tables = [comparison_html_table(c)]
    if diff:
        tables.append(HtmlTable("What differs between the configurations",
                                ("setting", *c.rows),
                                tuple((k, *(v.get(r, "–") for r in c.rows)) for k, v in diff)))
    return html_report("DiskLab comparison", facts, tables, comparison_charts(c))
