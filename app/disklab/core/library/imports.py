"""Storing tool outputs someone already had (`disklab import`): the SQL of an imported session.

Outputs become one session with status 'imported'. Its cases are the distinct (tool,
parameters) of the outputs, the parameters as each tool states them in its output (fio's job
options, iozone's record and file sizes, bonnie++'s size and file count); outputs with the same
parameters are repeats of one case, in the order given. A run may bring its own time series
(fio's per-interval logs), stored as the run's samples like a live run's.

An imported session's UUID is its content key: a digest of its outputs (each tool and text), so
the same outputs imported again are found (imported_session) and a bundle of them merged into a
library that imported them itself is the same session, as bundles and merges are keyed by UUID.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from disklab.core.library.store import Library, capped_transcript
from disklab.core.library.writer import metric_rows, to_json
from disklab.core.vocab.model import Metric


@dataclass(frozen=True)
class ImportedRun:
    """One tool output to store: its tool, its parameters (what makes it a case), where it
    was read from, its text (the transcript), its figures and its series: name -> (seconds
    from the run's start, value) points."""

    tool: str
    params: Mapping[str, Any]
    source_path: str
    transcript: str
    metrics: Sequence[Metric]
    series: Mapping[str, Sequence[tuple[float, float]]] = field(default_factory=dict)


def case_key(run: ImportedRun) -> str:
    """The id of the case a run belongs to: its tool and parameters, so identical parameters
    are one case (repeats) and the id is the same in every import of them."""
    digest = hashlib.sha1(f"{run.tool}\0{to_json(dict(run.params))}".encode()).hexdigest()[:10]
    return f"import-{run.tool}-{digest}"


def content_key(runs: Sequence[ImportedRun]) -> str:
    """The UUID (32 hex digits) of a session of these outputs: a digest of each one's tool and
    text, in no particular order (the files' names and the session's name are not in it)."""
    digests = sorted(f"{r.tool}\0{hashlib.sha256(r.transcript.encode()).hexdigest()}"
                     for r in runs)
    return hashlib.sha256("\n".join(["disklab-import-1", *digests]).encode()).hexdigest()[:32]


def imported_session(library: Library, runs: Sequence[ImportedRun]) -> tuple[int, str] | None:
    """The session (id, name) that already holds exactly these outputs, or None."""
    row = library.db.execute("SELECT id, name FROM session WHERE uuid = ?",
                             (content_key(runs),)).fetchone()
    return None if row is None else (int(row[0]), str(row[1]))


def import_runs(library: Library, *, name: str, config: str, runs: Sequence[ImportedRun],
                host: Mapping[str, Any], plan_path: str = "", keyed: bool = True) -> int:
    """Store `runs` as one new imported session, in one transaction; returns its id. Its
    UUID is content_key(runs) (the caller checks imported_session first), or a random one
    when not `keyed`."""
    now = time.time()
    cases: dict[str, tuple[ImportedRun, int]] = {}  # case id -> (first run, repeats so far)
    placed: list[tuple[str, int, ImportedRun]] = []
    for run in runs:
        key = case_key(run)
        first, repeats = cases.get(key, (run, 0))
        cases[key] = (first, repeats + 1)
        placed.append((key, repeats + 1, run))
    db = library.db
    with library._transaction():
        cur = db.execute(
            "INSERT INTO session (name, status, started, finished, host, plan_text, plan_path, "
            "repeats, last_activity, uuid) VALUES (?, 'imported', ?, ?, ?, '', ?, ?, ?, ?)",
            (name, now, now, to_json(dict(host)), plan_path,
             max((n for _run, n in cases.values()), default=1), now,
             content_key(runs) if keyed else None))
        sid = int(cur.lastrowid or 0)
        db.executemany("INSERT INTO case_ VALUES (?, ?, ?, ?, ?, 0, ?)",
                       [(sid, key, idx, config, first.tool, to_json(dict(first.params)))
                        for idx, (key, (first, _n)) in enumerate(cases.items())])
        for order, (key, repeat, run) in enumerate(placed):
            _store_run(library, sid, key, repeat, run, now + order * 1e-6)
    return sid


def _store_run(library: Library, sid: int, case_id: str, repeat: int, run: ImportedRun,
               started: float) -> None:
    """One run's row, figures, transcript and series, in the caller's transaction."""
    db = library.db
    db.execute("INSERT INTO run (session_id, case_id, repeat, argv, started, status) "
               "VALUES (?, ?, ?, '[]', ?, 'imported')", (sid, case_id, repeat, started))
    db.executemany(
        "INSERT INTO metric (session_id, case_id, repeat, name, value, unit, note, params)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)", metric_rows(sid, case_id, repeat, run.metrics))
    db.executemany(  # one line at a time: a generator, never a list of them all
        "INSERT INTO transcript VALUES (?, ?, ?, ?, ?, ?)",
        ((sid, case_id, repeat, started, stream, line)
         for stream, line in capped_transcript(run.transcript, run.source_path)))
    for series, points in run.series.items():
        series_id = int(db.execute(
            "INSERT INTO series (session_id, case_id, repeat, name) VALUES (?, ?, ?, ?)",
            (sid, case_id, repeat, series)).lastrowid or 0)
        db.executemany("INSERT INTO sample (session_id, series_id, t, value) VALUES (?, ?, ?, ?)",
                       ((sid, series_id, started + t, v) for t, v in points))


def import_session(library: Library, *, name: str, tool: str, config: str, source_path: str,
                   transcript: str, metrics: Sequence[Metric], params: Mapping[str, Any],
                   host: Mapping[str, Any]) -> int:
    """One tool output as a one-run session (import_runs of one run, not keyed by content:
    the library's own callers may store the same text twice)."""
    return import_runs(library, name=name, config=config, host=host, plan_path=source_path,
                       keyed=False,
                       runs=[ImportedRun(tool, params, source_path, transcript, metrics)])
