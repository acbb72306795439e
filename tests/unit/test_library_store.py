"""The library: a real SQLite file, real events, reopened the way a user would."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from disklab.core.library import Library, schema
from disklab.core.library.imports import import_session
from disklab.core.results.compare import comparison_for
from disklab.core.results.documents import write_session_csv
from disklab.core.vocab.errors import LibraryError
from disklab.core.vocab.events import (
    CaseFailed,
    CaseFinished,
    CaseStarted,
    Sample,
    SessionFinished,
    SessionStarted,
)
from disklab.core.vocab.model import Case, Metric
from tests.helpers import record_session

CASES = (
    Case("c1", 0, "as is", "engine", 0, {"mode": "write", "block_size": 1 << 20}),
    Case("c2", 1, "as is", "iozone", 1, {"tests": ("write",), "threads": 1}),
)


def record(lib: Library, values: dict[str, list[float]], status: str = "finished") -> int:
    """Both cases, one `write` figure per repeat from `values`, with a sample, a log line and
    a per-parent figure each, and a warning."""
    runs = [(case, [(Metric("write", v, "B/s"),
                     Metric("write:parent", 1.0, "B/s", params={"threads": 1}))
                    for v in values[case.id]]) for case in CASES]
    return record_session(lib, runs, status=status, host={"h": 1}, warnings=("w1",),
                          argv=("tool", "-x"), sample_series="app_write_bps", log="hello",
                          notices=("page cache",))


def test_results_mean_stddev_and_values_per_repeat(tmp_path: Path) -> None:
    with Library.open(tmp_path / "l.sqlite3") as lib:
        sid = record(lib, {"c1": [100.0, 110.0, 120.0], "c2": [7.0, 7.0, 7.0]})
    with Library.open(tmp_path / "l.sqlite3") as lib:  # reopened: everything was committed
        results = {(r["case_id"], r["metric"]): r for r in lib.results(sid)}
        r = results[("c1", "write")]
        assert (r["n"], r["mean"], r["values"]) == (3, 110.0, [100.0, 110.0, 120.0])
        assert r["stddev"] == pytest.approx(10.0)  # sample stddev of 100, 110, 120
        assert r["test"] == "write" and r["config"] == "as is" and r["tool"] == "engine"
        assert r["params"] == {"mode": "write", "block_size": 1 << 20}
        parent = results[("c2", "write:parent")]
        assert parent["test"] == "write" and parent["params"] == {"tests": ["write"],
                                                                  "threads": 1}
        s = lib.session(sid)
        assert (s["status"], s["host"], s["warnings"]) == ("finished", {"h": 1}, ["w1"])
        assert len(lib.samples(sid, "c1")) == 3
        assert lib.transcript(sid, "c2", 2) == [(2.6, "stdout", "hello")]
        assert lib.events(sid)[0]["message"] == "page cache"
        assert lib.find_session("s")["id"] == sid == lib.find_session(str(sid))["id"]


def test_a_failed_repeat_is_missing_from_values(tmp_path: Path) -> None:
    with Library.open(tmp_path / "l.sqlite3") as lib:
        rec = lib.recorder()
        rec.handle(SessionStarted(name="f", cases=CASES[:1], repeats=2, host={}, plan_text="",
                                  t=1.0))
        rec.handle(CaseStarted(case=CASES[0], repeat=1, argv=("x",), t=1.0))
        rec.handle(CaseFinished(case_id="c1", repeat=1, metrics=(Metric("write", 5.0, "B/s"),),
                                exit_status=0, duration=1, t=1.0))
        rec.handle(CaseStarted(case=CASES[0], repeat=2, argv=("x",), t=1.0))
        rec.handle(CaseFailed(case_id="c1", repeat=2, error="boom", transcript_tail="tail",
                              exit_status=1, t=1.0))
        rec.handle(SessionFinished(status="failed", failed_cases=1, t=2.0))
        rec.close()
        (r,) = lib.results(rec.session_id)
        assert (r["n"], r["values"], r["stddev"]) == (1, [5.0, None], None)
        runs = lib.runs(rec.session_id)
        assert [(x["status"], x["error"]) for x in runs] == [("ok", None), ("failed", "boom")]


def test_samples_are_batched_until_a_second_passes_or_a_case_ends(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite3"
    with Library.open(path) as lib:
        rec = lib.recorder()
        rec.handle(SessionStarted(name="b", cases=CASES[:1], repeats=1, host={}, plan_text="",
                                  t=1.0))
        rec.handle(CaseStarted(case=CASES[0], repeat=1, argv=("x",), t=1.0))
        for i in range(100):
            rec.handle(Sample(case_id="c1", series="s", value=i, t=1.0))
        other = sqlite3.connect(path)
        assert other.execute("SELECT count(*) FROM sample").fetchone()[0] == 0
        rec.handle(CaseFinished(case_id="c1", repeat=1, metrics=(), exit_status=0, duration=1,
                                t=2.0))
        assert other.execute("SELECT count(*) FROM sample").fetchone()[0] == 100
        other.close()


KILLED_WRITER = textwrap.dedent("""
    import sys, time
    from disklab.core.vocab.events import *
    from disklab.core.library import Library
    from disklab.core.vocab.model import Case, Metric
    lib = Library.open(sys.argv[1])
    rec = lib.recorder()
    case = Case("c1", 0, "as is", "engine", 0, {"mode": "write"})
    rec.handle(SessionStarted(name="k", cases=(case,), repeats=2, host={}, plan_text="", t=1.0))
    rec.handle(CaseStarted(case=case, repeat=1, argv=("x",), t=1.0))
    rec.handle(CaseFinished(case_id="c1", repeat=1, metrics=(Metric("write", 9.0, "B/s"),),
                            exit_status=0, duration=1, t=2.0))
    rec.handle(CaseStarted(case=case, repeat=2, argv=("x",), t=3.0))
    print("ready", flush=True)
    while True:
        rec.handle(Sample(case_id="c1", series="s", value=1.0, repeat=2, t=time.time()))
        time.sleep(0.01)
