"""The session library: one SQLite file. Opening, reading and the user's edits are here; the
writes of a run being recorded are in writer.py, imported outputs in imports.py, bundles and
merged libraries in bundle.py. The library package holds the only SQL in DiskLab.

WAL with synchronous=FULL: a committed session survives a power cut, and readers (the GUI's
library page, `disklab sessions` in another terminal) never block the run that writes. Writes are
batched by the recorder (at least one commit a second), so a crash loses at most the last second.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import psutil

from disklab.core.library import schema, summary
from disklab.core.library.recorder import SessionRecorder
from disklab.core.library.writer import SessionWriter, mark_interrupted
from disklab.core.vocab.errors import LibraryError, LibraryWriteError
from disklab.core.vocab.units import human_bytes


class Library:
    """An open library file. Not shared between threads: each thread opens its own."""

    def __init__(self, path: Path, db: sqlite3.Connection):
        self.path = path
        self.db = db
        # results() per session with the stamp it was read at (see results)
        self._results: dict[int, tuple[tuple[Any, ...], list[dict[str, Any]]]] = {}
        # limits() per session with the stamp they were read at
        self._limits: dict[int, tuple[tuple[Any, ...], Any]] = {}

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Library:
        """Open (creating, migrating and checking) a library; dead running sessions become
        'interrupted'. LibraryError says what is wrong and with which file."""
        p = Path(path).expanduser()
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(p, timeout=30, isolation_level=None)
        except (OSError, sqlite3.Error) as e:
            raise LibraryError(f"cannot open the library {p}: {e}") from e
        lib = cls(p, db)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            db.execute("PRAGMA foreign_keys=ON")
            check = db.execute("PRAGMA quick_check").fetchone()[0]
            if check != "ok":
                raise LibraryError(f"the library {p} is damaged: {check}")
            lib._migrate()
            lib._mark_interrupted()
        except sqlite3.OperationalError as e:  # locked, read-only, no space
            db.close()
            raise LibraryError(f"cannot open the library {p}: {e}") from e
        except sqlite3.DatabaseError as e:  # not a database, malformed
            db.close()
            raise LibraryError(f"{p} is not a DiskLab library or is damaged "
                               f"(SQLite says: {e})") from e
        except LibraryError:
            db.close()
            raise
        return lib

    @classmethod
    def new_file(cls, path: Path) -> Library:
        """A new, empty library file at `path` in rollback-journal mode: one self-contained
        file with no -wal beside it, what a bundle is (core.library.bundle). The caller
        closes it."""
        try:
            db = sqlite3.connect(path, isolation_level=None)
            lib = cls(path, db)
            db.execute("PRAGMA journal_mode=DELETE")
            lib._migrate()
        except (OSError, sqlite3.Error) as e:
            raise LibraryError(f"cannot write {path}: {e}") from e
        return lib

    def _migrate(self) -> None:
        """Bring the file to schema.CURRENT. Under a write lock, re-reading the version, so two
        processes opening a new library at once do not both create it."""
        if self._version() == schema.CURRENT:
            return
        self.db.create_function("disklab_uuid", 5, session_uuid, deterministic=True)
        self.db.execute("BEGIN IMMEDIATE")
        try:
            version = self._version()
            if version > schema.CURRENT:
                raise LibraryError(
                    f"the library {self.path} was written by a newer DiskLab (schema {version}, "
                    f"this one knows up to {schema.CURRENT}); upgrade DiskLab to open it")
            if version == 0:
                tables = self.db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
                if tables:
                    raise LibraryError(f"{self.path} is an SQLite file but not a DiskLab library")
                self._script(schema.V1)
                version = 1
            for target in range(version + 1, schema.CURRENT + 1):
                self._script(schema.MIGRATIONS[target])
            self.db.execute(f"PRAGMA user_version = {int(schema.CURRENT)}")
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def _version(self) -> int:
        return int(self.db.execute("PRAGMA user_version").fetchone()[0])

    def _script(self, sql: str) -> None:
        # executescript() would commit the open transaction; one statement at a time keeps
        # the whole migration atomic (a trigger's body holds ';': pieces join until complete).
        statement = ""
        for piece in sql.split(";"):
            statement += piece + ";"
            if sqlite3.complete_statement(statement):
                if statement.strip(" \n;"):
                    self.db.execute(statement)
                statement = ""

    def _mark_interrupted(self) -> None:
        """A 'running' session whose process is gone was killed: mark it interrupted."""
        rows = self.db.execute(
            "SELECT id, pid, pid_started, last_activity FROM session WHERE status = 'running'"
        ).fetchall()
        for sid, pid, pid_started, last in rows:
            if _process_alive(pid, pid_started):
                continue
            with self._transaction():
                mark_interrupted(self.db, sid, last)

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.db.close()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def recorder(self) -> SessionRecorder:
        """A recorder writing one new session (or resuming one) through this connection; its
        close() also stores the session's results summary (store_results)."""
        return _SummarizingRecorder(self)

    def writer(self) -> SessionWriter:
        return SessionWriter(self.db, self.path)

    # --- reading ---------------------------------------------------------------------------

    def _session_row(self, row: sqlite3.Row | tuple) -> dict[str, Any]:
        keys = ("id", "name", "status", "started", "finished", "host", "repeats", "notes")
        d = dict(zip(keys, row, strict=True))
        d["host"] = json.loads(d["host"])
        return d

    def list_sessions(self, limit: int | None = None) -> list[dict[str, Any]]:
        """Newest first: id, name, status, started, finished, host, notes, tools, cases,
        runs (cases x repeats started), tags."""
        sql = ("SELECT id, name, status, started, finished, host, repeats, notes FROM session "
               "ORDER BY id DESC")
        if limit:
            sql += f" LIMIT {int(limit)}"
        runs = dict(self.db.execute("SELECT session_id, count(*) FROM run GROUP BY session_id"))
        tools: dict[int, list[str]] = {}
        counts: dict[int, int] = {}
        for sid, tool, n in self.db.execute(  # grouped in tool order: lists come sorted
                "SELECT session_id, tool, count(*) FROM case_ GROUP BY session_id, tool"):
            tools.setdefault(sid, []).append(tool)
            counts[sid] = counts.get(sid, 0) + n
        tags: dict[int, list[str]] = {}
        for sid, tag in self.db.execute("SELECT session_id, tag FROM tag ORDER BY tag"):
            tags.setdefault(sid, []).append(tag)
        # Thousands of sessions share a few hosts: parse each host text once (the GUI's
        # library page lists them all); each session still gets its own top-level dict.
        hosts: dict[str, dict[str, Any]] = {}
        sessions = []
        for sid, name, status, started, finished, host, repeats, notes in self.db.execute(sql):
            parsed = hosts.get(host)
            if parsed is None:
                parsed = hosts[host] = json.loads(host)
            sessions.append({
                "id": sid, "name": name, "status": status, "started": started,
                "finished": finished, "host": dict(parsed), "repeats": repeats, "notes": notes,
                "tools": tools.get(sid, []), "cases": counts.get(sid, 0),
                "runs": runs.get(sid, 0), "tags": tags.get(sid, [])})
        return sessions

    def find_session(self, ref: str | int) -> dict[str, Any]:
        """A session by id, by name, or by UUID. A name several sessions share is refused
        with their ids (LibraryError): taking one of them silently compared the wrong run."""
        row = None
        if isinstance(ref, int) or str(ref).isdigit():
            row = self.db.execute("SELECT id FROM session WHERE id = ?", (int(ref),)).fetchone()
        if row is None:
            ids = [i for (i,) in self.db.execute(
                "SELECT id FROM session WHERE name = ? ORDER BY id", (str(ref),))]
            if len(ids) > 1:
                raise LibraryError(f"{len(ids)} sessions are named {str(ref)!r}: "
                                   f"{', '.join(map(str, ids))}; give one id")
            row = (ids[0],) if ids else None
        if row is None and re.fullmatch(r"[0-9a-f]{32}", str(ref)):
            row = self.db.execute("SELECT id FROM session WHERE uuid = ?", (ref,)).fetchone()
        if row is None:
            raise LibraryError(f"no session {ref!r} in {self.path}")
        return self.session(row[0])

    def session(self, session_id: int) -> dict[str, Any]:
        row = self.db.execute(
            "SELECT id, name, status, started, finished, host, repeats, notes, plan_text, "
            "plan_path, warnings, uuid FROM session WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            raise LibraryError(f"no session {session_id} in {self.path}")
        d = self._session_row(row[:8])
        d["plan_text"], d["plan_path"], d["warnings"] = row[8], row[9], json.loads(row[10])
        d["uuid"] = row[11]
        d["tags"] = [t for (t,) in self.db.execute(
            "SELECT tag FROM tag WHERE session_id = ? ORDER BY tag", (session_id,))]
        return d

    def cases(self, session_id: int) -> list[dict[str, Any]]:
        return [
            {"case_id": c, "index": i, "config": cfg, "tool": t, "test_index": ti,
             "params": json.loads(p)}
            for c, i, cfg, t, ti, p in self.db.execute(
                "SELECT case_id, idx, config, tool, test_index, params FROM case_ "
                "WHERE session_id = ? ORDER BY idx", (session_id,))
        ]

    def runs(self, session_id: int) -> list[dict[str, Any]]:
        keys = ("case_id", "repeat", "argv", "tool_version", "planned_bytes", "started", "status",
                "exit_status", "signal", "error", "transcript_tail", "duration")
        rows = []
        for r in self.db.execute(
                f"SELECT r.{', r.'.join(keys)} FROM run r JOIN case_ c ON c.session_id = "
                "r.session_id AND c.case_id = r.case_id WHERE r.session_id = ? "
                "ORDER BY r.started, c.idx, r.repeat", (session_id,)):
            d = dict(zip(keys, r, strict=True))
            d["argv"] = json.loads(d["argv"])
            rows.append(d)
        return rows

    def run_ends(self, session_id: int) -> list[dict[str, Any]]:
        """Each run's case_id, repeat, status and duration: what a verdict of what limited it
        needs (core.results.limits), without every run's argv and transcript (runs())."""
        return [{"case_id": c, "repeat": r, "status": s, "duration": d}
                for c, r, s, d in self.db.execute(
                    "SELECT case_id, repeat, status, duration FROM run WHERE session_id = ? "
                    "ORDER BY started, repeat", (session_id,))]

    def incomplete_runs(self, session_id: int, complete: frozenset[str]
                        ) -> list[dict[str, Any]]:
        """The runs whose status is not in `complete`: case_id, repeat, status, error. What
        a results table needs of the runs, without reading every run's argv and transcript
        (a 10,000-run session's results open in a fraction of the time runs() takes)."""
        marks = ", ".join("?" * len(complete))
        return [{"case_id": c, "repeat": r, "status": s, "error": e}
                for c, r, s, e in self.db.execute(
                    "SELECT r.case_id, r.repeat, r.status, r.error FROM run r JOIN case_ c "
                    "ON c.session_id = r.session_id AND c.case_id = r.case_id "
                    f"WHERE r.session_id = ? AND r.status NOT IN ({marks}) "
                    "ORDER BY r.started, c.idx, r.repeat", (session_id, *sorted(complete)))]

    def results(self, session_id: int) -> list[dict[str, Any]]:
        """One row per case, metric and parameter point over the repeats: n, mean, sample
        stddev (None below n = 2) and the per-repeat values (None where one is missing).

        Read from the session's stored summary (the `result` table, written when its recorder
        closed) when the summary's stamp matches the session's: the first look at a 10,000-run
        session reads 6,000 summary rows instead of grouping 30,000 metric rows. The stamp is
        what can change a session's results: its start and repeats, its number of cases, the
        number and last id of its metrics (added runs raise the last id), and how many times it
        was resumed (a resume removes the earlier attempts' metrics and records its
        SessionResumed event in the same transaction; the new attempt's metric can take the
        removed one's id, so count and last id alone could come out as before). Without a
        matching summary (a session recorded before there was one, a crash
        before it was written, a resume since) the rows are computed from the metric rows and
        the summary stored when that cannot hold up a writer (store_results).

        Kept per session once read, with the stamp, checked in one indexed query at each call:
        the Compare page and `disklab compare` read the same sessions' rows for the comparison
        and again for the pivot. The rows are shared: callers copy before they change one
        (core.results does)."""
        stamp = summary.results_stamp(self.db, self.path, session_id)
        kept = self._results.get(session_id)
        if kept is not None and kept[0] == stamp:
            return kept[1]
        out = summary.stored_results(self.db, session_id, stamp)
        if out is None:
            computed = summary.computed_results(self.db, session_id, self.cases(session_id),
                                                stamp[0])
            summary.store_quietly(self.db, self.path, session_id, stamp, computed)
            out = [row for _params, row in computed]
        self._results[session_id] = (stamp, out)
        return out

    def store_results(self, session_id: int) -> None:
        """Compute the session's results from its metric rows and store them as its summary
        (with the stamp they were read at), replacing any earlier one. Called when a session's
        recorder closes (the writer of the session is this connection: it waits for the lock
        like any write); the summary and its stamp are one transaction, so a crash leaves the
        old summary, whose stamp no longer matches, or none: never a wrong one."""
        with self._transaction():
            stamp = summary.results_stamp(self.db, self.path, session_id)
            computed = summary.computed_results(self.db, session_id, self.cases(session_id),
                                                stamp[0])
            summary.write_summary(self.db, session_id, stamp, computed)
        self._results[session_id] = (stamp, [row for _params, row in computed])

    def limits(self, session_id: int, rules: int, judge: Callable[[], Any]) -> Any:
        """The session's verdicts of what limited its runs, as the JSON core.results.limits
        made of them (`rules`: the version of its rules; `judge()`: works them out). Kept per
        session with their stamp (summary.limits_stamp), else read from `result_limits` when
        their stamp matches, else worked out and stored when that holds up nobody, as the
        results summary is (a 10,000-run session is judged once, not on every look)."""
        stamp = summary.limits_stamp(self.db, self.path, session_id, rules)
        kept = self._limits.get(session_id)
        if kept is not None and kept[0] == stamp:
            return kept[1]
        verdicts = summary.stored_limits(self.db, session_id, stamp)
        if verdicts is None:
            verdicts = judge()
            summary.store_limits_quietly(self.db, self.path, session_id, stamp, verdicts)
        self._limits[session_id] = (stamp, verdicts)
        return verdicts

    def store_limits(self, session_id: int, rules: int, judge: Callable[[], Any]) -> None:
        """Work out the session's verdicts (limits()) and store them with their stamp,
        waiting for the write lock like any write: when its run ends."""
        with self._transaction():
            stamp = summary.limits_stamp(self.db, self.path, session_id, rules)
            verdicts = judge()
            summary.write_limits(self.db, session_id, stamp, verdicts)
        self._limits[session_id] = (stamp, verdicts)

    def samples(self, session_id: int, case_id: str | None = None,
                series: str | None = None) -> list[dict[str, Any]]:
        """A session's live series in the order they were recorded, optionally one case's or
        one series' only."""
        sql = ("SELECT s.t, r.case_id, r.repeat, r.name, s.value FROM sample s "
               "JOIN series r ON r.id = s.series_id WHERE s.session_id = ?")
        args: list[Any] = [session_id]
        if case_id is not None:
            sql += " AND r.case_id = ?"
            args.append(case_id)
        if series is not None:
            sql += " AND r.name = ?"
            args.append(series)
        keys = ("t", "case_id", "repeat", "series", "value")
        return [dict(zip(keys, r, strict=True))
                for r in self.db.execute(sql + " ORDER BY s.rowid", args)]

    def transcript(self, session_id: int, case_id: str, repeat: int
                   ) -> list[tuple[float, str, str]]:
        return list(self.db.execute(
            "SELECT t, stream, text FROM transcript WHERE session_id = ? AND case_id = ? AND "
            "repeat = ? ORDER BY rowid", (session_id, case_id, repeat)))

    def events(self, session_id: int) -> list[dict[str, Any]]:
        return [{"t": t, "kind": k, "case_id": c, **json.loads(d)}
                for t, k, c, d in self.db.execute(
                    "SELECT t, kind, case_id, data FROM event WHERE session_id = ? ORDER BY id",
                    (session_id,))]

    def resumes(self, session_id: int) -> list[dict[str, Any]]:
        """Each time the session was resumed, oldest first: t (when), runs (how many ran
        again), complete (how many it kept), previous_status (what it was before)."""
        return [{"t": e["t"], "runs": e.get("runs"), "complete": e.get("complete"),
                 "previous_status": e.get("previous_status")}
                for e in self.events(session_id) if e["kind"] == "SessionResumed"]

    # --- the user's edits ------------------------------------------------------------------

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """One committed transaction; it joins (and commits) a recorder's open batch on the
        same connection. Errors come out as LibraryError naming the file."""
        try:
            if not self.db.in_transaction:
                self.db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")
        except sqlite3.Error as e:
            raise LibraryWriteError(f"cannot write to the library {self.path}: {e}") from e

    def _write(self, sql: str, args: Sequence[Any]) -> None:
        with self._transaction():
            self.db.execute(sql, args)

    def set_notes(self, session_id: int, text: str) -> None:
        self._write("UPDATE session SET notes = ? WHERE id = ?", (text, session_id))

    def rename_session(self, session_id: int, name: str) -> None:
        self._write("UPDATE session SET name = ? WHERE id = ?", (name, session_id))

    def add_tag(self, session_id: int, tag: str) -> None:
        self._write("INSERT OR IGNORE INTO tag (session_id, tag) VALUES (?, ?)", (session_id, tag))

    def remove_tag(self, session_id: int, tag: str) -> None:
        self._write("DELETE FROM tag WHERE session_id = ? AND tag = ?", (session_id, tag))

    def delete_session(self, session_id: int) -> None:
        """Remove a session and everything recorded with it."""
        with self._transaction():
            for table in ("result", "result_stamp", "result_limits", "sample", "series",
                          "transcript", "metric", "run", "case_", "event", "tag"):
                self.db.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
            self.db.execute("DELETE FROM session WHERE id = ?", (session_id,))


class _SummarizingRecorder(SessionRecorder):
    """The recorder, and when it closes (the session's last write: its end, or its being
    marked interrupted or cancelled), the session's results summary stored: so the first look
    at a session reads the summary. Nothing on the recorder's hot path changes. A summary that
    cannot be written (disk full) is left to be computed on the next read: the session's own
    figures are committed by then, and a derived table must not fail their close."""

    def __init__(self, library: Library):
        super().__init__(library.writer())
        self._library = library

    def close(self, cancelled: bool = False) -> None:
        super().close(cancelled)
        if self.session_id is not None:
            with contextlib.suppress(LibraryError):
                self._library.store_results(self.session_id)


# An imported output is stored whole up to this size; a larger one keeps its first and last
# half of it (the tools print their setup first and their results last) and a line saying what
# was left out and where the whole file is.
IMPORT_TRANSCRIPT_CAP = 4 << 20
_EOL = re.compile(r"\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")  # as splitlines()


def capped_transcript(text: str, source: str, cap: int = IMPORT_TRANSCRIPT_CAP
                      ) -> Iterator[tuple[str, str]]:
    """(stream, line) of an imported output to store, one at a time: every line of a text up
    to `cap` characters, else the lines of its first and last cap/2 and, between them, a
    'disklab' line saying how much was not stored."""
    if len(text) <= cap:
        yield from (("imported", line) for line in _split(text, 0, len(text)))
        return
    head_end = _line_end(text, cap // 2)
    tail_start = _line_end(text, len(text) - cap // 2)
    yield from (("imported", line) for line in _split(text, 0, head_end))
    skipped = text.count("\n", head_end, tail_start)
    yield ("disklab", f"[{skipped} lines ({human_bytes(tail_start - head_end)}) of this "
                      f"{human_bytes(len(text))} output not stored: an import keeps its first "
                      f"and last {human_bytes(cap // 2)}; the whole output is {source}]")
    yield from (("imported", line) for line in _split(text, tail_start, len(text)))


def _line_end(text: str, pos: int) -> int:
    """The start of the line after position `pos` (the text's end when there is none)."""
    found = _EOL.search(text, pos)
    return found.end() if found else len(text)


def _split(text: str, start: int, end: int) -> Iterator[str]:
    """text[start:end].splitlines(), one line at a time."""
    while start < end:
        found = _EOL.search(text, start, end)
        if found is None:
            yield text[start:end]
            return
        yield text[start:found.start()]
        start = found.end()


def session_uuid(*what: Any) -> str:
    """The UUID schema 4 gives a session recorded before it: derived from its id, name, start,
    host and plan, so every migration of the same library gives the same one."""
    return hashlib.sha256("\0".join(map(str, what)).encode()).hexdigest()[:32]


def _process_alive(pid: int | None, started: float | None) -> bool:
    """Is the process that wrote a session still the same live process?"""
    if not pid:
        return False
    try:
        p = psutil.Process(pid)
        return started is None or abs(p.create_time() - started) < 1.0
    except psutil.Error:
        return False
