"""The write side of recording one session: the SQL the recorder's decisions turn into.

Apart from store.py (opening, reading, the user's edits) so that the recorder needs only this
module and store.py can hand out recorders: the imports go store -> recorder -> writer, with no
cycle.
"""

from __future__ import annotations

import functools
import json
import math
import os
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from disklab.core.library.schema import RESUMABLE
from disklab.core.vocab.errors import LibraryError, LibraryWriteError
from disklab.core.vocab.model import Case, Metric

P = ParamSpec("P")
R = TypeVar("R")


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    return str(value)


def to_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=_plain)


INT64 = (-(2**63), 2**63 - 1)  # what an SQLite INTEGER holds


def storable_int(value: int | None, what: str) -> int | None:
    """`value` for an INTEGER column; LibraryError (not sqlite3's OverflowError) when SQLite
    cannot hold it. The plan checks and the parsers keep such numbers out: this is the last
    guard, so that a bug there is one clear line, not a traceback and a half-written session."""
    if value is None:
        return None
    if not INT64[0] <= value <= INT64[1]:
        raise LibraryError(f"{what} {str(value)[:24]}... is too large to store "
                           "(SQLite holds 64-bit integers)")
    return value


def storable_real(value: float | None, what: str) -> float | None:
    """`value` for a REAL column, as a float; LibraryError when no float holds it (a 400-digit
    integer) or it is not finite."""
    if value is None:
        return None
    try:
        real = float(value)
    except OverflowError as e:
        raise LibraryError(f"{what} {str(value)[:24]}... is too large to store") from e
    if not math.isfinite(real):
        raise LibraryError(f"{what} {value} is too large to store (not a finite number)")
    return real


def metric_rows(session_id: int, case_id: str, repeat: int, metrics: Sequence[Metric],
                note: Callable[[str | None], str | None] = lambda n: n) -> list[tuple[Any, ...]]:
    """The rows of the metric table for `metrics`, every value checked to be storable."""
    return [(session_id, case_id, repeat, m.name, storable_real(m.value, f"metric {m.name}"),
             m.unit, note(m.note), to_json(dict(m.params)) if m.params else None)
            for m in metrics]


def mark_interrupted(db: sqlite3.Connection, session_id: int, finished: float | None,
                     status: str = "interrupted") -> None:
    """A running session (and its running run) that will get no SessionFinished ends as
    `status`: 'interrupted', or 'cancelled' when the user's cancel is what stopped it."""
    db.execute("UPDATE session SET status = ?, finished = ? WHERE id = ? AND status = 'running'",
               (status, finished, session_id))
    db.execute("UPDATE run SET status = ? WHERE session_id = ? AND status = 'running'",
               (status, session_id))


