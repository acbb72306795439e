"""The tables every surface shows: a session's results and a comparison.

A Table is plain text cells. `disklab show` prints it, the GUI fills its table widgets from it,
and the HTML and Markdown documents write it, so a figure is written once (by format.py) and
reads the same in all of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from disklab.core.results.compare import Comparison, delta_class, delta_pct
from disklab.core.results.format import (
    MISSING,
    format_delta,
    format_mean_std,
    format_params,
    format_stddev,
    format_value,
)
from disklab.core.results.rows import constant_params, headline, point, row_params, row_stats

RESULTS_HEADER = ("config", "tool", "metric", "parameters", "mean", "± stddev", "n", "note")


@dataclass(frozen=True)
class Table:
    """A captioned table of text cells; `classes` (same shape as rows) marks cells for colour
    ('num better', 'num worse'); `note` is said once above the table (what every row shares)."""

    caption: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    classes: tuple[tuple[str, ...], ...] = ()
    note: str = ""


def results_table(results: Sequence[Mapping[str, Any]], all_metrics: bool = True,
                  baseline_config: str | None = None) -> Table:
    """A session's results, one row per configuration, case and metric: mean, stddev and n over
    the repeats. Parameters equal in every row are said once in `note`. `all_metrics=False`
    keeps the headline figures (rows.is_headline). With `baseline_config`, a last column holds
    each mean's delta against that configuration's mean for the same tool, parameters and
    metric."""
    rows = list(results) if all_metrics else headline(results)
    common = constant_params(rows)
    header = RESULTS_HEADER
    if baseline_config is not None:
        header = (*header, f"Δ vs {baseline_config}")
    base = {point(r): row_stats(r)[0] for r in rows if r.get("config") == baseline_config}
    out = []
    for r in rows:
        mean, std, n = row_stats(r)
        unit = str(r.get("unit", ""))
        cells = (str(r.get("config") or ""), str(r.get("tool", "")), str(r.get("metric", "")),
                 format_params(row_params(r), skip=common), format_value(mean, unit),
                 format_stddev(std, n, unit), str(n), "; ".join(r.get("notes") or []))
        if baseline_config is not None:
            cells = (*cells, "" if r.get("config") == baseline_config
                     else format_delta(delta_pct(mean, base.get(point(r)))))
        out.append(cells)
    return Table("Results (mean ± stddev over repeats)", header, tuple(out),
                 note=f"every case: {format_params(common)}" if common else "")


def cell_text(c: Comparison, row: str, col: str) -> str:
    """A comparison cell: '105 MiB/s ± 13.5 MiB/s (+4.2 %)'; the baseline's without delta."""
    cell = c.cells.get((row, col))
    if cell is None or cell.mean is None:
        return MISSING
    text = format_mean_std(cell.mean, cell.stddev, cell.n, cell.unit)
    if row != c.baseline and cell.delta_pct is not None:
        text += f" ({format_delta(cell.delta_pct)})"
    return text


def row_heading(c: Comparison, row: str) -> str:
    """A comparison row's name, marked when it is the baseline."""
    return f"{row} (baseline)" if row == c.baseline else row


def comparison_table(c: Comparison) -> Table:
    """Configurations x tests, cells mean ± stddev and delta, classes for better/worse."""
    rows, classes = [], []
    for row in c.rows:
        rows.append((row_heading(c, row), *(cell_text(c, row, col) for col in c.columns)))
        classes.append(("", *(f"num {delta_class(c, row, col)}" for col in c.columns)))
    common = format_params(c.common)
    return Table("Comparison (mean ± stddev, delta against the baseline)",
                 ("configuration", *c.columns), tuple(rows), tuple(classes),
                 note=f"in every test: {common}" if common else "")


def config_diff_table(c: Comparison, diff: Sequence[tuple[str, Mapping[str, str]]]) -> Table:
    """The configuration values that differ between the comparison's rows."""
    return Table("What differs between the configurations", ("setting", *c.rows),
                 tuple((k, *(v.get(r, MISSING) for r in c.rows)) for k, v in diff))
