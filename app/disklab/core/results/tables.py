"""The tables every surface shows: a session's results and a comparison.

A Table is plain text cells. `disklab show` prints it, the GUI fills its table widgets from it,
and the HTML and Markdown documents write it, so a figure is written once (by format.py) and
reads the same in all of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from disklab.core.results.compare import (
    BASELINE,
    BETTER,
    DIFFERENT,
    NO_DIFFERENCE,
    ONE_RUN,
    UNLIKE,
    WORSE,
    Cell,
    Comparison,
    better_is_higher,
    delta_class,
    delta_pct,
    is_neutral,
)
from disklab.core.results.format import (
    MISSING,
    confidence_words,
    display_unit,
    format_cv,
    format_delta,
    format_direction,
    format_excluded,
    format_interval,
    format_left_out,
    format_mean_std,
    format_p,
    format_params,
    format_ratio_interval,
    format_spread,
    format_stddev,
    format_value,
)
from disklab.core.results.labels import case_labels
from disklab.core.results.limit_words import limits_note, limits_text, limits_tip, row_verdicts
from disklab.core.results.limits import Limit
from disklab.core.results.partial import SessionResults
from disklab.core.results.pivot import Pivot, cell_class
from disklab.core.results.rows import headline, point, row_stats
from disklab.core.results.stats import NOISY_CV, NOISY_MIN_N, cv, is_noisy

RESULTS_HEADER = ("config", "tool", "metric", "direction", "parameters", "mean", "± stddev", "n",
                  "CV", "note")
NOISY_HINT = (f"noisy: CV above {100 * NOISY_CV:g} % over {NOISY_MIN_N} runs or more; more "
              "repeats, longer runs or dropping the caches between runs steady it")


@dataclass(frozen=True)
class Table:
    """A captioned table of text cells; `classes` (same shape as rows) marks cells for colour
    ('num better', 'num worse'); `note` is said once above the table (what every row shares,
    the runs left out, the hints), one line each."""

    caption: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    classes: tuple[tuple[str, ...], ...] = ()
    note: str = ""
    wrap: tuple[int, ...] = (0,)  # columns a narrow terminal may wrap, first gives way first
    tips: tuple[tuple[str, ...], ...] = ()  # same shape as rows: a cell's tooltip, or ''


def _lines(*texts: str) -> str:
    return "\n".join(t for t in texts if t)


def _left_out(row: Mapping[str, Any], counted: bool) -> str:
    """The values of a row's incomplete runs, kept visible: 'repeat 2 cancelled: 412 MB/s,
    not in the mean'."""
    unit = str(row.get("unit", ""))
    items = row.get("partial") if counted else row.get("excluded")
    where = "in the mean" if counted else "not in the mean"
    return "; ".join(f"repeat {e['repeat']} {e['status']}: {format_value(e['value'], unit)}, "
                     f"{where}" for e in items or [])


