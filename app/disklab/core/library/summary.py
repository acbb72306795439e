"""A session's results summary (schema 3's `result` table and its stamp): its rows computed from
the metric rows, stored, and read back while the stamp still matches the session. Library.results
and Library.store_results (store.py) decide when; this module holds the SQL and the arithmetic.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import sqlite3
import struct
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from disklab.core.vocab.errors import LibraryError


def results_stamp(db: sqlite3.Connection, path: Path, session_id: int) -> tuple[Any, ...]:
    """What a session's results depend on (see Library.results); LibraryError without it."""
    stamp = db.execute(
        "SELECT s.repeats, s.started, (SELECT count(*) FROM case_ c WHERE c.session_id = "
        "s.id), (SELECT count(*) FROM metric m WHERE m.session_id = s.id), (SELECT "
        "max(id) FROM metric m WHERE m.session_id = s.id), (SELECT count(*) FROM event e "
        "WHERE e.session_id = s.id AND e.kind = 'SessionResumed') FROM session s "
        "WHERE s.id = ?",
        (session_id,)).fetchone()
    if stamp is None:
        raise LibraryError(f"no session {session_id} in {path}")
    return tuple(stamp)


def store_quietly(db: sqlite3.Connection, path: Path, session_id: int, stamp: tuple[Any, ...],
                  computed: list[tuple[str, dict[str, Any]]]) -> None:
    """Store a summary computed on a read (quietly: see _quietly), only if the session's stamp
    is still the one the rows were computed at."""
    _quietly(db, lambda: results_stamp(db, path, session_id) == stamp,
             lambda: write_summary(db, session_id, stamp, computed))


def _quietly(db: sqlite3.Connection, still: Callable[[], bool], write: Callable[[], None]
             ) -> None:
    """Write something derived, computed on a read, only where that holds up nobody: not
    while any session of the library is being recorded (its writer commits every second and
    would wait for this write), not when the write lock is taken (no waiting for it), not on
    a read-only file, not inside a transaction of this connection (a recorder's batch), and
    only if `still()` says, inside the write transaction, that what it was computed from has
    not changed. Otherwise it is left for the next read or the session's next close;
    nothing is lost."""
    if db.in_transaction:
        return
    try:
        if db.execute(
                "SELECT 1 FROM session WHERE status = 'running' LIMIT 1").fetchone():
            return
        db.execute("PRAGMA busy_timeout = 0")
        try:
            db.execute("BEGIN IMMEDIATE")
        finally:
            db.execute("PRAGMA busy_timeout = 30000")
    except sqlite3.Error:  # locked by a writer, read-only file or directory
        return
    try:
        if still():
            write()
        db.execute("COMMIT")
    except sqlite3.Error:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")


def write_summary(db: sqlite3.Connection, session_id: int, stamp: tuple[Any, ...],
                  computed: list[tuple[str, dict[str, Any]]]) -> None:
    """The summary rows (each with its metric's own parameters as stored, merged with its
    case's on reading) and their stamp, in the caller's transaction."""
    db.execute("DELETE FROM result WHERE session_id = ?", (session_id,))
    db.execute("DELETE FROM result_stamp WHERE session_id = ?", (session_id,))
    db.executemany(
        "INSERT INTO result (session_id, ord, case_id, metric, params, unit, n, mean, "
        "stddev, vals, notes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        ((session_id, i, r["case_id"], r["metric"], params, r["unit"], r["n"], r["mean"],
          r["stddev"], _pack(r["values"]), json.dumps(r["notes"]) if r["notes"] else "")
         for i, (params, r) in enumerate(computed)))
    db.execute("INSERT INTO result_stamp (session_id, stamp) VALUES (?, ?)",
               (session_id, json.dumps(stamp)))


def stored_results(db: sqlite3.Connection, session_id: int, stamp: tuple[Any, ...]
                   ) -> list[dict[str, Any]] | None:
    """Library.results() from the session's summary, or None when it has none or its stamp is not
    the session's (stale: computed before a resume or added runs)."""
    stored = db.execute("SELECT stamp FROM result_stamp WHERE session_id = ?",
                        (session_id,)).fetchone()
    if stored is None or tuple(json.loads(stored[0])) != stamp:
        return None
    cases = {c: (cfg, t, json.loads(p)) for c, cfg, t, p in db.execute(
        "SELECT case_id, config, tool, params FROM case_ WHERE session_id = ?",
        (session_id,))}
    loads = json.loads
    tests: dict[str, str] = {}
    out = []
    for case_id, metric, params, unit, n, mean, stddev, vals, notes in db.execute(
            "SELECT case_id, metric, params, unit, n, mean, stddev, vals, notes FROM result "
            "WHERE session_id = ? ORDER BY ord", (session_id,)):
        case = cases.get(case_id)
        if case is None:  # cannot be with a matching stamp; recompute rather than guess
            return None
        config, tool, case_params = case
        values = _unpack(vals, n)
        if (mean is None and n) or (stddev is None and n >= 2):  # NaN is stored as NULL
            mean, stddev = _mean_stddev([v for v in values if v is not None])
        test = tests.get(metric)
        if test is None:
            test = tests[metric] = metric.split(":")[0]
        out.append({
            "config": config, "tool": tool, "test": test,
            "params": {**case_params, **loads(params)} if params else dict(case_params),
            "metric": metric, "unit": unit, "notes": loads(notes) if notes else [],
            "case_id": case_id, "values": values, "n": n, "mean": mean,
            "stddev": stddev})
    return out


