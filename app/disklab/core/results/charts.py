"""Chart specs: what to draw, as plain data already in display units.

The very same ChartSpec is drawn by `svg.to_svg` for the window's Library and Compare charts
(gui/chart.py shows that SVG) and for every exported file, PNG included, and compared in
tests. Charts show headline figures (rows.is_headline) in the units a chart can share an axis
for: throughput and operations.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from disklab.core.results.compare import BASELINE, Comparison, better_is_higher
from disklab.core.results.format import (
    display_unit,
    format_direction,
    format_left_out,
    format_params,
    number,
)
from disklab.core.results.labels import case_labels, number_of
from disklab.core.results.pivot import Pivot, label_part
from disklab.core.results.rows import is_headline, row_params, row_stats
from disklab.core.vocab.model import SIZE_KEYS
from disklab.core.vocab.units import format_size

# Parameter keys that are matrix axes worth a line chart (x axis), in order of preference.
SWEEP_KEYS = ("record_size", "block_size", "bs", "file_size", "size", "threads", "streams",
              "processes", "numjobs", "queue_depth", "iodepth", "files", "files_per_dir",
              "dirs", "journal_size", "read_ahead", "read_ahead_kb")
# Latency percentiles, drawn per case in a chart of their own (the order is their value's)
PERCENTILE_PREFIX = "lat_p"
CHART_UNITS = ("B/s", "op/s")
# A phase's time is the figure of a tool that times whole phases (the file-tree study reports
# create and delete in seconds): charted in seconds, in place of its bytes per second.
TIME_FIGURE = "seconds"
# iozone's threads = 0 is its single-process mode, not a count of processes: a category
SINGLE_PROCESS = ("threads", 0, "single process")
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
    """What to draw, in display units (B/s as MB/s or MiB/s: format.display_unit)."""

    title: str
    kind: str  # "line" | "bar" | "heatmap"
    x_label: str
    y_label: str
    series: tuple[Series, ...]
    categories: tuple[str, ...] = ()  # bar charts: label of each x index
    markers: tuple[tuple[float, str], ...] = ()  # vertical lines: (x, label), e.g. phases
    note: str = ""  # shown under the chart: tool versions, units
    log_x: bool = False  # a log-2 x axis: the swept values double
    better: str = ""  # which way is better: 'higher is better' (format_direction)
    x_ticks: tuple[tuple[float, str], ...] = ()  # line charts: the swept values, as labelled
    rows: tuple[str, ...] = ()  # heat maps: the label of each row of `grid` (top to bottom)
    grid: tuple[tuple[float | None, ...], ...] = ()  # heat maps: values, rows x categories
    log_y: bool = False  # a log-10 value axis: figures that span decades (percentiles)

    @property
    def axis_title(self) -> str:
        """The value axis' title: the unit and which way is better ('MB/s, higher is
        better'), so every chart says it next to its figures."""
        return f"{self.y_label}, {self.better}" if self.better else self.y_label

    def slug(self) -> str:
        """A file-name-safe name for exports."""
        keep = "".join(c if c.isascii() and c.isalnum() else "-" for c in self.title.lower())
        return "-".join(p for p in keep.split("-") if p)[:60] or "chart"


