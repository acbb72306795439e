"""The comparison a person asks for, one home for `disklab compare` and the Compare page: the
sessions' result rows read once with the verdicts of what limited them, the [report] of the
first session the pivot opens on, the layout a person's keys make of it, its baseline, and a
document's title and facts. The front ends only take the choices and lay out the answer."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from disklab.core.library import Library
from disklab.core.plan.report import session_report
from disklab.core.results.compare import missing_configs, session_label
from disklab.core.results.documents import session_evidence, session_facts
from disklab.core.results.limit_words import with_limits
from disklab.core.results.limits import session_limits
from disklab.core.results.partial import session_results
from disklab.core.results.pivot import Layout, Pivot, build_pivot, report_layout, session_rows
from disklab.core.results.stats import ALPHA
from disklab.core.vocab.model import Report

Rows = list[dict[str, Any]]
TITLE_NAMES = 4  # sessions named in a title; more are counted, the first and last named


@dataclass(frozen=True)
class SessionsCompared:
    """What the sessions compared hold, read once: each session's rows with their verdicts,
    the pivot's rows, and what a written document keeps (the configurations without a figure,
    the commands and read-backs as evidence), read only when asked (`documents`)."""

    sessions: tuple[dict[str, Any], ...]
    report: Report  # the first session's [report], else the default (config x test)
    results: tuple[tuple[str, Rows], ...]  # (session label, its rows with their verdicts)
    rows: Rows  # every session's rows as a pivot reads them (pivot.session_rows)
    missing: tuple[str, ...] = ()
    evidence: tuple[tuple[str, str], ...] = ()

    def layout(self, rows: Sequence[str] = (), columns: Sequence[str] = (),
               metrics: Sequence[str] = (), where: Sequence[tuple[str, str]] = (),
               baseline: str | None = None) -> Layout:
        """The keys a person gave, the rest from the [report] (pivot.report_layout)."""
        return report_layout(self.report, rows, columns, metrics, where, baseline)

    def baseline(self, layout: Layout) -> str | None:
        """The layout's baseline as a pivot takes it: KEY=VALUE or a value as given; a session
        (id or name) among those compared becomes that session's value of `session` (or of
        `config`, which names the sessions when there are several)."""
        ref = layout.baseline
        if not ref or "=" in ref:
            return ref
        key = "session" if "session" in (*layout.rows, *layout.columns) else "config"
        for s in self.sessions:
            if ref in (str(s["id"]), str(s["name"])):
                return f"{key}={session_label(s)}"
        return ref

    def pivot(self, layout: Layout, alpha: float = ALPHA) -> Pivot:
        """The pivot of the rows in `layout`; the [report]'s own layout brings its plan order,
        chart shape and axis. PivotKeyError, BaselineError or ValueError name what was wrong."""
        own = layout.own
        pivot = build_pivot(self.rows, list(layout.rows), list(layout.columns),
                            list(layout.metrics), alpha, self.baseline(layout), layout.where,
                            plan_order=own and self.report != Report(),
                            baseline_optional=layout.baseline_optional)
        if own:
            pivot = dataclasses.replace(pivot, chart=self.report.chart, x=self.report.x)
        return dataclasses.replace(pivot, missing=self.missing)

    def study_title(self, layout: Layout) -> str:
        """Which table of the study the pivot is (the [report]'s title with its own layout);
        '' otherwise."""
        return self.report.title if layout.own else ""

    def title(self, layout: Layout) -> str:
        """A document's title: the sessions (the first and last of many), then the study's
        table."""
        names = [session_label(s) for s in self.sessions]
        title = "DiskLab: " + (", ".join(names) if len(names) <= TITLE_NAMES else
                               f"{len(names)} sessions ({names[0]} … {names[-1]})")
        study = self.study_title(layout)
        return title + (f" — {study}" if study else "")

    def facts(self) -> list[tuple[str, str]]:
        """Every session's facts, for the top of a document."""
        return [f for s in self.sessions for f in session_facts(s)]

    def metric_names(self) -> list[str]:
        """The metrics the rows have, in their order (for a --metric that names none)."""
        return list(dict.fromkeys(str(r.get("metric", "")) for r in self.rows))


def find_sessions(library: Library, refs: Iterable[str | int]) -> list[dict[str, Any]]:
    """The sessions named (ids, names or UUIDs), each once, in the order first named."""
    found = (library.find_session(r) for r in refs)
    return list({s["id"]: s for s in found}.values())


def compare_sessions(library: Library, sessions: Sequence[Mapping[str, Any]],
                     include_partial: bool = False, documents: bool = False
                     ) -> SessionsCompared:
    """The comparison of `sessions` (library.session dicts): each one's results (runs that did
    not complete left out of the means unless `include_partial`) with what limited them; with
    `documents`, also the configurations without a figure and each session's evidence."""
    listed = tuple(dict(s) for s in sessions)
    report = (session_report(listed[0].get("plan_text")) if listed else None) or Report()
    raw = [(s, session_results(library, s["id"], include_partial).rows) for s in listed]
    results = tuple((session_label(s), with_limits(rows, session_limits(library, s["id"])))
                    for s, rows in raw)
    if not documents:
        return SessionsCompared(listed, report, results, session_rows(results))
    missing = tuple(m for s, rows in raw for m in missing_configs(library, s, rows))
    evidence = tuple(e for s in listed for e in session_evidence(library, s["id"]))
    return SessionsCompared(listed, report, results, session_rows(results), missing, evidence)