""")


def test_a_killed_writer_leaves_an_interrupted_session_with_its_finished_case(
    tmp_path: Path,
) -> None:
    path = tmp_path / "l.sqlite3"
    p = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(path)],
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    time.sleep(1.5)  # let at least one batch of samples commit
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    with Library.open(path) as lib:
        (s,) = lib.list_sessions()
        assert s["status"] == "interrupted"
        (r,) = lib.results(s["id"])
        assert (r["values"], r["n"]) == ([9.0, None], 1)
        assert [x["status"] for x in lib.runs(s["id"])] == ["ok", "interrupted"]
        assert len(lib.samples(s["id"])) > 0  # the batches committed before the kill are kept


def test_a_library_of_schema_version_1_is_migrated_and_keeps_its_sessions(
    tmp_path: Path,
) -> None:
    path = tmp_path / "v1.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(schema.V1)
    db.execute("PRAGMA user_version = 1")
    db.execute("INSERT INTO session (id, name, status, started, repeats) "
               "VALUES (1, 'old', 'finished', 1.0, 1)")
    db.execute("INSERT INTO case_ VALUES (1, 'c', 0, 'as is', 'dd', 0, '{}')")
    db.execute("INSERT INTO metric (session_id, case_id, repeat, name, value, unit) "
               "VALUES (1, 'c', 1, 'write', 42.0, 'B/s')")
    db.commit()
    db.close()
    with Library.open(path) as lib:
        assert lib.db.execute("PRAGMA user_version").fetchone()[0] == schema.CURRENT == 5
        assert lib.results(1)[0]["mean"] == 42.0
        lib.add_tag(1, "baseline")
        lib.set_notes(1, "before the RAID rebuild")
        assert lib.session(1)["tags"] == ["baseline"]
        assert lib.session(1)["notes"] == "before the RAID rebuild"


def test_newer_and_foreign_files_are_refused_with_the_path(tmp_path: Path) -> None:
    newer = tmp_path / "newer.sqlite3"
    db = sqlite3.connect(newer)
    db.execute("PRAGMA user_version = 99")
    db.close()
    with pytest.raises(LibraryError, match="newer DiskLab"):
        Library.open(newer)
    text = tmp_path / "notes.txt"
    text.write_text("not a database at all " * 100)
    with pytest.raises(LibraryError, match=str(text)):
        Library.open(text)


def test_delete_import_compare_and_csv(tmp_path: Path) -> None:
    with Library.open(tmp_path / "l.sqlite3") as lib:
        a = record(lib, {"c1": [100.0, 100.0], "c2": [1.0, 1.0]})
        b = record(lib, {"c1": [150.0, 150.0], "c2": [1.0, 1.0]})
        c, _sessions = comparison_for(lib, [a, b], baseline=a)
        col = next(col for col in c.columns if col.startswith("engine write"))
        row_b = f"{b} s"
        assert c.cells[(row_b, col)].delta == 50.0 and c.cells[(row_b, col)].delta_pct == 50.0
        out = tmp_path / "r.csv"
        with out.open("w") as fp:
            write_session_csv(lib, a, fp)
        lines = out.read_text().splitlines()
        assert lines[0].startswith("session,config,tool,test,params,")
        assert ",metric,unit,better,n,mean," in lines[0]
        assert any(",write,B/s,higher,2,100.0,0.0,0.0,100.0;100.0," in ln for ln in lines)
        imported = import_session(lib, name="old log", tool="dd", config="ext4", source_path="/x",
                                      transcript="a\nb", metrics=[Metric("copy", 3.0, "B/s")],
                                      params={}, host={})
        assert lib.session(imported)["status"] == "imported"
        assert lib.results(imported)[0]["config"] == "ext4"
        lib.delete_session(a)
        assert [s["id"] for s in lib.list_sessions()] == [imported, b]
        assert lib.db.execute("SELECT count(*) FROM sample WHERE session_id = ?",
                              (a,)).fetchone()[0] == 0


def test_a_reader_sees_results_as_a_running_session_adds_them(tmp_path: Path) -> None:
    """The Library page reads a session while another connection records it: the rows a
    connection keeps (Library.results) must never hide a run finished since."""
    path = tmp_path / "lib.sqlite3"
    writer, reader = Library.open(path), Library.open(path)
    cases = tuple(Case(f"c{i}", i, "ext4", "engine", 0, {"mode": "write"}) for i in range(2))
    rec = writer.recorder()
    rec.handle(SessionStarted(name="live", cases=cases, repeats=2, host={}, plan_text="",
                              t=1.0))
    sid = rec.session_id
    assert sid is not None

    def finish(case: Case, repeat: int, value: float) -> None:
        rec.handle(CaseStarted(case=case, repeat=repeat, argv=("engine",), t=2.0))
        rec.handle(CaseFinished(case_id=case.id, repeat=repeat, exit_status=0, duration=1.0,
                                t=3.0, metrics=(Metric("write", value, "B/s"),)))

    finish(cases[0], 1, 100.0)
    first = reader.results(sid)
    assert [(r["case_id"], r["n"], r["mean"]) for r in first] == [("c0", 1, 100.0)]
    assert reader.results(sid) is first  # nothing new: the rows kept
    finish(cases[0], 2, 300.0)
    finish(cases[1], 1, 50.0)
    again = reader.results(sid)
    assert [(r["case_id"], r["n"], r["mean"]) for r in again] == [("c0", 2, 200.0),
                                                                 ("c1", 1, 50.0)]
    assert again[0]["stddev"] == pytest.approx(141.4213562373095)
    rec.handle(SessionFinished(status="finished", t=4.0))
    rec.close()
    writer.close()
    reader.close()