def plottable(rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Rows worth a chart: headline figures in a chartable unit, with a mean; a phase timed
    in seconds (TIME_FIGURE) in place of its throughput, as the studies report it."""
    timed = {(r.get("tool"), str(r.get("metric", "")).partition(":")[0]) for r in rows
             if str(r.get("metric", "")).partition(":")[2] == TIME_FIGURE
             and r.get("unit") == "s" and r.get("mean") is not None}
    return [r for r in rows if r.get("mean") is not None and is_headline(r) and (
        (r.get("unit") in CHART_UNITS
         and (r.get("tool"), str(r.get("metric", ""))) not in timed)
        or (r.get("unit") == "s" and str(r.get("metric", "")).endswith(f":{TIME_FIGURE}")))]


def single_process(text: str) -> str:
    """A label with iozone's threads=0 said as what it is ('single process')."""
    key, value, words = SINGLE_PROCESS
    return re.sub(rf"\b{key}={value}\b", words, text)


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


def n_note(ns: Iterable[int]) -> str:
    """How many runs each point or bar is the mean of: 'n=3 per point', 'n=1-3 per point';
    and what its whiskers are when any has repeats."""
    ns = sorted(set(ns))
    if not ns:
        return ""
    text = f"n={ns[0]}" if len(ns) == 1 else f"n={ns[0]}-{ns[-1]}"
    return f"{text} per point" + ("; whiskers ± 1 stddev" if ns[-1] >= 2 else "")


def doubling(values: Sequence[float]) -> bool:
    """Whether swept values double (1, 2, 4 ... or 4k, 8k, 16k, with steps of 2^k), or span
    16 times or more (64k ... 1m with a 320k among them): drawn on a log-2 axis, so each
    doubling is as wide as the next and the small values are not crammed together."""
    xs = sorted({v for v in values if v > 0})
    if len(xs) < 2 or len(xs) != len(set(values)):
        return False
    steps = [math.log2(b / a) for a, b in itertools.pairwise(xs)]
    return all(s >= 0.99 and abs(s - round(s)) < 0.01 for s in steps) or (
        len(xs) >= 3 and xs[-1] / xs[0] >= 16)


def axis_ticks(key: str, values: Sequence[float]) -> tuple[tuple[float, str], ...]:
    """The swept values as the x axis writes them: sizes in the plan's spelling ('4k', '1m'),
    numbers as numbers."""
    out = []
    for v in sorted(set(values)):
        text = (format_size(int(v)) if key in SIZE_KEYS and v == int(v)
                else str(int(v)) if v == int(v) else number(v))
        out.append((v, text))
    return tuple(out)


def _groups(rows: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str, str],
                                                        list[Mapping[str, Any]]]:
    """Rows by (tool, metric, unit): one chart each, never two quantities on one axis."""
    out: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for r in rows:
        out.setdefault((str(r.get("tool", "")), str(r.get("metric", "")), str(r["unit"])),
                       []).append(r)
    return out


def results_charts(rows: Sequence[Mapping[str, Any]], title: str = "",
                   series_key: str = "config") -> list[ChartSpec]:
    """A session's (or several sessions') results: one chart per tool, metric and unit; a
    group with a numeric swept parameter is a line chart over it (sweep_charts), the others
    grouped bars whose categories are the cases' labels (labels.case_labels: what differs),
    one bar colour per configuration."""
    charts = []
    for (tool, metric, unit), members in _groups(plottable(rows)).items():
        if sweep_key(members) is not None:
            continue  # drawn as lines by sweep_charts
        shown, div = display_unit(unit)
        labels = case_labels(members)
        categories = list(dict.fromkeys(single_process(labels.label(r)) or metric
                                        for r in members))
        names = list(dict.fromkeys(str(r.get(series_key) or "") for r in members))
        series = []
        for name in names:
            xs, ys, es = [], [], []
            for r in members:
                if str(r.get(series_key) or "") != name:
                    continue
                mean, std, _n = row_stats(r)
                xs.append(float(categories.index(single_process(labels.label(r)) or metric)))
                ys.append((mean or 0.0) / div)
                es.append((std or 0.0) / div)
            series.append(Series(name or "results", tuple(xs), tuple(ys), tuple(es)))
        head = f"{title}: " if title else ""
        charts.append(ChartSpec(
            title=f"{head}{tool} {metric} ({shown})", kind="bar", x_label="case",
            y_label=shown, better=direction([_row_direction(r) for r in members]),
            series=tuple(series), categories=tuple(categories),
            note="; ".join(filter(None, (n_note(row_stats(r)[2] for r in members),
                                         labels.heading.replace("every case", "every bar"))))
            + _left_out(members)))
    return charts


def sweep_key(rows: Sequence[Mapping[str, Any]]) -> str | None:
    """The parameter that varies most across rows, among the ones worth an x axis: numbers,
    and swept on their own (some line, every other parameter the same, has two of its
    values: a zipped shape, where file size, files and directories change together, is a
    category, not a sweep); iozone's threads = 0 (single process) is no count."""
    best, best_n = None, 1
    for key in SWEEP_KEYS:
        values = {row_params(r).get(key) for r in rows if key in row_params(r)}
        values.discard(None)
        if len(values) > best_n and all(isinstance(v, int | float) and not isinstance(v, bool)
                                        for v in values) and not _single_process_in(
                                            key, values) and _swept_alone(rows, key):
            best, best_n = key, len(values)
    return best


def _single_process_in(key: str, values: Iterable[Any]) -> bool:
    return key == SINGLE_PROCESS[0] and any(v == SINGLE_PROCESS[1] for v in values)


