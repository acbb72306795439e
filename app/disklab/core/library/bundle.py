"""Sessions that travel: a bundle (`.disklab`) and merging another library.

A bundle is itself a small library file (SQLite, rollback journal: one file, no -wal beside
it) holding the exported sessions whole: plan, host facts, configurations and read-back
events, every run with its argv, values, events, samples and transcript. SQLite is the format
because it is already the library's: the importer of a bundle and the merger of another
library are one code path (merge), and a bundle opens in any SQLite tool. Its schema version
(PRAGMA user_version) is the bundle's format version: an older one is migrated on a copy, a
newer one refused with one line.

Each session carries a UUID (schema version 4): a session already in the library (same UUID)
is not imported again, so importing a bundle twice, or merging a library that was merged
before, keeps one copy. The derived results summary is not copied: it is recomputed on first
read from the copied metric rows.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from disklab.core.library import schema
from disklab.core.library.store import Library
from disklab.core.vocab.errors import LibraryError, LibraryWriteError

SQLITE_MAGIC = b"SQLite format 3\x00"
BUNDLE_APPLICATION_ID = 0x444C4231  # 'DLB1' in PRAGMA application_id: a bundle, not a library
# Tables with a session_id column and no id of their own, copied row for row
PLAIN_TABLES = ("case_", "run", "transcript", "tag")
# Tables whose own id is made anew in the target (their rows are referred to by nobody but
# series, which is mapped: see _copy_series)
ID_TABLES = ("metric", "event")


@dataclass
class MergeReport:
    """What a merge did: the new ids of the sessions it added (with their names), the
    sessions it left because they were already there (source name, target id) and those it
    left because they are still being recorded."""

    added: list[tuple[int, str]] = field(default_factory=list)
    present: list[tuple[str, int]] = field(default_factory=list)
    running: list[str] = field(default_factory=list)


def is_sqlite_file(path: Path) -> bool:
    """Does the file start as an SQLite database does (a bundle or a library)?"""
    try:
        with path.open("rb") as fp:
            return fp.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


def export_bundle(library: Library, session_ids: Sequence[int], path: Path) -> Path:
    """Write the sessions to a bundle at `path`, replacing it only once it is whole (written
    to a temporary file beside it, then renamed). LibraryError for a session still being
    recorded, or when the file cannot be written (its directory missing: never made here)."""
    for sid in session_ids:
        if library.session(sid)["status"] == "running":
            raise LibraryError(f"session {sid} is being recorded; export it when it has ended")
    if not path.parent.is_dir():
        raise LibraryError(f"cannot write {path}: the directory {path.parent} does not exist")
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        tmp.unlink()
        bundle = Library.new_file(tmp)
        try:
            bundle.db.execute(f"PRAGMA application_id = {BUNDLE_APPLICATION_ID}")
            with _transaction(bundle.db, tmp):
                for sid in session_ids:
                    copy_session(library.db, bundle.db, sid)
        finally:
            bundle.close()
        os.replace(tmp, path)
    except OSError as e:
        raise LibraryError(f"cannot write {path}: {e.strerror or e}") from e
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    return path


def merge(library: Library, source: Path) -> MergeReport:
    """Add every session of `source` (a bundle or another library) that `library` lacks,
    matched by UUID, in one transaction: a failure adds none. The source is never changed
    (an older one is migrated on a temporary copy). LibraryError with one line for a file
    that is not a DiskLab bundle or library, one from a newer DiskLab, or the library
    itself."""
    with contextlib.suppress(OSError):
        if source.resolve() == library.path.resolve():
            raise LibraryError(f"{source} is the library itself: nothing to merge")
    with _readable(source) as src:
        report = MergeReport()
        with _transaction(library.db, library.path):
            for sid, name, status, uuid in src.execute(
                    "SELECT id, name, status, uuid FROM session ORDER BY id").fetchall():
                there = library.db.execute("SELECT id FROM session WHERE uuid = ?",
                                           (uuid,)).fetchone()
                if there is not None:
                    report.present.append((name, int(there[0])))
                elif status == "running":
                    report.running.append(name)
                else:
                    report.added.append((copy_session(src, library.db, sid), name))
        return report


@contextlib.contextmanager
def _readable(source: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection to a bundle or library at the current schema: the file itself
    when it is current, a migrated temporary copy when it is older."""
    if not is_sqlite_file(source):
        raise LibraryError(f"{source} is not a DiskLab bundle or library (not an SQLite file)")
    version = _schema_version(source)
    if version > schema.CURRENT:
        raise LibraryError(
            f"{source} was written by a newer DiskLab (format {version}; this one reads up to "
            f"{schema.CURRENT}): upgrade DiskLab to import it")
    if version == schema.CURRENT:
        db = _connect_ro(source)
        try:
            _check_tables(db, source)
            _check_rows(db, source)
            yield db
        finally:
            db.close()
        return
    with tempfile.TemporaryDirectory(prefix="disklab-merge-") as tmp:
        copy = Path(tmp) / "source.sqlite3"
        try:
            shutil.copyfile(source, copy)
        except OSError as e:
            raise LibraryError(f"cannot read {source}: {e.strerror or e}") from e
        with Library.open(copy) as migrated:
            _check_rows(migrated.db, source)
            yield migrated.db


