"""A Table as a terminal reads it: its note, left-aligned columns under a ruled header, and,
given the terminal's width, the label and parameter columns wrapped until it fits (figures are
never cut; a column holding one value in every row is said once above instead)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from disklab.core.results.tables import Table


def _fit(rows: Sequence[Sequence[str]], wrap: Sequence[int], width: int) -> list[int]:
    """Column widths that fit `width` (two spaces between columns) by narrowing the columns
    in `wrap` (labels, parameters, notes) in that order, each no further than its longest
    word: the first named give way first (the parameters before a configuration's name);
    figures keep their width, so a table too wide even then is left wider than the
    terminal."""
    widths = [max(len(str(r[i])) for r in rows if i < len(r)) for i in range(len(rows[0]))]
    over = sum(widths) + 2 * (len(widths) - 1) - width
    for i in wrap:
        if over <= 0:
            break
        if i >= len(widths):
            continue
        floor = max((len(w) for r in rows if i < len(r) for w in str(r[i]).split()), default=1)
        cut = min(over, max(widths[i] - floor, 0))
        widths[i] -= cut
        over -= cut
    return widths


def _without_constant(table: Table) -> tuple[list[Sequence[str]], str, list[int]]:
    """A table's rows (header first) without the text columns that hold one value in every
    row ('config: as is', said once instead) or nothing at all; that line; the columns that
    may wrap, renumbered."""
    drop = {i for i in range(len(table.header)) if len(table.rows) > 1
            and len({r[i] for r in table.rows}) == 1 and _is_text(table, i)}
    said = "; ".join(f"{table.header[i]}: {table.rows[0][i]}" for i in sorted(drop)
                     if table.rows[0][i])
    keep = [i for i in range(len(table.header)) if i not in drop]
    rows = [[r[i] for i in keep if i < len(r)] for r in (table.header, *table.rows)]
    return rows, said, [keep.index(i) for i in table.wrap if i in keep]


def _is_text(table: Table, i: int) -> bool:
    """Whether a column holds names rather than figures: a label, a parameter or note column,
    or a column of names (config, tool); not a mean, stddev, n, CV or a pivot's cell."""
    return i in table.wrap or table.header[i] in ("config", "tool", "direction", "note")


def table_text(table: Table, width: int = 0) -> str:
    """A Table for a terminal: its note, then left-aligned columns under a ruled header. With
    a `width` (the terminal's), the label and parameter columns (Table.wrap) are wrapped onto
    more lines until the table fits; figures are never cut."""
    rows = [table.header, *table.rows]
    widths = [max(len(str(r[i])) for r in rows if i < len(r)) for i in range(len(rows[0]))]
    note = table.note
    if width and sum(widths) + 2 * len(widths) > width:
        rows, said, wrap = _without_constant(table)
        note = "\n".join(filter(None, (note, said)))
        widths = _fit(rows, wrap, width)
    lines = [part for line in note.splitlines()
             for part in (textwrap.wrap(line, width, subsequent_indent="  ") if width
                          else [line])]
    for n, row in enumerate(rows):
        cells = [textwrap.wrap(str(c), w, break_long_words=False) or [""]
                 if len(str(c)) > w else [str(c)]
                 for c, w in zip(row, widths, strict=False)]
        for k in range(max(len(c) for c in cells)):
            lines.append("  ".join((c[k] if k < len(c) else "").ljust(w)
                                   for c, w in zip(cells, widths, strict=False)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"