def results_table(results: Sequence[Mapping[str, Any]] | SessionResults,
                  all_metrics: bool = True, baseline_config: str | None = None,
                  limits: Mapping[str, Sequence[Limit]] | None = None) -> Table:
    """A session's results, one row per configuration, case and metric: which way is better,
    mean, stddev, n and coefficient of variation over the repeats. Parameters equal in every
    row are said once in `note`, and so are the runs left out of the means (given
    partial.SessionResults) and the hint for noisy figures. `all_metrics=False` keeps the
    headline figures (rows.is_headline). With `baseline_config`, a last column holds each
    mean's delta against that configuration's mean for the same tool, parameters and metric.
    With `limits` (case id -> core.results.limits verdicts), a "limited by" column says what
    limited each row's runs, its tooltip (`tips`) the evidence."""
    counted = isinstance(results, SessionResults) and results.included
    excluded = (format_excluded(results.reasons(), results.included)
                if isinstance(results, SessionResults) else "")
    if isinstance(results, SessionResults):
        results = results.rows
    rows = list(results) if all_metrics else headline(results)
    labels = case_labels(rows)
    header = RESULTS_HEADER
    if baseline_config is not None:
        header = (*header, f"Δ vs {baseline_config}")
    if limits is not None:
        header = (*header, "limited by")
    base = {point(r): row_stats(r)[0] for r in rows if r.get("config") == baseline_config}
    out = []
    tips: list[tuple[str, ...]] = []  # the limited-by cell's evidence
    noisy = False
    for r in rows:
        mean, std, n = row_stats(r)
        unit = str(r.get("unit", ""))
        metric = str(r.get("metric", ""))
        notes = list(r.get("notes") or [])
        if is_noisy(mean, std, n):
            noisy = True
            notes.append("noisy")
        notes.append(_left_out(r, counted))
        cells = (str(r.get("config") or ""), str(r.get("tool", "")), metric,
                 "neither is better" if is_neutral(unit)
                 else format_direction(better_is_higher(metric, unit)),
                 labels.label(r), format_value(mean, unit),
                 format_stddev(std, n, unit), str(n),
                 format_cv(cv(mean, std) if n >= 2 else None), "; ".join(filter(None, notes)))
        if baseline_config is not None:
            cells = (*cells, "" if r.get("config") == baseline_config
                     else format_delta(delta_pct(mean, base.get(point(r)))))
        if limits is not None:
            found = row_verdicts(limits, r)
            cells = (*cells, limits_text(found))
            tips.append(("",) * (len(cells) - 1) + (limits_tip(found),))
        out.append(cells)
    # a narrow terminal wraps the parameters, the notes and the direction; never a figure,
    # and never a configuration's or a metric's name (what a reader searches the table for)
    return Table("Results (mean ± stddev over repeats)", header, tuple(out),
                 note=_lines(labels.heading, excluded, NOISY_HINT if noisy else ""),
                 wrap=(4, 9, 3, *((len(header) - 1,) if limits is not None else ())),
                 tips=tuple(tips))


def cell_text(c: Comparison, row: str, col: str) -> str:
    """A comparison cell, every part separated by '; ': the mean ± stddev with n and CV; for
    a configuration other than the baseline, the difference in per cent, its confidence
    interval (of the difference and of the ratio), the p-value and the verdict; 'noisy'; the
    runs left out. '449 MB/s ± 188 MB/s (n=2, CV 41.9 %); +12.2 %, 95 % CI -183 … +281
    MB/s (×0.54 … ×1.70), p = 0.78: no significant difference'."""
    cell = c.cells.get((row, col))
    if cell is None:
        return MISSING
    left_out = format_left_out(cell.excluded_why)
    if cell.mean is None:
        return "; ".join(filter(None, (MISSING, left_out)))
    parts = [f"{format_mean_std(cell.mean, cell.stddev, cell.n, cell.unit)} "
             f"({format_spread(cell.n, cell.cv)})"]
    if cell.verdict not in ("", BASELINE) and cell.delta_pct is not None:
        w = cell.test
        if w is None:  # the reason, once under the table (comparison_note)
            parts.append(f"{format_delta(cell.delta_pct)} {MARKS[ONE_RUN]}")
        else:
            parts.append(f"{format_delta(cell.delta_pct)}, "
                         f"{format_interval(w.ci_low, w.ci_high, cell.unit, w.alpha)} "
                         f"({format_ratio_interval(w.ratio_low, w.ratio_high)}), "
                         f"{format_p(w.p_value)}: {cell.verdict}")
    if cell.noisy:
        parts.append("noisy")
    if cell.notes:
        parts.append(f"{NOTE_MARK} see the note")
    return "; ".join(filter(None, (*parts, left_out)))


def row_heading(c: Comparison, row: str) -> str:
    """A comparison row's name, marked when it is the baseline."""
    return f"{row} (baseline)" if row == c.baseline else row


def column_heading(c: Comparison, col: str) -> str:
    """A comparison column's name with the way it is better: '… (higher is better)'."""
    return f"{col} ({format_direction(c.higher_is_better.get(col, True))})"