def _swept_alone(rows: Sequence[Mapping[str, Any]], key: str) -> bool:
    """Whether some rows alike in everything but `key` (configuration, metric and the other
    parameters) have two or more of its values: a line of more than one point."""
    lines: dict[str, set[str]] = {}
    for r in rows:
        params = row_params(r)
        if key not in params:
            continue
        rest = repr((r.get("config"), r.get("metric"),
                     sorted((k, repr(v)) for k, v in params.items() if k != key)))
        lines.setdefault(rest, set()).add(repr(params[key]))
    return any(len(v) >= 2 for v in lines.values())


def sweep_charts(rows: Sequence[Mapping[str, Any]], key: str | None = None,
                 series_key: str = "config") -> list[ChartSpec]:
    """Line charts over a swept parameter (block size, record size, queue depth, threads,
    streams): one chart per tool, metric and unit, one line per configuration and other
    varying parameters, whiskers ± 1 stddev, a log-2 axis where the values double."""
    charts = []
    for (tool, metric, unit), members in _groups(plottable(rows)).items():
        x_key = key or sweep_key(members)
        if x_key is None:
            continue
        labels = case_labels(members, skip=(x_key,))
        lines: dict[str, list[tuple[float, float, float, int]]] = {}
        for r in members:
            x = row_params(r).get(x_key)
            if not isinstance(x, int | float) or isinstance(x, bool):
                continue
            mean, std, n = row_stats(r)
            name = " ".join(p for p in (str(r.get(series_key) or ""), labels.label(r)) if p)
            lines.setdefault(name or metric, []).append((float(x), mean or 0.0, std or 0.0, n))
        if lines:
            charts.append(_line_chart(f"{tool} {metric}", unit, x_key, lines,
                                      [_row_direction(r) for r in members],
                                      labels.heading.replace("every case", "every point")))
    return charts


def _line_chart(what: str, unit: str, x_key: str,
                lines: Mapping[str, Sequence[tuple[float, float, float, int]]],
                ways: Sequence[bool], common: str, left_out: str = "") -> ChartSpec:
    """A line chart of (x, mean, stddev, n) points per line, in display units; x in the
    swept key's own values, labelled as the plan spells them."""
    shown, div = display_unit(unit)
    series = []
    xs_all: list[float] = []
    ns: list[int] = []
    for name, points in lines.items():
        points = sorted(points)
        xs_all += [p[0] for p in points]
        ns += [p[3] for p in points]
        series.append(Series(name, tuple(p[0] for p in points),
                             tuple(p[1] / div for p in points),
                             tuple((p[2] / div if p[3] >= 2 else 0.0) for p in points)))
    return ChartSpec(
        title=f"{what} ({shown}) against {x_key}", kind="line", x_label=x_key, y_label=shown,
        better=direction(ways), series=tuple(series), log_x=doubling(xs_all),
        x_ticks=axis_ticks(x_key, xs_all),
        note="; ".join(filter(None, (n_note(ns), common))) + left_out)


def _percentile(metric: str) -> str:
    """'read:lat_p99.9' -> 'p99.9'."""
    return metric.partition(":")[2].removeprefix("lat_")


def percentile_charts(rows: Sequence[Mapping[str, Any]], limit: int = 24) -> list[ChartSpec]:
    """Latency percentiles (p50, p99, p99.9 ... where the tool gives them) of every case in
    one chart, as fio-plot draws them: the percentiles along x, a bar per case and test, on a
    log axis (p50's hundreds of µs and p99.9's hundred ms both read); at most `limit` bars a
    percentile, the note says how many were left out."""
    found = [r for r in rows if str(r.get("metric", "")).partition(":")[2].startswith(
        PERCENTILE_PREFIX) and r.get("mean") is not None]
    if not found:
        return []
    labels = case_labels(found)
    names = sorted({_percentile(str(r["metric"])) for r in found},
                   key=lambda t: number_of(t[1:]) or 0.0)
    tests = {str(r["metric"]).partition(":")[0] for r in found}
    bars: dict[str, list[tuple[float, tuple[float | None, float | None, int]]]] = {}
    for r in found:
        name = " ".join(filter(None, (str(r.get("config") or ""), labels.label(r),
                                      str(r["metric"]).partition(":")[0]
                                      if len(tests) > 1 else "")))
        bars.setdefault(name or str(r.get("tool")), []).append(
            (float(names.index(_percentile(str(r["metric"])))), row_stats(r)))
    shown, div = display_unit(str(found[0].get("unit", "")))
    series = tuple(
        Series(name, tuple(x for x, _s in sorted(points)),
               tuple((s[0] or 0.0) / div for _x, s in sorted(points)),
               tuple(((s[1] or 0.0) / div if s[2] >= 2 else 0.0) for _x, s in sorted(points)))
        for name, points in list(bars.items())[:limit])
    left = len(bars) - len(series)
    return [ChartSpec(
        title=f"latency percentiles ({shown}), log scale", kind="bar", x_label="percentile",
        y_label=shown, better=format_direction(False), series=series, categories=tuple(names),
        log_y=True,
        note="; ".join(filter(None, (n_note(row_stats(r)[2] for r in found),
                                     labels.heading.replace("every case", "every bar"),
                                     f"{left} more cases not drawn" if left else ""))))]


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