def _writes(method: Callable[P, R]) -> Callable[P, R]:
    """SQLite's and the system's errors while recording (disk full, I/O error) become
    LibraryError with the path."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except (sqlite3.Error, OSError) as e:
            path = getattr(args[0], "path", "")
            raise LibraryWriteError(f"cannot write to the library {path}: {e}") from e

    return wrapper


class SessionWriter:
    """The write side of one session, for the recorder: every statement joins the open
    transaction (begun on demand, IMMEDIATE) until commit(). The recorder decides when to
    commit."""

    def __init__(self, db: sqlite3.Connection, path: Path):
        self.db = db
        self.path = path
        self.session_id: int | None = None
        # the WAL, fsync'd by a durable commit; None: every commit is durable (synchronous=FULL)
        self._wal: Path | None = None

    def relaxed(self) -> None:
        """Commits fsync only when durable (commit(durable=True)): the connection at
        synchronous=NORMAL, under which a commit writes the WAL without fsync, and a durable
        commit fsyncs the WAL itself (what FULL does). Only in WAL mode and outside a
        transaction (SQLite refuses the change inside one); else every commit stays durable."""
        if self._wal is not None or self.db.in_transaction:
            return
        mode = self.db.execute("PRAGMA journal_mode").fetchone()
        if mode and str(mode[0]).lower() == "wal":
            self.db.execute("PRAGMA synchronous=NORMAL")
            self._wal = Path(f"{self.path}-wal")

    def strict(self) -> None:
        """Every commit durable again (synchronous=FULL): the connection outlives the run."""
        if self._wal is not None and not self.db.in_transaction:
            self.db.execute("PRAGMA synchronous=FULL")
            self._wal = None

    def _begin(self) -> None:
        """Every batch may write, so it takes the write lock as it begins (IMMEDIATE): a
        writer that finds it taken waits for it (the connection's 30 s busy timeout). A
        deferred BEGIN takes a read snapshot first, and under WAL SQLite answers the upgrade of
        a read to a write with "database is locked" at once, without waiting."""
        if not self.db.in_transaction:
            self.db.execute("BEGIN IMMEDIATE")

    @_writes
    def create_session(self, *, name: str, started: float, pid: int, pid_started: float,
                       host: Mapping[str, Any], plan_text: str, warnings: Sequence[str],
                       repeats: int, cases: Sequence[Case]) -> int:
        self._begin()
        cur = self.db.execute(
            "INSERT INTO session (name, status, started, pid, pid_started, last_activity, host, "
            "plan_text, warnings, repeats) VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?)",
            (name, started, pid, pid_started, started, to_json(dict(host)), plan_text,
             to_json(list(warnings)), storable_int(repeats, "repeats")))
        sid = self.session_id = int(cur.lastrowid or 0)
        self.db.executemany(
            "INSERT INTO case_ (session_id, case_id, idx, config, tool, test_index, params) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(sid, c.id, c.index, c.config, c.tool, c.test_index, to_json(dict(c.params)))
             for c in cases])
        return sid

    @_writes
    def resume_session(self, session_id: int, *, resumed: float, pid: int, pid_started: float,
                       runs: Sequence[tuple[str, int]], previous_status: str, complete: int,
                       host: Mapping[str, Any]) -> int:
        """Make an incomplete session 'running' again in this process, for `runs` to run again.

        Only a resumable session changes (a second resume of the same session at once finds
        it 'running' and is refused). Each run's earlier attempt (cancelled, failed,
        interrupted) gives way to the new one: its figures and samples are removed from the
        results, and kept in the SessionResumed event with its status and error; its
        transcript lines stay, followed by a line saying the run was resumed."""
        self._begin()
        cur = self.db.execute(
            "UPDATE session SET status = 'running', finished = NULL, pid = ?, pid_started = ?, "
            f"last_activity = ? WHERE id = ? AND status IN ({', '.join('?' * len(RESUMABLE))})",
            (pid, pid_started, resumed, session_id, *RESUMABLE))
        if cur.rowcount != 1:
            row = self.db.execute("SELECT status FROM session WHERE id = ?",
                                  (session_id,)).fetchone()
            self.db.execute("ROLLBACK")
            raise LibraryError(f"session {session_id} cannot be resumed: it is "
                               f"{row[0] if row else 'not in ' + str(self.path)}")
        self.session_id = session_id
        earlier = [self._set_aside(case_id, repeat, resumed) for case_id, repeat in runs]
        self.add_event(resumed, "SessionResumed", None, {
            "runs": len(runs), "complete": complete, "previous_status": previous_status,
            "pairs": [list(p) for p in runs], "earlier": [e for e in earlier if e],
            "host": dict(host)})
        return session_id

    def _set_aside(self, case_id: str, repeat: int, t: float) -> dict[str, Any] | None:
        """Remove one run's earlier attempt from the results; what it was, or None."""
        key = (self.session_id, case_id, repeat)
        row = self.db.execute(
            "SELECT status, error, started, duration FROM run WHERE session_id = ? AND "
            "case_id = ? AND repeat = ?", key).fetchone()
        if row is None:
            return None
        metrics = [{"name": n, "value": v, "unit": u, "note": note} for n, v, u, note in
                   self.db.execute("SELECT name, value, unit, note FROM metric WHERE "
                                   "session_id = ? AND case_id = ? AND repeat = ? ORDER BY id",
                                   key)]
        self.db.execute("DELETE FROM sample WHERE series_id IN (SELECT id FROM series WHERE "
                        "session_id = ? AND case_id = ? AND repeat = ?)", key)
        for table in ("series", "metric", "run"):
            self.db.execute(f"DELETE FROM {table} WHERE session_id = ? AND case_id = ? AND "
                            "repeat = ?", key)
        self.db.execute(
            "INSERT INTO transcript (session_id, case_id, repeat, t, stream, text) "
            "VALUES (?, ?, ?, ?, 'disklab', ?)",
            (*key, t, f"--- resumed: the attempt above ended {row[0]}; it runs again ---"))
        return {"case_id": case_id, "repeat": repeat, "status": row[0], "error": row[1],
                "started": row[2], "duration": row[3], "metrics": metrics}

    @_writes
    def new_series(self, case_id: str, repeat: int, name: str) -> int:
        """The id that the samples of one (case, repeat, series name) are stored under."""
        self._begin()
        cur = self.db.execute(
            "INSERT INTO series (session_id, case_id, repeat, name) VALUES (?, ?, ?, ?)",
            (self.session_id, case_id, repeat, name))
        return int(cur.lastrowid or 0)

    @_writes
    def add_samples(self, rows: Sequence[tuple[Any, ...]]) -> None:
        """rows: (session id, series id, t, value), prepared by the caller: no per-row work."""
        self._begin()
        self.db.executemany(
            "INSERT INTO sample (session_id, series_id, t, value) VALUES (?, ?, ?, ?)", rows)

    @_writes
    def add_lines(self, rows: Sequence[tuple[Any, ...]]) -> None:
        """rows: (session id, case id, repeat, t, stream, text)."""
        self._begin()
        self.db.executemany(
            "INSERT INTO transcript (session_id, case_id, repeat, t, stream, text) "
            "VALUES (?, ?, ?, ?, ?, ?)", rows)

    @_writes
    def start_run(self, case_id: str, repeat: int, argv: Sequence[str],
                  tool_version: str | None, planned_bytes: int | None, started: float) -> None:
        self._begin()
        self.db.execute(
            "INSERT OR REPLACE INTO run (session_id, case_id, repeat, argv, tool_version, "
            "planned_bytes, started, status) VALUES (?, ?, ?, ?, ?, ?, ?, 'running')",
            (self.session_id, case_id, repeat, to_json(list(argv)), tool_version,
             storable_int(planned_bytes, "planned bytes"), started))

    @_writes
    def finish_run(self, case_id: str, repeat: int, status: str, exit_status: int | None,
                   duration: float) -> None:
        self._begin()
        self.db.execute(
            "UPDATE run SET status = ?, exit_status = ?, duration = ? WHERE session_id = ? "
            "AND case_id = ? AND repeat = ?",
            (status, storable_int(exit_status, "exit status"), duration, self.session_id,
             case_id, repeat))

    @_writes
    def fail_run(self, case_id: str, repeat: int, *, exit_status: int | None,
                 signal: int | None, error: str | None, transcript_tail: str,
                 duration: float, status: str = "failed") -> None:
        """A run that ended without a complete result: 'failed', or 'cancelled' by the user
        (schema.RUN_STATUSES)."""
        self._begin()
        self.db.execute(  # a case can fail before it started (setup, a missing tool)
            "INSERT OR IGNORE INTO run (session_id, case_id, repeat, argv, status) "
            "VALUES (?, ?, ?, '[]', ?)", (self.session_id, case_id, repeat, status))
        self.db.execute(
            "UPDATE run SET status = ?, exit_status = ?, signal = ?, error = ?, "
            "transcript_tail = ?, duration = ? WHERE session_id = ? AND case_id = ? AND "
            "repeat = ?",
            (status, storable_int(exit_status, "exit status"), storable_int(signal, "signal"),
             error, transcript_tail, duration, self.session_id, case_id, repeat))

    @_writes
    def add_metrics(self, case_id: str, repeat: int, metrics: Sequence[Metric],
                    note: Callable[[str | None], str | None] = lambda n: n) -> None:
        """`note` may rewrite each metric's note (the recorder flags partial figures)."""
        rows = metric_rows(self.session_id or 0, case_id, repeat, metrics, note)
        self._begin()
        self.db.executemany(
            "INSERT INTO metric (session_id, case_id, repeat, name, value, unit, note, params) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)

    @_writes
    def add_event(self, t: float, kind: str, case_id: str | None,
                  data: Mapping[str, Any]) -> None:
        self._begin()
        self.db.execute(
            "INSERT INTO event (session_id, t, kind, case_id, data) VALUES (?, ?, ?, ?, ?)",
            (self.session_id, t, kind, case_id, to_json(dict(data))))

    @_writes
    def end_session(self, status: str, finished: float) -> None:
        self._begin()
        self.db.execute("UPDATE session SET status = ?, finished = ? WHERE id = ?",
                        (status, finished, self.session_id))

    @_writes
    def interrupt(self, finished: float, status: str = "interrupted") -> None:
        """The session ends without its SessionFinished: 'interrupted', like a killed one
        (or 'cancelled', when a cancel stopped it that way)."""
        if self.session_id is not None:
            self._begin()
            mark_interrupted(self.db, self.session_id, finished, status)

    @_writes
    def commit(self, last_activity: float, durable: bool = True) -> None:
        """Commit what the open transaction holds, with the time of the last event stored
        (an interrupted session's end). `durable` after relaxed(): the WAL fsync'd, so this
        commit and those before it survive a power cut; not durable, written only."""
        self._begin()
        self.db.execute("UPDATE session SET last_activity = ? WHERE id = ?",
                        (last_activity, self.session_id))
        self.db.execute("COMMIT")
        if durable and self._wal is not None:
            fd = os.open(self._wal, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
