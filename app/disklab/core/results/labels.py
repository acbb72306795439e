"""What tells the cases shown apart, and the order people read values in.

One home for both, so every table, chart, header and export names a case the same way:

- `case_labels(rows)`: a case's label is the parameters that differ among the cases shown, in
  the order the plan gives them (its axis order); what every case shares goes to one heading
  ("every case: ..."), and a shared value that is the tool's own default (fio's
  `runtime=0.0` of a size-based run, `rwmixread=70` of a write) is not said at all. fio at
  iodepth 1 and 16 then reads `iodepth=1` and `iodepth=16`, not twice `fio write bs=4k dir…`.
- `value_rank(values)`: numbers in number order (1, 2, 4, 16, not 1, 16, 2), sizes by bytes
  (4k < 64k < 1m), false before true, the named targets before "all", text (configurations,
  tests) in the order first seen, which is the plan's order.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from disklab.core.results.format import format_params
from disklab.core.results.rows import row_params
from disklab.core.tools import get_adapter
from disklab.core.vocab.errors import DisklabError
from disklab.core.vocab.units import parse_size

# the value of a placement or host key that sums the named ones: after them
AGGREGATE = "all"
# What the test is: said even at the tool's default (a 4k random read reads as one)
ALWAYS_SAID = frozenset({"bs", "block_size", "rw", "mode", "tests", "test"})
# A parameter that, when given, replaces another: the other is not said for that case (the
# engine's per-stream block sizes make its block_size unused)
REPLACES = {"stream_block_sizes": "block_size"}
_MISSING = object()


@functools.cache
def _defaults(tool: str) -> tuple[tuple[str, Any], ...]:
    """A tool's parameter defaults (none for a tool DiskLab does not know, e.g. an import)."""
    try:
        specs = get_adapter(tool).params
    except (DisklabError, KeyError, ImportError):
        return ()
    return tuple((k, s.default) for k, s in specs.items())


def is_default(tool: str, key: str, value: Any) -> bool:
    """Whether `value` is the tool's own default for `key` (then saying it adds nothing;
    but the block size and the pattern say what the test is, and are always said)."""
    if key in ALWAYS_SAID:
        return False
    defaults = _defaults(tool)
    return any(k == key and d == value and type(d) is type(value) for k, d in defaults)


def number_of(value: Any) -> float | None:
    """A value as a number when it reads as one: 16, 2.5, '16', '4k' (bytes), else None (and
    for nan and infinities, which have no place in an order)."""
    if isinstance(value, bool):
        return None
    number: float | None = None
    if isinstance(value, int | float):
        if isinstance(value, int) and abs(value) > 1e300:  # beyond a float: at the ends
            return 1e300 if value > 0 else -1e300
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            try:
                number = float(parse_size(value))
            except (DisklabError, ValueError, OverflowError):
                return None
    return number if number is not None and math.isfinite(number) else None


def value_rank(values: Iterable[Any]) -> Callable[[Any], tuple[int, float]]:
    """A sort key for the values of one key, as people order them: numbers and sizes by
    value, false before true, text in the order first seen, "all" after every named value,
    a missing value (None) last."""
    seen: dict[str, int] = {}
    for v in values:
        seen.setdefault(repr(v), len(seen))

    def rank(v: Any) -> tuple[int, float]:
        if v is None:
            return (5, 0.0)
        if isinstance(v, bool):
            return (0, float(v))
        n = number_of(v)
        if n is not None:
            return (1, n)
        if v == AGGREGATE:
            return (4, 0.0)
        return (2, float(seen.get(repr(v), len(seen))))

    return rank


def ordered(values: Iterable[Any]) -> list[Any]:
    """The distinct values, in the order a table or an axis shows them (value_rank)."""
    distinct = list({repr(v): v for v in values}.values())
    return sorted(distinct, key=value_rank(distinct))


def _in_use(params: dict[str, Any]) -> dict[str, Any]:
    """A case's parameters without those another one given replaces (REPLACES)."""
    for given, replaced in REPLACES.items():
        if params.get(given):
            params.pop(replaced, None)
    return params


def _param_keys(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every parameter of the rows, first seen first: the plan's order of its axes."""
    keys: dict[str, None] = {}
    for r in rows:
        keys.update(dict.fromkeys(row_params(r)))
    return list(keys)


@dataclass(frozen=True)
class CaseLabels:
    """The parameters that tell the cases apart (`keys`, in axis order) and those every case
    shares at a value the user chose (`common`, for the heading)."""

    keys: tuple[str, ...]
    common: Mapping[str, Any]

    def label(self, row: Mapping[str, Any]) -> str:
        """A case's label: its values of the varying parameters, 'iodepth=16 numjobs=2'."""
        params = _in_use(row_params(row))
        return format_params({k: params[k] for k in self.keys if k in params})

    @property
    def heading(self) -> str:
        """What every case shares, said once: 'every case: bs=4k direct=True'; '' if none."""
        return f"every case: {format_params(self.common)}" if self.common else ""


def case_labels(rows: Sequence[Mapping[str, Any]], skip: Iterable[str] = ()) -> CaseLabels:
    """The labelling of these rows (CaseLabels): a parameter with more than one value among
    them (missing counts as a value where the row's tool has the parameter) labels each case;
    one with a single value goes to the heading unless it is the default of every tool that
    has it; `skip` names keys shown elsewhere (the axis of a chart, a pivot's rows)."""
    skip = set(skip)
    params = [_in_use(row_params(r)) for r in rows]
    keys, common = [], {}
    names = [str(r.get("tool", "")) for r in rows]
    for key in _param_keys(rows):
        if key in skip:
            continue
        # a case without the key counts only if its tool has it (dd has no queue depth)
        having = {t for t, p in zip(names, params, strict=True) if key in p}
        if not having:  # replaced in every case (REPLACES)
            continue
        values = {repr(p.get(key, _MISSING)) for t, p in zip(names, params, strict=True)
                  if t in having}
        if len(values) > 1:
            keys.append(key)
            continue
        value = next(p[key] for p in params if key in p)
        if value is None or all(is_default(t, key, value) for t in having):
            continue
        common[key] = value
    return CaseLabels(tuple(keys), common)


def case_titles(cases: Sequence[Any]) -> tuple[list[str], str]:
    """Titles for a plan's cases (model.Case: tool and params) as the Run page lists them:
    the tool and the parameters that differ among the cases ('fio iodepth=16'), and the
    heading of what every case shares (case_labels)."""
    labels = case_labels([{"tool": c.tool, "params": c.params} for c in cases])
    titles = [" ".join(filter(None, (c.tool, labels.label({"params": c.params}))))
              for c in cases]
    return titles, labels.heading


def unset_default(rows: Sequence[Mapping[str, Any]], key: str, value: Any) -> bool:
    """Whether `value` of `key` is the default of every tool among `rows` that has the key:
    nobody needs it said (fio's runtime=0.0 beside dd, which has no runtime)."""
    tools = {str(r.get("tool", "")) for r in rows if key in row_params(r)}
    return bool(tools) and all(is_default(t, key, value) for t in tools)
