"""The session results summary (schema 3): what the first look at a session reads must be what
the metric rows say, after a resume too, for a library of the previous schema, and a summary
that a crash left behind must never be served once the session changed."""

from __future__ import annotations

import math
import sqlite3
import time
from pathlib import Path

from disklab.core.library import Library, schema
from disklab.core.vocab.events import CaseFinished, CaseStarted, SessionFinished, SessionResumed
from disklab.core.vocab.model import Case, Metric
from tests.helpers import record_session

CASES = [Case(f"c{i}", i, config, "engine", 0,
              {"mode": mode, "block_size": bs, "size": 1 << 24})
         for i, (config, mode, bs) in enumerate(
             (c, m, b) for c in ("ext4", "xfs") for m in ("write", "read")
             for b in (4096, 1 << 20))]


def _metrics(case: Case, repeat: int) -> list[Metric]:
    """Figures that differ per case and repeat; a stream metric with its own parameters; the
    second repeat of c1 without its IOPS (a value missing), and a note on c2."""
    rate = 1e8 * (1 + case.index / 7) * (1 + repeat / 13)
    mode = str(case.params["mode"])
    out = [Metric(mode, rate, "B/s", note="cached" if case.id == "c2" else None),
           Metric(f"{mode}:lat_mean", 4096e9 / rate, "ns"),
           Metric(f"{mode}:stream", rate / 2, "B/s", params={"stream": 1})]
    if not (case.id == "c1" and repeat == 2):
        out.append(Metric(f"{mode}:iops", rate / 4096, "op/s"))
    return out


def _record(lib: Library, repeats: int = 3) -> int:
    return record_session(lib, [(c, [_metrics(c, r) for r in range(1, repeats + 1)])
                                for c in CASES])


def _from_metric_rows(path: Path, sid: int) -> list[dict]:
    """Library.results as computed from the metric rows: a library copy without the summary."""
    with Library.open(path) as lib:
        (status,) = lib.db.execute("SELECT status FROM session WHERE id = ?", (sid,)).fetchone()
        lib.db.execute("DELETE FROM result_stamp WHERE session_id = ?", (sid,))
        lib.db.execute("DELETE FROM result WHERE session_id = ?", (sid,))
        lib.db.execute("UPDATE session SET status = 'running' WHERE id = ?", (sid,))
        try:  # 'running': the read does not store its summary again
            return lib.results(sid)
        finally:
            lib.db.execute("UPDATE session SET status = ? WHERE id = ?", (status, sid))


def _stored(path: Path, sid: int) -> int:
    with sqlite3.connect(path) as raw:
        return raw.execute("SELECT count(*) FROM result_stamp WHERE session_id = ?",
                           (sid,)).fetchone()[0]


def _same(a: list[dict], b: list[dict]) -> None:
    """Equal row by row, key by key, every float to the bit."""
    assert len(a) == len(b) > 0
    for x, y in zip(a, b, strict=True):
        assert list(x) == list(y)  # the same keys in the same order
        for key in x:
            assert type(x[key]) is type(y[key]), key
            assert x[key] == y[key], (key, x[key], y[key])


def test_a_recorded_session_has_its_summary_and_it_equals_the_metric_rows(
        tmp_path: Path) -> None:
    path = tmp_path / "lib.sqlite3"
    with Library.open(path) as lib:
        sid = _record(lib)
    assert _stored(path, sid) == 1  # written when the recorder closed
    with Library.open(path) as lib:
        first_look = lib.results(sid)
    computed = _from_metric_rows(path, sid)
    _same(first_look, computed)
    # what a person checks: the gap, the note, the stream's own parameter, n, mean and stddev
    c1_iops = next(r for r in first_look if r["case_id"] == "c1" and r["metric"] == "write:iops")
    assert c1_iops["values"][1] is None and c1_iops["n"] == 2
    c2 = next(r for r in first_look if r["case_id"] == "c2" and r["metric"] == "read")
    assert c2["notes"] == ["cached"]
    stream = next(r for r in first_look if r["metric"] == "write:stream")
    assert stream["params"] == {**CASES[0].params, "stream": 1}
    c0 = first_look[0]
    values = [1e8 * (1 + r / 13) for r in (1, 2, 3)]
    assert c0["values"] == values and c0["mean"] == math.fsum(values) / 3
    assert math.isclose(c0["stddev"], 1e8 / 13, rel_tol=1e-12)


