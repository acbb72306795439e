"""What a history (core.history) reads of the library, in a few queries for many sessions.

A history of one plan over 1,000 sessions opens in under 200 ms (bench figure 11): one query
lists every session's identity (plan text, host record, start), one gives the results stamps of
the sessions of one series, and their stored summary rows are read in one of two ways. The
sessions of one plan usually share one layout (the same figure at each place of their
summaries): SQL checks that each session's rows are that layout, and the numbers (mean,
stddev, and n unless every session counts the first one's repeats at each place) come as they
are stored, in (session, place) order, each figure's column a slice of them: no GROUP BY sort,
no text conversion, no Python step per value. Otherwise SQL groups the
rows by figure, each figure's values over the sessions in one row of concatenated text. A
session whose stored summary is missing or stale (its stamp is not the session's) has its rows
computed from its metric rows, as Library.results does.
"""

from __future__ import annotations

import itertools
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
    in the same order: tests/unit/test_history_changes.py holds the two to each other). A session's
    metric count and largest metric id come from one pass over its metric index entries
    (two subqueries made two passes, the max not being at either end of (session, case))."""
    out: dict[int, tuple[Any, ...]] = {}
    for chunk in _chunks(ids):
        marks = ", ".join("?" * len(chunk))
        for sid, repeats, started, cases, metrics, resumes in db.execute(
                "SELECT s.id, s.repeats, s.started, (SELECT count(*) FROM case_ c WHERE "
                "c.session_id = s.id), (SELECT count(*) || ' ' || ifnull(max(id), '') FROM "
                "metric m WHERE m.session_id = s.id), (SELECT count(*) FROM event e WHERE "
                "e.session_id = s.id AND e.kind = 'SessionResumed') FROM session s WHERE "
                f"s.id IN ({marks})", tuple(chunk)):
            count, top = metrics.split(" ")
            out[sid] = (repeats, started, cases, int(count), int(top) if top else None,
                        resumes)
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
# order), each REAL in the shortest text that reads back as the same double (%!.17g): the
# general reading, for sessions whose summaries do not share one layout
_COLUMNS_SQL = (
    "SELECT case_id, metric, params, unit, group_concat(session_id), group_concat(n), "
    "group_concat(CASE WHEN mean IS NULL THEN 'nan' ELSE printf('%!.17g', mean) END), "
    "group_concat(CASE WHEN stddev IS NULL THEN 'nan' ELSE printf('%!.17g', stddev) END) "
    "FROM result WHERE session_id IN ({marks}) GROUP BY case_id, metric, params "
    "ORDER BY min(session_id * 100000 + ord)")
# the fast reading: one session's layout (each summary row's place, figure and repeats counted),
# how many of the sessions' rows are in it, and the numbers alone in the table's own order
_LAYOUT_SQL = ("SELECT ord, case_id, metric, params, unit, n FROM result WHERE session_id = ? "
               "ORDER BY ord")
_IN_LAYOUT_SQL = ("SELECT count(*) FROM result WHERE session_id IN ({marks}) AND "
                  "(ord, case_id, metric, params, unit, n) IN (VALUES {layout})")
# each session's rows in the layout when some count other repeats than the first session's
_EACH_IN_LAYOUT_SQL = ("SELECT session_id, count(*) FROM result WHERE session_id IN ({marks}) "
                       "AND (ord, case_id, metric, params, unit) IN (VALUES {layout}) "
                       "GROUP BY session_id ORDER BY session_id")
_NUMBERS_SQL = ("SELECT {n}mean, stddev FROM result WHERE session_id IN ({marks}) "
                "ORDER BY session_id, ord")

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
    fresh = sorted(sid for sid in ids
                   if sid in stored and tuple(json.loads(stored[sid])) == stamps.get(sid))
    columns = _uniform_columns(lib.db, fresh)
    if columns is None:
        columns = _grouped_columns(lib.db, fresh)
    out = {(f.case_id, f.metric, f.params): f for f in columns}
    done = set(fresh)
    for sid in ids:
        if sid in done:
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


def _grouped_columns(db: sqlite3.Connection, ids: Sequence[int]) -> list[FigureColumns]:
    """The stored summaries of `ids` grouped by figure in SQL, whatever their layouts."""
    out: dict[tuple[str, str, str], FigureColumns] = {}
    for chunk in _chunks(ids):
        for case_id, metric, params, unit, sids, ns, means, sds in db.execute(
                _COLUMNS_SQL.format(marks=", ".join("?" * len(chunk))), tuple(chunk)):
            key = (case_id, metric, params or "")
            f = out.get(key)
            if f is None:
                f = out[key] = FigureColumns(case_id, metric, params or "", unit)
            f.sessions += map(int, sids.split(","))
            f.n += map(int, ns.split(","))
            f.mean += map(float, means.split(","))
            f.stddev += map(float, sds.split(","))
    return list(out.values())


def _uniform_columns(db: sqlite3.Connection, ids: Sequence[int]) -> list[FigureColumns] | None:
    """The stored summaries of `ids` when every one has the first one's layout (the same
    figure at each place, as the sessions of one plan have): the numbers read as they are
    stored, session by session in the table's own order, and each figure's column a slice of
    them (50,000 numbers without a sort, a text conversion or a Python step each). None when
    the layouts differ (a metric added, a case left out): the general reading then groups them.

    Usually every session holds the whole layout with the first session's repeats counted
    (n) at each place: one count says so, and n is not fetched (a third less to fetch).
    Otherwise each session's count says which sessions hold it, and n is fetched."""
    if not ids:
        return []
    layout = db.execute(_LAYOUT_SQL, (ids[0],)).fetchall()
    width = len(layout)
    keys = [row[1:4] for row in layout]
    chunk_size = db.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) - 6 * width
    if not width or len(set(keys)) < width or chunk_size < 1:
        return None
    chunks = [tuple(ids[at:at + chunk_size]) for at in range(0, len(ids), chunk_size)]
    places = ", ".join(["(?, ?, ?, ?, ?, ?)"] * width)
    flat = tuple(x for row in layout for x in row)
    held = sum(db.execute(_IN_LAYOUT_SQL.format(marks=", ".join("?" * len(chunk)),
                                                layout=places), chunk + flat).fetchone()[0]
               for chunk in chunks)
    same_n = held == width * len(ids)
    sids = list(ids) if same_n else _holding(db, chunks, layout)
    if sids is None:
        return None
    rows: list[tuple[Any, ...]] = []
    for chunk in chunks:
        rows += db.execute(_NUMBERS_SQL.format(n="" if same_n else "n, ",
                                               marks=", ".join("?" * len(chunk))), chunk)
    # every session holding rows holds the whole layout ((session, place) is the key) and
    # nothing else: row i is session i // width's figure at place i % width
    if len(rows) != width * len(sids):
        return None
    numbers = list(itertools.chain.from_iterable(rows))  # (n,) mean, stddev, (n,) mean, ...
    k = 2 if same_n else 3
    stride = k * width
    return [FigureColumns(case_id, metric, params, unit, list(sids),
                          [n] * len(sids) if same_n else numbers[k * j::stride],
                          _floats(numbers[k * j + k - 2::stride]),
                          _floats(numbers[k * j + k - 1::stride]))
            for j, (_o, case_id, metric, params, unit, n) in enumerate(layout)]