def _connect_ro(path: Path) -> sqlite3.Connection:
    try:
        return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True,
                               isolation_level=None, timeout=30)
    except sqlite3.Error as e:
        raise LibraryError(f"cannot read {path}: {e}") from e


def _schema_version(path: Path) -> int:
    try:
        db = _connect_ro(path)
        try:
            version = int(db.execute("PRAGMA user_version").fetchone()[0])
            has_session = db.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' "
                                     "AND name = 'session'").fetchone()[0]
        finally:
            db.close()
    except sqlite3.DatabaseError as e:
        raise LibraryError(f"{path} is damaged, or not a DiskLab bundle or library "
                           f"(SQLite says: {e})") from e
    if version == 0 or not has_session:
        raise LibraryError(f"{path} is an SQLite file but not a DiskLab bundle or library")
    return version


def _check_tables(db: sqlite3.Connection, path: Path) -> None:
    """The tables a merge reads are there and the file is whole (a bundle cut short or
    damaged in transit is said as such, not as a failing write into the library)."""
    try:
        check = db.execute("PRAGMA quick_check").fetchone()[0]
        names = {n for (n,) in db.execute("SELECT name FROM sqlite_master "
                                          "WHERE type = 'table'")}
    except sqlite3.DatabaseError as e:
        check, names = str(e), set()
    if check != "ok":
        said = [line for line in check.splitlines() if not line.startswith("***")] or [check]
        raise LibraryError(f"{path} is damaged (SQLite says: {said[0]})")
    missing = {"session", *PLAIN_TABLES, *ID_TABLES, "series", "sample"} - names
    if missing:
        raise LibraryError(f"{path} is not a whole DiskLab library: it has no "
                           f"{', '.join(sorted(missing))} table")


# a number column holding what no number is: text, a blob, or an infinity (NaN reads as NULL)
_NOT_A_NUMBER = ("(typeof({c}) NOT IN ('integer', 'real', 'null') "
                 "OR abs({c}) > 1.7976931348623157e308)")
_NUMBERS = (("metric", "value"), ("sample", "value"), ("sample", "t"))
_FORGED = "is not as DiskLab writes its files"