# The charts of an imported run's fio logs (core.importing names their series fio_DIRECTION_
# KIND[:JOB]): (title, series name suffix, unit)
FIO_LOG_CHARTS = (("fio's logged throughput over time", "bw_bps", "B/s"),
                  ("fio's logged IOPS over time", "iops", "op/s"),
                  ("fio's logged latency over time", "_ns", "ns"))


def fio_log_series_names(names: Iterable[str], suffix: str) -> list[str]:
    """The fio log series among `names` whose kind ends with `suffix` (bw_bps, iops, _ns),
    in name order: fio_read_bw_bps, fio_write_bw_bps:2, ..."""
    return sorted(n for n in names
                  if n.startswith("fio_") and n.split(":")[0].endswith(suffix))


def fio_log_charts(lib: SamplesSource, session_id: int, max_points: int = 4000
                   ) -> list[ChartSpec]:
    """The time series of fio's own per-interval logs imported with a run (core.importing):
    throughput, IOPS and latency over time, each series thinned to about `max_points`; for
    the Library page and the HTML report alike."""
    samples = [s for s in lib.samples(session_id) if str(s["series"]).startswith("fio_")]
    if not samples:
        return []
    by_name: dict[str, list[Mapping[str, Any]]] = {}
    for s in samples:
        by_name.setdefault(str(s["series"]), []).append(s)
    thinned = [s for rows in by_name.values() for s in rows[::max(1, len(rows) // max_points)]]
    charts = []
    for title, suffix, unit in FIO_LOG_CHARTS:
        names = fio_log_series_names(by_name, suffix)
        chart = samples_chart(thinned, title, names, unit) if names else None
        if chart is not None:
            charts.append(chart)
    return charts


def session_charts(results: Sequence[Mapping[str, Any]],
                   samples: Sequence[Mapping[str, Any]] = ()) -> list[ChartSpec]:
    """A session's charts: per tool, metric and unit bars or lines over a swept parameter,
    the latency percentiles per case, and the throughput over time."""
    charts = results_charts(results) + sweep_charts(results) + percentile_charts(results)
    ts = samples_chart(samples)
    if ts is not None:
        charts.append(ts)
    return charts


def comparison_charts(c: Comparison) -> list[ChartSpec]:
    """One grouped bar chart per metric and unit (a 4k and a 1m test of one metric are
    categories of its chart, never bars of two charts' quantities on one axis): categories
    are the tests, one bar per configuration."""
    charts = []
    by_metric: dict[tuple[str, str], list[str]] = {}
    for col in c.columns:
        unit, metric = c.units.get(col, ""), c.metrics.get(col, "")
        if unit in CHART_UNITS and is_headline({"metric": metric}):
            by_metric.setdefault((metric, unit), []).append(col)
    for (metric, unit), cols in by_metric.items():
        shown, div = display_unit(unit)
        series = []
        ns = []
        for row in c.rows:
            xs, ys, es = [], [], []
            for i, col in enumerate(cols):
                cell = c.cells.get((row, col))
                if cell is None or cell.mean is None:
                    continue
                xs.append(float(i))
                ys.append(cell.mean / div)
                es.append((cell.stddev or 0.0) / div if cell.n >= 2 else 0.0)
                ns.append(cell.n)
            series.append(Series(row, tuple(xs), tuple(ys), tuple(es)))
        common = format_params(c.common)
        charts.append(ChartSpec(
            title=f"comparison: {metric} ({shown})", kind="bar", x_label="test",
            y_label=shown, better=direction([c.higher_is_better.get(col, True) for col in cols]),
            series=tuple(series), categories=tuple(cols),
            note="; ".join(filter(None, (f"baseline: {c.baseline}", n_note(ns),
                                         f"all: {common}" if common else "")))
            + ("" if c.incomplete.included else _runs_left_out(c))))
    return charts


def _bare(label: str, keys: Sequence[str]) -> str:
    """A pivot label without its 'key=' prefixes: the axis title names the keys once
    ('block_size / queue_depth'), each category says only its values ('4k / 32')."""
    for key in keys:
        label = label.replace(f"{key}=", "")
    return label


def _swept(values: Sequence[tuple[Any, ...]], keys: Sequence[str], x: str = "") -> int | None:
    """The index of an axis' swept key: `x` when the axis has it (a plan's [report] names
    it), else the first numeric key with several values (block size, record size, queue
    depth); None when the axis has none."""
    for k, key in enumerate(keys):
        if x and key != x:
            continue
        seen = {v[k] for v in values}
        lines: dict[tuple[Any, ...], set[Any]] = {}
        for v in values:  # the values of the axis' other keys: one line each
            lines.setdefault((*v[:k], *v[k + 1:]), set()).add(v[k])
        if key not in ("config", "session") and len(seen) >= 2 and all(
                number_of(x) is not None and not isinstance(x, bool) for x in seen) and (
                not _single_process_in(key, seen)) and any(len(s) >= 2 for s in lines.values()):
            return k
    return None


def _pivot_groups(p: Pivot) -> dict[tuple[str, str], list[tuple[int, int]]]:
    """The pivot's cells with a figure, by (metric, unit): one chart (or two) each."""
    out: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for (i, j), cell in sorted(p.cells.items()):
        if cell.mean is not None:
            out.setdefault((p.cell_metrics.get((i, j), ""), cell.unit), []).append((i, j))
    return out


def _pivot_common(p: Pivot) -> str:
    common = format_params(p.common)
    left_out = format_left_out(s for c in p.cells.values() for s in c.excluded_why)
    return "; ".join(filter(None, (f"every point: {common}" if common else "",
                                   f"{left_out} from the means" if left_out else "")))


def _verdicts(p: Pivot, where: Sequence[tuple[int, int]]) -> str:
    """What the table says of the charted cells, for the note: their verdicts against the
    baseline ('vs config=ext2: 3 better, 1 worse') and what limited them ('limited by: device
    (4 cells), too short (2)')."""
    parts = []
    if p.baseline:
        counts = Counter(v for ij in where if (v := p.cells[ij].verdict) not in ("", BASELINE))
        if counts:
            parts.append(f"vs {p.baseline}: " + ", ".join(
                f"{n} {v}" for v, n in counts.most_common()))
    kinds = Counter(limit.kind.replace("_", " ") for ij in where
                    for limit in p.cell_limits.get(ij, ()))
    if kinds:
        parts.append("limited by: " + ", ".join(
            f"{k} ({n} cell{'s' if n > 1 else ''})" for k, n in kinds.most_common()))
    return "; ".join(parts)


def pivot_charts(p: Pivot) -> list[ChartSpec]:
    """A pivot's charts, one per metric and unit, in the shape the field draws them: a
    numeric row or column key (block size, queue depth, threads) is a line chart over it with
    one line per value of the other axis; with both keys numeric (iodepth x numjobs) a heat
    map with the values in the cells comes first; otherwise grouped bars. Each chart says
    its unit, which way is better and n."""
    charts = []
    for (metric, unit), where in _pivot_groups(p).items():
        start = len(charts)
        on_rows = _swept([p.row_values[i] for i, _j in where], p.row_keys, p.x)
        on_cols = _swept([p.column_values[j] for _i, j in where], p.column_keys, p.x)
        if p.x and on_rows is not None:
            on_cols = None  # the report's x is on the rows: the columns are the lines
        if p.chart == "bars":
            on_rows = on_cols = None
        if on_rows is not None and on_cols is not None and len(p.row_keys) == 1 == len(
                p.column_keys) and p.chart in ("", "heatmap"):
            charts.append(_heatmap(p, metric, unit, where))
        if p.chart == "heatmap" and charts and charts[-1].kind == "heatmap":
            continue  # asked for the map alone
        if on_rows is not None:
            charts.append(_pivot_lines(p, metric, unit, where, True, on_rows))
        elif on_cols is not None:
            charts.append(_pivot_lines(p, metric, unit, where, False, on_cols))
        else:
            charts.append(_pivot_bars(p, metric, unit, where))
        said = _verdicts(p, where)
        if said:  # every chart of these cells says what the table says of them
            charts[start:] = [dataclasses.replace(c, note="; ".join(filter(None, (c.note, said))))
                              for c in charts[start:]]
    return charts


def _pivot_lines(p: Pivot, metric: str, unit: str, where: Sequence[tuple[int, int]],
                 along_rows: bool, k: int) -> ChartSpec:
    """The cells as lines: x the rows' (or columns') swept key (its k-th), a line per value of
    every other key (the other axis' label, the rest of this axis' keys: a configuration)."""
    keys = p.row_keys if along_rows else p.column_keys
    values = p.row_values if along_rows else p.column_values
    lines: dict[str, list[tuple[float, float, float, int]]] = {}
    several = len({(j if along_rows else i) for i, j in where}) > 1
    for i, j in sorted(where, key=lambda ij: ij[::-1] if along_rows else ij):
        cell = p.cells[(i, j)]
        mine = values[i if along_rows else j]
        rest = [label_part(key, v) for n, (key, v) in enumerate(zip(keys, mine, strict=True))
                if n != k and v is not None]  # dd has no queue depth: not 'queue_depth=–'
        if several:
            rest.append(p.columns[j] if along_rows else p.rows[i])
        lines.setdefault(" / ".join(rest) or metric, []).append(
            (number_of(mine[k]) or 0.0, cell.mean or 0.0, cell.stddev or 0.0, cell.n))
    return _line_chart(metric, unit, keys[k], lines,
                       [p.higher_is_better.get(j, True) for _i, j in where], _pivot_common(p))


def _heatmap(p: Pivot, metric: str, unit: str, where: Sequence[tuple[int, int]]) -> ChartSpec:
    """The cells as a heat map: rows x columns as the table has them, each value written in
    its cell, the colour its size."""
    shown, div = display_unit(unit)
    rows = sorted({i for i, _j in where})
    cols = sorted({j for _i, j in where})
    cells = set(where)
    grid = tuple(tuple((p.cells[(i, j)].mean or 0.0) / div if (i, j) in cells else None
                       for j in cols) for i in rows)
    return ChartSpec(
        title=f"{metric} ({shown}): {p.row_keys[0]} x {p.column_keys[0]}", kind="heatmap",
        x_label=p.column_keys[0], y_label=shown, series=(),
        better=direction([p.higher_is_better.get(j, True) for _i, j in where]),
        categories=tuple(_bare(p.columns[j], p.column_keys) for j in cols),
        rows=tuple(_bare(p.rows[i], p.row_keys) for i in rows), grid=grid,
        note="; ".join(filter(None, (f"rows: {p.row_keys[0]}",
                                     n_note(p.cells[ij].n for ij in where)
                                     .replace("per point", "per cell")
                                     .replace("; whiskers ± 1 stddev", ""),
                                     _pivot_common(p)))))


def _pivot_bars(p: Pivot, metric: str, unit: str, where: Sequence[tuple[int, int]]
                ) -> ChartSpec:
    """The cells as grouped bars: the columns are the categories, a colour per row."""
    shown, div = display_unit(unit)
    cols = sorted({j for _i, j in where})
    cells = set(where)
    series = []
    for i, row in enumerate(p.rows):
        xs, ys, es = [], [], []
        for k, j in enumerate(cols):
            if (i, j) not in cells:
                continue
            cell = p.cells[(i, j)]
            xs.append(float(k))
            ys.append((cell.mean or 0.0) / div)
            es.append((cell.stddev or 0.0) / div if cell.n >= 2 else 0.0)
        if xs:
            series.append(Series(single_process(row), tuple(xs), tuple(ys), tuple(es)))
    what = metric or (f"{UNIT_NAMES[unit]}" if unit in UNIT_NAMES else shown)
    return ChartSpec(
        title=f"{what} ({shown}): {' / '.join(p.row_keys)} by {' / '.join(p.column_keys)}",
        kind="bar", x_label=" / ".join(p.column_keys), y_label=shown,
        better=direction([p.higher_is_better.get(j, True) for j in cols]),
        series=tuple(series),
        categories=tuple(_bare(single_process(p.columns[j]), p.column_keys) for j in cols),
        note="; ".join(filter(None, (n_note(p.cells[ij].n for ij in where),
                                     _pivot_common(p).replace("every point", "every bar")))))