def comparison_note(c: Comparison) -> str:
    """What a comparison says above its table: the test behind its verdicts, the parameters
    every test shares, the runs left out of the means, the hint for noisy cells."""
    noisy = any(cell.noisy for cell in c.cells.values())
    common = format_params(c.common)
    return _lines(
        f"better or worse: Welch's t-test against the baseline, p < {c.alpha:g} and the "
        f"{confidence_words(c.alpha)} confidence interval of the difference excluding zero; "
        "otherwise no significant difference",
        f"in every test: {common}" if common else "",
        f"{MARKS[ONE_RUN]} {ONE_RUN} (a side has a single run)"
        if any(cell.verdict == ONE_RUN for cell in c.cells.values()) else "",
        UNLIKE_NOTE if any(cell.verdict == UNLIKE for cell in c.cells.values()) else "",
        DIFFERENT_NOTE if any(cell.verdict == DIFFERENT for cell in c.cells.values()) else "",
        missing_note(c.missing),
        cell_notes(c.cells.values()),
        format_excluded(c.incomplete.reasons(), c.incomplete.included),
        NOISY_HINT if noisy else "",
        limits_note([(row, col, c.limits.get((row, col)))
                     for row in c.rows for col in c.columns if (row, col) in c.cells]))


def comparison_table(c: Comparison) -> Table:
    """Configurations x tests, cells mean ± stddev and the verdict against the baseline,
    classes for better/worse (significant differences only)."""
    rows, classes = [], []
    for row in c.rows:
        rows.append((row_heading(c, row), *(cell_text(c, row, col) for col in c.columns)))
        classes.append(("", *(f"num {delta_class(c, row, col)}" for col in c.columns)))
    tips = tuple(("", *(limits_tip(c.limits.get((row, col), ())) for col in c.columns))
                 for row in c.rows)
    return Table("Comparison (mean ± stddev, difference from the baseline and its significance)",
                 ("configuration", *(column_heading(c, col) for col in c.columns)),
                 tuple(rows), tuple(classes), note=comparison_note(c), tips=tips)


def config_diff_table(c: Comparison, diff: Sequence[tuple[str, Mapping[str, str]]]) -> Table:
    """The configuration values that differ between the comparison's rows."""
    return Table("What differs between the configurations", ("setting", *c.rows),
                 tuple((k, *(v.get(r, MISSING) for r in c.rows)) for k, v in diff))


# A compared cell's mark in text (the window and HTML colour the cell and add an arrow), each
# explained once under the table.
MARKS = {BETTER: "▲", WORSE: "▼", DIFFERENT: "↕", NO_DIFFERENCE: "≈", ONE_RUN: "†",
         BASELINE: "◆", UNLIKE: "≠"}
# said under a table where a cell is marked UNLIKE
UNLIKE_NOTE = f"{MARKS[UNLIKE]} {UNLIKE} (see what limited each, below)"
# said under a table where a cell is marked DIFFERENT
DIFFERENT_NOTE = (f"{MARKS[DIFFERENT]} {DIFFERENT}: bytes moved say how much a run did, not "
                  "how well")
# a cell whose figure the tool's adapter has a note on (Cell.notes: iozone's per-process
# figures that are not a spread), each note said once under the table
NOTE_MARK = "‡"


def cell_notes(cells: Iterable[Cell]) -> str:
    """The notes of a table's cells, each once, marked as the cells are: '‡ iozone printed
    min = max > avg per process: …'; '' when no cell has one."""
    notes = dict.fromkeys(note for cell in cells for note in cell.notes)
    return "\n".join(f"{NOTE_MARK} {note}" for note in notes)


