"""A running session's results, in the library's row shape, as its cases finish.

The Run page's table shows each case's figures while the session goes. They are made here, not
in the page, and in the same way the library makes them (`Library.results`): one row per case,
metric and parameter point (a several-target case has a row per target and one for "all"),
mean and sample stddev by `rows.row_stats`, headline rows by `rows.headline`, text by
`format.format_mean_std`. The Run table then says what `disklab show` says once the session is
stored, never a mean pooled over the targets. What limited each case (core.results.limits) is
judged here too, as each run ends, from the samples the run's events carried: the same verdict
`disklab show` gives once the session is stored.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from disklab.core.results.format import format_mean_std
from disklab.core.results.labels import case_labels, value_rank
from disklab.core.results.limits import (
    JUDGED_SERIES,
    Limit,
    row_limits,
    run_facts,
    run_limits,
)
from disklab.core.results.rows import headline, row_stats
from disklab.core.vocab.model import Case, Metric

SHOWN_METRICS = 2  # a case's cell names its first two headline metrics (throughput first)


class LiveResults:
    """The complete runs' figures of a running session, per case (library-shaped rows), and
    the partial figures of runs stopped by a cancel or a failure, kept apart."""

    def __init__(self, cases: Iterable[Case] = (), repeats: int = 1,
                 host: Mapping[str, Any] | None = None):
        self.cases = {c.id: c for c in cases}
        self.repeats = repeats
        self.host = dict(host or {})  # the session's facts (CPUs, dirty threshold, limits)
        # case id -> (metric, params JSON) -> row under construction
        self._groups: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
        self._partial: dict[str, list[Metric]] = {}
        # (case id, repeat) -> the judged series' samples of the run going on
        self._samples: dict[tuple[str, int], list[dict[str, Any]]] = {}
        self._verdicts: dict[str, list[list[Limit]]] = {}  # case id -> each run's verdicts

    def add_sample(self, case_id: str, repeat: int, series: str, value: float) -> None:
        """A Sample of a run going on; only the series a verdict reads are kept, and only the
        run going on's (runs follow each other: a run that failed leaves nothing behind)."""
        if series in JUDGED_SERIES:
            key = (case_id, repeat)
            if key not in self._samples:
                self._samples = {key: []}
            self._samples[key].append({"series": series, "value": value})

    def limits(self, case_id: str) -> list[Limit] | None:
        """What limited the case's complete runs so far (limits.row_limits), None before one
        ended."""
        runs = self._verdicts.get(case_id)
        return row_limits(runs) if runs else None

    def add(self, case_id: str, repeat: int, metrics: Iterable[Metric],
            duration: float | None = None) -> None:
        """A complete run's metrics (CaseFinished); with its duration, its verdict too."""
        case = self.cases.get(case_id)
        samples = self._samples.pop((case_id, repeat), [])
        if duration is not None and case is not None:
            facts = run_facts({"tool": case.tool, "params": case.params,
                               "test_index": case.test_index}, duration, self.host)
            self._verdicts.setdefault(case_id, []).append(run_limits(samples, facts))
        groups = self._groups.setdefault(case_id, {})
        for m in metrics:
            key = (m.name, json.dumps(dict(m.params or {}), sort_keys=True, default=str))
            row = groups.get(key)
            if row is None:
                params = {**(case.params if case else {}), **dict(m.params or {})}
                row = groups[key] = {
                    "config": case.config if case else "", "tool": case.tool if case else "",
                    "test": m.name.split(":")[0], "metric": m.name, "unit": m.unit,
                    "params": params, "case_id": case_id, "by_repeat": {}, "notes": []}
            row["by_repeat"][repeat] = m.value
            if m.note and m.note not in row["notes"]:
                row["notes"].append(m.note)

    def add_partial(self, case_id: str, metrics: Iterable[Metric]) -> None:
        """What a cancelled or failed run measured before it stopped: shown, marked partial,
        never in the means (as the library keeps it)."""
        self._partial[case_id] = [m for m in metrics if m.value is not None]

    def rows(self, case_id: str) -> list[dict[str, Any]]:
        """The case's rows as `Library.results` gives them: values per repeat, n, mean,
        stddev."""
        out = []
        for g in self._groups.get(case_id, {}).values():
            by_repeat = g["by_repeat"]
            n_repeats = max([self.repeats, *by_repeat])
            values = [by_repeat.get(r) for r in range(1, n_repeats + 1)]
            row = {k: v for k, v in g.items() if k != "by_repeat"}
            row.update(values=values, mean=None, stddev=None, n=0)
            row["mean"], row["stddev"], row["n"] = row_stats(row)
            out.append(row)
        return out

    def all_rows(self) -> list[dict[str, Any]]:
        """Every case's rows so far, in the order the cases finished first."""
        return [row for case_id in self._groups for row in self.rows(case_id)]

    def text(self, case_id: str) -> str:
        """The case's cell: its headline figures, per target where it has several:
        'write target=a 716 MB/s ± 20.1 MB/s; target=b 777 MB/s; target=all 1330 MB/s'.
        A run stopped before its end shows what it measured, marked partial."""
        rows = self.rows(case_id)
        if rows:
            return figures_text(rows)
        partial = self._partial.get(case_id)
        if not partial:
            return ""
        case = self.cases.get(case_id)
        rows = [{"tool": case.tool if case else "", "metric": m.name, "unit": m.unit,
                 "params": {**(case.params if case else {}), **dict(m.params or {})},
                 "values": [m.value], "mean": m.value, "stddev": None, "n": 1}
                for m in partial]
        text = figures_text(rows)
        return f"{text} (partial: stopped before its end)" if text else ""


def _throughput_first(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The metric names of the rows, throughput (B/s, no suffix) first, in first-seen order."""
    names: dict[str, tuple[bool, bool, int]] = {}
    for r in rows:
        name = str(r.get("metric", ""))
        names.setdefault(name, (":" in name, r.get("unit") != "B/s", len(names)))
    return sorted(names, key=names.__getitem__)


def figures_text(rows: Sequence[Mapping[str, Any]]) -> str:
    """One case's headline rows as one line, each figure by format_mean_std; the parameter
    points of a metric (targets a, b, all) told apart by what varies among them (case_labels)
    in the order people read them (a, b, then all)."""
    shown = list(headline(rows)) or list(rows)
    labels = case_labels(shown)
    parts = []
    for name in _throughput_first(shown)[:SHOWN_METRICS]:
        points = [r for r in shown if r.get("metric") == name]
        ranks = {k: value_rank([r["params"].get(k) for r in points]) for k in labels.keys}
        points.sort(key=lambda r: tuple(ranks[k](r["params"].get(k)) for k in labels.keys))
        figures = []
        for r in points:
            mean, std, n = row_stats(r)
            label = labels.label(r)
            figure = format_mean_std(mean, std, n, str(r.get("unit", "")))
            figures.append(f"{label} {figure}" if label else figure)
        parts.append(f"{name} " + "; ".join(figures))
    return " | ".join(parts)
