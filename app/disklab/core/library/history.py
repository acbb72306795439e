"""What a history (core.history) reads of the library, in a few queries for many sessions.

A history of one plan over 1,000 sessions opens in under 200 ms (bench figure 11): one query
lists every session's identity (plan text, host record, start), one gives the results stamps of
the sessions of one series, one their stored summary rows grouped by figure, each figure's
values over the sessions in one row (50 rows of 1,000 values, not 50,000 rows: making a Python
row of each took most of the time). A session whose stored summary is missing or stale (its
stamp is not the session's) has its rows computed from its metric rows, as Library.results
does.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from disklab.core.library import summary
from disklab.core.library.store import Library

# SQLite's default limit of host parameters per statement is 999 (32766 from 3.32): chunks of
# this many ids stay under either
_CHUNK = 900


def session_identities(lib: Library) -> list[dict[str, Any]]:
    """Every session, oldest first: id, uuid, name, status, started, host (the parsed record),
    plan_text. A host text many sessions share is parsed once."""
    hosts: dict[str, dict[str, Any]] = {}
    out = []
    for sid, uuid, name, status, started, host, plan_text in lib.db.execute(
            "SELECT id, uuid, name, status, started, host, plan_text FROM session "
            "ORDER BY started, id"):
        parsed = hosts.get(host)
        if parsed is None:
            parsed = hosts[host] = json.loads(host)
        out.append({"id": sid, "uuid": uuid, "name": name, "status": status,
                    "started": started, "host": parsed, "plan_text": plan_text})
    return out


def _chunks(ids: Sequence[int]) -> list[Sequence[int]]:
    return [ids[i:i + _CHUNK] for i in range(0, len(ids), _CHUNK)]


def results_stamps(db: sqlite3.Connection, ids: Sequence[int]) -> dict[int, tuple[Any, ...]]:
    """summary.results_stamp of each session in `ids`, in one query a chunk (the same columns
    in the same order: tests/unit/test_history_changes.py holds the two to each other)."""
    out: dict[int, tuple[Any, ...]] = {}
    for chunk in _chunks(ids):
        marks = ", ".join("?" * len(chunk))
        for row in db.execute(
                "SELECT s.id, s.repeats, s.started, (SELECT count(*) FROM case_ c WHERE "
                "c.session_id = s.id), (SELECT count(*) FROM metric m WHERE m.session_id = "
                "s.id), (SELECT max(id) FROM metric m WHERE m.session_id = s.id), (SELECT "
                "count(*) FROM event e WHERE e.session_id = s.id AND e.kind = "
                f"'SessionResumed') FROM session s WHERE s.id IN ({marks})", tuple(chunk)):
            out[row[0]] = tuple(row[1:])
    return out


@dataclass
class FigureColumns:
    """One figure (case, metric, the metric's own parameters) over sessions, as columns:
    a history of 1,000 sessions x 50 figures reads 50 of these, not 50,000 rows."""

    case_id: str
    metric: str
    params: str  # the metric's own parameters as stored (JSON text, '' for none)
    unit: str
    sessions: list[int] = field(default_factory=list)
    n: list[int] = field(default_factory=list)
    mean: list[float] = field(default_factory=list)  # NaN: none
    stddev: list[float] = field(default_factory=list)  # NaN: none


# one row per figure, its sessions' figures concatenated in the same scan (so in the same
# order), each REAL in the shortest text that reads back as the same double (%!.17g)
_COLUMNS_SQL = (
    "SELECT case_id, metric, params, unit, group_concat(session_id), group_concat(n), "
    "group_concat(CASE WHEN mean IS NULL THEN 'nan' ELSE printf('%!.17g', mean) END), "
    "group_concat(CASE WHEN stddev IS NULL THEN 'nan' ELSE printf('%!.17g', stddev) END) "
    "FROM result WHERE session_id IN ({marks}) GROUP BY case_id, metric, params "
    "ORDER BY min(session_id * 100000 + ord)")


def figure_columns(lib: Library, ids: Sequence[int]) -> list[FigureColumns]:
    """The sessions' figures, each as columns over the sessions (in no particular session
    order: the caller orders them), the figures in the order the first session holding each
    lists it. From the stored summaries where their stamps match, else computed from the
    metric rows as Library.results computes them."""
    stamps = results_stamps(lib.db, ids)
    stored: dict[int, str] = {}
    for chunk in _chunks(ids):
        marks = ", ".join("?" * len(chunk))
        stored.update(lib.db.execute(
            f"SELECT session_id, stamp FROM result_stamp WHERE session_id IN ({marks})",
            tuple(chunk)))
    fresh = {sid for sid in ids
             if sid in stored and tuple(json.loads(stored[sid])) == stamps.get(sid)}
    out: dict[tuple[str, str, str], FigureColumns] = {}
    for chunk in _chunks(sorted(fresh)):
        for case_id, metric, params, unit, sids, ns, means, sds in lib.db.execute(
                _COLUMNS_SQL.format(marks=", ".join("?" * len(chunk))), tuple(chunk)):
            key = (case_id, metric, params or "")
            f = out.get(key)
            if f is None:
                f = out[key] = FigureColumns(case_id, metric, params or "", unit)
            f.sessions += map(int, sids.split(","))
            f.n += map(int, ns.split(","))
            f.mean += map(float, means.split(","))
            f.stddev += map(float, sds.split(","))
    for sid in ids:
        if sid in fresh:
            continue
        # no summary, or a stale one: computed from the metric rows
        for mparams, r in summary.computed_results(lib.db, sid, lib.cases(sid),
                                                   int(stamps.get(sid, (1,))[0] or 1)):
            key = (r["case_id"], r["metric"], mparams)
            f = out.get(key)
            if f is None:
                f = out[key] = FigureColumns(r["case_id"], r["metric"], mparams, r["unit"])
            f.sessions.append(sid)
            f.n.append(int(r["n"]))
            f.mean.append(math.nan if r["mean"] is None else float(r["mean"]))
            f.stddev.append(math.nan if r["stddev"] is None else float(r["stddev"]))
    return list(out.values())


def case_facts(lib: Library, session_id: int) -> dict[str, tuple[str, str, dict[str, Any]]]:
    """A session's cases: case_id -> (configuration, tool, parameters)."""
    return {c["case_id"]: (c["config"], c["tool"], c["params"])
            for c in lib.cases(session_id)}
