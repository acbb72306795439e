"""A history: each series' figures session by session, the changes found, what changed.

`build_history(lib, ref)` is the one reading both front ends show: `disklab history` (its
table, JSON, CSV, HTML, SVG) and the window's History view lay out the same History.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from disklab.core.history import changes as found
from disklab.core.history import facts
from disklab.core.history.series import SeriesKey, host_id, series_for, target_words
from disklab.core.library.history import (
    FigureColumns,
    case_facts,
    figure_columns,
    session_identities,
)
from disklab.core.library.store import Library
from disklab.core.results.compare import better_is_higher
from disklab.core.results.labels import case_labels
from disklab.core.results.rows import is_headline
from disklab.core.results.stats import ALPHA, t_upper_quantile
from disklab.core.tools import get_adapter
from disklab.core.vocab.errors import AdapterError, LibraryError


class Point(NamedTuple):
    """One session's figure: its mean over the session's repeats and that mean's interval (a
    tuple: a history of 1,000 sessions x 50 figures makes 50,000 of them)."""

    session: int  # the session's index in SeriesHistory.sessions
    mean: float
    low: float | None  # (1 - alpha) interval of the mean (None below two repeats)
    high: float | None
    n: int


@dataclass(frozen=True)
class Figure:
    """One case and metric over the series' sessions, as columns (the sessions holding it,
    oldest first); `points` makes each session's Point when first read: a history of 50
    figures is opened to show one."""

    key: str  # case id, metric and the metric's own parameters: the same in every session
    label: str  # 'as is · fio read rw=read'
    metric: str
    unit: str
    higher_is_better: bool
    headline: bool  # a figure every table shows (rows.is_headline)
    sessions: tuple[int, ...]  # indexes in SeriesHistory.sessions
    means: tuple[float, ...]
    stddevs: tuple[float, ...]  # NaN: none (one repeat)
    ns: tuple[int, ...]
    alpha: float = ALPHA
    not_judged: str = ""  # why its history is not tested for changes (changes.unresolved)

    @functools.cached_property
    def points(self) -> tuple[Point, ...]:
        out = []
        for i, mean, sd, n in zip(self.sessions, self.means, self.stddevs, self.ns,
                                  strict=True):
            if n < 2 or sd != sd:
                out.append(Point(i, mean, None, None, n))
            else:
                half = _quantile(n - 1, self.alpha) * sd / math.sqrt(n)  # mean_interval's
                out.append(Point(i, mean, mean - half, mean + half, n))
        return tuple(out)


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
    series.figures = _figures(lib, ids, figure_columns(lib, ids), alpha)
    judged = [f for f in series.figures if not f.not_judged]
    series.tests = sum(found.candidates(len(f.means)) for f in judged)
    hosts = {sid: members[sid]["host"] for sid in ids}
    readbacks: dict[int, dict[str, Any]] = {}

    def readback(sid: int) -> dict[str, Any]:
        if sid not in readbacks:
            readbacks[sid] = facts.readbacks(lib.events(sid))
        return readbacks[sid]

    for f in judged:
        for step in found.steps(f.means, series.tests, alpha):
            before, after = f.sessions[step.at - 1], f.sessions[step.at]
            a, b = ids[before], ids[after]
            diffs = facts.differences(hosts[a], hosts[b], readback(a), readback(b))
            worse = (step.pct < 0) == f.higher_is_better
            series.changes.append(Change(f.key, f.label, f.unit, step, before, after, worse,
                                         tuple(diffs)))


def _figures(lib: Library, ids: Sequence[int], columns: Sequence[FigureColumns],
             alpha: float) -> list[Figure]:
    """Each case and metric's values over the sessions, oldest session first, labelled as
    the comparisons label them."""
    index_of = {sid: i for i, sid in enumerate(ids)}
    cases: dict[int, dict[str, tuple[str, str, dict[str, Any]]]] = {}
    reps: list[dict[str, Any]] = []
    lines: list[tuple[FigureColumns, tuple[Sequence[Any], ...]]] = []
    last: tuple[list[int], list[int], bool] = ([], [], True)  # figures share their sessions
    for c in columns:
        if c.sessions != last[0]:
            index = [index_of[sid] for sid in c.sessions]
            last = (c.sessions, index, index == sorted(index))
        index, in_order = last[1], last[2]
        line: tuple[Sequence[Any], ...] = (index, c.mean, c.stddev, c.n)
        if math.isnan(math.fsum(c.mean)) or not in_order:
            # a session without the figure, or sessions not in id order: sorted, kept out
            line = tuple(zip(*sorted(p for p in zip(*line, strict=True) if p[1] == p[1]),
                             strict=True))
        if not line or not line[0]:
            continue
        first = ids[line[0][0]]
        if first not in cases:
            cases[first] = case_facts(lib, first)
        config, tool, case_params = cases[first].get(c.case_id, ("", "", {}))
        reps.append({"config": config, "tool": tool, "metric": c.metric, "unit": c.unit,
                     "test": c.metric.split(":")[0],
                     "params": {**case_params, **(json.loads(c.params) if c.params else {})}})
        lines.append((c, line))
    labels = case_labels(reps)
    configs = {r["config"] for r in reps}
    out = []
    for (c, line), rep in zip(lines, reps, strict=True):
        shown = " ".join(p for p in (rep["tool"], rep["metric"], labels.label(rep)) if p)
        label = f"{rep['config']} · {shown}" if len(configs) > 1 else shown
        at, means, sds, ns = (tuple(column) for column in line)
        out.append(Figure(f"{c.case_id}|{c.metric}|{c.params}", label, c.metric, c.unit,
                          better_is_higher(c.metric, c.unit), is_headline(rep), at, means,
                          sds, ns, alpha, found.unresolved(c.metric, _ios(rep))))
    return out


def _ios(rep: Mapping[str, Any]) -> int | None:
    """The I/Os of the figure's direction one run of its case makes, by its tool's rules
    (None: not fixed by its parameters, or a tool DiskLab does not know)."""
    try:
        return get_adapter(str(rep["tool"])).ios(rep["params"], rep["test"])
    except (KeyError, AdapterError, TypeError, ValueError):  # an import's odd parameters
        return None


@functools.lru_cache(maxsize=256)
def _quantile(df: int, alpha: float) -> float:
    """The t quantile of a mean's interval, once per repeats count (stats.mean_interval)."""
    return t_upper_quantile(alpha / 2.0, df)