def computed_results(db: sqlite3.Connection, session_id: int, cases: list[dict[str, Any]],
                     repeats: int) -> list[tuple[str, dict[str, Any]]]:
    """Library.results() computed from the metric rows (`cases`: the session's, as
    Library.cases gives them), each row with its metric's own parameters as stored (JSON text,
    '' for none: what the summary stores)."""
    by_id = {c["case_id"]: c for c in cases}
    groups: dict[tuple[str, str, str], dict[str, Any]] = {}
    for case_id, repeat, name, value, unit, note, params in db.execute(
            "SELECT case_id, repeat, name, value, unit, note, params FROM metric "
            "WHERE session_id = ? ORDER BY id", (session_id,)):
        key = (case_id, name, params or "")
        g = groups.get(key)
        if g is None:
            case = by_id.get(case_id)
            if case is None:
                continue
            merged = {**case["params"], **(json.loads(params) if params else {})}
            g = groups[key] = {
                "config": case["config"], "tool": case["tool"],
                "test": name.split(":")[0], "params": merged, "metric": name,
                "unit": unit, "by_repeat": {}, "notes": [], "case_id": case_id,
                "_order": (case["index"], len(groups)),
            }
        g["by_repeat"][repeat] = _finite(value)
        if note and note not in g["notes"]:
            g["notes"].append(note)
    out = []
    for key, g in sorted(groups.items(), key=lambda kv: kv[1]["_order"]):
        by_repeat = g.pop("by_repeat")
        g.pop("_order")
        n_repeats = max([repeats, *by_repeat])
        values = [by_repeat.get(r) for r in range(1, n_repeats + 1)]
        present = [v for v in values if v is not None]
        g["values"] = values
        g["n"] = len(present)
        g["mean"], g["stddev"] = _mean_stddev(present)
        out.append((key[2], g))
    return out



# ---- the verdicts of what limited each run (schema 5's result_limits) ------------------------


def limits_stamp(db: sqlite3.Connection, path: Path, session_id: int, rules: int
                 ) -> tuple[Any, ...]:
    """What a session's verdicts depend on: the version of the rules that judged them
    (core.results.limits.RULES), the results' stamp (cases, metrics, resumes) and its
    complete runs, how many and their summed time (a run's end sets its status and duration;
    its samples were recorded before). The host record and the samples do not change once
    a run has ended."""
    runs = db.execute("SELECT count(*), total(duration) FROM run WHERE session_id = ? AND "
                      "status IN ('ok', 'imported')", (session_id,)).fetchone()
    return (rules, *results_stamp(db, path, session_id), *runs)


def stored_limits(db: sqlite3.Connection, session_id: int, stamp: tuple[Any, ...]) -> Any:
    """The verdicts stored for the session (JSON, as core.results.limits wrote them), or None
    when there are none or their stamp is not `stamp`."""
    row = db.execute("SELECT stamp, verdicts FROM result_limits WHERE session_id = ?",
                     (session_id,)).fetchone()
    if row is None or tuple(json.loads(row[0])) != stamp:
        return None
    return json.loads(row[1])


def write_limits(db: sqlite3.Connection, session_id: int, stamp: tuple[Any, ...],
                 verdicts: Any) -> None:
    """Store the session's verdicts (JSON-able) with their stamp, replacing earlier ones."""
    db.execute("INSERT OR REPLACE INTO result_limits (session_id, stamp, verdicts) "
               "VALUES (?, ?, ?)", (session_id, json.dumps(stamp), json.dumps(verdicts)))


def store_limits_quietly(db: sqlite3.Connection, path: Path, session_id: int,
                         stamp: tuple[Any, ...], verdicts: Any) -> None:
    """Store verdicts worked out on a read (quietly: see _quietly), only if the session's
    stamp is still the one they were worked out at."""
    _quietly(db, lambda: limits_stamp(db, path, session_id, stamp[0]) == stamp,
             lambda: write_limits(db, session_id, stamp, verdicts))


def _pack(values: Sequence[float | None]) -> bytes:
    """A row's per-repeat values as the summary stores them: little-endian doubles, NaN for a
    missing one (a metric value is never NaN: SQLite stores a NaN as NULL, a missing value)."""
    return _doubles(len(values)).pack(*(math.nan if v is None else v for v in values))


def _unpack(blob: bytes, n: int) -> list[float | None]:
    """_pack's values back; `n`, how many are present, spares the NaN scan when none is
    missing (a finished session's every row)."""
    values = list(_doubles(len(blob) // 8).unpack(blob))
    if n == len(values):
        return values  # type: ignore[return-value]
    return [None if v != v else v for v in values]


@functools.lru_cache(maxsize=64)

def _doubles(count: int) -> struct.Struct:
    return struct.Struct(f"<{count}d")


def _finite(value: Any) -> float | None:
    """A stored figure as a number, or None (missing) for what no recorder writes: text, an
    infinity (a library that took them in before bundle imports refused them)."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return value
    return None


def _mean_stddev(values: list[float]) -> tuple[float | None, float | None]:
    """Mean and sample stddev (None below two values) in floats, two passes with math.fsum:
    as exact as a float result can be for repeats of one figure, where statistics.stdev's
    exact fractions took most of the time of opening a 10,000-run session."""
    if not values:
        return None, None
    mean = math.fsum(values) / len(values)
    if len(values) < 2:
        return mean, None
    return mean, math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1))
