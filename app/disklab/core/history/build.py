"""A history: each series' figures session by session, the changes found, what changed.

`build_history(lib, ref)` is the one reading both front ends show: `disklab history` (its
table, JSON, CSV, HTML, SVG) and the window's History view lay out the same History.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from disklab.core.history import changes as found
from disklab.core.history import facts
from disklab.core.history.series import SeriesKey, host_id, series_for, target_words
from disklab.core.library.history import session_identities, stored_points
from disklab.core.library.store import Library
from disklab.core.results.compare import better_is_higher
from disklab.core.results.labels import case_labels
from disklab.core.results.rows import is_headline
from disklab.core.results.stats import ALPHA, mean_interval
from disklab.core.vocab.errors import LibraryError


@dataclass(frozen=True)
class Point:
    """One session's figure: its mean over the session's repeats and that mean's interval."""

    session: int  # the session's index in SeriesHistory.sessions
    mean: float
    low: float | None  # (1 - alpha) interval of the mean (None below two repeats)
    high: float | None
    n: int


@dataclass(frozen=True)
class Figure:
    """One case and metric over the series' sessions."""

    key: str  # case id, metric and the metric's own parameters: the same in every session
    label: str  # 'as is · fio read rw=read'
    metric: str
    unit: str
    higher_is_better: bool
    headline: bool  # a figure every table shows (rows.is_headline)
    points: tuple[Point, ...]


@dataclass(frozen=True)
class Change:
    """A step in one figure, between two sessions, and what the records say changed."""

    figure: str  # Figure.key
    label: str
    unit: str
    step: found.Step
    before: int  # index in SeriesHistory.sessions: the last session before the change
    after: int  # the first session after it
    worse: bool
    what_changed: tuple[dict[str, Any], ...]

    @property
    def changed_line(self) -> str:
        return facts.line(list(self.what_changed))


@dataclass
class SeriesHistory:
    """One plan on one target on one host, oldest session first."""

    key: SeriesKey
    plan_name: str
    host_name: str
    this_host: bool
    target: str
    sessions: list[dict[str, Any]]  # id, uuid, name, started, status
    figures: list[Figure] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    tests: int = 0  # m: the candidate points tested over every figure (Bonferroni)

    @property
    def host_words(self) -> str:
        return f"{self.host_name} ({'this machine' if self.this_host else 'another machine'})"


@dataclass
class History:
    ref: str
    alpha: float
    series: list[SeriesHistory]


def build_history(lib: Library, ref: str, alpha: float = ALPHA,
                  this_machine: Mapping[str, Any] | None = None) -> History:
    """The history of the series `ref` names (a session id, UUID or name: see
    series.series_for); LibraryError when no session matches. `this_machine`: the host
    identity to call 'this machine' (core.run.resume.host_identity)."""
    sessions = session_identities(lib)
    keys, grouped = series_for(sessions, str(ref))
    if not keys:
        raise LibraryError(f"no session {ref!r} in {lib.path}")
    here = host_id(this_machine or {})
    out = []
    for key in keys:
        members = grouped[key]
        newest = members[-1] if members else next(
            s for s in sessions if str(s["id"]) == str(ref) or s["uuid"] == ref
            or s["name"] == ref)
        host = newest["host"]
        series = SeriesHistory(
            key=key, plan_name=str(newest["name"]), host_name=str(host.get("hostname") or
                                                                   key.host),
            this_host=key.host == here, target=target_words(host),
            sessions=[{k: s[k] for k in ("id", "uuid", "name", "started", "status")}
                      for s in members])
        _fill(lib, series, {s["id"]: s for s in members}, alpha)
        out.append(series)
    return History(str(ref), alpha, out)


def _fill(lib: Library, series: SeriesHistory, members: Mapping[int, Mapping[str, Any]],
          alpha: float) -> None:
    """The series' figures, then the changes found in them and what changed at each."""
    ids = [s["id"] for s in series.sessions]
    rows = stored_points(lib, ids)
    series.figures = _figures(ids, rows, alpha)
    series.tests = sum(found.candidates(len(f.points)) for f in series.figures)
    hosts = {sid: members[sid]["host"] for sid in ids}
    readbacks: dict[int, dict[str, Any]] = {}

    def readback(sid: int) -> dict[str, Any]:
        if sid not in readbacks:
            readbacks[sid] = facts.readbacks(lib.events(sid))
        return readbacks[sid]

    for f in series.figures:
        for step in found.steps([p.mean for p in f.points], series.tests, alpha):
            before, after = f.points[step.at - 1].session, f.points[step.at].session
            a, b = ids[before], ids[after]
            diffs = facts.differences(hosts[a], hosts[b], readback(a), readback(b))
            worse = (step.pct < 0) == f.higher_is_better
            series.changes.append(Change(f.key, f.label, f.unit, step, before, after, worse,
                                         tuple(diffs)))


def _figures(ids: Sequence[int], rows: Mapping[int, list[dict[str, Any]]], alpha: float
             ) -> list[Figure]:
    """Each case and metric's points over the sessions, in the order the sessions give
    them."""
    points: dict[str, list[Point]] = {}
    first: dict[str, dict[str, Any]] = {}
    for index, sid in enumerate(ids):
        for r in rows.get(sid, ()):
            mean = r["mean"]
            if mean is None:
                continue
            key = f"{r['case_id']}|{r['metric']}|{r['params']}"
            if key not in first:
                first[key] = r
                points[key] = []
            low, high = mean_interval(mean, r["stddev"], int(r["n"] or 0), alpha)
            points[key].append(Point(index, float(mean), low, high, int(r["n"] or 0)))
    reps = [_merged(r) for r in first.values()]
    labels = case_labels(reps)
    configs = {r["config"] for r in reps}
    out = []
    for (key, r), rep in zip(first.items(), reps, strict=True):
        shown = " ".join(p for p in (rep["tool"], rep["metric"], labels.label(rep)) if p)
        label = f"{rep['config']} · {shown}" if len(configs) > 1 else shown
        out.append(Figure(key, label, r["metric"], r["unit"],
                          better_is_higher(r["metric"], r["unit"]), is_headline(rep),
                          tuple(points[key])))
    return out


def _merged(r: Mapping[str, Any]) -> dict[str, Any]:
    """A representative row with its parameters as one dict, as the labels read them."""
    params = r.get("merged")
    if params is None:
        params = {**json.loads(r.get("case_params") or "{}"),
                  **(json.loads(r["params"]) if r.get("params") else {})}
    return {"config": r["config"], "tool": r["tool"], "metric": r["metric"],
            "unit": r["unit"], "params": params, "test": str(r["metric"]).split(":")[0]}
