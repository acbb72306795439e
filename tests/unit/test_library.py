"""The session library file: where it lives, how it is opened, migrated, refused, edited.

Real SQLite files in tmp_path; sessions are written with the real recorder from real events.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path

import platformdirs
import pytest

from disklab.core.library import Library, schema
from disklab.core.library.imports import import_session
from disklab.core.system.directories import library_path
from disklab.core.vocab.errors import LibraryError
from disklab.core.vocab.model import Case, Metric
from tests.helpers import FIXTURES, record_session

LIBRARIES = FIXTURES / "library"
CASE = Case("c-dd-1", 0, "as is", "dd", 0, {"bs": 1048576, "count": 64})


def record(lib: Library, name: str = "s", status: str | None = "finished",
           values: tuple[float, ...] = (1.0,)) -> int:
    """A one-case session with one `write` figure per repeat, started at t=10."""
    return record_session(lib, [(CASE, [(Metric("write", v, "B/s"),) for v in values])],
                          name=name, status=status, host={"hostname": "box"},
                          argv=("dd", "bs=1M"), start=10.0)


# --- where ---------------------------------------------------------------------------------

def test_path_is_the_flag_else_disklab_library_env_else_the_xdg_data_dir(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"DISKLAB_LIBRARY": str(tmp_path / "l.db")}
    assert library_path(None, env) == tmp_path / "l.db"
    assert library_path(str(tmp_path / "flag.db"), env) == tmp_path / "flag.db"
    assert library_path("~/x.db", {}) == Path.home() / "x.db"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert library_path(None, {}) == tmp_path / "xdg" / "disklab" / "library.sqlite3"
    assert library_path(None, {}) == Path(platformdirs.user_data_dir("disklab"),
                                          "library.sqlite3")
    monkeypatch.setenv("DISKLAB_LIBRARY", str(tmp_path / "env.sqlite3"))
    assert library_path() == tmp_path / "env.sqlite3"


def test_open_creates_parent_dirs_in_wal_with_synchronous_full(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "library.sqlite3"
    with Library.open(path) as lib:
        assert lib.path == path
        assert lib.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert lib.db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert lib.db.execute("PRAGMA user_version").fetchone()[0] == schema.CURRENT == 5
        assert lib.list_sessions() == []
    # reopening an up-to-date library changes nothing
    with Library.open(path) as lib:
        assert lib.db.execute("PRAGMA user_version").fetchone()[0] == 5


# --- migration and refusal -------------------------------------------------------------------

def test_a_v1_library_is_migrated_to_the_current_schema_and_keeps_its_data(tmp_path: Path) -> None:
    path = tmp_path / "v1.sqlite3"
    shutil.copy(LIBRARIES / "v1.sqlite3", path)
    with sqlite3.connect(path) as raw:  # the fixture really is version 1, without events/tags
        assert raw.execute("PRAGMA user_version").fetchone()[0] == 1
        tables = {t for (t,) in raw.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert "event" not in tables and "tag" not in tables
    with Library.open(path) as lib:
        assert lib.db.execute("PRAGMA user_version").fetchone()[0] == schema.CURRENT
        s = lib.find_session("old dd run")
        # values from tests/fixtures/library/README.md
        assert (s["id"], s["status"], s["host"], s["repeats"]) == (
            1, "finished", {"hostname": "oldbox"}, 2)
        assert s["plan_text"] == 'name = "old dd run"\n'
        assert (s["notes"], s["tags"]) == ("", [])
        assert lib.events(1) == []
        [r] = lib.results(1)
        assert (r["config"], r["tool"], r["metric"], r["unit"]) == ("as is", "dd", "write", "B/s")
        assert r["params"] == {"bs": 1048576, "count": 64}
        assert r["values"] == [100000000.0, 120000000.0]
        assert r["n"] == 2
        assert r["mean"] == 110000000.0
        assert r["stddev"] == pytest.approx(14142135.623730951)  # 20e6 / sqrt(2)
        runs = lib.runs(1)
        assert [(x["repeat"], x["argv"], x["tool_version"], x["status"]) for x in runs] == [
            (1, ["dd", "bs=1M"], "dd (coreutils) 9.1", "ok"),
            (2, ["dd", "bs=1M"], "dd (coreutils) 9.1", "ok")]
        assert lib.samples(1) == [
            {"t": 1700000001.5, "case_id": "c-dd-1", "repeat": 1, "series": "app_bps",
             "value": 100000000.0},
            {"t": 1700000002.5, "case_id": "c-dd-1", "repeat": 2, "series": "app_bps",
             "value": 120000000.0}]
        assert lib.transcript(1, "c-dd-1", 2) == [
            (1700000002.6, "stderr", "67108864 bytes (67 MB, 64 MiB) copied, rep 2")]
        # what version 2 added works on the migrated session
        lib.set_notes(1, "before the firmware update")
        lib.add_tag(1, "baseline")
        new = record(lib, "after migration")
    with Library.open(path) as lib:
        assert lib.session(1)["notes"] == "before the firmware update"
        assert lib.session(1)["tags"] == ["baseline"]
        assert [s["id"] for s in lib.list_sessions()] == [new, 1]


def test_a_library_from_a_newer_disklab_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite3"
    Library.open(path).close()
    with sqlite3.connect(path) as raw:
        raw.execute("PRAGMA user_version = 99")
    with pytest.raises(LibraryError, match="newer DiskLab") as e:
        Library.open(path)
    assert str(path) in str(e.value) and "99" in str(e.value)


def test_a_file_that_is_not_sqlite_is_refused_with_its_path(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("these are my notes, not a database\n" * 200)
    with pytest.raises(LibraryError) as e:
        Library.open(path)
    assert str(path) in str(e.value)
    assert path.read_text().startswith("these are my notes")  # left as it was


def test_a_damaged_library_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "damaged.sqlite3"
    with Library.open(path) as lib:
        record(lib, values=tuple(float(i) for i in range(1, 400)))
        lib.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 4 * page
    data[2 * page:len(data)] = b"\xff" * (len(data) - 2 * page)  # every page after the first two
    path.write_bytes(bytes(data))
    with pytest.raises(LibraryError) as e:
        Library.open(path)
    assert str(path) in str(e.value)


def test_an_sqlite_file_of_another_program_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite3"
    with sqlite3.connect(path) as raw:
        raw.execute("CREATE TABLE contacts (name TEXT)")
    with pytest.raises(LibraryError, match="not a DiskLab library"):
        Library.open(path)


# --- interrupted sessions --------------------------------------------------------------------

def test_a_running_session_whose_process_is_gone_shows_as_interrupted(tmp_path: Path) -> None:
    path = tmp_path / "library.sqlite3"
    with Library.open(path) as lib:
        sid = record(lib, status=None, values=(5.0, 6.0))  # no SessionFinished, not closed
        lib.db.execute("BEGIN")
        lib.db.execute("INSERT INTO run (session_id, case_id, repeat, argv, started, status) "
                       "VALUES (?, ?, 3, '[]', 13.0, 'running')", (sid, CASE.id))
        lib.db.execute("COMMIT")
        # another reader while the writer lives: still running
        with Library.open(path) as reader:
            assert reader.session(sid)["status"] == "running"
        # the writer's process is replaced by one that has exited
        gone = subprocess.Popen(["true"])
        gone.wait()
        lib.db.execute("UPDATE session SET pid = ? WHERE id = ?", (gone.pid, sid))
    with Library.open(path) as lib:
        s = lib.session(sid)
        assert s["status"] == "interrupted"
        assert s["finished"] == 12.0  # the last event committed: CaseFinished of repeat 2
        assert [r["status"] for r in lib.runs(sid)] == ["ok", "ok", "interrupted"]
        assert lib.results(sid)[0]["values"] == [5.0, 6.0]


# --- reading, editing, importing, deleting -----------------------------------------------------

def test_find_session_by_id_name_or_uuid_and_a_shared_name_is_refused_with_ids(
        tmp_path: Path) -> None:
    with Library.open(tmp_path / "l.sqlite3") as lib:
        first = record(lib, "nightly")
        second = record(lib, "nightly")
        other = record(lib, "42")
        assert lib.find_session(str(first))["id"] == first
        assert lib.find_session(first)["id"] == first
        with pytest.raises(LibraryError,
                           match=f"2 sessions are named 'nightly': {first}, {second}"):
            lib.find_session("nightly")
        uuid = lib.session(second)["uuid"]
        assert len(uuid) == 32 and uuid != lib.session(first)["uuid"]
        assert lib.find_session(uuid)["id"] == second
        assert lib.find_session(str(other))["id"] == other
        with pytest.raises(LibraryError, match="no session 'weekly'"):
            lib.find_session("weekly")
        with pytest.raises(LibraryError):
            lib.session(999)


def test_list_sessions_newest_first_with_counts_and_tags(tmp_path: Path) -> None:
    with Library.open(tmp_path / "l.sqlite3") as lib:
        a = record(lib, "a", values=(1.0, 2.0, 3.0))
        b = record(lib, "b", status="cancelled")
        lib.add_tag(a, "ssd")
        lib.add_tag(a, "ext4")
        lib.add_tag(a, "ssd")  # twice is once
        rows = lib.list_sessions()
        assert [(r["id"], r["name"], r["status"]) for r in rows] == [
            (b, "b", "cancelled"), (a, "a", "finished")]
        assert rows[1]["tags"] == ["ext4", "ssd"]
        assert (rows[1]["cases"], rows[1]["runs"], rows[1]["tools"]) == (1, 3, ["dd"])
        assert rows[1]["host"] == {"hostname": "box"}
        assert (rows[1]["started"], rows[1]["finished"]) == (10.0, 13.0)
        assert [r["id"] for r in lib.list_sessions(limit=1)] == [b]
        lib.remove_tag(a, "ssd")
        assert lib.session(a)["tags"] == ["ext4"]


def test_import_session_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite3"
    metrics = [Metric("write", 1.5e8, "B/s"),
               Metric("write", 1.25e8, "B/s", params={"record_size": 8192}),
               Metric("read", None, "B/s", note="too fast to measure")]
    with Library.open(path) as lib:
        sid = import_session(lib,
            name="old iozone", tool="iozone", config="xfs", source_path="/data/run.txt",
            transcript="line one\nline two\n", metrics=metrics, params={"file_size": 65536},
            host={"imported_from": "/data/run.txt"})
    with Library.open(path) as lib:
        s = lib.find_session("old iozone")
        assert (s["id"], s["status"], s["host"]) == (
            sid, "imported", {"imported_from": "/data/run.txt"})
        [case] = lib.cases(sid)
        assert (case["config"], case["tool"], case["params"]) == (
            "xfs", "iozone", {"file_size": 65536})
        results = lib.results(sid)
        assert [(r["metric"], r["params"], r["values"], r["notes"]) for r in results] == [
            ("write", {"file_size": 65536}, [1.5e8], []),
            ("write", {"file_size": 65536, "record_size": 8192}, [1.25e8], []),
            ("read", {"file_size": 65536}, [None], ["too fast to measure"]),
        ]
        assert results[2]["n"] == 0 and results[2]["mean"] is None
        assert [text for _, _, text in lib.transcript(sid, case["case_id"], 1)] == [
            "line one", "line two"]


def test_delete_session_removes_all_its_rows(tmp_path: Path) -> None:
    with Library.open(tmp_path / "l.sqlite3") as lib:
        keep = record(lib, "keep")
        gone = record(lib, "gone", values=(1.0, 2.0))
        lib.set_notes(gone, "bad cable")
        lib.add_tag(gone, "discard")
        lib.delete_session(gone)
        assert [s["id"] for s in lib.list_sessions()] == [keep]
        for table in ("session", "case_", "run", "metric", "sample", "series", "transcript",
                      "event", "tag"):
            column = "id" if table == "session" else "session_id"
            count = lib.db.execute(f"SELECT count(*) FROM {table} WHERE {column} = ?",
                                   (gone,)).fetchone()[0]
            assert count == 0, table
        assert lib.results(keep)[0]["values"] == [1.0]
