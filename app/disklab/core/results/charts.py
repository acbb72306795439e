"""Chart specs: what to draw, as plain data already in display units.

The very same ChartSpec is drawn by pyqtgraph in the window (gui/plots.py), by `svg.to_svg` in
files written on a headless server, and compared in tests. Charts show headline figures
(rows.is_headline) in the units a chart can share an axis for: throughput and operations.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from disklab.core.model import SIZE_KEYS
from disklab.core.results.compare import Comparison, better_is_higher
from disklab.core.results.format import (
    display_unit,
    figure_label,
    format_direction,
    format_left_out,
    format_params,
)
from disklab.core.results.pivot import Pivot
from disklab.core.results.rows import constant_params, is_headline, row_params, row_stats

# Parameter keys that are matrix axes worth a line chart (x axis), in order of preference.
SWEEP_KEYS = ("record_size", "block_size", "bs", "file_size", "size", "threads", "streams",
              "processes", "numjobs", "queue_depth", "iodepth")
CHART_UNITS = ("B/s", "op/s")
UNIT_NAMES = {"B/s": "throughput", "op/s": "IOPS", "ns": "latency", "%": "CPU"}

# Colours that read on light and dark backgrounds (Okabe-Ito, colour-blind safe).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442",
           "#000000")

# What the tool did (rchar/wchar: the bytes of its read and write calls, page cache or not) and
# what reached the device; the tool's storage-level bytes (app_*_bps, read_bytes/write_bytes of
# its processes) are kept in the library but are not "the application's rate": a buffered
# write reaches storage late and a cached read never does.
THROUGHPUT_SERIES = ("app_wchar_bps", "app_rchar_bps", "device_write_bps", "device_read_bps")
SERIES_LABELS = {"app_wchar_bps": "application write (syscalls)",
                 "app_rchar_bps": "application read (syscalls)",
                 "app_write_bps": "tool's storage write", "app_read_bps": "tool's storage read",
                 "device_write_bps": "device write", "device_read_bps": "device read",
                 "dirty_bytes": "Dirty", "writeback_bytes": "Writeback", "cpu_pct": "CPU"}


class SamplesSource(Protocol):
    """What the session charts read from the library (core.library.Library has it)."""

    def samples(self, session_id: int, case_id: str | None = None,
                series: str | None = None) -> list[dict[str, Any]]: ...


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
    better: str = ""  # which way is better: 'higher is better' (format_direction)

    @property
    def axis_title(self) -> str:
        """The value axis' title: the unit and which way is better ('MiB/s, higher is
        better'), so every chart says it next to its figures."""
        return f"{self.y_label}, {self.better}" if self.better else self.y_label

    def slug(self) -> str:
        """A file-name-safe name for exports."""
        keep = "".join(c if c.isalnum() else "-" for c in self.title.lower())
        return "-".join(p for p in keep.split("-") if p)[:60] or "chart"


