"""What limited a figure, said beside it: a table column's short words, a cell's tooltip with
its evidence, a pivot's or a comparison's note naming where each kind holds. The verdicts
themselves are core/results/limits.py's; this module only words them and carries them with
result rows (under LIMITS_KEY) into pivots and comparisons."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from disklab.core.results.limits import FIGURE_SEP, KINDS, UNKNOWN, Limit
from disklab.core.vocab.units import human_bytes


def limits_text(limits: Sequence[Limit]) -> str:
    """The short words of a row's verdicts, for a table column."""
    return "; ".join(limit.words for limit in limits)


# The short words of each kind, for a pivot's or a comparison's note (what limited which cells)
SHORT = {"too_short": "too short", "device": "device", "cpu": "CPU",
         "latency": "the device's latency (each request waited for)",
         "page_cache_direct": "direct I/O through the page cache (data=journal)",
         "page_cache_read": "reads from the page cache",
         "page_cache_write": "writes absorbed by the page cache",
         "writeback": "write-back throttling", "none": "nothing found",
         "no_interval": "no interval of its own",
         "unknown": "not known (imported)"}
# A result row's verdicts ride with it into a pivot or a comparison under this key (with_limits)
LIMITS_KEY = "_limited_by"
# A note lists at most this many cells of one kind by name; the rest are counted
NOTE_CELLS = 6


def row_verdicts(limits: Mapping[str, Sequence[Limit]], row: Mapping[str, Any]
                 ) -> tuple[Limit, ...]:
    """A result row's verdicts (session_limits): its own figure's (the metric's name before
    ':', judged over the interval its tool measured it in); "no interval of its own" when its
    tool timed its other figures but not this one; else its case's; "not known" for a case
    without evidence (imported)."""
    case = str(row.get("case_id"))
    figure = str(row.get("metric") or "").split(":", 1)[0]
    return tuple(limits.get(f"{case}{FIGURE_SEP}{figure}") or limits.get(f"{case}{FIGURE_SEP}")
                 or limits.get(case) or (UNKNOWN,))


def with_limits(rows: Iterable[Mapping[str, Any]], limits: Mapping[str, Sequence[Limit]]
                ) -> list[dict[str, Any]]:
    """Copies of result rows, each with its verdicts (row_verdicts) under LIMITS_KEY."""
    return [{**r, LIMITS_KEY: row_verdicts(limits, r)} for r in rows]


def limits_of(row: Mapping[str, Any]) -> tuple[Limit, ...] | None:
    """The verdicts a row carries (with_limits), None when it was never judged."""
    found = row.get(LIMITS_KEY)
    return tuple(found) if found is not None else None


def _figure(value: float, key: str) -> str:
    if key == "device_share":
        return f"{100 * value:.0f} %"
    if key in ("busy_pct", "cpu_pct", "per_thread_pct", "machine_cpu_pct", "util_pct"):
        return f"{value:.0f} %"
    if key in ("dirty_bytes", "threshold"):
        return human_bytes(value)  # the units choice, as every figure beside it
    if key == "seconds":
        return f"{value:.2f} s"
    return f"{value:.3g}"


def limits_tip(limits: Sequence[Limit]) -> str:
    """A cell's tooltip: 'limited by:' and each verdict's words, with its evidence figures
    on the next line ('busy_pct 99 %, in_flight 7.82, asked 8')."""
    lines = ["limited by:"]
    for limit in limits:
        lines.append(f"  {limit.words}")
        if limit.evidence:
            lines.append("    " + ", ".join(f"{k} {_figure(v, k)}"
                                          for k, v in limit.evidence.items()))
    return "\n".join(lines) if len(lines) > 1 else ""


# per kind, the evidence a note sums up over the cells it names, and how it is said
_NOTE_EVIDENCE = {"device": (("busy_pct", "busy {} %"), ("in_flight", "{} in flight")),
                  "latency": (("in_flight", "{} in flight"), ("busy_pct", "device busy {} %")),
                  "cpu": (("per_thread_pct", "{} % of a core"),
                          ("machine_cpu_pct", "the machine's CPUs {} % busy")),
                  "page_cache_read": (("device_share", "the device read {} %"),),
                  "page_cache_write": (("device_share", "{} % reached the device"),),
                  "writeback": (("dirty_share", "Dirty at {} % of the threshold"),),
                  "too_short": (("seconds", "{} s"),),
                  "unknown": (("busy_pct", "device busy {} %"),)}


def _span(values: list[float], scale: float, digits: int) -> str:
    low, high = min(values) * scale, max(values) * scale
    a, b = f"{low:.{digits}f}", f"{high:.{digits}f}"
    return a if a == b else f"{a}–{b}"


