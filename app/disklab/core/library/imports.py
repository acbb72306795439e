"""Storing tool outputs someone already had (`disklab import`): the SQL of an imported session.

Outputs become one session with status 'imported'. Its cases are the distinct (tool,
parameters) of the outputs, the parameters as each tool states them in its output (fio's job
options, iozone's record and file sizes, bonnie++'s size and file count); outputs with the same
parameters are repeats of one case, in the order given. A run may bring its own time series
(fio's per-interval logs), stored as the run's samples like a live run's.

Each output has a key (output_key: its tool, its text's digest and that of the fio logs read
beside it); an imported session's UUID is the content key of its outputs' keys and its host lists
each output's id, so the same outputs imported again are found (imported_session), one output of
a folder imported alone is found in the folder's session (holding_session), and a bundle of them
merged into a library that imported them itself is the same session, as bundles and merges are
keyed by UUID. ImportSession stores the runs one at a time as they are read.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from disklab.core.library.store import Library, capped_transcript
from disklab.core.library.writer import metric_rows, to_json
from disklab.core.vocab.errors import LibraryWriteError
from disklab.core.vocab.model import Metric


@dataclass(frozen=True)
class ImportedRun:
    """One tool output to store: its tool, its parameters (what makes it a case), where it
    was read from, its text (the transcript), its figures and its series: name -> (seconds
    from the run's start, value) points. `key` is output_key's value when the reader worked
    it out from the file's bytes (and the fio logs read beside it); '' has it taken from the
    text."""

    tool: str
    params: Mapping[str, Any]
    source_path: str
    transcript: str
    metrics: Sequence[Metric]
    series: Mapping[str, Sequence[tuple[float, float]]] = field(default_factory=dict)
    key: str = ""


def text_key(tool: str, text_digest: str, logs_digest: str = "") -> str:
    """The key of one output: its tool, the SHA-256 of its text and, when fio's per-interval
    logs were read beside it, theirs (the same JSON with other logs is another output)."""
    return f"{tool}\0{text_digest}" + (f"\0{logs_digest}" if logs_digest else "")


def output_key(run: ImportedRun) -> str:
    """run.key, or the key of its tool and transcript."""
    return run.key or text_key(run.tool, hashlib.sha256(run.transcript.encode()).hexdigest())


def output_id(key: str) -> str:
    """The 32 hex digits an imported session lists for each output it holds (its host's
    'outputs'), so one output of it imported alone is found."""
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def case_key(run: ImportedRun) -> str:
    """The id of the case a run belongs to: its tool and parameters, so identical parameters
    are one case (repeats) and the id is the same in every import of them."""
    digest = hashlib.sha1(f"{run.tool}\0{to_json(dict(run.params))}".encode()).hexdigest()[:10]
    return f"import-{run.tool}-{digest}"


def content_key(keys: Sequence[str]) -> str:
    """The UUID (32 hex digits) of a session of the outputs of these output keys, in no
    particular order (the files' names and the session's name are not in it)."""
    return hashlib.sha256("\n".join(["disklab-import-1", *sorted(keys)]).encode()
                          ).hexdigest()[:32]


def imported_session(library: Library, keys: Sequence[str]) -> tuple[int, str] | None:
    """The session (id, name) that holds exactly the outputs of these keys, or None."""
    row = library.db.execute("SELECT id, name FROM session WHERE uuid = ?",
                             (content_key(keys),)).fetchone()
    return None if row is None else (int(row[0]), str(row[1]))


def holding_session(library: Library, key: str) -> tuple[int, str, int] | None:
    """The imported session (id, name, its number of runs) that holds the output of `key`:
    one of the outputs its host lists, or a session of that output alone (as every import
    kept them)."""
    row = library.db.execute(
        "SELECT id, name FROM session WHERE uuid = ? UNION ALL "
        "SELECT s.id, s.name FROM (SELECT id, name, host FROM session "
        "WHERE status = 'imported' AND json_valid(host)) AS s, "
        "json_each(s.host, '$.outputs') AS o WHERE o.value = ? LIMIT 1",
        (content_key([key]), output_id(key))).fetchone()
    if row is None:
        return None
    runs = library.db.execute("SELECT count(*) FROM run WHERE session_id = ?",
                              (row[0],)).fetchone()[0]
    return int(row[0]), str(row[1]), int(runs)


class ImportSession:
    """One imported session written a run at a time, in one transaction: each run is stored
    as it is read (so an import holds one output at a time, whatever the number of files),
    and nothing of the session is committed until finish(); abort() leaves nothing. Its UUID
    is content_key of its outputs' keys (or a random one when not `keyed`); its host lists
    each output's output_id."""

    def __init__(self, library: Library, *, name: str, config: str,
                 host: Mapping[str, Any], plan_path: str = "", keyed: bool = True) -> None:
        self.library, self.name, self.config = library, name, config
        self.host, self.plan_path, self.keyed = dict(host), plan_path, keyed
        self.session_id: int | None = None
        self.keys: list[str] = []
        self._cases: dict[str, tuple[int, int]] = {}  # case id -> (index, repeats so far)
        self._stack = contextlib.ExitStack()
        self._now = time.time()
        self._done = False

    def add(self, run: ImportedRun) -> None:
        """Store one run (its case made when it is the case's first)."""
        if self.session_id is None:
            self._begin()
        sid = int(self.session_id or 0)
        key = case_key(run)
        index, repeats = self._cases.get(key, (len(self._cases), 0))
        self._cases[key] = (index, repeats + 1)
        try:
            if repeats == 0:
                self.library.db.execute("INSERT INTO case_ VALUES (?, ?, ?, ?, ?, 0, ?)",
                                        (sid, key, index, self.config, run.tool,
                                         to_json(dict(run.params))))
            _store_run(self.library, sid, key, repeats + 1, run,
                       self._now + len(self.keys) * 1e-6)
        except sqlite3.Error as e:
            raise LibraryWriteError(f"cannot write to the library {self.library.path}: {e}"
                                    ) from e
        self.keys.append(output_key(run))

    def _begin(self) -> None:
        self._stack.enter_context(self.library._transaction())
        cur = self.library.db.execute(
            "INSERT INTO session (name, status, started, finished, host, plan_text, plan_path, "
            "repeats, last_activity) VALUES (?, 'imported', ?, ?, '{}', '', ?, 1, ?)",
            (self.name, self._now, self._now, self.plan_path, self._now))
        self.session_id = int(cur.lastrowid or 0)

    def finish(self) -> int | None:
        """Commit the session (None when no run was added); its repeats, UUID and host."""
        if self.session_id is None:
            return None
        host = {**self.host, "outputs": sorted({output_id(k) for k in self.keys})} \
            if self.keyed else self.host
        sets = "repeats = ?, host = ?, plan_path = ?" + (", uuid = ?" if self.keyed else "")
        values: list[Any] = [max((n for _i, n in self._cases.values()), default=1),
                             to_json(host), self.plan_path]
        try:
            self.library.db.execute(f"UPDATE session SET {sets} WHERE id = ?", (
                *values, *([content_key(self.keys)] if self.keyed else []), self.session_id))
        except sqlite3.Error as e:
            self.abort()
            raise LibraryWriteError(f"cannot write to the library {self.library.path}: {e}"
                                    ) from e
        self._stack.close()
        self._done = True
        return self.session_id

    def abort(self) -> None:
        """Roll the session back: nothing of it stays (a finished one stays as it is)."""
        if self.session_id is not None and not self._done:
            self.session_id = None
            self._stack.__exit__(KeyboardInterrupt, KeyboardInterrupt(), None)


def import_runs(library: Library, *, name: str, config: str, runs: Sequence[ImportedRun],
                host: Mapping[str, Any], plan_path: str = "", keyed: bool = True) -> int:
    """Store `runs` as one new imported session, in one transaction; returns its id (the
    caller checks imported_session first when `keyed`)."""
    session = ImportSession(library, name=name, config=config, host=host,
                            plan_path=plan_path, keyed=keyed)
    try:
        for run in runs:
            session.add(run)
    except BaseException:
        session.abort()
        raise
    return session.finish() or 0


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