def _shared(p: Pivot) -> tuple[str | None, int | None]:
    """The unit and the n every cell of a pivot shares (None where they differ): said once in
    the heading, a cell then holds its figures alone ('45394', not '45394 op/s (n=1)')."""
    units = {c.unit for c in p.cells.values() if c.mean is not None}
    ns = {c.n for c in p.cells.values() if c.mean is not None}
    return (units.pop() if len(units) == 1 else None), (ns.pop() if len(ns) == 1 else None)


def _figure(value: float | None, unit: str, bare: bool) -> str:
    text = format_value(value, unit)
    return text.removesuffix(f" {display_unit(unit)[0]}") if bare else text


def pivot_cell_text(p: Pivot, i: int, j: int,
                    shared: tuple[str | None, int | None] | None = None) -> str:
    """A pivot cell: its value, mean ± stddev with CV where repeats exist ('449 ± 18.8, CV
    4.2 %'), n where cells differ in it, the unit where columns differ in it; asked to compare
    (Pivot.baseline), the difference with a mark ('+12.2 % ▲', MARKS, explained under the
    table); the runs left out."""
    cell = p.cell(i, j)
    if cell is None:
        return MISSING
    left_out = format_left_out(cell.excluded_why)
    if cell.mean is None:
        return "; ".join(filter(None, (MISSING, left_out)))
    unit, n = shared or _shared(p)  # a whole table passes it, worked out once
    bare = unit is not None
    text = _figure(cell.mean, cell.unit, bare)
    if cell.n >= 2 and cell.stddev is not None:
        text += f" ± {_figure(cell.stddev, cell.unit, bare)}"
    extra = [f"n={cell.n}"] if n is None else []
    if cell.cv is not None:
        extra.append(f"CV {format_cv(cell.cv)}")
    if extra:
        text += f" ({', '.join(extra)})"
    if cell.verdict == BASELINE:
        text += f" {MARKS[BASELINE]}"
    elif cell.verdict in MARKS and cell.delta_pct is not None:
        text += f" {format_delta(cell.delta_pct)} {MARKS[cell.verdict]}"
    if cell.noisy:
        text += " noisy"
    if cell.notes:
        text += f" {NOTE_MARK}"
    return "; ".join(filter(None, (text, left_out)))


def pivot_marks(p: Pivot) -> str:
    """The footnote of a compared pivot: what each cell was compared with and what its mark
    says; 'one run: no test possible' once for the whole table."""
    if not p.baseline:
        return ""
    verdicts = {c.verdict for c in p.cells.values()}
    other = "row" if p.against == "column" else "column"
    lines = [f"{MARKS[BASELINE]} baseline {p.baseline}: each cell is compared with the cell of "
             f"{p.baseline} in the same {other}, same metric and unit (difference in %)"]
    if verdicts & {BETTER, WORSE, NO_DIFFERENCE}:
        lines.append(f"{MARKS[BETTER]} significantly better, {MARKS[WORSE]} significantly "
                     f"worse, {MARKS[NO_DIFFERENCE]} no significant difference (Welch's t-test, "
                     f"p < {p.alpha:g})")
    if DIFFERENT in verdicts:
        lines.append(DIFFERENT_NOTE)
    if ONE_RUN in verdicts:
        lines.append(f"{MARKS[ONE_RUN]} {ONE_RUN} (a side has a single run)")
    if UNLIKE in verdicts:
        lines.append(UNLIKE_NOTE)
    return _lines(*lines)


def pivot_heading(p: Pivot) -> str:
    """What a pivot says once above itself: the values every cell shares (tool, parameters),
    the metric, its unit and n when every cell shares them, which way is better when all
    columns agree, the keys added to the columns."""
    ways = set(p.higher_is_better.values())
    unit, n = _shared(p)
    shared = ", ".join(filter(None, (
        f"in {display_unit(unit)[0]}" if unit else "",
        f"n={n} in every cell" if n is not None else "")))
    return _lines(
        f"every cell: {format_params(p.common)}" if p.common else "",
        (f"metric: {', '.join(p.metrics)}" if len(p.metrics) == 1 else "")
        + (f" ({shared})" if shared and len(p.metrics) == 1 else ""),
        f"figures {shared}" if shared and len(p.metrics) != 1 else "",
        f"{format_direction(ways.pop())} in every column" if len(ways) == 1 else "",
        (f"added to the columns (they vary within a cell): {', '.join(p.added)}"
         if p.added else ""),
        "cells: mean ± stddev over repeats (CV)" if n is None or n > 1 else "")


