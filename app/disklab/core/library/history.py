"""What a history (core.history) reads of the library, in a few queries for many sessions.

A history of one plan over 1,000 sessions opens in under 200 ms (bench figure 11): one query
lists every session's identity (plan text, host record, start), one gives the results stamps of
the sessions of one series, one their stored summary rows. A session whose stored summary is
missing or stale (its stamp is not the session's) has its rows computed from its metric rows,
as Library.results does.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
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
    in the same order: tests/unit/test_history.py holds the two to each other)."""
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


def stored_points(lib: Library, ids: Sequence[int]) -> dict[int, list[dict[str, Any]]]:
    """Each session's result rows reduced to what a history plots: case_id, config, tool,
    metric, params, merged, unit, n, mean, stddev. From the
    stored summaries where their stamps match (one query a chunk), else computed from the
    metric rows. `params` is the metric's own parameters as stored (JSON text, '' for none:
    with case_id and metric, what names a figure across sessions); `merged` the case's and
    the metric's together, or None where they are left as text (`case_params`) until a
    label needs them."""
    stamps = results_stamps(lib.db, ids)
    stored: dict[int, Any] = {}
    for chunk in _chunks(ids):
        marks = ", ".join("?" * len(chunk))
        stored.update((sid, json.loads(stamp)) for sid, stamp in lib.db.execute(
            f"SELECT session_id, stamp FROM result_stamp WHERE session_id IN ({marks})",
            tuple(chunk)))
    fresh = [sid for sid in ids if sid in stored and tuple(stored[sid]) == stamps.get(sid)]
    out: dict[int, list[dict[str, Any]]] = {sid: [] for sid in fresh}
    cases: dict[tuple[int, str], tuple[str, str, str]] = {}
    for chunk in _chunks(fresh):
        marks = ", ".join("?" * len(chunk))
        for sid, case_id, config, tool, params in lib.db.execute(
                "SELECT session_id, case_id, config, tool, params FROM case_ "
                f"WHERE session_id IN ({marks})", tuple(chunk)):
            cases[(sid, case_id)] = (config, tool, params)
        for sid, case_id, metric, params, unit, n, mean, stddev in lib.db.execute(
                "SELECT session_id, case_id, metric, params, unit, n, mean, stddev FROM result "
                f"WHERE session_id IN ({marks}) ORDER BY session_id, ord", tuple(chunk)):
            config, tool, case_params = cases.get((sid, case_id), ("", "", "{}"))
            out[sid].append({"case_id": case_id, "config": config, "tool": tool,
                             "metric": metric, "case_params": case_params,
                             "params": params or "", "merged": None, "unit": unit,
                             "n": n, "mean": mean, "stddev": stddev})
    for sid in ids:
        if sid not in out:  # no summary, or a stale one: computed from the metric rows
            cases_of = lib.cases(sid)
            computed = summary.computed_results(lib.db, sid, cases_of,
                                                int(stamps.get(sid, (1,))[0] or 1))
            out[sid] = [{"case_id": r["case_id"], "config": r["config"], "tool": r["tool"],
                         "metric": r["metric"], "case_params": None, "params": mparams,
                         "merged": r["params"], "unit": r["unit"], "n": r["n"],
                         "mean": r["mean"], "stddev": r["stddev"]}
                        for mparams, r in computed]
    return out
