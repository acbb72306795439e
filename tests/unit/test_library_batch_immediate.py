"""A recorder's batch waits for the library's write lock (issue 43: two `disklab run`s on one
library, one stopped with "database is locked" at once). Real SQLite files in WAL mode, the real
SessionWriter on the Library's own connection (30 s busy timeout): a second connection holds the
write lock when the batch begins and commits 0.3 s later. The batch begins (writer._begin: the
batch's BEGIN), reads through the same connection (the store's reads join an open batch), and
writes: it waits for the lock and writes. A deferred BEGIN would have read a snapshot first, and
SQLite answers the upgrade of that read to a write with "database is locked" at once, without
the busy timeout."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from disklab.core.library import Library

HELD = 0.3  # seconds the other connection holds the write lock after the batch asks for it


def test_a_batch_that_reads_while_another_connection_commits_writes_after_waiting(
        tmp_path: Path) -> None:
    path = tmp_path / "library.sqlite3"
    with Library.open(path) as lib:
        assert lib.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        writer = lib.writer()
        sid = writer.create_session(name="recorded", started=1.0, pid=1, pid_started=1.0,
                                    host={}, plan_text="", warnings=[], repeats=1, cases=[])
        writer.commit(1.0)
        other = sqlite3.connect(path, timeout=30, isolation_level=None,
                                check_same_thread=False)
        committer = threading.Timer(HELD, other.execute, ("COMMIT",))
        try:
            other.execute("BEGIN IMMEDIATE")
            other.execute("UPDATE session SET name = 'renamed meanwhile' WHERE id = ?", (sid,))
            committer.start()
            t0 = time.monotonic()
            writer._begin()  # the batch's BEGIN (what every writer method opens with)
            seen = [s["name"] for s in lib.list_sessions()]  # a read inside the batch
            writer.add_event(2.0, "Note", None, {"after": "a read"})
            writer.commit(2.0)
            waited = time.monotonic() - t0
        finally:
            committer.join()
            other.close()
        assert waited >= HELD * 0.9, waited  # it waited for the lock (not answered at once)
        assert seen == ["renamed meanwhile"]  # and read after the other's commit
        kinds = [k for (k,) in lib.db.execute(
            "SELECT kind FROM event WHERE session_id = ? ORDER BY id", (sid,))]
        assert kinds == ["Note"]