def pivot_column_heading(p: Pivot, j: int) -> str:
    """A pivot column's label; with '(lower is better)' when the columns do not agree."""
    if len(set(p.higher_is_better.values())) > 1 and j in p.higher_is_better:
        return f"{p.columns[j]} ({format_direction(p.higher_is_better[j])})"
    return p.columns[j]


def pivot_table(p: Pivot) -> Table:
    """A pivot as a Table: first column the row labels, then one column per column label;
    classes mark significant differences ('num better', 'num worse'); the heading above and
    the marks' footnote (pivot_marks) in `note`."""
    rows, classes = [], []
    shared = _shared(p)
    for i, row in enumerate(p.rows):
        rows.append((row, *(pivot_cell_text(p, i, j, shared) for j in range(len(p.columns)))))
        classes.append(("", *(f"num {cell_class(p.cell(i, j))}"
                              for j in range(len(p.columns)))))
    corner = " / ".join(p.row_keys) + " \\ " + " / ".join(p.column_keys)
    tips = tuple(("", *(pivot_cell_tip(p, i, j) for j in range(len(p.columns))))
                 for i in range(len(p.rows)))
    limited = limits_note([(p.rows[i], p.columns[j], p.cell_limits.get((i, j)))
                           for (i, j) in sorted(p.cells)])
    return Table("Pivot (mean ± stddev over repeats)",
                 (corner, *(pivot_column_heading(p, j) for j in range(len(p.columns)))),
                 tuple(rows), tuple(classes),
                 note=_lines(pivot_heading(p), pivot_marks(p), missing_note(p.missing),
                             cell_notes(p.cells.values()), limited), tips=tips)


def missing_note(missing: Sequence[str]) -> str:
    """The configurations shown without a figure, named under a table (compare.missing_configs);
    '' when there are none."""
    return f"no figure of: {'; '.join(missing)}" if missing else ""


def pivot_cell_tip(p: Pivot, i: int, j: int) -> str:
    """A cell's tooltip: compared, what it was compared with, the difference, its interval,
    the p-value and the verdict ('vs a: +50.0 %, 95 % CI +41.3 … +58.7 MB/s, p = 0.0036:
    better'); then what limited it, with the evidence (limit_words.limits_tip); '' for a cell with
    neither."""
    return _lines(_compared_tip(p, i, j), limits_tip(p.cell_limits.get((i, j), ())))


def _compared_tip(p: Pivot, i: int, j: int) -> str:
    cell = p.cell(i, j)
    if cell is None or not p.baseline or cell.verdict in ("", BASELINE):
        return ""
    w = cell.test
    if w is None:
        return f"vs {p.baseline}: {format_delta(cell.delta_pct)}: {cell.verdict}"
    return (f"vs {p.baseline}: {format_delta(cell.delta_pct)}, "
            f"{format_interval(w.ci_low, w.ci_high, cell.unit, w.alpha)}, "
            f"{format_p(w.p_value)}: {cell.verdict}")


# where a pivot cell's comparison starts: its '+12.2 % ▲', or the baseline's mark
DELTA_BREAK = re.compile(rf" (?=[+-](?:\d|inf)[^ ]* % |{MARKS[BASELINE]})")


def cell_lines(text: str) -> str:
    """A pivot cell as the Compare page shows it: its parts ('; ') and its comparison with the
    baseline ('-29.9 % ≠') each on a line of its own under the figure, so a column is as wide
    as its figures, not as the whole text (the text every export writes, in lines)."""
    return DELTA_BREAK.sub("\n", text.replace("; ", "\n"))

