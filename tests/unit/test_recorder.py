"""The recorder: a whole session of real events stored, reopened and read back the way the CLI
and the GUI read it; batching; and a writer killed with SIGKILL in the middle of a case."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from disklab.core.library import Library
from disklab.core.vocab.errors import LibraryError
from disklab.core.vocab.events import (
    CaseCancelled,
    CaseFailed,
    CaseFinished,
    CaseStarted,
    ConfigApplied,
    ConfigTornDown,
    LogLine,
    Notice,
    Progress,
    Sample,
    SessionFinished,
    SessionResumed,
    SessionStarted,
)
from disklab.core.vocab.model import Case, Metric

DD = Case("c-dd", 0, "ext4", "dd", 0, {"bs": 1048576, "count": 64})
IOZONE = Case("c-iz", 1, "ext4", "iozone", 1, {"mode": "auto", "file_size": 1048576})
HOST = {"hostname": "box", "kernel": "6.1.0", "tools": {"dd": "dd (coreutils) 9.1"}}

# Per repeat 1..3. dd write 100, 110, 120 MB/s: mean 110e6, sample stddev 10e6.
# dd read: too fast in repeat 1, then 300 and 330 MB/s: n 2, mean 315e6, stddev 30e6/sqrt(2).
# iozone write at record 4096: 50, 60, and 70 (repeat 3 failed, partial): mean 60e6, stddev 10e6.
# iozone write at record 8192: 80, 90, missing in repeat 3: mean 85e6, stddev 10e6/sqrt(2).
DD_WRITE = (100e6, 110e6, 120e6)
DD_READ = (None, 300e6, 330e6)
IZ_4K = (50e6, 60e6, 70e6)
IZ_8K = (80e6, 90e6)


def session_events() -> list:
    """Every event type, in the order the runner yields them; times are 100 + step."""
    t = iter(range(100, 10_000))
    ev: list = [
        SessionStarted(name="ssd", cases=(DD, IOZONE), repeats=3, host=HOST,
                       plan_text="name = 'ssd'\n", warnings=("no drop_caches",), t=next(t)),
        Notice(level="warning", message="no drop_caches", t=next(t)),
        ConfigApplied(config="ext4", readback={"fstype": "ext4", "options": ("rw", "noatime")},
                      t=next(t)),
    ]
    for repeat in (1, 2, 3):
        ev.append(CaseStarted(case=DD, repeat=repeat, argv=("dd", "if=/dev/zero", "bs=1M"),
                              tool_version="dd (coreutils) 9.1", planned_bytes=64 << 20,
                              t=next(t)))
        ev.append(LogLine(case_id=DD.id, stream="stderr", text=f"copied r{repeat}",
                          repeat=repeat, t=next(t)))
        ev.append(Progress(case_id=DD.id, done_bytes=1 << 20, total_bytes=64 << 20,
                           repeat=repeat, t=next(t)))
        for i in range(4):
            ev.append(Sample(case_id=DD.id, series="app_bps", value=float(i), repeat=repeat,
                             t=next(t)))
        read = DD_READ[repeat - 1]
        ev.append(CaseFinished(case_id=DD.id, repeat=repeat, exit_status=0, duration=0.6,
                               metrics=(Metric("write", DD_WRITE[repeat - 1], "B/s"),
                                        Metric("read", read, "B/s",
                                               note=None if read else "too fast to measure")),
                               t=next(t)))
        ev.append(CaseStarted(case=IOZONE, repeat=repeat, argv=("iozone", "-a"),
                              tool_version="iozone 3.506", t=next(t)))
        ev.append(Sample(case_id=IOZONE.id, series="device_bps", value=7.0, repeat=repeat,
                         t=next(t)))
        metrics = [Metric("write", IZ_4K[repeat - 1], "B/s", params={"record_size": 4096})]
        if repeat < 3:
            metrics.append(Metric("write", IZ_8K[repeat - 1], "B/s",
                                  params={"record_size": 8192}))
            ev.append(CaseFinished(case_id=IOZONE.id, repeat=repeat, exit_status=0,
                                   duration=2.0, metrics=tuple(metrics), t=next(t)))
        else:
            ev.append(CaseFailed(case_id=IOZONE.id, repeat=3, error="iozone exited with 1",
                                 transcript_tail="Error writing block 12\n", exit_status=1,
                                 metrics=tuple(metrics), duration=1.0, t=next(t)))
    ev.append(ConfigTornDown(config="ext4", t=next(t)))
    ev.append(SessionFinished(status="failed", failed_cases=1, t=next(t)))
    return ev


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    path = tmp_path_factory.mktemp("lib") / "library.sqlite3"
    with Library.open(path) as lib:
        rec = lib.recorder()
        for event in session_events():
            rec.handle(event)
        rec.close()
        assert rec.session_id is not None
        return path, rec.session_id


def test_the_session_row_keeps_plan_host_warnings_and_status(recorded: tuple[Path, int]) -> None:
    path, sid = recorded
    with Library.open(path) as lib:
        s = lib.session(sid)
        assert (s["name"], s["status"], s["repeats"]) == ("ssd", "failed", 3)
        assert s["host"] == HOST
        assert s["plan_text"] == "name = 'ssd'\n"
        assert s["warnings"] == ["no drop_caches"]
        assert s["started"] == 100.0
        assert s["finished"] == 100.0 + len(session_events()) - 1
        assert [(c["case_id"], c["index"], c["config"], c["tool"], c["params"])
                for c in lib.cases(sid)] == [
            ("c-dd", 0, "ext4", "dd", {"bs": 1048576, "count": 64}),
            ("c-iz", 1, "ext4", "iozone", {"mode": "auto", "file_size": 1048576})]


def test_results_aggregate_repeats_exactly(recorded: tuple[Path, int]) -> None:
    path, sid = recorded
    with Library.open(path) as lib:
        rows = lib.results(sid)
    assert [(r["case_id"], r["metric"], r["params"].get("record_size")) for r in rows] == [
        ("c-dd", "write", None), ("c-dd", "read", None),
        ("c-iz", "write", 4096), ("c-iz", "write", 8192)]
    dd_write, dd_read, iz_4k, iz_8k = rows
    assert dd_write == {
        "case_id": "c-dd", "config": "ext4", "tool": "dd", "test": "write",
        "params": {"bs": 1048576, "count": 64}, "metric": "write", "unit": "B/s",
        "values": [100e6, 110e6, 120e6], "n": 3, "mean": 110e6,
        "stddev": pytest.approx(10e6), "notes": []}
    assert dd_read["values"] == [None, 300e6, 330e6]
    assert (dd_read["n"], dd_read["mean"]) == (2, 315e6)
    assert dd_read["stddev"] == pytest.approx(21213203.435596427)  # 30e6 / sqrt(2)
    assert dd_read["notes"] == ["too fast to measure"]
    assert iz_4k["params"] == {"mode": "auto", "file_size": 1048576, "record_size": 4096}
    assert iz_4k["values"] == [50e6, 60e6, 70e6]
    assert (iz_4k["n"], iz_4k["mean"], iz_4k["notes"]) == (3, 60e6, ["partial"])
    assert iz_4k["stddev"] == pytest.approx(10e6)
    assert iz_8k["values"] == [80e6, 90e6, None]
    assert (iz_8k["n"], iz_8k["mean"]) == (2, 85e6)
    assert iz_8k["stddev"] == pytest.approx(7071067.811865475)  # 10e6 / sqrt(2)


def test_runs_keep_argv_versions_exit_status_and_the_failure(recorded: tuple[Path, int]) -> None:
    path, sid = recorded
    with Library.open(path) as lib:
        runs = lib.runs(sid)
    assert [(r["case_id"], r["repeat"], r["status"], r["exit_status"]) for r in runs] == [
        ("c-dd", 1, "ok", 0), ("c-iz", 1, "ok", 0), ("c-dd", 2, "ok", 0), ("c-iz", 2, "ok", 0),
        ("c-dd", 3, "ok", 0), ("c-iz", 3, "failed", 1)]
    dd1 = runs[0]
    assert dd1["argv"] == ["dd", "if=/dev/zero", "bs=1M"]
    assert (dd1["tool_version"], dd1["planned_bytes"], dd1["duration"]) == (
        "dd (coreutils) 9.1", 64 << 20, 0.6)
    failed = runs[5]
    assert failed["error"] == "iozone exited with 1"
    assert failed["transcript_tail"] == "Error writing block 12\n"


def test_transcript_samples_and_events_are_kept(recorded: tuple[Path, int]) -> None:
    path, sid = recorded
    with Library.open(path) as lib:
        # 11 events per repeat after 3 opening ones: the LogLine of repeat 2 is step 15
        assert lib.transcript(sid, "c-dd", 2) == [(115.0, "stderr", "copied r2")]
        assert len(lib.samples(sid)) == 3 * 5
        dd2 = lib.samples(sid, case_id="c-dd", series="app_bps")
        assert [(s["repeat"], s["value"]) for s in dd2[4:8]] == [
            (2, 0.0), (2, 1.0), (2, 2.0), (2, 3.0)]
        assert [s["value"] for s in lib.samples(sid, series="device_bps")] == [7.0, 7.0, 7.0]
        events = lib.events(sid)
    assert [e["kind"] for e in events] == ["Notice", "ConfigApplied", "CaseFailed",
                                           "ConfigTornDown"]
    assert events[0] | {"t": 0} == {"t": 0, "kind": "Notice", "case_id": None,
                                    "level": "warning", "message": "no drop_caches"}
    assert events[1]["readback"] == {"fstype": "ext4", "options": ["rw", "noatime"]}
    assert (events[2]["case_id"], events[2]["error"]) == ("c-iz", "iozone exited with 1")


def _count(path: Path, table: str) -> int:
    """What another process sees: a second connection reads committed rows only."""
    with sqlite3.connect(path) as other:
        return other.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_samples_are_committed_with_the_case_not_row_by_row(tmp_path: Path) -> None:
    path = tmp_path / "library.sqlite3"
    with Library.open(path) as lib:
        rec = lib.recorder()
        events = session_events()
        rec.handle(events[0])  # SessionStarted commits at once
        assert _count(path, "session") == 1 and _count(path, "case_") == 2
        rec.handle(events[3])  # CaseStarted of dd
        for i in range(50):
            rec.handle(Sample(case_id="c-dd", series="app_bps", value=i, repeat=1, t=200 + i))
        assert _count(path, "sample") == 0
        assert _count(path, "run") == 0
        rec.handle(CaseFinished(case_id="c-dd", repeat=1, metrics=(Metric("write", 1.0, "B/s"),),
                                exit_status=0, duration=1.0, t=300))
        assert _count(path, "sample") == 50
        assert _count(path, "metric") == 1
        rec.close()


def test_once_the_commit_interval_has_passed_the_next_event_commits(tmp_path: Path) -> None:
    path = tmp_path / "library.sqlite3"
    with Library.open(path) as lib:
        rec = lib.recorder()
        rec.commit_interval = 0.0  # "a second has passed" at every event
        rec.handle(session_events()[0])
        rec.handle(Sample(case_id="c-dd", series="app_bps", value=1.0, repeat=1, t=150))
        assert _count(path, "sample") == 1
        rec.handle(LogLine(case_id="c-dd", stream="stdout", text="x", repeat=1, t=151))
        assert _count(path, "transcript") == 1
        rec.close()


def test_a_partial_finish_and_a_failure_before_start_are_recorded(tmp_path: Path) -> None:
    with Library.open(tmp_path / "library.sqlite3") as lib:
        rec = lib.recorder()
        rec.handle(session_events()[0])
        rec.handle(CaseStarted(case=DD, repeat=1, argv=("dd",), t=101))
        rec.handle(CaseFinished(case_id="c-dd", repeat=1, exit_status=0, duration=1.0,
                                partial=True, metrics=(Metric("write", 5.0, "B/s"),), t=102))
        rec.handle(CaseFailed(case_id="c-iz", repeat=1, error="iozone is not installed",
                              transcript_tail="", t=103))
        rec.handle(SessionFinished(status="failed", t=104))
        rec.close()
        sid = rec.session_id
        assert sid is not None
        runs = {r["case_id"]: r for r in lib.runs(sid)}
        assert runs["c-dd"]["status"] == "partial"
        assert (runs["c-iz"]["status"], runs["c-iz"]["error"]) == (
            "failed", "iozone is not installed")
        assert lib.results(sid)[0]["notes"] == ["partial"]


def test_closing_without_session_finished_marks_the_session_interrupted(tmp_path: Path) -> None:
    with Library.open(tmp_path / "library.sqlite3") as lib:
        rec = lib.recorder()
        rec.handle(session_events()[0])
        rec.handle(CaseStarted(case=DD, repeat=1, argv=("dd",), t=101))
        rec.handle(Sample(case_id="c-dd", series="app_bps", value=1.0, repeat=1, t=102))
        rec.close()  # the runner raised
        assert rec.session_id is not None
        s = lib.session(rec.session_id)
        assert (s["status"], s["finished"]) == ("interrupted", 102.0)
        assert lib.runs(rec.session_id)[0]["status"] == "interrupted"
        assert len(lib.samples(rec.session_id)) == 1


def test_events_before_session_started_are_refused(tmp_path: Path) -> None:
    with Library.open(tmp_path / "library.sqlite3") as lib:
        rec = lib.recorder()
        with pytest.raises(LibraryError, match="before SessionStarted"):
            rec.handle(Sample(case_id="c", series="s", value=1.0))
        rec.close()


CHILD = textwrap.dedent("""
    import sys, time
    from disklab.core.vocab.events import CaseFinished, CaseStarted, Sample, SessionStarted
    from disklab.core.library import Library
    from disklab.core.vocab.model import Case, Metric
    case = Case("c-dd", 0, "ext4", "dd", 0, {"bs": 1048576})
    lib = Library.open(sys.argv[1])
    rec = lib.recorder()
    rec.handle(SessionStarted(name="killed", cases=(case,), repeats=2, host={}, plan_text="",
                              t=100.0))
    rec.handle(CaseStarted(case=case, repeat=1, argv=("dd",), t=101.0))
    for i in range(20):
        rec.handle(Sample(case_id="c-dd", series="app_bps", value=float(i), repeat=1,
                          t=102.0 + i))
    rec.handle(CaseFinished(case_id="c-dd", repeat=1, exit_status=0, duration=1.0,
                            metrics=(Metric("write", 123.0, "B/s"),), t=130.0))
    rec.handle(CaseStarted(case=case, repeat=2, argv=("dd",), t=131.0))
    for i in range(20):
        rec.handle(Sample(case_id="c-dd", series="app_bps", value=float(i), repeat=2,
                          t=132.0 + i))
    print("ready", flush=True)
    time.sleep(120)