def _holding(db: sqlite3.Connection, chunks: Sequence[tuple[int, ...]],
             layout: Sequence[tuple[Any, ...]]) -> list[int] | None:
    """The sessions holding rows, when each holds the whole layout (whatever their n), else
    None."""
    places = ", ".join(["(?, ?, ?, ?, ?)"] * len(layout))
    flat = tuple(x for row in layout for x in row[:5])
    counts: list[tuple[int, int]] = []
    for chunk in chunks:
        counts += db.execute(_EACH_IN_LAYOUT_SQL.format(marks=", ".join("?" * len(chunk)),
                                                        layout=places), chunk + flat)
    if any(count != len(layout) for _s, count in counts):
        return None
    return [sid for sid, _c in counts]


def _floats(column: list[float | None]) -> list[float]:
    """A column of REALs, NULL as NaN (as the grouped reading has it)."""
    if None not in column:
        return column  # type: ignore[return-value]  # no None in it
    return [math.nan if v is None else v for v in column]


def case_facts(lib: Library, session_id: int) -> dict[str, tuple[str, str, dict[str, Any]]]:
    """A session's cases: case_id -> (configuration, tool, parameters)."""
    return {c["case_id"]: (c["config"], c["tool"], c["params"])
            for c in lib.cases(session_id)}