def _summed(kind: str, found: Sequence[Limit]) -> str:
    """A kind's evidence over the cells it names, as ranges ('busy 97–99 %, 7.6–7.9 in
    flight'); '' for kinds without figures."""
    parts = []
    for key, text in _NOTE_EVIDENCE.get(kind, ()):
        if key == "dirty_share":
            values = [x.evidence["dirty_bytes"] / x.evidence["threshold"] for x in found
                      if x.evidence.get("threshold")]
        else:
            values = [x.evidence[key] for x in found if key in x.evidence]
        if values:
            scale = 100.0 if key in ("device_share", "dirty_share") else 1.0
            parts.append(text.format(_span(values, scale, 1 if key == "in_flight" else
                                            2 if key == "seconds" else 0)))
    return ", ".join(parts)


def _listed(names: Sequence[str]) -> str:
    """Cells by name, at most NOTE_CELLS of them, the rest counted."""
    return ", ".join(names[:NOTE_CELLS]) + (
        f" and {len(names) - NOTE_CELLS} more" if len(names) > NOTE_CELLS else "")


Cell = tuple[str, str]  # a table cell by its row and column labels


def limits_note(cells: Sequence[tuple[str, str, Sequence[Limit] | None]]) -> str:
    """What a pivot or a comparison says under its table of what limited its cells (row
    label, column label, verdicts; None: not judged), each kind once with where it holds
    (_where: every cell, whole rows or columns, or cells) and its evidence as ranges, a line
    each: 'limited by device (busy 97–99 %, 7.6–7.9 in flight): 4k, 64k' and 'limited by reads
    from the page cache (the device read 1 %): 1m'. '' when no cell was judged (rows without
    with_limits)."""
    judged = [((row, col), limits) for row, col, limits in cells if limits is not None]
    if not judged:
        return ""
    by_kind: dict[str, list[tuple[Cell, Limit]]] = {}
    for cell, limits in judged:
        for limit in limits:
            by_kind.setdefault(limit.kind, []).append((cell, limit))
    every = [cell for cell, _l in judged]
    parts = []
    for kind in KINDS:
        found = by_kind.get(kind)
        if not found:
            continue
        evidence = _summed(kind, [x for _c, x in found])
        head = SHORT[kind] + (f" ({evidence})" if evidence else "")
        parts.append(f"limited by {head}: {_where([c for c, _x in found], every)}")
    return "\n".join(parts)


def _where(covered: Sequence[Cell], every: Sequence[Cell]) -> str:
    """Where a kind holds, in the fewest names: 'every cell', whole rows or columns (a case's
    figures are a row's or a column's cells), 'every cell but' the few it does not, or the
    cells ('row / column'; only the label that differs when the table has one row or
    column)."""
    held = set(covered)
    others = [c for c in every if c not in held]
    if not others:
        return "every cell" if len(every) > 1 else _cell_name(every[0], every)
    rows = list(dict.fromkeys(r for r, _c in every))
    columns = list(dict.fromkeys(c for _r, c in every))
    if len(rows) > 1 and len(columns) > 1:
        for axis, labels in ((0, rows), (1, columns)):
            lines = {x: {c for c in every if c[axis] == x} for x in labels}
            whole = [x for x in labels if lines[x] <= held]
            rest = [x for x in labels if not lines[x] & held]
            if held == set().union(*(lines[x] for x in whole)):  # whole lines, and only them
                return (f"every cell but {_listed(rest)}" if len(rest) < len(whole)
                        else _listed(whole))
    if len(others) < len(held):  # most cells: the few it is not said of
        return f"every cell but {_cells(others, every)}"
    return _cells(list(dict.fromkeys(covered)), every)


def _cells(cells: Sequence[Cell], every: Sequence[Cell]) -> str:
    """Cells by name, those of one row said once with their columns: 'journal (write,
    write:iops), ordered (read)'."""
    if len({c for _r, c in every}) == 1 or len({r for r, _c in every}) == 1:
        return _listed([_cell_name(c, every) for c in cells])
    by_row: dict[str, list[str]] = {}
    for row, col in cells:
        by_row.setdefault(row, []).append(col)
    return _listed([f"{row} ({', '.join(cols)})" for row, cols in by_row.items()])


def _cell_name(cell: Cell, every: Sequence[Cell]) -> str:
    """A cell as a note names it: its row and column labels, only the one that tells it apart
    when the table has a single row or column."""
    if len({c for _r, c in every}) == 1:
        return cell[0]
    if len({r for r, _c in every}) == 1:
        return cell[1]
    return f"{cell[0]} / {cell[1]}"