""")


def test_a_killed_recorder_leaves_an_interrupted_session_with_its_finished_case(
        tmp_path: Path) -> None:
    path = tmp_path / "library.sqlite3"
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(path)], stdout=subprocess.PIPE,
                             text=True)
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "ready\n"
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        if child.stdout is not None:
            child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    with Library.open(path) as lib:
        [s] = lib.list_sessions()
        assert (s["name"], s["status"]) == ("killed", "interrupted")
        assert s["finished"] == 130.0  # the last commit: CaseFinished of repeat 1
        [write] = lib.results(s["id"])
        assert (write["metric"], write["values"], write["n"]) == ("write", [123.0, None], 1)
        assert lib.runs(s["id"])[0]["status"] == "ok"
        assert [x["value"] for x in lib.samples(s["id"])][:20] == [float(i) for i in range(20)]


def test_editing_the_session_while_recording_on_the_same_connection(tmp_path: Path) -> None:
    path = tmp_path / "library.sqlite3"
    with Library.open(path) as lib:
        rec = lib.recorder()
        rec.handle(session_events()[0])
        rec.handle(Sample(case_id="c-dd", series="app_bps", value=1.0, repeat=1, t=150))
        assert rec.session_id is not None
        lib.add_tag(rec.session_id, "live")  # the user tags the run while it goes on
        lib.set_notes(rec.session_id, "started after the firmware update")
        rec.handle(Sample(case_id="c-dd", series="app_bps", value=2.0, repeat=1, t=151))
        rec.handle(SessionFinished(status="finished", t=152))
        rec.close()
    with Library.open(path) as lib:
        s = lib.session(1)
        assert (s["status"], s["tags"], s["notes"]) == (
            "finished", ["live"], "started after the firmware update")
        assert [x["value"] for x in lib.samples(1)] == [1.0, 2.0]


def test_a_cancelled_run_is_stored_cancelled_with_its_partial_figures(tmp_path: Path) -> None:
    with Library.open(tmp_path / "lib.sqlite3") as lib:
        rec = lib.recorder()
        rec.handle(SessionStarted(name="s", cases=(DD,), repeats=1, host=HOST, plan_text="",
                                  t=1.0))
        rec.handle(CaseStarted(case=DD, repeat=1, argv=("dd",), t=2.0))
        rec.handle(CaseCancelled(case_id=DD.id, repeat=1, transcript_tail="stopped",
                                 signal=15, metrics=(Metric("write", 5e6, "B/s"),),
                                 duration=0.5, t=3.0))
        rec.handle(SessionFinished(status="cancelled", t=4.0))
        rec.close()
        sid = rec.session_id
        assert sid is not None
        (run,) = lib.runs(sid)
        assert run["status"] == "cancelled" and run["error"] is None and run["signal"] == 15
        (row,) = lib.results(sid)
        assert row["notes"] == ["partial"] and row["values"] == [5e6]
        assert lib.session(sid)["status"] == "cancelled"


def test_a_resume_sets_the_earlier_attempt_aside_and_records_when(tmp_path: Path) -> None:
    """SessionResumed takes the same session up again: 'running' in this process; the
    earlier attempt of a run that runs again leaves the results (its figures stay in the
    event) and its transcript gets a line saying so; the next SessionFinished ends it."""
    with Library.open(tmp_path / "lib.sqlite3") as lib:
        rec = lib.recorder()
        rec.handle(SessionStarted(name="s", cases=(DD,), repeats=2, host=HOST, plan_text="",
                                  t=1.0))
        rec.handle(CaseStarted(case=DD, repeat=1, argv=("dd",), t=2.0))
        rec.handle(CaseFinished(case_id=DD.id, repeat=1, exit_status=0, duration=1.0,
                                metrics=(Metric("write", 100e6, "B/s"),), t=3.0))
        rec.handle(CaseStarted(case=DD, repeat=2, argv=("dd",), t=4.0))
        rec.handle(Sample(case_id=DD.id, series="app_write_bps", value=1.0, repeat=2, t=4.5))
        rec.handle(CaseCancelled(case_id=DD.id, repeat=2, metrics=(Metric("write", 7e6, "B/s"),),
                                 t=5.0))
        rec.handle(SessionFinished(status="cancelled", t=6.0))
        rec.close()
        sid = rec.session_id
        assert sid is not None

        again = lib.recorder()
        again.handle(SessionResumed(session_id=sid, name="s", cases=(DD,), repeats=2,
                                    runs=((DD.id, 2),), complete=1, previous_status="cancelled",
                                    host=HOST, t=10.0))
        assert lib.session(sid)["status"] == "running"
        assert lib.results(sid)[0]["values"] == [100e6, None]  # the partial 7e6 is set aside
        assert lib.samples(sid) == []
        again.handle(CaseStarted(case=DD, repeat=2, argv=("dd",), t=11.0))
        again.handle(Sample(case_id=DD.id, series="app_write_bps", value=2.0, repeat=2, t=11.5))
        again.handle(CaseFinished(case_id=DD.id, repeat=2, exit_status=0, duration=1.0,
                                  metrics=(Metric("write", 120e6, "B/s"),), t=12.0))
        again.handle(SessionFinished(status="finished", t=13.0))
        again.close()
        assert again.session_id == sid
        assert lib.session(sid)["status"] == "finished"
        (row,) = lib.results(sid)
        assert row["values"] == [100e6, 120e6] and row["notes"] == []
        assert [s["value"] for s in lib.samples(sid)] == [2.0]
        assert [r["status"] for r in lib.runs(sid)] == ["ok", "ok"]
        assert lib.resumes(sid) == [{"t": 10.0, "runs": 1, "complete": 1,
                                     "previous_status": "cancelled"}]
        (event,) = [e for e in lib.events(sid) if e["kind"] == "SessionResumed"]
        (earlier,) = event["earlier"]
        assert earlier["status"] == "cancelled" and earlier["metrics"][0]["value"] == 7e6
        text = [line for _t, _s, line in lib.transcript(sid, DD.id, 2)]
        assert text == ["--- resumed: the attempt above ended cancelled; it runs again ---"]

        with pytest.raises(LibraryError, match="cannot be resumed: it is finished"):
            lib.recorder().handle(SessionResumed(
                session_id=sid, name="s", cases=(DD,), repeats=2, runs=((DD.id, 2),),
                complete=2, previous_status="finished", host=HOST, t=20.0))
        assert lib.session(sid)["status"] == "finished"
