"""Runs that did not complete (cancelled, failed, stopped early, interrupted): their figures are
kept and shown, but left out of every mean, comparison and chart unless the user asks for them.

A run cancelled halfway measured half a file, often the fast half still in the cache; averaged
with complete runs it moves the mean by an amount that says nothing about the storage. So the
library keeps the partial figures (they are evidence), and every surface builds its rows here:
`session_results` recomputes n, mean and stddev from the complete runs only, lists per row the
values it left out, and counts the runs left out and why, which every table, file and page says.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

# run statuses whose figures are whole measurements ('imported': a tool output someone had)
COMPLETE = frozenset({"ok", "imported"})


class RunsSource(Protocol):
    """What this module reads from the library (core.library.Library has it)."""

    def results(self, session_id: int) -> list[dict[str, Any]]: ...
    def incomplete_runs(self, session_id: int, complete: frozenset[str]
                        ) -> list[dict[str, Any]]: ...


@dataclass(frozen=True)
class IncompleteRun:
    """A case x repeat whose run did not complete: its status and the error the runner gave."""

    case_id: str
    repeat: int
    status: str
    error: str = ""


@dataclass(frozen=True)
class SessionResults:
    """A session's results rows as the means count them, and the runs that did not complete.

    `included` says whether the incomplete runs' figures are in the means (the user asked);
    by default they are not, and each row's `excluded` lists the values left out."""

    rows: list[dict[str, Any]]
    incomplete: tuple[IncompleteRun, ...] = ()
    included: bool = False

    def reasons(self) -> dict[str, int]:
        """How many runs did not complete, per status ('cancelled': 1, 'failed': 2)."""
        return dict(Counter(r.status for r in self.incomplete))


def session_results(lib: RunsSource, session_id: int, include_partial: bool = False
                    ) -> SessionResults:
    """The session's results rows with the incomplete runs' values left out of n, mean and
    stddev (kept in `values`, listed in `excluded`), or counted when `include_partial`."""
    incomplete = tuple(
        IncompleteRun(str(r["case_id"]), int(r["repeat"]), str(r.get("status") or ""),
                      str(r.get("error") or ""))
        for r in lib.incomplete_runs(session_id, COMPLETE))
    rows = lib.results(session_id)
    if incomplete and not include_partial:
        left_out = {(r.case_id, r.repeat): r.status for r in incomplete}
        rows = [counted_row(row, left_out) for row in rows]
    elif incomplete:
        statuses = {(r.case_id, r.repeat): r.status for r in incomplete}
        rows = [{**row, "partial": _incomplete_values(row, statuses), "excluded": []}
                for row in rows]
    else:
        rows = [{**row, "excluded": []} for row in rows]
    return SessionResults(rows, incomplete, include_partial)


def _incomplete_values(row: Mapping[str, Any], statuses: Mapping[tuple[str, int], str]
                       ) -> list[dict[str, Any]]:
    """The row's values measured by runs that did not complete: repeat, status, value."""
    out = []
    for i, value in enumerate(row.get("values") or []):
        status = statuses.get((str(row.get("case_id")), i + 1))
        if status is not None and value is not None:
            out.append({"repeat": i + 1, "status": status, "value": value})
    return out


def counted_row(row: Mapping[str, Any], left_out: Mapping[tuple[str, int], str]
                ) -> dict[str, Any]:
    """A results row with n, mean and stddev over the repeats not in `left_out` (case id,
    repeat -> status); `excluded` lists the values it left out, `values` keeps them all."""
    excluded = _incomplete_values(row, left_out)
    if not excluded:
        return {**row, "excluded": []}
    skip = {e["repeat"] for e in excluded}
    kept = [v for i, v in enumerate(row.get("values") or [])
            if v is not None and i + 1 not in skip]
    return {**row, "n": len(kept), "mean": statistics.fmean(kept) if kept else None,
            "stddev": statistics.stdev(kept) if len(kept) >= 2 else None,
            "excluded": excluded}


def combined(results: Sequence[SessionResults]) -> SessionResults:
    """Several sessions' exclusions as one (a comparison says them once)."""
    return SessionResults([], tuple(r for s in results for r in s.incomplete),
                          any(s.included for s in results))
