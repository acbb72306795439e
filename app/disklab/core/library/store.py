"""The session library: one SQLite file, the only SQL in DiskLab.

WAL with synchronous=FULL: a committed session survives a power cut, and readers (the GUI's
library page, `disklab sessions` in another terminal) never block the run that writes. Writes are
batched by the recorder (at least one commit a second), so a crash loses at most the last second.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import sqlite3
import statistics
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import platformdirs
import psutil

from disklab.core.errors import LibraryError
from disklab.core.library import schema
from disklab.core.model import Case, Metric

if TYPE_CHECKING:
    from disklab.core.library.recorder import SessionRecorder

P = ParamSpec("P")
R = TypeVar("R")


def default_library_path(env: Mapping[str, str] = os.environ) -> Path:
    """$DISKLAB_LIBRARY, else library.sqlite3 in the XDG data directory."""
    if env.get("DISKLAB_LIBRARY"):
        return Path(env["DISKLAB_LIBRARY"]).expanduser()
    return Path(platformdirs.user_data_dir("disklab")) / "library.sqlite3"


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    return str(value)


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=_plain)


class Library:
    """An open library file. Not shared between threads: each thread opens its own."""

    def __init__(self, path: Path, db: sqlite3.Connection):
        self.path = path
        self.db = db

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

    def _migrate(self) -> None:
        """Bring the file to schema.CURRENT. Under a write lock, re-reading the version, so two
        processes opening a new library at once do not both create it."""
        if self._version() == schema.CURRENT:
            return
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
        # the whole migration atomic.
        for statement in (s.strip() for s in sql.split(";")):
            if statement:
                self.db.execute(statement)

    def _mark_interrupted(self) -> None:
        """A 'running' session whose process is gone was killed: mark it interrupted."""
        rows = self.db.execute(
            "SELECT id, pid, pid_started, last_activity FROM session WHERE status = 'running'"
        ).fetchall()
        for sid, pid, pid_started, last in rows:
            if _process_alive(pid, pid_started):
                continue
            with self._transaction():
                _interrupt(self.db, sid, last)

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.db.close()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def recorder(self) -> SessionRecorder:
        """A recorder writing one new session through this connection."""
        from disklab.core.library.recorder import SessionRecorder

        return SessionRecorder(self)

    def writer(self) -> SessionWriter:
        return SessionWriter(self)

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
        """A session by id or by name (the newest of that name)."""
        row = None
        if isinstance(ref, int) or str(ref).isdigit():
            row = self.db.execute("SELECT id FROM session WHERE id = ?", (int(ref),)).fetchone()
        if row is None:
            row = self.db.execute("SELECT id FROM session WHERE name = ? ORDER BY id DESC",
                                  (str(ref),)).fetchone()
        if row is None:
            raise LibraryError(f"no session {ref!r} in {self.path}")
        return self.session(row[0])

    def session(self, session_id: int) -> dict[str, Any]:
        row = self.db.execute(
            "SELECT id, name, status, started, finished, host, repeats, notes, plan_text, "
            "plan_path, warnings FROM session WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            raise LibraryError(f"no session {session_id} in {self.path}")
        d = self._session_row(row[:8])
        d["plan_text"], d["plan_path"], d["warnings"] = row[8], row[9], json.loads(row[10])
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

    def results(self, session_id: int) -> list[dict[str, Any]]:
        """One row per case, metric and parameter point over the repeats: n, mean, sample
        stddev (None below n = 2) and the per-repeat values (None where one is missing)."""
        repeats = self.db.execute("SELECT repeats FROM session WHERE id = ?",
                                  (session_id,)).fetchone()
        if repeats is None:
            raise LibraryError(f"no session {session_id} in {self.path}")
        cases = {c["case_id"]: c for c in self.cases(session_id)}
        groups: dict[tuple[str, str, str], dict[str, Any]] = {}
        for case_id, repeat, name, value, unit, note, params in self.db.execute(
                "SELECT case_id, repeat, name, value, unit, note, params FROM metric "
                "WHERE session_id = ? ORDER BY id", (session_id,)):
            case = cases.get(case_id)
            if case is None:
                continue
            key = (case_id, name, params or "")
            g = groups.get(key)
            if g is None:
                merged = {**case["params"], **(json.loads(params) if params else {})}
                g = groups[key] = {
                    "config": case["config"], "tool": case["tool"],
                    "test": name.split(":")[0], "params": merged, "metric": name,
                    "unit": unit, "by_repeat": {}, "notes": [], "case_id": case_id,
                    "_order": (case["index"], len(groups)),
                }
            g["by_repeat"][repeat] = value
            if note and note not in g["notes"]:
                g["notes"].append(note)
        out = []
        for g in sorted(groups.values(), key=lambda g: g["_order"]):
            by_repeat = g.pop("by_repeat")
            g.pop("_order")
            n_repeats = max([repeats[0], *by_repeat])
            values = [by_repeat.get(r) for r in range(1, n_repeats + 1)]
            present = [v for v in values if v is not None]
            g["values"] = values
            g["n"] = len(present)
            g["mean"] = statistics.fmean(present) if present else None
            g["stddev"] = statistics.stdev(present) if len(present) >= 2 else None
            out.append(g)
        return out

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
            raise LibraryError(f"cannot write to the library {self.path}: {e}") from e

    def _write(self, sql: str, args: Sequence[Any]) -> None:
        with self._transaction():
            self.db.execute(sql, args)

    def set_notes(self, session_id: int, text: str) -> None:
        self._write("UPDATE session SET notes = ? WHERE id = ?", (text, session_id))

    def add_tag(self, session_id: int, tag: str) -> None:
        self._write("INSERT OR IGNORE INTO tag (session_id, tag) VALUES (?, ?)", (session_id, tag))

    def remove_tag(self, session_id: int, tag: str) -> None:
        self._write("DELETE FROM tag WHERE session_id = ? AND tag = ?", (session_id, tag))

    def delete_session(self, session_id: int) -> None:
        """Remove a session and everything recorded with it."""
        with self._transaction():
            for table in ("sample", "series", "transcript", "metric", "run", "case_", "event",
                          "tag"):
                self.db.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
            self.db.execute("DELETE FROM session WHERE id = ?", (session_id,))

    def import_session(self, *, name: str, tool: str, config: str, source_path: str,
                       transcript: str, metrics: Sequence[Metric], params: Mapping[str, Any],
                       host: Mapping[str, Any]) -> int:
        """Store a tool output someone already had as a session with status 'imported'."""
        now = time.time()
        digest = hashlib.sha1(f"{tool}\0{source_path}".encode()).hexdigest()[:10]
        case_id = f"import-{tool}-{digest}"
        with self._transaction():
            cur = self.db.execute(
                "INSERT INTO session (name, status, started, finished, host, plan_text, "
                "plan_path, repeats, last_activity) VALUES (?, 'imported', ?, ?, ?, '', ?, 1, ?)",
                (name, now, now, _json(dict(host)), source_path, now))
            sid = int(cur.lastrowid or 0)
            self.db.execute(
                "INSERT INTO case_ VALUES (?, ?, 0, ?, ?, 0, ?)",
                (sid, case_id, config, tool, _json(dict(params))))
            self.db.execute(
                "INSERT INTO run (session_id, case_id, repeat, argv, started, status) "
                "VALUES (?, ?, 1, '[]', ?, 'imported')", (sid, case_id, now))
            self.db.executemany(
                "INSERT INTO metric (session_id, case_id, repeat, name, value, unit, note, params)"
                " VALUES (?, ?, 1, ?, ?, ?, ?, ?)",
                [(sid, case_id, m.name, m.value, m.unit, m.note,
                  _json(dict(m.params)) if m.params else None) for m in metrics])
            self.db.executemany(
                "INSERT INTO transcript VALUES (?, ?, 1, ?, 'imported', ?)",
                [(sid, case_id, now, line) for line in transcript.splitlines()])
        return sid


def _interrupt(db: sqlite3.Connection, session_id: int, finished: float | None) -> None:
    db.execute("UPDATE session SET status = 'interrupted', finished = ? "
               "WHERE id = ? AND status = 'running'", (finished, session_id))
    db.execute("UPDATE run SET status = 'interrupted' WHERE session_id = ? AND "
               "status = 'running'", (session_id,))


def _writes(method: Callable[P, R]) -> Callable[P, R]:
    """SQLite errors while recording (disk full, I/O error) become LibraryError with the path."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except sqlite3.Error as e:
            path = getattr(args[0], "path", "")
            raise LibraryError(f"cannot write to the library {path}: {e}") from e

    return wrapper


