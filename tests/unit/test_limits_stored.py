"""The verdicts of what limited each run are kept with the session's results summary (schema 5's
`result_limits`): stored when a run ends, judged once on a first read for a session without them
(an older library, an import), kept, and judged again only when the session changed. Reading
them back gives the very verdicts a judgement gives, and reads none of the session's samples."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from disklab.core.library import Library, schema
from disklab.core.results.compare import comparison_for
from disklab.core.results.limits import (
    RULES,
    judge_session,
    session_limits,
    store_session_limits,
)
from disklab.core.results.tables import comparison_table
from disklab.core.vocab.events import (
    CaseFinished,
    CaseStarted,
    Sample,
    SessionFinished,
    SessionStarted,
)
from disklab.core.vocab.model import Case, Metric

HOST = {"cpu_count": 2, "dirty_threshold_bytes": 400 << 20}
# per case: its series' values at each of 6 samples (a device busy all the time, a CPU-bound
# tool, a run too short to judge)
CASES = {
    "c1": {"device_busy_pct": 99.0, "device_in_flight": 7.8, "cpu_pct": 20.0},
    "c2": {"device_busy_pct": 10.0, "device_in_flight": 0.3, "cpu_pct": 99.0},
    "c3": {"device_busy_pct": 50.0, "cpu_pct": 40.0},
}


def _record(lib: Library, repeats: int = 2, duration: float = 3.0) -> int:
    """A session of three engine cases through the real recorder, samples and all."""
    cases = [Case(cid, i, "ext4", "engine", 0, {"queue_depth": 8, "direct": True,
                                                 "block_size": 4096 << i})
             for i, cid in enumerate(CASES)]
    rec = lib.recorder()
    rec.handle(SessionStarted(name="judged", cases=tuple(cases), repeats=repeats, host=HOST,
                              plan_text="name = 'judged'\n", t=1.0))
    for repeat in range(1, repeats + 1):
        for case in cases:
            rec.handle(CaseStarted(case=case, repeat=repeat, argv=("engine",), t=2.0))
            for k in range(6 if case.id != "c3" else 1):
                for series, value in CASES[case.id].items():
                    rec.handle(Sample(case_id=case.id, series=series, repeat=repeat,
                                      value=value + 0.1 * repeat, t=2.0 + 0.5 * k))
            rec.handle(CaseFinished(case_id=case.id, repeat=repeat, exit_status=0,
                                    duration=duration if case.id != "c3" else 0.2, t=5.0,
                                    metrics=(Metric("read", 1e8 * repeat, "B/s"),)))
    rec.handle(SessionFinished(status="finished", t=6.0))
    rec.close()
    assert rec.session_id is not None
    return rec.session_id


def _reads_of_samples(lib: Library, sid: int) -> tuple[dict, int]:
    """session_limits on `lib`, and how many statements it ran that read the samples."""
    seen: list[str] = []
    lib.db.set_trace_callback(seen.append)
    try:
        limits = session_limits(lib, sid)
    finally:
        lib.db.set_trace_callback(None)
    return limits, sum("FROM sample" in s for s in seen)


def _recorded(tmp_path: Path) -> tuple[Path, int, dict]:
    """A library file with the session recorded (no verdicts stored), its id and its verdicts
    as judged from its samples."""
    path = tmp_path / "lib.sqlite3"
    with Library.open(path) as lib:
        sid = _record(lib)
        return path, sid, judge_session(lib, sid)


def _kept(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT count(*) FROM result_limits").fetchone()[0]


def test_verdicts_stored_at_a_runs_end_read_back_equal_without_reading_the_samples(
        tmp_path: Path) -> None:
    path, sid, judged = _recorded(tmp_path)
    with Library.open(path) as lib:
        store_session_limits(lib, sid)  # what RecordedRun.close does
    assert {c: [x.kind for x in v] for c, v in judged.items()} == {
        "c1": ["device"], "c2": ["cpu"], "c3": ["too_short"]}
    assert judged["c1"][0].words == "device busy 99 %, 7.9 of 8 requests in flight"
    assert _kept(path) == 1
    with Library.open(path) as lib:  # a first look, a connection of its own
        limits, reads = _reads_of_samples(lib, sid)
        assert limits == judged and reads == 0
        # and what a comparison shows with them is what it showed when they were judged
        table, _s = comparison_for(lib, [sid], None)
        note = comparison_table(table).note
        assert "limited by device (busy 99 %, 7.9 in flight)" in note
        assert "limited by CPU" in note and "limited by too short" in note


def test_a_session_without_stored_verdicts_is_judged_once_and_they_are_kept(
        tmp_path: Path) -> None:
    path, sid, judged = _recorded(tmp_path)  # the recorder alone: nothing stores verdicts
    assert _kept(path) == 0
    with Library.open(path) as lib:
        limits, reads = _reads_of_samples(lib, sid)
        assert reads > 0 and limits == judged
    assert _kept(path) == 1
    with Library.open(path) as lib:
        again, reads = _reads_of_samples(lib, sid)
        assert again == limits and reads == 0


def test_a_schema_4_library_migrates_and_its_sessions_are_judged_on_first_read(
        tmp_path: Path) -> None:
    path, sid, expected = _recorded(tmp_path)
    with sqlite3.connect(path) as raw:  # back to what DiskLab wrote before schema 5
        raw.execute("DROP TABLE result_limits")
        raw.execute("PRAGMA user_version = 4")
    with Library.open(path) as lib:
        assert lib.db.execute("PRAGMA user_version").fetchone()[0] == schema.CURRENT == 5
        assert session_limits(lib, sid) == expected
    assert _kept(path) == 1


def test_a_changed_session_or_other_rules_are_judged_again(tmp_path: Path) -> None:
    path = tmp_path / "lib.sqlite3"
    with Library.open(path) as lib:
        sid = _record(lib, repeats=1)
        store_session_limits(lib, sid)
        # another run of c2 ends, 0.5 s long: "too short" in one of its two runs
        lib.db.execute("INSERT INTO run (session_id, case_id, repeat, argv, status, duration) "
                    "VALUES (?, 'c2', 2, '[]', 'ok', 0.5)", (sid,))
        limits = session_limits(lib, sid)
        assert limits["c2"][0].words.endswith("(1 of 2 runs)")
        assert limits == judge_session(lib, sid)
    with Library.open(path) as lib:
        judged: list[int] = []
        lib.limits(sid, RULES + 1, lambda: judged.append(1) or {})
        assert judged == [1]  # verdicts of other rules are not these rules'


def test_a_session_being_recorded_is_judged_but_nothing_is_stored(tmp_path: Path) -> None:
    path = tmp_path / "lib.sqlite3"
    with Library.open(path) as lib:
        sid = _record(lib)
        lib.db.execute("UPDATE session SET status = 'running' WHERE id = ?", (sid,))
        assert session_limits(lib, sid)["c1"][0].kind == "device"
    assert _kept(path) == 0
