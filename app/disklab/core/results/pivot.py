"""Pivot tables: result rows laid out with the rows and columns a person chooses.

Every reference study reports its figures this way: rows = journal size, columns = iozone test;
rows = processes a, a+b, a+b+c, columns = write/rewrite/read/reread; rows = block size,
columns = read/write. A pivot takes the results rows of one or several sessions and keys for
its rows and its columns (model.PIVOT_KEYS, or any parameter name), in the order of the keys
given and each key's values in value order (labels.value_rank: 1, 2, 4, 16; 4k < 64k < 1m;
"all" last); each cell is a value, the mean ± stddev with n and CV. Only when asked (a
`baseline` such as 'iodepth=1' or 'config=ext2') is each cell tested against the cell with that
value and every other key the same: the same metric, unit and test, never a delete time
against a create time (compare.judged, Welch's test), so a pivot says the same as a comparison.

What is the same in every row of the table is said once (`Pivot.common`, the heading; a tool's
default nobody set is left out), never in each label. A dimension that still varies inside a
cell (a parameter not chosen, a second metric) is added to the columns rather than averaged
away, and the note says so. `--where KEY=VALUE` keeps the rows it names (filter_rows). `disklab
compare --rows/--columns`, the Compare page and every export build their pivot here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from disklab.core.results.compare import (
    BASELINE,
    BETTER,
    WORSE,
    Cell,
    better_is_higher,
    judged,
    row_cell,
    row_name,
    unlike,
)
from disklab.core.results.format import MISSING, format_params
from disklab.core.results.labels import number_of, unset_default, value_rank
from disklab.core.results.limit_words import limits_of
from disklab.core.results.limits import Limit
from disklab.core.results.rows import is_headline, row_params
from disklab.core.results.stats import ALPHA
from disklab.core.vocab.model import PIVOT_KEYS, Report

# Keys a row has outside its parameters; 'test' is the metric's test part ('write' of
# 'write:iops'), 'figure' its other part ('iops', 'min_proc'; 'throughput' for a plain
# metric): the statistic as an axis of its own, so that min/max/avg per process can be rows
# while the tests are columns), 'metric' the whole metric name, 'session' the session.
ROW_KEYS = ("config", "tool", "test", "figure", "metric", "session")
PLAIN_FIGURE = "throughput"  # the figure of a metric without suffix ('write')
NO_BASELINE = "none"  # `--baseline none`: cells are values, even where a [report] names one
# A row's configuration label as its plan names it, kept beside `config` (which, across
# several sessions, names the session too) for a pivot that has `session` as a key of its own.
CONFIG_NAME = "_config_name"
# The order in which dimensions left varying inside a cell are added to the columns.
RESIDUAL_ORDER = ("session", "config", "tool", "test", "metric")


class PivotKeyError(ValueError):
    """A pivot key that no result row has; the message names it and lists the valid ones."""

    def __init__(self, key: str, valid: Sequence[str]):
        super().__init__(f"unknown pivot key {key!r} (valid: {', '.join(valid)})")
        self.key = key
        self.valid = tuple(valid)


@dataclass(frozen=True)
class Pivot:
    """Rows x columns of cells (compare.Cell: mean, stddev, n, CV; compared with a baseline,
    its difference and Welch's verdict). Labels are text; `common` holds the keys with one
    value in the whole table (the heading), `added` the keys that were added to the columns
    because they varied inside a cell; `row_values`/`column_values` the keys' values of each
    row and column (a chart's axis), `cell_metrics` each cell's metric."""

    row_keys: tuple[str, ...]
    column_keys: tuple[str, ...]
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    cells: Mapping[tuple[int, int], Cell]
    common: Mapping[str, Any] = field(default_factory=dict)
    added: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()  # the metric names the table holds
    higher_is_better: Mapping[int, bool] = field(default_factory=dict)  # column -> way
    alpha: float = ALPHA
    baseline_key: str = ""  # the key compared along ('' : cells are values, no test)
    baseline_value: str = ""  # its value every other is compared with, as labelled: 'iodepth=1'
    # each row's and column's values of its keys (16, 4096, 'ext2'): what a chart's axis reads
    row_values: tuple[tuple[Any, ...], ...] = ()
    column_values: tuple[tuple[Any, ...], ...] = ()
    cell_metrics: Mapping[tuple[int, int], str] = field(default_factory=dict)
    # the chart a plan's [report] asks for: "lines", "bars", "heatmap" ('' : chosen by the
    # data), and the key its x axis sweeps ('' : the first numeric key with several values)
    chart: str = ""
    x: str = ""
    # each cell's verdicts of what limited it (limit_words.with_limits rows), absent when not judged
    cell_limits: Mapping[tuple[int, int], tuple[Limit, ...]] = field(default_factory=dict)
    # the configurations of the sessions shown without a figure (compare.missing_configs)
    missing: tuple[str, ...] = ()

    def cell(self, i: int, j: int) -> Cell | None:
        return self.cells.get((i, j))

    @property
    def baseline(self) -> str | None:
        """What every compared cell was compared with ('iodepth=1'); None without a test."""
        return self.baseline_value or None

    @property
    def against(self) -> str:
        """'row' when the baseline is a row key's value, 'column' a column key's, '' none."""
        if not self.baseline_key:
            return ""
        return "row" if self.baseline_key in self.row_keys else "column"


def value_of(row: Mapping[str, Any], key: str) -> Any:
    """A row's value for a pivot key: its config, tool, test part, metric, session, or a
    parameter (None when the row has no such parameter)."""
    if key == "test":
        return str(row.get("metric", "")).split(":")[0]
    if key == "figure":
        return str(row.get("metric", "")).partition(":")[2] or PLAIN_FIGURE
    if key in ROW_KEYS:
        return row.get(key)
    return row_params(row).get(key)


def label_part(key: str, value: Any) -> str:
    """One key's part of a label: the bare value of config, tool, test, metric and session,
    'key=value' for a parameter (sizes in the plan's spelling: 'block_size=4k')."""
    if value is None:
        return f"{key}={MISSING}" if key not in ROW_KEYS else MISSING
    if key in ROW_KEYS:
        return str(value)
    return format_params({key: value})


def label(row: Mapping[str, Any], keys: Sequence[str]) -> str:
    """The label of a row or column: its keys' parts joined by ' / '."""
    return " / ".join(label_part(k, value_of(row, k)) for k in keys) or "all"


def valid_keys(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The keys a pivot of these rows may use: model.PIVOT_KEYS and every parameter."""
    return list(dict.fromkeys([*PIVOT_KEYS, *_param_keys(rows)]))


def _param_keys(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every parameter of the rows, in first-seen order. A row's parameters are read where they
    lie (row_params copies them, and a 10,000-run session has 6,000 rows to go through)."""
    seen: dict[str, None] = {}
    for r in rows:
        params = r.get("params")
        for k in params if isinstance(params, dict) else row_params(r):
            if k not in seen:
                seen[k] = None
    return list(seen)


def check_keys(keys: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> None:
    """PivotKeyError for the first key not valid for these rows."""
    valid = valid_keys(rows)
    for key in keys:
        if key not in valid:
            raise PivotKeyError(key, valid)


def metric_matches(metric: str, names: Sequence[str]) -> bool:
    """Whether a metric is one of `names`: its whole name ('write:iops'), its suffix ('iops',
    'lat_mean', 'cpu') or, for a plain throughput metric, 'throughput'."""
    suffix = metric.partition(":")[2]
    return metric in names or (bool(suffix) and suffix in names) or (
        not suffix and "throughput" in names)


def select(rows: Sequence[Mapping[str, Any]], metrics: Sequence[str] = ()
           ) -> list[Mapping[str, Any]]:
    """The rows a pivot shows: those of `metrics` when given; else each test's main figure
    (the metric without suffix: throughput), and where a test has none, its headline rows."""
    if metrics:
        return [r for r in rows if metric_matches(str(r.get("metric", "")), metrics)]
    plain = {(r.get("tool"), value_of(r, "test")) for r in rows
             if ":" not in str(r.get("metric", "")) and r.get("mean") is not None}
    return [r for r in rows
            if (":" not in str(r.get("metric", "")) and r.get("mean") is not None)
            or ((r.get("tool"), value_of(r, "test")) not in plain and is_headline(r))]


def session_rows(sessions: Sequence[tuple[str, Sequence[Mapping[str, Any]]]]
                 ) -> list[dict[str, Any]]:
    """Every results row of (session label, rows) pairs, with `session` set and, when there
    are several sessions, `config` named as a comparison names its rows ('3 ext4 / a')."""
    out = []
    several = len(sessions) > 1
    for name, results in sessions:
        configs = len({str(r.get("config") or "") for r in results}) > 1
        for r in results:
            config = str(r.get("config") or "")
            out.append({**r, "session": name, CONFIG_NAME: config,
                        "config": row_name(name, config, configs) if several else config})
    return out


def _varying(rows: Sequence[Mapping[str, Any]], keys: Sequence[str]) -> list[str]:
    """The keys with more than one value among rows (a missing parameter is a value too)."""
    out = []
    for k in keys:
        if rows:  # up to the first row that differs from the first
            first = repr(value_of(rows[0], k))
            if any(repr(value_of(r, k)) != first for r in rows):
                out.append(k)
    return out


def _dimensions(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every dimension a row has: the row keys, then the parameters in first-seen order."""
    return list(dict.fromkeys([*RESIDUAL_ORDER, *_param_keys(rows)]))


class _Labels:
    """Each row's label parts worked out once: a pivot of a 10,000-run session groups its rows
    by the same keys several times over while it finds the columns a cell needs."""

    def __init__(self, rows: Sequence[Mapping[str, Any]]):
        self.rows = rows
        self._parts: list[dict[str, str]] = [{} for _ in rows]
        self._joined: dict[tuple[str, ...], list[str]] = {}

    def part(self, i: int, key: str) -> str:
        parts = self._parts[i]
        text = parts.get(key)
        if text is None:
            text = parts[key] = label_part(key, value_of(self.rows[i], key))
        return text

    def of(self, i: int, keys: Sequence[str]) -> str:
        """The label of row i for these keys (label()); every row's labels for one tuple of
        keys are made together, from those of the keys but the last when they are known."""
        keys = tuple(keys)
        joined = self._joined.get(keys)
        if joined is None:
            head = self._joined.get(keys[:-1]) if len(keys) > 1 else None
            if head is not None:
                joined = [f"{h} / {self.part(k, keys[-1])}" for k, h in enumerate(head)]
            else:
                joined = [" / ".join(self.part(k, key) for key in keys) or "all"
                          for k in range(len(self.rows))]
            self._joined[keys] = joined
        return joined[i]

    def varies(self, group: Sequence[int], key: str) -> bool:
        """Whether `key` has more than one value among the rows in `group` (a missing
        parameter is a value too)."""
        first = repr(value_of(self.rows[group[0]], key))
        return any(repr(value_of(self.rows[i], key)) != first for i in group[1:])


class BaselineError(ValueError):
    """A baseline a pivot cannot compare along: not a value of its rows or columns, or a
    metric (a delete time is never judged against a create time)."""


def parse_where(text: str) -> tuple[str, str]:
    """'KEY=VALUE' (`--where`) as (key, value); ValueError naming the text otherwise."""
    key, eq, value = text.partition("=")
    if not eq or not key.strip():
        raise ValueError(f"--where {text!r}: expected KEY=VALUE (e.g. iodepth=16)")
    return key.strip(), value.strip().strip("\"'")


def _matches(key: str, value: Any, wanted: str) -> bool:
    """Whether a row's value of `key` is the one a person typed: its label ('4k', 'a'), its
    'key=value' form or the same number or size ('4096' for 4k)."""
    if value is None:
        return False
    part = label_part(key, value)
    if wanted in (part, str(value), f"{key}={part}") or part == f"{key}={wanted}":
        return True
    if key == "config" and (str(value).startswith(f"{wanted} / ")
                            or wanted.endswith(f" / {value}")):
        return True  # a comparison names a configuration with its session: '3 raid / ext2'
    if isinstance(value, bool):
        return str(value).lower() == wanted.lower()
    a, b = number_of(value), number_of(wanted)
    return a is not None and a == b


def filter_rows(rows: Sequence[Mapping[str, Any]], where: Sequence[tuple[str, str]]
                ) -> list[Mapping[str, Any]]:
    """The rows whose every (key, value) of `where` matches (`--where KEY=VALUE`, repeated:
    all must hold); PivotKeyError for a key no row has."""
    if not where:
        return list(rows)
    check_keys([k for k, _v in where], rows)
    return [r for r in rows if all(_matches(k, value_of(r, k), v) for k, v in where)]


def _order(labels: Sequence[str], first: Mapping[str, Mapping[str, Any]],
           keys: Sequence[str], ranks: Mapping[str, Callable[[Any], tuple[int, float]]]
           ) -> list[str]:
    """Labels sorted by their keys' values, the first key major (rows = record_size, config:
    every configuration within one record size)."""
    def key(text: str) -> tuple[tuple[int, float], ...]:
        return tuple(ranks[k](value_of(first[text], k)) for k in keys)
    return sorted(labels, key=key)


def _metric_rank(key: str, metrics: Sequence[str]) -> Callable[[Any], int | None]:
    """Where a value of 'test', 'figure' or 'metric' comes in the metrics a person listed
    (a [report]'s `metrics`, `--metric`): the write tests before the read tests as the
    journal-size study prints them; None for a value the list does not place."""
    def places(name: str, value: Any) -> bool:
        test, colon, figure = name.partition(":")
        if key == "metric":
            return metric_matches(str(value), [name])
        if key == "test":
            return test == value
        return (figure if colon else name) == value  # 'min_proc' or 'write:min_proc'

    def rank(value: Any) -> int | None:
        return next((n for n, name in enumerate(metrics) if places(name, value)), None)
    return rank


def _ranks(chosen: Sequence[Mapping[str, Any]], keys: Sequence[str], metrics: Sequence[str],
           plan_order: bool) -> dict[str, Callable[[Any], tuple[int, float]]]:
    """Each key's sort key: the metrics' order where they were listed; then the plan's order
    (each value where it first comes in the rows, which follow the plan's cases: tests 1-6 as
    the study numbers them) when `plan_order`, else value order (labels.value_rank)."""
    out: dict[str, Callable[[Any], tuple[int, float]]] = {}
    for k in dict.fromkeys(keys):
        values = [value_of(r, k) for r in chosen]
        base = _first_seen(values) if plan_order else value_rank(values)
        if metrics and k in ("test", "figure", "metric"):
            out[k] = _listed_first(_metric_rank(k, metrics), base)
        else:
            out[k] = base
    return out


def _first_seen(values: Sequence[Any]) -> Callable[[Any], tuple[int, float]]:
    """A sort key placing each value where it first comes; "all" (the aggregate of several
    targets or hosts) after every named value, as labels.value_rank places it."""
    seen: dict[str, int] = {}
    for v in values:
        seen.setdefault(repr(v), len(seen))
    return lambda v: (3 if v == "all" else 2, float(seen.get(repr(v), len(seen))))


def _listed_first(listed: Callable[[Any], int | None], base: Callable[[Any], tuple[int, float]]
                  ) -> Callable[[Any], tuple[int, float]]:
    """A sort key: the listed values in the list's order, then the others by `base`."""
    def rank(v: Any) -> tuple[int, float]:
        n = listed(v)
        if n is not None:
            return (0, float(n))
        group, order = base(v)
        return (10 + group, order)
    return rank


def resolve_baseline(text: str, rows: Sequence[Mapping[str, Any]], keys: Sequence[str]
                     ) -> tuple[str, str]:
    """The (key, label part) a baseline names: 'iodepth=1', 'config="Disk - 16MB"', or a
    bare value of one of `keys` ('ext2', '4k'). BaselineError when it names none, or names a
    test or metric (cells of different metrics are never compared)."""
    key, eq, value = text.partition("=")
    key = key.strip()
    named = bool(eq) and key in keys
    value = (value if named else text).strip().strip("\"'")
    if eq and key in ("test", "metric"):
        raise BaselineError(f"--baseline {text!r}: tests and metrics are never compared with "
                            "each other; name a configuration or a parameter value")
    for k in [key] if named else keys:
        if k in ("test", "metric"):
            continue
        for r in rows:
            v = value_of(r, k)
            if _matches(k, v, value):
                return k, label_part(k, v)
    shown = ", ".join(k for k in keys if k not in ("test", "metric"))
    raise BaselineError(f"--baseline {text!r}: no row or column has that value (compare along "
                        f"one of {shown or 'config'}: KEY=VALUE)")


def _group(chosen: Sequence[Mapping[str, Any]], labels: _Labels, row_keys: tuple[str, ...],
           column_keys: tuple[str, ...]) -> list[str]:
    """The keys added to the columns so that no cell holds two different figures."""
    dims = _dimensions(chosen)
    added: list[str] = []
    while True:
        groups: dict[tuple[str, str], list[int]] = {}
        for i in range(len(chosen)):
            groups.setdefault((labels.of(i, row_keys), labels.of(i, (*column_keys, *added))),
                              []).append(i)
        clash = [g for g in groups.values() if len(g) > 1]
        taken = {*row_keys, *column_keys, *added}
        if "metric" in taken:
            taken |= {"test", "figure"}  # the metric names its test and its figure
        if "figure" in taken:
            taken.add("metric")  # the figure varies, never the metric past it: 'test' is added
        free = [k for k in dims if k not in taken]
        # the first dimension varying inside a clashing cell (cells in table order, dimensions
        # in RESIDUAL_ORDER then first-seen parameters) is added to the columns ...
        extra = next((k for g in clash for k in free if labels.varies(g, k)), None)
        # ... but the metric names its test: added alone, not after a 'test' that leaves it
        # varying ('ext2 / create:seconds', not 'ext2 / create / create:seconds')
        if extra == "test" and "figure" not in taken and any(
                labels.varies(g, "metric") for g in clash):
            extra = "metric"
        if extra is None:
            return added
        added.append(extra)


def _common(chosen: Sequence[Mapping[str, Any]], shown: set[str]) -> dict[str, Any]:
    """What every cell shares, for the heading; a tool's default nobody set is left out."""
    if not chosen:
        return {}
    first = chosen[0]
    return {k: value_of(first, k) for k in _dimensions(chosen)
            if k not in shown and not _varying(chosen, [k])
            and value_of(first, k) is not None and k not in ("metric", "session")
            and not (k not in ROW_KEYS and unset_default(chosen, k, value_of(first, k)))}


def build_pivot(rows: Sequence[Mapping[str, Any]], row_keys: Sequence[str] = ("config",),
                column_keys: Sequence[str] = ("test",), metrics: Sequence[str] = (),
                alpha: float = ALPHA, baseline: str | None = None,
                where: Sequence[tuple[str, str]] = (), plan_order: bool = False,
                baseline_optional: bool = False) -> Pivot:
    """The pivot of results rows (session_results(...).rows, or session_rows of several).

    Rows and columns are ordered by their keys' values (labels.value_rank: numbers in number
    order, the first key major); every dimension that still varies within a cell is appended to
    the columns (Pivot.added). Cells are values; with `baseline` ('iodepth=1', 'config=a', a
    bare value), each cell is tested against the cell with that value and every other key the
    same (like with like: same metric, unit and test). `where` keeps the rows whose values
    match. Tests, figures and metrics come in the order `metrics` lists them; the other keys'
    values in the plan's order when `plan_order` (a [report]'s layout). PivotKeyError for a
    key no row can have, BaselineError for a baseline it cannot compare along, unless
    `baseline_optional` (a [report]'s baseline, which `--where` may have filtered away: the
    cells are then values)."""
    row_keys, column_keys = tuple(row_keys), tuple(column_keys)
    check_keys([*row_keys, *column_keys], rows)
    if "session" in (*row_keys, *column_keys):  # session and config apart: 'a', not '3 x / a'
        rows = [{**r, "config": r[CONFIG_NAME]} if CONFIG_NAME in r else r for r in rows]
    chosen = select(filter_rows(rows, where), metrics)
    labels = _Labels(chosen)
    all_columns = (*column_keys, *_group(chosen, labels, row_keys, column_keys))
    row_of = [labels.of(k, row_keys) for k in range(len(chosen))]
    column_of = [labels.of(k, all_columns) for k in range(len(chosen))]
    first_row = {t: chosen[k] for k, t in reversed(list(enumerate(row_of)))}
    first_col = {t: chosen[k] for k, t in reversed(list(enumerate(column_of)))}
    ranks = _ranks(chosen, (*row_keys, *all_columns), metrics, plan_order)
    row_labels = _order(list(dict.fromkeys(row_of)), first_row, row_keys, ranks)
    col_labels = _order(list(dict.fromkeys(column_of)), first_col, all_columns, ranks)
    row_index = {name: i for i, name in enumerate(row_labels)}
    column_index = {name: j for j, name in enumerate(col_labels)}
    cells: dict[tuple[int, int], Cell] = {}
    coords: dict[tuple[int, int], dict[str, str]] = {}
    metric_of: dict[tuple[int, int], str] = {}
    limited: dict[tuple[int, int], tuple[Limit, ...]] = {}
    ways: dict[int, list[bool]] = {}
    for k, r in enumerate(chosen):
        i, j = row_index[row_of[k]], column_index[column_of[k]]
        if (i, j) in cells:
            continue  # the same case twice (two identical [[test]] tables): the first counts
        unit = str(r.get("unit", ""))
        cells[(i, j)] = row_cell(r, unit)
        metric_of[(i, j)] = str(r.get("metric", ""))
        found = limits_of(r)
        if found is not None:
            limited[(i, j)] = found
        coords[(i, j)] = {key: labels.part(k, key) for key in (*row_keys, *all_columns)}
        ways.setdefault(j, []).append(better_is_higher(str(r.get("metric", "")), unit))
    better = {j: all(w) if len(set(w)) == 1 else True for j, w in ways.items()}
    key = value = ""
    if baseline and baseline.strip().lower() != NO_BASELINE:
        try:
            key, value = resolve_baseline(baseline, chosen, (*row_keys, *all_columns))
        except BaselineError:
            if not baseline_optional:
                raise
        else:
            _judge(cells, coords, key, value, better, alpha, limited)
    return Pivot(row_keys, all_columns, tuple(row_labels), tuple(col_labels), cells,
                 _common(chosen, {*row_keys, *all_columns}), all_columns[len(column_keys):],
                 tuple(dict.fromkeys(str(r.get("metric", "")) for r in chosen)),
                 better, alpha, key, value,
                 tuple(tuple(value_of(first_row[t], k) for k in row_keys) for t in row_labels),
                 tuple(tuple(value_of(first_col[t], k) for k in all_columns)
                       for t in col_labels), metric_of, cell_limits=limited)


def _judge(cells: dict[tuple[int, int], Cell], coords: Mapping[tuple[int, int], dict[str, str]],
           key: str, value: str, better: Mapping[int, bool], alpha: float,
           limited: Mapping[tuple[int, int], tuple[Limit, ...]]) -> None:
    """Each cell against the cell with `key` at `value` and every other key the same (so the
    same metric, test and unit), in place; a cell without such a partner stays a value."""
    where = {tuple(sorted(c.items())): ij for ij, c in coords.items()}
    for ij, cell in list(cells.items()):
        ref_at = where.get(tuple(sorted({**coords[ij], key: value}.items())))
        ref = cells.get(ref_at) if ref_at is not None else None
        if ref is None or ref.unit != cell.unit:
            continue
        if ref_at == ij:
            cells[ij] = cell.against(0.0 if cell.mean is not None else None,
                                     0.0 if cell.mean else None, None, BASELINE)
        else:
            cells[ij] = unlike(judged(cell, ref, better[ij[1]], alpha), limited.get(ij),
                               limited.get(ref_at))


def report_pivot(rows: Sequence[Mapping[str, Any]], report: Report | None,
                 alpha: float = ALPHA) -> Pivot:
    """The pivot a session opens with: its plan's [report] table, else config x test (keys
    of the report that these rows do not have fall back to that default)."""
    if report is None:
        return build_pivot(rows, alpha=alpha)
    try:
        p = build_pivot(rows, report.rows, report.columns, report.metrics, alpha,
                        report.baseline, report.where, plan_order=True,
                        baseline_optional=True)
    except (PivotKeyError, BaselineError):
        return build_pivot(rows, alpha=alpha)
    return replace(p, chart=report.chart, x=report.x)


@dataclass(frozen=True)
class Layout:
    """What a pivot is built with once a person's choices meet a plan's [report]."""

    rows: tuple[str, ...]
    columns: tuple[str, ...]
    metrics: tuple[str, ...]
    where: tuple[tuple[str, str], ...]
    baseline: str | None
    own: bool  # the [report]'s own rows and columns: its order, chart, title with them
    baseline_optional: bool  # the [report]'s baseline, not typed: dropped when filtered away


def report_layout(report: Report, rows: Sequence[str] = (), columns: Sequence[str] = (),
                  metrics: Sequence[str] = (), where: Sequence[tuple[str, str]] = (),
                  baseline: str | None = None) -> Layout:
    """The pivot of `disklab compare` and the Compare page: the keys a person gave, the rest
    from the [report]. Its metrics, filters and baseline go with its own rows and columns
    only (own --rows/--columns show every main figure); `--baseline none` asks for values."""
    rows_, columns_ = tuple(rows) or report.rows, tuple(columns) or report.columns
    own = (rows_, columns_) == (tuple(report.rows), tuple(report.columns))
    typed = (baseline or "").strip()
    return Layout(rows_, columns_, tuple(metrics) or (report.metrics if own else ()),
                  tuple(where) or (tuple(report.where) if own else ()),
                  None if typed.lower() == NO_BASELINE else typed or (
                      report.baseline if own else None),
                  own, not typed)


def cell_class(cell: Cell | None) -> str:
    """'better', 'worse' or 'same': a significant difference from the first row, for colour."""
    if cell is None or cell.verdict not in (BETTER, WORSE):
        return "same"
    return cell.verdict