def plottable(rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Rows worth a chart: headline figures in a chartable unit, with a mean."""
    return [r for r in rows if r.get("unit") in CHART_UNITS and is_headline(r)
            and r.get("mean") is not None]


def _left_out(rows: Sequence[Mapping[str, Any]]) -> str:
    """A chart note's part on the runs that did not complete and are not drawn."""
    text = format_left_out(str(e["status"]) for r in rows for e in r.get("excluded") or [])
    return f"; {text} from the means" if text else ""


def _runs_left_out(c: Comparison) -> str:
    text = format_left_out(r.status for r in c.incomplete.incomplete)
    return f"; {text} from the means" if text else ""


def direction(higher_is_better: Sequence[bool]) -> str:
    """Which way the figures of a chart are better, when they all agree ('' otherwise)."""
    ways = set(higher_is_better)
    return format_direction(ways.pop()) if len(ways) == 1 else ""


def _row_direction(r: Mapping[str, Any]) -> bool:
    return better_is_higher(str(r.get("metric", "")), str(r.get("unit", "")))


def results_charts(rows: Sequence[Mapping[str, Any]], title: str = "",
                   series_key: str = "config") -> list[ChartSpec]:
    """Grouped bar charts of a session's (or several sessions') results: one chart per tool and
    unit; bars grouped by test and parameters, one bar colour per configuration."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for r in plottable(rows):
        groups.setdefault((str(r.get("tool", "")), str(r["unit"])), []).append(r)
    charts = []
    for (tool, unit), members in groups.items():
        shown, div = display_unit(unit)
        common = constant_params(members)

        def category(r: Mapping[str, Any], common: Mapping[str, Any] = common) -> str:
            return figure_label(r, skip=common).removeprefix(f"{r.get('tool', '')} ")

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
                mean, std, _n = row_stats(r)
                xs.append(float(categories.index(category(r))))
                ys.append((mean or 0.0) / div)
                es.append((std or 0.0) / div)
            series.append(Series(name or "results", tuple(xs), tuple(ys), tuple(es)))
        head = f"{title}: " if title else ""
        charts.append(ChartSpec(
            title=f"{head}{tool} ({shown})", kind="bar", x_label="test",
            y_label=shown, better=direction([_row_direction(r) for r in members]),
            series=tuple(series), categories=tuple(categories),
            note="mean over repeats, whiskers ± 1 stddev" + (
                f"; every bar: {format_params(common)}" if common else "") + _left_out(members),
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
    rows = plottable(rows)
    key = key or sweep_key(rows)
    if key is None:
        return []
    common = constant_params(rows)
    groups: dict[tuple[str, str], dict[str, list[tuple[float, float, float]]]] = {}
    ways: dict[tuple[str, str], list[bool]] = {}
    for r in rows:
        params = row_params(r)
        x = params.get(key)
        if not isinstance(x, int | float) or isinstance(x, bool):
            continue
        mean, std, _n = row_stats(r)
        rest = format_params(params, skip=(key, *common,
                                           *(k for k, v in params.items() if v == r["metric"])))
        name = " ".join(p for p in (str(r.get(series_key) or ""), str(r["metric"]), rest) if p)
        lines = groups.setdefault((str(r.get("tool", "")), str(r["unit"])), {})
        ways.setdefault((str(r.get("tool", "")), str(r["unit"])), []).append(_row_direction(r))
        lines.setdefault(name, []).append((float(x), mean or 0.0, std or 0.0))
    charts = []
    size_axis = key in SIZE_KEYS
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
            x_label=f"{key} (KiB)" if size_axis else key,
            y_label=shown, better=direction(ways[(tool, unit)]),
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
    chart = timeseries_chart(title, ordered, unit)
    # a rate over time reads better higher, like every throughput figure
    return dataclasses.replace(chart, better=format_direction(unit in CHART_UNITS))


def thinned_samples(lib: SamplesSource, session_id: int, max_points: int = 4000
                    ) -> list[dict[str, Any]]:
    """The throughput samples, at most about `max_points` per series (every n-th): a run of
    hours has ~10^5 samples a series, and a chart shows a few thousand."""
    samples: list[dict[str, Any]] = []
    for name in THROUGHPUT_SERIES:
        rows = lib.samples(session_id, series=name)
        samples += rows[::max(1, len(rows) // max_points)]
    return samples


def session_charts(results: Sequence[Mapping[str, Any]],
                   samples: Sequence[Mapping[str, Any]] = ()) -> list[ChartSpec]:
    """A session's charts: bars per tool and unit, lines over a swept parameter, and the
    throughput over time."""
    charts = results_charts(results) + sweep_charts(results)
    ts = samples_chart(samples)
    if ts is not None:
        charts.append(ts)
    return charts


def comparison_charts(c: Comparison) -> list[ChartSpec]:
    """One grouped bar chart per unit: categories are tests, one bar per configuration."""
    charts = []
    by_unit: dict[str, list[str]] = {}
    for col in c.columns:
        unit = c.units.get(col, "")
        if unit in CHART_UNITS and is_headline({"metric": c.metrics.get(col, "")}):
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
        charts.append(ChartSpec(
            title=f"comparison ({shown})", kind="bar", x_label="test",
            y_label=shown, better=direction([c.higher_is_better.get(col, True) for col in cols]),
            series=tuple(series), categories=tuple(cols),
            note=f"baseline: {c.baseline}; whiskers ± 1 stddev" + (f"; all: {common}"
                                                                   if common else "")
            + ("" if c.incomplete.included else _runs_left_out(c))))
    return charts


def _bare(label: str, keys: Sequence[str]) -> str:
    """A pivot label without its 'key=' prefixes: the axis title names the keys once
    ('block_size / queue_depth'), each category says only its values ('4k / 32')."""
    for key in keys:
        label = label.replace(f"{key}=", "")
    return label


def pivot_charts(p: Pivot) -> list[ChartSpec]:
    """A pivot's grouped bar charts, one per unit (mixed units never share an axis): the
    categories are the pivot's columns, one bar colour per row; the chart says the common
    values once in its title and which way is better on its axis."""
    by_unit: dict[str, list[tuple[int, int]]] = {}
    for (i, j), cell in sorted(p.cells.items()):
        if cell.mean is not None:
            by_unit.setdefault(cell.unit, []).append((i, j))
    charts = []
    common = format_params(p.common)
    left_out = format_left_out(s for c in p.cells.values() for s in c.excluded_why)
    left_out = f"; {left_out} from the means" if left_out else ""
    for unit, where in by_unit.items():
        shown, div = display_unit(unit)
        cols = sorted({j for _i, j in where})
        series = []
        for i, row in enumerate(p.rows):
            xs, ys, es = [], [], []
            for k, j in enumerate(cols):
                cell = p.cells.get((i, j))
                if cell is None or cell.mean is None or cell.unit != unit:
                    continue
                xs.append(float(k))
                ys.append(cell.mean / div)
                es.append((cell.stddev or 0.0) / div if cell.n >= 2 else 0.0)
            if xs:
                series.append(Series(row, tuple(xs), tuple(ys), tuple(es)))
        ways = [p.higher_is_better.get(j, True) for j in cols]
        what = p.metrics[0] if len(p.metrics) == 1 else (
            f"{UNIT_NAMES[unit]} ({shown})" if unit in UNIT_NAMES else shown)
        charts.append(ChartSpec(
            title=f"{what}: {' / '.join(p.row_keys)} by {' / '.join(p.column_keys)}",
            kind="bar", x_label=" / ".join(p.column_keys), y_label=shown,
            better=direction(ways), series=tuple(series),
            categories=tuple(_bare(p.columns[j], p.column_keys) for j in cols),
            note="mean over repeats, whiskers ± 1 stddev" + (
                f"; every bar: {common}" if common else "") + left_out))
    return charts