class SessionWriter:
    """The write side of one session, for the recorder: every statement joins the open
    transaction (begun on demand) until commit(). The recorder decides when to commit."""

    def __init__(self, library: Library):
        self.db = library.db
        self.path = library.path
        self.session_id: int | None = None

    def _begin(self) -> None:
        if not self.db.in_transaction:
            self.db.execute("BEGIN")

    @_writes
    def create_session(self, *, name: str, started: float, pid: int, pid_started: float,
                       host: Mapping[str, Any], plan_text: str, warnings: Sequence[str],
                       repeats: int, cases: Sequence[Case]) -> int:
        self._begin()
        cur = self.db.execute(
            "INSERT INTO session (name, status, started, pid, pid_started, last_activity, host, "
            "plan_text, warnings, repeats) VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?)",
            (name, started, pid, pid_started, started, _json(dict(host)), plan_text,
             _json(list(warnings)), repeats))
        sid = self.session_id = int(cur.lastrowid or 0)
        self.db.executemany(
            "INSERT INTO case_ (session_id, case_id, idx, config, tool, test_index, params) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(sid, c.id, c.index, c.config, c.tool, c.test_index, _json(dict(c.params)))
             for c in cases])
        return sid

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
            (self.session_id, case_id, repeat, _json(list(argv)), tool_version, planned_bytes,
             started))

    @_writes
    def finish_run(self, case_id: str, repeat: int, status: str, exit_status: int | None,
                   duration: float) -> None:
        self._begin()
        self.db.execute(
            "UPDATE run SET status = ?, exit_status = ?, duration = ? WHERE session_id = ? "
            "AND case_id = ? AND repeat = ?",
            (status, exit_status, duration, self.session_id, case_id, repeat))

    @_writes
    def fail_run(self, case_id: str, repeat: int, *, exit_status: int | None,
                 signal: int | None, error: str, transcript_tail: str, duration: float) -> None:
        self._begin()
        self.db.execute(  # a case can fail before it started (setup, a missing tool)
            "INSERT OR IGNORE INTO run (session_id, case_id, repeat, argv, status) "
            "VALUES (?, ?, ?, '[]', 'failed')", (self.session_id, case_id, repeat))
        self.db.execute(
            "UPDATE run SET status = 'failed', exit_status = ?, signal = ?, error = ?, "
            "transcript_tail = ?, duration = ? WHERE session_id = ? AND case_id = ? AND "
            "repeat = ?",
            (exit_status, signal, error, transcript_tail, duration, self.session_id, case_id,
             repeat))

    @_writes
    def add_metrics(self, case_id: str, repeat: int, metrics: Sequence[Metric],
                    note: Callable[[str | None], str | None] = lambda n: n) -> None:
        """`note` may rewrite each metric's note (the recorder flags partial figures)."""
        self._begin()
        self.db.executemany(
            "INSERT INTO metric (session_id, case_id, repeat, name, value, unit, note, params) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(self.session_id, case_id, repeat, m.name, m.value, m.unit, note(m.note),
              _json(dict(m.params)) if m.params else None) for m in metrics])

    @_writes
    def add_event(self, t: float, kind: str, case_id: str | None,
                  data: Mapping[str, Any]) -> None:
        self._begin()
        self.db.execute(
            "INSERT INTO event (session_id, t, kind, case_id, data) VALUES (?, ?, ?, ?, ?)",
            (self.session_id, t, kind, case_id, _json(dict(data))))

    @_writes
    def end_session(self, status: str, finished: float) -> None:
        self._begin()
        self.db.execute("UPDATE session SET status = ?, finished = ? WHERE id = ?",
                        (status, finished, self.session_id))

    @_writes
    def interrupt(self, finished: float) -> None:
        """The session ends without its SessionFinished: 'interrupted', like a killed one."""
        if self.session_id is not None:
            self._begin()
            _interrupt(self.db, self.session_id, finished)

    @_writes
    def commit(self, last_activity: float) -> None:
        """Commit what the open transaction holds, with the time of the last event stored
        (an interrupted session's end)."""
        self._begin()
        self.db.execute("UPDATE session SET last_activity = ? WHERE id = ?",
                        (last_activity, self.session_id))
        self.db.execute("COMMIT")


def _process_alive(pid: int | None, started: float | None) -> bool:
    """Is the process that wrote a session still the same live process?"""
    if not pid:
        return False
    try:
        p = psutil.Process(pid)
        return started is None or abs(p.create_time() - started) < 1.0
    except psutil.Error:
        return False
