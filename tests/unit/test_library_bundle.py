"""Schema 4's session UUIDs, and bundles and merges at the library level: an older file is
read through a migrated copy (never changed), what is not a DiskLab file is refused in one
line, a session being recorded does not travel."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from disklab.core.library import Library
from disklab.core.library.bundle import export_bundle, merge
from disklab.core.vocab.errors import LibraryError
from disklab.core.vocab.model import Case, Metric
from tests.helpers import FIXTURES, record_session

V1 = FIXTURES / "library" / "v1.sqlite3"
CASE = Case("c-dd-1", 0, "as is", "dd", 0, {"bs": 1048576})


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_migration_gives_old_sessions_a_uuid_and_new_ones_get_theirs(
        tmp_path: Path) -> None:
    path = tmp_path / "v1.sqlite3"
    shutil.copy(V1, path)
    with Library.open(path) as lib:
        old = lib.session(1)["uuid"]
        new = record_session(lib, [(CASE, [(Metric("write", 1.0, "B/s"),)])], name="new")
        assert len(old) == 32 and int(old, 16) >= 0
        assert lib.session(new)["uuid"] not in (None, old)
        with pytest.raises(sqlite3.IntegrityError):
            lib.db.execute("UPDATE session SET uuid = ? WHERE id = ?", (old, new))


def test_an_older_library_merges_through_a_copy_and_is_not_changed(tmp_path: Path) -> None:
    source = tmp_path / "old.sqlite3"
    shutil.copy(V1, source)
    before = digest(source)
    with Library.open(tmp_path / "l.sqlite3") as lib:
        report = merge(lib, source)
        [(sid, name)] = report.added
        assert name == "old dd run"
        assert [r["values"] for r in lib.results(sid)] == [[100000000.0, 120000000.0]]
        assert lib.session(sid)["host"] == {"hostname": "oldbox"}
        assert [s["series"] for s in lib.samples(sid)] == ["app_bps", "app_bps"]
    assert digest(source) == before
    assert not (tmp_path / "old.sqlite3-wal").exists()
    with Library.open(tmp_path / "l.sqlite3") as lib:  # migrated on a copy again: same UUID
        assert merge(lib, source).present == [("old dd run", sid)]
        assert len(lib.list_sessions()) == 1


def test_what_is_not_a_disklab_file_is_refused_in_one_line(tmp_path: Path) -> None:
    text = tmp_path / "x.disklab"
    text.write_text("hello")
    other = tmp_path / "other.sqlite3"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    with Library.open(tmp_path / "l.sqlite3") as lib:
        with pytest.raises(LibraryError, match="not an SQLite file"):
            merge(lib, text)
        with pytest.raises(LibraryError, match="not a DiskLab bundle or library"):
            merge(lib, other)
        with pytest.raises(LibraryError, match="the library itself"):
            merge(lib, tmp_path / "l.sqlite3")
        record_session(lib, [(CASE, [(Metric("write", 1.0, "B/s"),)] * 3)], name="x")
        bundle = export_bundle(lib, [1], tmp_path / "x.disklab")
        damaged = bytearray(bundle.read_bytes())
        damaged[len(damaged) // 2:] = b"\xff" * (len(damaged) - len(damaged) // 2)
        bundle.write_bytes(bytes(damaged))
        with pytest.raises(LibraryError, match=r"x\.disklab is damaged"):
            merge(lib, bundle)
        assert len(lib.list_sessions()) == 1


def test_a_session_being_recorded_is_not_exported_and_not_merged(tmp_path: Path) -> None:
    with Library.open(tmp_path / "src.sqlite3") as lib:
        done = record_session(lib, [(CASE, [(Metric("write", 1.0, "B/s"),)])], name="done")
        live = record_session(lib, [(CASE, [(Metric("write", 2.0, "B/s"),)])], name="live",
                              status=None)
        assert lib.session(live)["status"] == "running"  # this process is its writer
        with pytest.raises(LibraryError, match="being recorded"):
            export_bundle(lib, [live], tmp_path / "b.disklab")
        assert not (tmp_path / "b.disklab").exists()
        export_bundle(lib, [done], tmp_path / "b.disklab")
        with Library.open(tmp_path / "dst.sqlite3") as dst:
            report = merge(dst, tmp_path / "src.sqlite3")
            assert [n for _sid, n in report.added] == ["done"] and report.running == ["live"]
            assert merge(dst, tmp_path / "b.disklab").present == [("done", report.added[0][0])]