def test_a_resume_makes_the_summary_stale_until_its_close_writes_it_again(
        tmp_path: Path) -> None:
    """A cancelled session resumed: the earlier attempt's figures give way to the new run's
    (whose metric may take the old one's id), and a crash before the resume's close must not
    leave the old summary served; the close then stores the new one."""
    path = tmp_path / "lib.sqlite3"
    with Library.open(path) as lib:
        sid = record_session(lib, [(c, [_metrics(c, 1), _metrics(c, 2)]) for c in CASES],
                             status="cancelled")
        old = lib.results(sid)
        again = lib.recorder()
        again.handle(SessionResumed(session_id=sid, name="s", cases=tuple(CASES), repeats=2,
                                    runs=(("c7", 2),), complete=15,
                                    previous_status="cancelled", host={}, t=10.0))
        again.handle(CaseStarted(case=CASES[7], repeat=2, argv=("engine",), t=11.0))
        new = [Metric(m.name, m.value * 2, m.unit, params=m.params) for m in _metrics(CASES[7], 2)]
        again.handle(CaseFinished(case_id="c7", repeat=2, metrics=tuple(new), exit_status=0,
                                  duration=1.0, t=12.0))
        again.flush()
        # the process dies here: no SessionFinished, no close, the old summary still stored
        assert _stored(path, sid) == 1
        with Library.open(path) as other:  # another process (the GUI) looks
            during = other.results(sid)
        c7 = next(r for r in during if r["case_id"] == "c7" and r["metric"] == "read")
        assert c7["values"][1] == new[0].value  # the new run's figure, not the summary's
        assert during != old
        again.handle(SessionFinished(status="finished", t=13.0))
        again.close()
    with Library.open(path) as lib:
        after = lib.results(sid)
    _same(after, during)
    _same(after, _from_metric_rows(path, sid))


def test_a_summary_is_stale_when_runs_are_added(tmp_path: Path) -> None:
    """A killed session (recorder never closed: no summary), read (summary stored), then more
    of it recorded: the stored summary no longer matches and is not served."""
    path = tmp_path / "lib.sqlite3"
    with Library.open(path) as lib:
        sid = record_session(lib, [(c, [_metrics(c, 1)]) for c in CASES[:4]], status=None)
        lib.db.execute("UPDATE session SET status = 'interrupted' WHERE id = ?", (sid,))
    assert _stored(path, sid) == 0
    with Library.open(path) as lib:
        before = lib.results(sid)
    assert _stored(path, sid) == 1  # computed on first read and stored (nobody writing)
    with Library.open(path) as lib:
        lib.db.execute("INSERT INTO metric (session_id, case_id, repeat, name, value, unit) "
                       "VALUES (?, 'c3', 1, 'extra', 5.0, 'B/s')", (sid,))
        after = lib.results(sid)
    assert len(after) == len(before) + 1 and after[-1]["metric"] == "extra"
    _same(after, _from_metric_rows(path, sid))


def test_a_schema_2_library_migrates_keeps_everything_and_gets_summaries_on_first_read(
        tmp_path: Path) -> None:
    path = tmp_path / "v2.sqlite3"
    raw = sqlite3.connect(path)
    for sql in (schema.V1, schema.MIGRATIONS[2]):
        for statement in (s.strip() for s in sql.split(";")):
            if statement:
                raw.execute(statement)
    raw.execute("PRAGMA user_version = 2")
    raw.execute("INSERT INTO session (id, name, status, started, repeats) "
                "VALUES (1, 'old', 'finished', 1.0, 2)")
    raw.execute("INSERT INTO case_ VALUES (1, 'c', 0, 'as is', 'dd', 0, '{\"bs\": 1048576}')")
    raw.executemany("INSERT INTO run (session_id, case_id, repeat, argv, status) "
                    "VALUES (1, 'c', ?, '[]', 'ok')", [(1,), (2,)])
    raw.executemany("INSERT INTO metric (session_id, case_id, repeat, name, value, unit) "
                    "VALUES (1, 'c', ?, 'write', ?, 'B/s')", [(1, 40.0), (2, 44.0)])
    raw.commit()
    raw.close()
    with Library.open(path) as lib:
        assert lib.db.execute("PRAGMA user_version").fetchone()[0] == schema.CURRENT == 5
        (row,) = lib.results(1)
        assert (row["values"], row["n"], row["mean"]) == ([40.0, 44.0], 2, 42.0)
        assert row["params"] == {"bs": 1048576}
        assert [r["status"] for r in lib.runs(1)] == ["ok", "ok"]
    assert _stored(path, 1) == 1
    with Library.open(path) as lib:
        _same(lib.results(1), [row])
        lib.delete_session(1)
    assert _stored(path, 1) == 0


def test_a_read_stores_nothing_and_waits_for_nothing_while_a_writer_holds_the_library(
        tmp_path: Path) -> None:
    """The GUI reading while a run writes: the write lock is taken (a recorder's batch), so the
    read computes the rows and neither waits for the lock nor stores the summary."""
    path = tmp_path / "lib.sqlite3"
    with Library.open(path) as lib:
        sid = record_session(lib, [(c, [_metrics(c, 1)]) for c in CASES], status=None)
        lib.db.execute("UPDATE session SET status = 'interrupted' WHERE id = ?", (sid,))
    writer = sqlite3.connect(path, isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("UPDATE session SET notes = 'x' WHERE id = ?", (sid,))
        with Library.open(path) as lib:
            t0 = time.monotonic()
            rows = lib.results(sid)
            assert time.monotonic() - t0 < 5.0  # not the 30 s busy timeout
        writer.execute("COMMIT")
    finally:
        writer.close()
    assert rows and _stored(path, sid) == 0
    _same(rows, _from_metric_rows(path, sid))