def _check_rows(db: sqlite3.Connection, path: Path) -> None:
    """Refuse, with one line, what a recorder never writes and a reader would trip on: a
    session without its UUID (imported again at every import), rows of a session the file does
    not hold (a session that arrives empty, its rows lost without a word), and a figure or a
    sample that is not a finite number (show, export and compare do arithmetic on them)."""
    try:
        row = db.execute("SELECT id, name FROM session WHERE uuid IS NULL OR length(uuid) != 32 "
                         "OR uuid GLOB '*[^0-9a-f]*' LIMIT 1").fetchone()
        if row is not None:
            raise LibraryError(f"{path} {_FORGED}: session {row[0]} ({str(row[1])[:60]!r}) "
                               "has no UUID of 32 hex digits; nothing imported")
        for table in (*PLAIN_TABLES, *ID_TABLES, "series", "sample"):
            row = db.execute(f"SELECT session_id FROM {table} WHERE session_id NOT IN "
                             "(SELECT id FROM session) LIMIT 1").fetchone()
            if row is not None:
                raise LibraryError(f"{path} {_FORGED}: it has {table} rows of session "
                                   f"{str(row[0])[:24]}, which it does not hold; nothing "
                                   "imported")
        for table, column in _NUMBERS:
            row = db.execute(f"SELECT session_id, {column} FROM {table} WHERE "
                             f"{_NOT_A_NUMBER.format(c=column)} LIMIT 1").fetchone()
            if row is not None:
                raise LibraryError(f"{path} {_FORGED}: a {table} {column} of session "
                                   f"{row[0]} is {str(row[1])[:24]!r}, not a finite number; "
                                   "nothing imported")
    except sqlite3.DatabaseError as e:
        raise LibraryError(f"{path} is damaged (SQLite says: {e})") from e


@contextlib.contextmanager
def _transaction(db: sqlite3.Connection, path: Path) -> Iterator[None]:
    try:
        db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
    except sqlite3.Error as e:
        raise LibraryWriteError(f"cannot write to {path}: {e}") from e


def _columns(db: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in db.execute(f"PRAGMA table_info({table})")]


def copy_session(src: sqlite3.Connection, dst: sqlite3.Connection, session_id: int) -> int:
    """Copy one session and everything recorded with it from `src` to `dst` (both at the
    current schema) in dst's open transaction; returns its id in dst. The writer's pid is
    dropped: in dst no process is recording it."""
    cols = [c for c in _columns(src, "session") if c != "id"]
    row = dict(zip(cols, src.execute(f"SELECT {', '.join(cols)} FROM session WHERE id = ?",
                                     (session_id,)).fetchone(), strict=True))
    row["pid"] = row["pid_started"] = None
    cur = dst.execute(f"INSERT INTO session ({', '.join(row)}) VALUES "
                      f"({', '.join('?' * len(row))})", tuple(row.values()))
    new_id = int(cur.lastrowid or 0)
    for table in (*PLAIN_TABLES, *ID_TABLES):
        _copy_rows(src, dst, table, session_id, new_id)
    _copy_series(src, dst, session_id, new_id)
    return new_id


def _copy_rows(src: sqlite3.Connection, dst: sqlite3.Connection, table: str, old: int,
               new: int) -> None:
    cols = [c for c in _columns(src, table) if c not in ("id", "session_id")]
    rows: Iterator[tuple[Any, ...]] = (
        (new, *r) for r in src.execute(
            f"SELECT {', '.join(cols)} FROM {table} WHERE session_id = ? ORDER BY rowid",
            (old,)))
    dst.executemany(f"INSERT INTO {table} (session_id, {', '.join(cols)}) VALUES "
                    f"({', '.join('?' * (len(cols) + 1))})", rows)


def _copy_series(src: sqlite3.Connection, dst: sqlite3.Connection, old: int, new: int) -> None:
    """The series with new ids, then their samples (one at a time: a long run has millions)
    under the new ids, in their recorded order."""
    ids: dict[int, int] = {}
    for sid, case_id, repeat, name in src.execute(
            "SELECT id, case_id, repeat, name FROM series WHERE session_id = ? ORDER BY id",
            (old,)).fetchall():
        cur = dst.execute("INSERT INTO series (session_id, case_id, repeat, name) "
                          "VALUES (?, ?, ?, ?)", (new, case_id, repeat, name))
        ids[sid] = int(cur.lastrowid or 0)
    dst.executemany(
        "INSERT INTO sample (session_id, series_id, t, value) VALUES (?, ?, ?, ?)",
        ((new, ids[series], t, value) for series, t, value in src.execute(
            "SELECT series_id, t, value FROM sample WHERE session_id = ? ORDER BY rowid",
            (old,)) if series in ids))
